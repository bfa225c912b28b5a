"""pow of float32 a, b as exp(b log|a|), the logarithm in double-double on log.py's reduction and the
exponential on exp.py's core with the product's low part.

The result's relative error is the absolute error of w = b log|a|, and |w| <= 104 wherever the
result is a normal float32 (or nearly one): log|a| must be good to ~2^-58 of itself.
    |a| = 2^e z, z in [sqrt(1/2), sqrt(2)), k/128 ~ 1/z (log.py's LOG_RCP), r = z k/128 - 1 exact
    log|a| = e LN2_HI + T_HI(k) + r  +  (e LN2_LO + T_LO(k) + r^2 P(r))
LN2_HI has 42 bits, so e LN2_HI is exact (|e| <= 150); T_HI + T_LO is -log(k/128) in double-double
(mpmath, 40 digits); the three leading terms are joined by two Fast2Sums (|e LN2_HI| >= |T_HI| for
e != 0; |T_HI| >= 2^-7 > |r| for k != 128, and both sums are exact where e = 0 or k = 128), whose
errors join the low part. P is log1p's Taylor series to r^8/8 (the next term is 2^-62.9 of r for
|r| <= 2^-7.46), so the low part, |lo| <= 2^-14.9, carries ~2^-68 absolute; a last Fast2Sum makes
the pair a double-double (H, L), |L| <= ulp(H)/2. log|a| is 0 (a = 1), or
at least 2^-8.2 in magnitude (e = 0 and k != 128 means |z - 1| >= 2^-8.1), or k = 128 with the
error relative to r: within 2^-58 of itself in every case.
    w = b H + (fma(b, H, -b H) + b L)            the product's error exact, the low part <= 2^-45 |w|
exp's reduction takes w's high part and adds the low part after w - k L_HI, which is exact for any
float64 (exp.py: Sterbenz). |b log|a|| is clamped to 700 (exp's domain): beyond 104 the result is 0
or inf in float32 either way. In all, within 104 * 2^-58 + 2^-52 ~ 2^-50.9 relative, so K = 256
(E = 2^-45) holds with room 2^5.

Special operands take the exact body: a or b NaN or infinite, a = +-0, a < 0 with b not an integer.
a < 0 with an integer b gives |a|^b with b's parity as the sign (b >= 2^24 is even). A result that
is exact (an integer power, a square root of a square) lies on a float32 value or on a midpoint: the
rounding test passes the first and sends the second, an exact tie, to the exact body, which knows
exact powers (kernels/math.py pow). Subnormal results are judged (keys.subnormal_hard).
"""
import mpmath
import numpy as np
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from ..fastpath import FastPath
from .exp import EXP_MAX_ARG, EXP_TABLE, exp_core2
from .keys import HARD_K, subnormal_hard
from .log import LOG_K0, LOG_RCP, LOG_TABLE, MAGIC_K
from .reduce import MAGIC

with mpmath.workdps(40):
    _LN2 = mpmath.log(2)
    _LN2_HI = float(mpmath.nint(_LN2 * 2 ** 42) / 2 ** 42)                  # 42 bits: e LN2_HI exact
    LN2_HI = tl.constexpr(_LN2_HI)
    LN2_LO = tl.constexpr(float(_LN2 - _LN2_HI))
    # -log(k/128) - LOG_TABLE[k]: the table's rounding error, its low part
    LOG_TABLE_LO = np.array([float(-mpmath.log(mpmath.mpf(k) / 128) - mpmath.mpf(float(v)))
                             for k, v in zip(range(LOG_K0.value, LOG_K0.value + len(LOG_TABLE)), LOG_TABLE)],
                            dtype=np.float64)
# pow reads exp's table, then log's high parts from LOG_HI_AT, then their low parts from LOG_LO_AT
POW_TABLE = np.concatenate([EXP_TABLE, LOG_TABLE, LOG_TABLE_LO])
LOG_HI_AT = tl.constexpr(len(EXP_TABLE) - LOG_K0.value)
LOG_LO_AT = tl.constexpr(len(EXP_TABLE) + len(LOG_TABLE) - LOG_K0.value)


@triton.jit
def _fast2sum(x, y):
    """(s, t) with s + t = x + y exactly, s = x + y rounded; |x| >= |y| or x = 0."""
    s = x + y
    return s, y - (s - x)


@triton.jit
def log_pair(a, tab):
    """a float32, positive and finite (any bit pattern reads the table in range) -> (H, L) with
    H + L = log a within 2^-58 of it (the docstring above) and |L| <= ulp(H)/2, so that b L is
    below 2^-46 of b H and lands in exp's reduction after its one rounding-free step. (The exact
    body's double_double.log_dd goes to 2^-71 in ~4x the operations, for the rare settling.)"""
    bits = a.to(tl.int32, bitcast=True)
    e = (bits - 0x3F3504F3) >> 23
    z = (bits - (e << 23)).to(tl.float32, bitcast=True)
    t = (LOG_RCP[0] + z * (LOG_RCP[1] + z * (LOG_RCP[2] + z * (LOG_RCP[3] + z * LOG_RCP[4])))) + MAGIC_K
    k = t.to(tl.int32, bitcast=True) - 0x47C00000
    r = libdevice.fma(z, t - MAGIC_K, -1.0).to(tl.float64)
    t_hi = tl.load(tab + (k + LOG_HI_AT))
    t_lo = tl.load(tab + (k + LOG_LO_AT))
    ef = ((e.to(tl.int64) + 0x4338000000000000).to(tl.float64, bitcast=True)) - MAGIC
    s1, c1 = _fast2sum(ef * LN2_HI, t_hi)
    s2, c2 = _fast2sum(s1, r)
    p = -0.5 + r * (1 / 3 + r * (-0.25 + r * (0.2 + r * (-1 / 6 + r * (1 / 7 + r * -0.125)))))
    lo = (c1 + c2) + (ef * LN2_LO + t_lo) + (r * r) * p
    return _fast2sum(s2, lo)


@triton.jit
def pow(a, b, tab):
    """a, b float32, tab = POW_TABLE -> (float64 a^b, hard: the special operands above, NaN and
    subnormal results near a boundary)."""
    ax = tl.abs(a)
    h, lo = log_pair(ax, tab)
    wb = b.to(tl.float64)
    ph = wb * h
    pl = libdevice.fma(wb, h, ph * -1.0) + wb * lo      # the product's error, exact (fused)
    w = tl.minimum(tl.maximum(ph, EXP_MAX_ARG * -1.0), EXP_MAX_ARG)   # NaN comes only from operands flagged outside
    y = exp_core2(w, tl.where(w == ph, pl, 0.0), tab)        # clamped: the low part is no longer w's
    integral = b == libdevice.floor(b)
    half = b * 0.5
    odd = integral & (half != libdevice.floor(half))
    y = tl.where((a < 0) & odd, y * -1.0, y)
    finite = (ax < float("inf")) & (tl.abs(b) < float("inf"))
    outside = ~finite | (ax == 0) | ((a < 0) & ~integral)
    return y, outside | subnormal_hard(y, HARD_K)


POW = FastPath(pow, table=POW_TABLE, k=HARD_K)
