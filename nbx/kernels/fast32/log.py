"""log of float32 x in float64 from a table of 93 logarithms: 9 float64 operations per element.

x = 2^e z, z in [sqrt(1/2), sqrt(2)); k/128 = LOG_RCP(z), a degree-4 float32 polynomial for 1/z
rounded to a multiple of 2^-7 by adding 1.5 * 2^16 (any k near 128/z serves, because the table holds
the log of the k chosen: |k - 128/z| <= 0.54 over every float32 z); r = z k/128 - 1 is exact in one
float32 fma (24-bit z times 8-bit k/128, |r| <= 2^-7.46: |z k - 128| 2^23 < 2^24);
log x = e log 2 - log(k/128) + log1p(r), with log1p(r) = r + r^2 P(r) (tools/fit_fast32.py:
2^-51.8). Relative error < 2^-50: 2^-51.07 over every float32 input on the H200
(bench/fast32_exhaustive.py). The interpreter's libdevice.fma rounds once, as FFMA does.
"""
import mpmath
import numpy as np
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from .. import math as kernel_math
from ..fastpath import FastPath
from .divide import quotient, sqrt_seeded
from .exp import with_sign_of
from .keys import HARD_K, subnormal_or_nan
from .poly import coefficients
from .reduce import MAGIC

LOG1P_P = tl.constexpr(coefficients("LOG1P_P"))
LOG_RCP = tl.constexpr(coefficients("LOG_RCP"))
# -log(k/128) rounded to float64 (mpmath, 40 digits) for the k that z in [sqrt(1/2), sqrt(2))
# picks: k in [91, 181], the table one wider each side
LOG_K0 = tl.constexpr(90)
with mpmath.workdps(40):
    LOG_TABLE = np.array([float(-mpmath.log(mpmath.mpf(k) / 128)) for k in range(LOG_K0.value, 183)],
                         dtype=np.float64)
MAGIC_K = tl.constexpr(98304.0)                # 1.5 * 2^16, ulp 2^-7: v + MAGIC_K - MAGIC_K rounds v to k/128
LN2 = tl.constexpr(0.6931471805599453)


@triton.jit
def log(x, tab):
    """x float32, tab = LOG_TABLE on the device -> (float64 log(x), x outside the positive normal
    float32 range: zero, subnormal, negative, inf, NaN)."""
    bits = x.to(tl.int32, bitcast=True)
    outside = (bits - 0x00800000).to(tl.uint32, bitcast=True) >= 0x7F000000
    e = (bits - 0x3F3504F3) >> 23
    z = (bits - (e << 23)).to(tl.float32, bitcast=True)       # every bit pattern: z in range, k in the table
    t = (LOG_RCP[0] + z * (LOG_RCP[1] + z * (LOG_RCP[2] + z * (LOG_RCP[3] + z * LOG_RCP[4])))) + MAGIC_K
    k = t.to(tl.int32, bitcast=True) - 0x47C00000             # t = MAGIC_K + k/128: its bits, MAGIC_K's + k
    r = libdevice.fma(z, t - MAGIC_K, -1.0).to(tl.float64)
    logc = tl.load(tab + (k - LOG_K0))
    r2 = r * r
    p = LOG1P_P[0] + r * (LOG1P_P[1] + r * (LOG1P_P[2] + r * (LOG1P_P[3] + r * LOG1P_P[4])))
    ef = ((e.to(tl.int64) + 0x4338000000000000).to(tl.float64, bitcast=True)) - MAGIC
    y = (ef * LN2 + logc) + (r2 * p + r)
    return y, outside


LOG = FastPath(log, table=LOG_TABLE, k=HARD_K, reference=kernel_math.log)


INV_LN2 = tl.constexpr(1.4426950408889634)     # 1/ln 2 and 1/ln 10 rounded: 2^-53 more than log's error
INV_LN10 = tl.constexpr(0.4342944819032518)


@triton.jit
def log2(x, tab):
    """x float32 -> (float64 log2(x), outside as log's): log's value times 1/ln 2, within 2^-49.9."""
    y, outside = log(x, tab)
    return y * INV_LN2, outside


@triton.jit
def log10(x, tab):
    """x float32 -> (float64 log10(x), outside as log's)."""
    y, outside = log(x, tab)
    return y * INV_LN10, outside


LOG2 = FastPath(log2, table=LOG_TABLE, k=HARD_K, reference=kernel_math.log2)
LOG10 = FastPath(log10, table=LOG_TABLE, k=HARD_K, reference=kernel_math.log10)


SQRT_HALF_BITS = tl.constexpr(0x3FE6A09E667F3BCD)   # sqrt(1/2) as float64 bits
SQRT_BIG = tl.constexpr(2.0 ** 26)                  # asinh, acosh: from here the square root is |x|


@triton.jit
def log1p64(a, tab):
    """log1p(a) within 2^-51 relative for float64 a > -1 (or NaN), tab = LOG_TABLE: log()'s
    reduction of z = 1 + a = 2^e m, m in [sqrt(1/2), sqrt(2)), with k/128 from LOG_RCP at m rounded
    to float32 (|k - 128/m| <= 0.54 + 2^-17), and log1p(a) = e log 2 - log(k/128) + log1p(r). z is
    rounded, but only to choose e and k: r = (1 + a) c - 1 is one fma on a itself, fma(a, c, c - 1)
    with c = (k/128) 2^-e and c - 1 exact (a multiple of 2^-(7 + e) below 2^53), so r is within
    2^-53 of its value relative, and |a| < 2^-9 gives e = 0, k = 128 and r = a exactly (log(k/128)
    = 0): the error stays relative near 0 with no series and no correction for z's rounding. Any
    bit pattern gives m in range and k in the table; a NaN a gives a NaN r."""
    z = 1.0 + a
    bits = z.to(tl.int64, bitcast=True)
    e = (bits - SQRT_HALF_BITS) >> 52
    m = (bits - (e << 52)).to(tl.float64, bitcast=True)
    m32 = m.to(tl.float32)
    t = (LOG_RCP[0] + m32 * (LOG_RCP[1] + m32 * (LOG_RCP[2] + m32 * (LOG_RCP[3] + m32 * LOG_RCP[4])))) + MAGIC_K
    k = t.to(tl.int32, bitcast=True) - 0x47C00000
    c = (t - MAGIC_K).to(tl.float64) * ((1023 - e) << 52).to(tl.float64, bitcast=True)
    r = libdevice.fma(a, c, c - 1.0)
    logc = tl.load(tab + (k - LOG_K0))
    p = LOG1P_P[0] + r * (LOG1P_P[1] + r * (LOG1P_P[2] + r * (LOG1P_P[3] + r * LOG1P_P[4])))
    ef = ((e + 0x4338000000000000).to(tl.float64, bitcast=True)) - MAGIC
    return (ef * LN2 + logc) + (r * r * p + r)


@triton.jit
def log1p(x, tab):
    """x float32 -> (float64 log1p(x), x outside (-1, inf): -1, below, inf, NaN). log1p(-0) = -0:
    the core's r = fma(-0, 1, 0) is +0."""
    w = x.to(tl.float64)
    outside = ~((x > -1.0) & (x < float("inf")))
    return tl.where(w == 0, w, log1p64(w, tab)), outside | subnormal_or_nan(x)


LOG1P = FastPath(log1p, table=LOG_TABLE, k=HARD_K, reference=kernel_math.log1p)


# The inverse hyperbolic functions through log1p64, on a = |x| (odd ones take x's sign back):
#     asinh a = log1p(a + a^2 / (1 + sqrt(1 + a^2)))
#     acosh x = log1p(t + sqrt(t (2 + t))),  t = x - 1
#     atanh a = log1p(2a / (1 - a)) / 2
# a^2, x - 1, 2 + t, t (2 + t) and 1 - a are exact in float64 for float32 a and x (48, 24, 26, 50
# and 24 bits); each sum and quotient rounds once and the square roots (divide.sqrt_seeded, seeded
# by float32's rsqrt, no libdevice call) are within 1.5 2^-53, so log1p's argument is within ~2^-51 of
# the exact one, and log1p's relative condition number w / ((1 + w) log1p w) is at most 1: the
# values are within 2^-50 of the exact ones, inside K = 256 (E = 2^-45). No step cancels: every
# term is non-negative. A subnormal x (asinh, atanh: the result is x, subnormal), the domain's
# edges (acosh below 1, atanh at and beyond 1: NaN or inf), inf and NaN take the exact path.


@triton.jit
def asinh(x, tab):
    """x float32 -> (float64 asinh(x), outside: subnormal, inf, NaN). x's sign bit is copied onto
    asinh|x| >= 0, so -0 gives -0. From |x| = 2^26 on, sqrt(1 + x^2) is |x| within 2^-53 (and its
    float32 seed would overflow from 2^64): |x| itself."""
    w = x.to(tl.float64)
    a = tl.abs(w)
    q = a * a
    x26 = tl.minimum(tl.abs(x), SQRT_BIG)
    s = tl.where(a < SQRT_BIG, sqrt_seeded(1.0 + q, libdevice.fma(x26, x26, 1.0)), a)
    y = log1p64(a + quotient(q, 1.0 + s), tab)
    return with_sign_of(y, x), subnormal_or_nan(x) | (a == float("inf"))


@triton.jit
def acosh(x, tab):
    """x float32 -> (float64 acosh(x), outside: below 1, inf, NaN). acosh(1) = +0. From x = 2^26
    on, sqrt(t (2 + t)) = sqrt(x^2 - 1) is x within 2^-53 (and its float32 seed would overflow
    from 2^64): x itself."""
    w = x.to(tl.float64)
    t = w - 1.0
    t32 = tl.minimum(x, SQRT_BIG) - 1.0
    s = tl.where(w < SQRT_BIG, sqrt_seeded(t * (2.0 + t), t32 * (t32 + 2.0)), w)
    y = log1p64(t + s, tab)
    return y, ~((x >= 1.0) & (x < float("inf")))


@triton.jit
def atanh(x, tab):
    """x float32 -> (float64 atanh(x), outside: |x| >= 1, subnormal, NaN). x's sign bit is copied
    onto atanh|x| >= 0, so -0 gives -0."""
    w = x.to(tl.float64)
    a = tl.abs(w)
    y = log1p64(quotient(a + a, 1.0 - a), tab) * 0.5
    return with_sign_of(y, x), subnormal_or_nan(x) | ~(a < 1.0)


ASINH = FastPath(asinh, table=LOG_TABLE, k=HARD_K, reference=kernel_math.asinh)
ACOSH = FastPath(acosh, table=LOG_TABLE, k=HARD_K, reference=kernel_math.acosh)
ATANH = FastPath(atanh, table=LOG_TABLE, k=HARD_K, reference=kernel_math.atanh)
