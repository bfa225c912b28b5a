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

from ..fastpath import FastPath
from .keys import HARD_K
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


@triton.jit
def log64(w):
    return libdevice.log(w)


LOG = FastPath(log, table=LOG_TABLE, k=HARD_K, reference=log64)
