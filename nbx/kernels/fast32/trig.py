"""sin, cos and tan of float32 x in float64, after reduce.py's reduction by pi/2.

sin and cos share one body: cos x = sin(x + pi/2), so cos's parameters move the quadrant by one
(reduce.reduction_params(1)) and the same kernel serves both. One polynomial per element: where the
quadrant asks for cos r, it is 1 - 2 sin^2(r/2), with sin(r/2) from the same polynomial (r/2 is
exact); 2 sin^2(r/2) <= 0.293 against cos r >= 0.707, so sin's relative error d reaches cos r as
0.83 d, plus the final fma's 2^-53. Over every float32 input on the H200 both stay below 2^-50
(bench/fast32_exhaustive.py).

tan r = r P / Q, and -Q / (r P) in odd quadrants (tan(r + pi/2) = -cot r): one quotient of two
degree-3 polynomials in z = r^2 (tools/fit_fast32.py: 2^-54.2), P in [0.92, 1] and Q in [0.72, 1],
so neither Horner sum cancels.
"""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from ..fastpath import FastPath
from .divide import flip_sign, minus, quotient
from .keys import HARD_K
from .poly import coefficients, horner4, horner6, param
from .reduce import reduce_pio2, reduction_params, trig_outside

SIN_S = coefficients("SIN_S")             # sin(r) = r + r z S(z), |r| <= pi/4: 2^-57.3
TAN_P = coefficients("TAN_P")             # P(0) = Q(0) = 1: the kernel takes P[1:], Q[1:]
TAN_Q = coefficients("TAN_Q")
SIN_PARAMS = reduction_params(0) + SIN_S
COS_PARAMS = reduction_params(1) + SIN_S
TAN_PARAMS = reduction_params(0) + TAN_P[1:] + TAN_Q[1:]


@triton.jit
def sincos(x, c):
    """x float32, c = SIN_PARAMS or COS_PARAMS -> (float64 sin(x) or cos(x), x outside |x| <= 2^19)."""
    outside = trig_outside(x)
    r, q = reduce_pio2(x, c)
    odd = (q & 1) != 0
    u = tl.where(odd, r * 0.5, r)
    z = u * u
    # u * (1 + z S), not u + u z S: for u = -0 the sum would be -0 + +0 = +0 (sin(-0) is -0)
    s = u * (1.0 + z * horner6(z, param(c[5]), param(c[6]), param(c[7]), param(c[8]), param(c[9]),
                               param(c[10])))
    y = tl.where(odd, tl.fma(-2.0 * s, s, 1.0), s)
    return flip_sign(y, (q & 2) != 0), outside


@triton.jit
def tan(x, c):
    """x float32, c = TAN_PARAMS -> (float64 tan(x), x outside |x| <= 2^19)."""
    outside = trig_outside(x)
    r, quadrant = reduce_pio2(x, c)
    z = r * r
    p = r * horner4(z, 1.0, param(c[5]), param(c[6]), param(c[7]))      # r = -0: p = -0
    q = horner4(z, 1.0, param(c[8]), param(c[9]), param(c[10]))         # >= 0.72
    odd = (quadrant & 1) != 0
    y = quotient(tl.where(odd, minus(q), p), tl.where(odd, p, q))
    return y, outside


@triton.jit
def sin64(w):
    return libdevice.sin(w)


@triton.jit
def cos64(w):
    return libdevice.cos(w)


@triton.jit
def tan64(w):
    return libdevice.tan(w)


# the FastPath records the op specs hold (nbx/ops/unary.py): windows and launch hints
SIN = FastPath(sincos, table=SIN_PARAMS, k=HARD_K, reference=sin64)
COS = FastPath(sincos, table=COS_PARAMS, k=HARD_K, reference=cos64)
# tan: capped at 48 registers (ptxas would give the kernel 56, fewer warps per SM): 0.91 of copy on
# the H200 (reports/h200/gpu-check-20261204.md; the choice: docs/DECISIONS.md)
TAN = FastPath(tan, table=TAN_PARAMS, k=HARD_K, reference=tan64, max_registers=48)
