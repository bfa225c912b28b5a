"""exp and expm1 of a float64 argument from a table of 256 powers of two, and the float32 fast paths
built on them: expm1, tanh, sinh, cosh.

w = (256 m + j) L + r, L = ln 2 / 256, j in [-128, 127], |r| <= L/2 = 2^-9.53: k = 256 m + j is
w / L rounded to an integer by adding 1.5 * 2^52 (reduce.MAGIC). L = L_HI + L_LO with L_HI of 35
bits, so k L_HI is exact for |k| < 2^18 (|w| <= 700) and, for w a float32 value (or twice one),
w - k L_HI is exact too (a multiple of 2^-43 below 2^-9.5). e^r - 1 = p = r + r^2 (1/2 + r/6 +
r^2/24 + r^3/120), Taylor's error r^6/720 < 2^-57 |r| (expm1 near 0 is p itself). The table holds 2^(j/256) - 1 (TM1, each within 2^-53
of itself), so that
    exp(w)   = 2^m T (1 + p),                    T = 1 + TM1
    expm1(w) = 2^m (TM1 + T p) + (2^m - 1)
keep 2^-52 relative: for m = 0 expm1 is TM1 + T p, two terms of at most twice the result, and for
m != 0 |expm1(w)| >= 0.29 where the terms are at most ~2.4 times it. Each core is 11-13 float64
operations and one table load where libdevice's exp and expm1 take ~20 and ~30.

tanh, sinh and cosh on |x|, the sign copied from x:
    tanh |x| = -u / (2 + u),       u = expm1(-2|x|) in (-1, 0], |x| clamped to 20 (tanh is 1.0 in float64 from 19.1)
    sinh |x| = (u + u / (1 + u)) / 2,  u = expm1(|x|), |x| clamped to 90 (sinh rounds to inf from 89.416)
    cosh |x| = (v + 1 / v) / 2,    v = exp(|x|), |x| clamped to 90
no term cancels; each is within 2^-50 of its value, so K = 256 (E = 2^-45) holds with room 32.
NaN and subnormal x fall back (keys.subnormal_or_nan, integer operations): only a subnormal x
gives a subnormal result.
"""
import mpmath
import numpy as np
import triton
import triton.language as tl

from .. import math as kernel_math
from ..fastpath import FastPath
from .divide import quotient
from .keys import HARD_K, subnormal_or_nan
from .reduce import MAGIC

with mpmath.workdps(50):
    _L = mpmath.log(2) / 256
    EXP_TABLE = np.array([float(mpmath.power(2, mpmath.mpf(j) / 256) - 1) for j in range(-128, 128)],
                         dtype=np.float64)
    _L_HI = float(mpmath.nint(_L * 2 ** 43) / 2 ** 43)                 # 35 significant bits
    L_HI = tl.constexpr(_L_HI)
    L_LO = tl.constexpr(float(_L - _L_HI))
    INV_L = tl.constexpr(float(1 / _L))
EXP_MAX_ARG = tl.constexpr(700.0)              # 2^m stays normal, k L_HI exact: |w| <= 700
TANH_CLAMP = tl.constexpr(20.0)
SINH_CLAMP = tl.constexpr(90.0)
EXPM1_LOW = tl.constexpr(-200.0)               # expm1 rounds to -1 from -17.33 on


@triton.jit
def _reduce(w, lo, tab):
    """w float64, |w| <= 700 or NaN, lo a low part (|lo| <= 2^-40; 0.0: none, folded away) -> (p =
    e^r - 1, TM1 = 2^(j/256) - 1, 2^m) with w + lo = (256 m + j) L + r. w - k L_HI is exact for any
    float64 w (Sterbenz: w lies within L/2 of k L_HI). A NaN w reads a valid table entry (j is its
    garbage low bits, masked) and gives NaN."""
    t = w * INV_L + MAGIC
    kf = t - MAGIC
    k = t.to(tl.int64, bitcast=True).to(tl.int32)
    r = w - kf * L_HI
    r = r - (kf * L_LO - lo)
    j = ((k + 128) & 255) - 128
    m = (k - j) >> 8
    tm1 = tl.load(tab + (j + 128))
    p = r + (r * r) * (0.5 + r * (0.16666666666666666 + r * (0.041666666666666664 + r * 0.008333333333333333)))
    p2 = ((m.to(tl.int64) + 1023) << 52).to(tl.float64, bitcast=True)
    return p, tm1, p2


@triton.jit
def exp_core(w, tab):
    """exp(w) within 2^-52 relative, w float64 in [-700, 700] (or NaN), tab = EXP_TABLE."""
    return exp_core2(w, 0.0, tab)


@triton.jit
def exp_core2(w, lo, tab):
    """exp(w + lo) within 2^-52 relative, w float64 in [-700, 700] (or NaN) and lo its low part
    (|lo| <= 2^-40), tab = EXP_TABLE."""
    p, tm1, p2 = _reduce(w, lo, tab)
    t = 1.0 + tm1
    return p2 * tl.fma(t, p, t)


@triton.jit
def expm1_core(w, tab):
    """expm1(w) within 2^-51 relative, w float64 in [-700, 700] (or NaN), tab = EXP_TABLE; a zero
    w gives +0 (callers copy the sign)."""
    p, tm1, p2 = _reduce(w, 0.0, tab)
    b = tl.fma(1.0 + tm1, p, tm1)
    return tl.fma(p2, b, p2 - 1.0)


@triton.jit
def with_sign_of(y, x):
    """float64 y >= 0 (or NaN) with float32 x's sign bit: copysign in integer ops."""
    sign = (x.to(tl.int32, bitcast=True) & (-0x7FFFFFFF - 1)).to(tl.int64) << 32
    return (y.to(tl.int64, bitcast=True) | sign).to(tl.float64, bitcast=True)


@triton.jit
def clamp(w, lo, hi):
    """w in [lo, hi], NaN kept (FMNMX with NaN propagation)."""
    return tl.minimum(tl.maximum(w, lo, propagate_nan=tl.PropagateNan.ALL), hi,
                      propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def expm1(x, tab):
    """x float32 -> (float64 expm1(x), outside: subnormal x and NaN)."""
    w = clamp(x, EXPM1_LOW, SINH_CLAMP).to(tl.float64)          # clamped in float32: FMNMX, NaN kept
    y = with_sign_of(tl.abs(expm1_core(w, tab)), x)
    return y, subnormal_or_nan(x)


@triton.jit
def tanh(x, tab):
    """x float32 -> (float64 tanh(x), outside: subnormal x and NaN)."""
    a = tl.minimum(tl.abs(x), TANH_CLAMP, propagate_nan=tl.PropagateNan.ALL).to(tl.float64)
    u = expm1_core(a * -2.0, tab)
    y = with_sign_of(tl.abs(quotient(u * -1.0, 2.0 + u)), x)
    return y, subnormal_or_nan(x)


@triton.jit
def sinh(x, tab):
    """x float32 -> (float64 sinh(x), outside: subnormal x and NaN)."""
    a = tl.minimum(tl.abs(x), SINH_CLAMP, propagate_nan=tl.PropagateNan.ALL).to(tl.float64)
    u = expm1_core(a, tab)
    y = with_sign_of((u + quotient(u, 1.0 + u)) * 0.5, x)
    return y, subnormal_or_nan(x)


@triton.jit
def cosh(x, tab):
    """x float32 -> (float64 cosh(x) >= 1, outside: subnormal x and NaN)."""
    a = tl.minimum(tl.abs(x), SINH_CLAMP, propagate_nan=tl.PropagateNan.ALL).to(tl.float64)
    v = exp_core(a, tab)
    y = (v + quotient(1.0, v)) * 0.5
    return y, subnormal_or_nan(x)


EXPM1 = FastPath(expm1, table=EXP_TABLE, k=HARD_K, reference=kernel_math.expm1)
TANH = FastPath(tanh, table=EXP_TABLE, k=HARD_K, reference=kernel_math.tanh)
SINH = FastPath(sinh, table=EXP_TABLE, k=HARD_K, reference=kernel_math.sinh)
COSH = FastPath(cosh, table=EXP_TABLE, k=HARD_K, reference=kernel_math.cosh)
