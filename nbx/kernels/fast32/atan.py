"""atan, asin, acos and atan2 of float32 operands on one float64 core: atan of a ratio lo/hi from a
table of arctangents and one quotient.

The core, atan_row(lo, hi, row, flip), for float64 0 <= lo <= hi, hi > 0: u = lo/hi in [0, 1] is
rounded to c = k/128 through the hardware's ~2^-20 reciprocal of hi (one fma onto 1.5 * 2^45, whose
ulp is 1/128, so its low word is k), |u - c| <= 2^-8 + 2^-18, and
    atan(lo/hi) = atan(c) + atan(r),            r = (lo - c hi) / (hi + c lo),  |r| <= |u - c|
    atan(hi/lo) = (pi/2 - atan(c)) - atan(r)    (swap: the ratio was inverted to reach [0, 1])
and for atan2's left half-plane pi - atan(lo/hi) and pi/2 + atan(lo/hi) alike: one row of the table
per form, T(c) + atan(r) or T(c) - atan(r) (flip).
lo - c hi and hi + c lo are one fma each (c hi and c lo exact inside it, one rounding), and the
quotient is divide.quotient (~2^-52), so r is within 2^-51 of its value relative to r. atan(r) = r +
r z P(z), z = r^2, P of degree 1 (tools/fit_fast32.py ATAN_P: 2^-55.5 of r). The table's rows hold
atan(c), pi/2 - atan(c), pi - atan(c) and pi/2 + atan(c), c = k/128, k = 0 .. 128, rounded to float64
(mpmath, 40 digits). The sum A +- atan(r) cancels at most 2x (k = 1 in row 0: A = atan(2^-7) against
a result >= atan(2^-8 - 2^-18); the other rows' results are >= pi/4), so
A's rounding reaches the result as <= 2^-52 and atan(r)'s error as <= 1.3 2^-51 (|atan r| <= the
result), plus the last fma's 2^-53: the core is within 2^-49.9 of atan(lo/hi) relative. 13 float64
operations (9 DFMA, 3 DMUL, 1 DADD), one table load, two reciprocal approximations, no branch.

    atan x = sign(x) core(min(|x|, 1), max(|x|, 1), |x| > 1)
    asin x = sign(x) core(min(a, s), max(a, s), a > s),    a = |x|, s = sqrt(1 - x^2)
    acos x = 2 core(min(s, d), max(s, d), s > d),          d = 1 + x
asin x = atan(x / sqrt(1 - x^2)) and acos x = 2 atan(sqrt(1 - x^2) / (1 + x)) (the half-angle form
2 atan(sqrt((1 - x)/(1 + x))) with one square root, shared with asin's). For float32 x, x^2 is exact
in float64 (48 bits), 1 - x^2 is one fma (rounded once: 2^-53, exact for |x| >= 1/8), 1 + x is exact
for |x| >= 2^-29 (rounded once below), and sqrt_unit is within 1.5 2^-53 of the square root of its
argument, so the ratio the core receives is within 2^-52 (asin) or 1.5 2^-52 (acos) of the exact one
relative. atan's relative condition number, w / ((1 + w^2) atan w), is at most 1 for every w >= 0,
and no step cancels: atan is within 2^-49.9 of the exact values, asin and acos within 2^-49.5, so
within 2^-49 of libdevice's (2 ulps at most, NVIDIA's table), inside K = 256 (E = 2^-45) with
room 16. The interpreter's probe of 2^20 inputs
(bench/fast32_exhaustive.py --log2n 20 --stride 4093, against numpy's float64 functions): max
relative error 2^-52.00 (atan), 2^-51.00 (asin), 2^-51.28 (acos), WRONG 0. On sm_90 (bench/sass_mix.py)
atan takes 13 float64 operations and ~50 instructions per element, asin and acos 20 and 21
float64 operations and ~65 and ~59 instructions.

Special values: |x| is clamped to 2^64 in float32 (FMNMX, NaN kept), so atan(+-inf) = +-pi/2 on the
fast path (atan(2^64) is pi/2 in float64); asin(+-1) = +-pi/2 (s = 0: lo = 0, swap), acos(1) = +0
(s = 0, d = 2); the signs are copied from x's sign bit, so atan(-0) = asin(-0) = -0. acos(-1) (s =
d = 0), |x| > 1 and NaN take the exact path; the index of a NaN ratio is clamped into the table. atan
and asin are subnormal only at a subnormal x (|atan x| < |x| < |asin x|, and atan(2^-126) rounds to
2^-126): those x and NaN fall back by an integer test (keys.subnormal_or_nan), as log1p's do, which
costs no float64 operation where keys.subnormal_hard would cost three. acos is 0 or >= 2^-11.5.

atan2(y, x) = sign(y) core(min(|y|, |x|), max(|y|, |x|)) in the row of its quadrant: x >= 0 (sign bit
clear) atan(u) or pi/2 - atan(u) (|y| > |x|), x < 0 (-0 too) pi - atan(u) or pi/2 + atan(u). |y| and
|x| are exact float32 values, so the values are within 2^-49.9 of the exact ones and within 2^-49.3 of
the exact body's (libdevice's, 2 ulps, or below |y/x| = 2^-20 for x > 0 its series, 2^-52): K = 256.
C's zeros come out of the core: atan2(+-0, x > 0) = +-0, atan2(+-0, x < 0) = +-pi, atan2(y, +-0) =
+-pi/2. An infinite or NaN operand and atan2(+-0, +-0) give NaN in the core (0 inf, 0/0) and fall back
with NaN (keys.subnormal_hard), as do subnormal results near a boundary (x > 0, |y/x| < 2^-126). The
exact body's tiny-ratio series and double-double settling at float32 midpoints (math.atan2) run only
in flagged tiles. Interpreter: 2^-51.70 against mpmath on 8,192 pairs of random signs and magnitudes
2^-20 .. 2^20; WRONG 0 on 2^18 random pairs (fastpath.random_pairs) and on 2^16 pairs each of randn,
subnormal results, |y| = |x| and powers of two. On sm_90, 57.5 instructions and 14.1 float64
operations per element, where libdevice's atan2 takes 152.6 and 33.0.
"""
import mpmath
import numpy as np
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from .. import math as kernel_math
from ..fastpath import FastPath
from .divide import minus, quotient, sqrt_seeded
from .exp import with_sign_of
from .keys import HARD_K, subnormal_hard, subnormal_or_nan
from .poly import coefficients, horner

ATAN_P = tl.constexpr(coefficients("ATAN_P"))
ATAN_N = tl.constexpr(128)                      # c = k / ATAN_N
MAGIC_C = tl.constexpr(1.5 * 2.0 ** 45)         # ulp 1/128: v + MAGIC_C rounds v to a multiple of 1/128
# four rows of 129, k = 0 .. 128: atan(k/128), pi/2 - atan(k/128), pi - atan(k/128), pi/2 + atan(k/128)
with mpmath.workdps(40):
    _ATANS = [mpmath.atan(mpmath.mpf(k) / ATAN_N.value) for k in range(ATAN_N.value + 1)]
    ATAN_TABLE = np.array([float(base + sign * a) for base, sign in ((0, 1), (mpmath.pi / 2, -1), (mpmath.pi, -1),
                                                                       (mpmath.pi / 2, 1)) for a in _ATANS],
                          dtype=np.float64)
ATAN_CLAMP = tl.constexpr(2.0 ** 64)            # atan(2^64) = pi/2 in float64


@triton.jit
def atan_row(lo, hi, row, flip, tab):
    """T[row](c) + atan(r), or T[row](c) - atan(r) where flip, for float64 0 <= lo <= hi, hi > 0 (NaN
    and 0/0 give NaN): row 0 atan(lo/hi), 1 (flip) pi/2 - atan(lo/hi), 2 (flip) pi - atan(lo/hi), 3 pi/2
    + atan(lo/hi), within 2^-49.9 relative; tab = ATAN_TABLE. The sign of the last step is an integer
    select of +-1.0 (a sign-bit flip of atan(r) compiles to a DADD)."""
    t = tl.fma(lo, libdevice.rcp64h(hi), MAGIC_C)
    c = t - MAGIC_C                                                     # k/128
    k = tl.minimum(t.to(tl.int64, bitcast=True).to(tl.int32).to(tl.uint32, bitcast=True), ATAN_N)
    a = tl.load(tab + (k.to(tl.int32) + row * (ATAN_N + 1)))
    r = quotient(tl.fma(c, minus(hi), lo), tl.fma(c, lo, hi))
    z = r * r
    p = tl.fma(r * z, horner(z, ATAN_P, 2), r)
    sign = tl.where(flip, -0x4010000000000000, 0x3FF0000000000000).to(tl.float64, bitcast=True)
    return tl.fma(sign, p, a)


@triton.jit
def atan_ratio(lo, hi, swap, tab):
    """atan(lo/hi), or pi/2 - atan(lo/hi) = atan(hi/lo) where swap (atan_row's rows 0 and 1)."""
    return atan_row(lo, hi, swap.to(tl.int32), swap, tab)


@triton.jit
def sqrt_unit(q, x):
    """sqrt(q) for float64 q = 1 - x^2 in [0, 1], x float32, within 1.5 2^-53 relative
    (divide.sqrt_seeded, seeded by 1 - x^2 in one float32 fma)."""
    return sqrt_seeded(q, libdevice.fma(x * -1.0, x, 1.0))


@triton.jit
def atan(x, tab):
    """x float32, tab = ATAN_TABLE -> (float64 atan(x), outside: subnormal x and NaN)."""
    a = tl.minimum(tl.abs(x), ATAN_CLAMP, propagate_nan=tl.PropagateNan.ALL).to(tl.float64)
    # swap from x's bits and lo, hi as integer selects: compared as floats, the selects become a
    # float32 min and max, each converted to float64 apart (F2F, 16 a clock on an SM)
    swap = (x.to(tl.int32, bitcast=True) & 0x7FFFFFFF) > 0x3F800000
    ab = a.to(tl.int64, bitcast=True)
    one = 0x3FF0000000000000
    lo = tl.where(swap, one, ab).to(tl.float64, bitcast=True)
    hi = tl.where(swap, ab, one).to(tl.float64, bitcast=True)
    y = atan_ratio(lo, hi, swap, tab)
    return with_sign_of(y, x), subnormal_or_nan(x)


@triton.jit
def asin(x, tab):
    """x float32, tab = ATAN_TABLE -> (float64 asin(x), outside: |x| > 1, subnormal x and NaN)."""
    w = x.to(tl.float64)
    a = tl.abs(w)
    s = sqrt_unit(tl.fma(minus(w), w, 1.0), x)
    swap = a > s
    y = atan_ratio(tl.where(swap, s, a), tl.where(swap, a, s), swap, tab)
    return with_sign_of(y, x), subnormal_or_nan(x) | ~(tl.abs(x) <= 1.0)


@triton.jit
def acos(x, tab):
    """x float32, tab = ATAN_TABLE -> (float64 acos(x), outside: x <= -1, x > 1 and NaN)."""
    w = x.to(tl.float64)
    s = sqrt_unit(tl.fma(minus(w), w, 1.0), x)
    d = 1.0 + w
    swap = s > d
    y = atan_ratio(tl.where(swap, d, s), tl.where(swap, s, d), swap, tab) * 2.0
    return y, ~((x > -1.0) & (x <= 1.0))


@triton.jit
def atan2(a, b, tab):
    """a, b float32 (y, x), tab = ATAN_TABLE -> (float64 atan2(y, x), hard: NaN, subnormal results near
    a boundary). The ratio min/max of |y| and |x| (exact float32 values) goes to atan_row, whose row
    takes the quadrant; the sign is y's sign bit."""
    ya = a.to(tl.int32, bitcast=True) & 0x7FFFFFFF
    xa = b.to(tl.int32, bitcast=True) & 0x7FFFFFFF
    swap = ya > xa                                   # |y| > |x|: the ratio |x|/|y|
    lo = tl.where(swap, xa, ya).to(tl.float32, bitcast=True).to(tl.float64)
    hi = tl.where(swap, ya, xa).to(tl.float32, bitcast=True).to(tl.float64)
    xneg = b.to(tl.int32, bitcast=True) < 0          # -0 too: atan2(y, -0) = +-pi/2, atan2(+-0, -0) falls back
    y = atan_row(lo, hi, swap.to(tl.int32) + 2 * xneg.to(tl.int32), swap != xneg, tab)
    y = with_sign_of(y, a)
    return y, subnormal_hard(y, HARD_K)


ATAN = FastPath(atan, table=ATAN_TABLE, k=HARD_K, reference=kernel_math.atan)
ASIN = FastPath(asin, table=ATAN_TABLE, k=HARD_K, reference=kernel_math.asin)
ACOS = FastPath(acos, table=ATAN_TABLE, k=HARD_K, reference=kernel_math.acos)
ATAN2 = FastPath(atan2, table=ATAN_TABLE, k=HARD_K)
