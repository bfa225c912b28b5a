"""erfc of float32 x as exp(-x^2) times one rational, on exp.py's exp core; the same rational for
gelu's erf form (activations.py gelu_erf).

    erfc |x| = exp(-x^2) P(a) / Q(a),  a = min(|x|, ERFC_CLAMP);   erfc x = 2 - erfc |x| for x < 0
P/Q is erfcx(a) = exp(a^2) erfc(a), which falls from 1 to ~1/(sqrt(pi) a): degrees 8/9 on
[0, 10.25] (tools/fit_fast32.py: near-minimax in relative error, 2^-51.95 with the coefficients
rounded). Every coefficient is positive, so neither Horner sum cancels (each rounds to ~2^-51).
a^2 is exact in float64 (48 bits of a float32 square), so exp_core adds its 2^-52 and no more, and
the quotient (divide.quotient) is ~2^-52. For x < 0, erfc |x| <= 1 and the result lies in [1, 2]:
2 - erfc |x| keeps the error. Within 2^-49.6 of libm's erfc on the interpreter's samples (its tl
operations are unfused; DFMA-fused Horner sums round half as often), so K = 256 (E = 2^-45). On
sm_90, 40 float64 instructions per element (29 DFMA, 5 DMUL, 3 DADD, 3 DSETP) and one reciprocal
approximation, with no libdevice call.

erfc rounds to a float32 subnormal from x = 9.1945 and to +0 from 10.0542; erfc(10.25) = 2^-155.8,
so clamped inputs (+inf too) round to +0 far from the midpoint 2^-150, and keys.subnormal_hard
judges the subnormal results. The clamp (float32, FMNMX) propagates NaN, which subnormal_hard
sends to the exact path; -inf gives 2 - erfc(10.25) = 2.0. erfc(-0) = 1.

gelu's pair GELU_ERF_P, GELU_ERF_Q is the rational in a = sqrt(2) z with gelu's 1/2, the scaled
coefficients rounded again (2^-51.91): erfc(a/sqrt2) / 2 = exp(-a^2/2) P(a) / Q(a), whose
exponent -a^2/2 is exact and which needs no rounded a/sqrt2.
"""
import triton
import triton.language as tl

from .. import math as kernel_math
from ..fastpath import FastPath
from .divide import quotient
from .exp import EXP_TABLE, exp_core
from .keys import HARD_K, subnormal_hard
from .poly import coefficients, horner

ERFC_CLAMP = tl.constexpr(10.25)               # erfc(10.25) = 2^-155.8 rounds to +0
ERFC_P = tl.constexpr(coefficients("ERFC_P"))
ERFC_Q = tl.constexpr(coefficients("ERFC_Q"))
GELU_ERF_P = tl.constexpr(coefficients("GELU_ERF_P"))
GELU_ERF_Q = tl.constexpr(coefficients("GELU_ERF_Q"))


@triton.jit
def erfc_abs(a, w, tab, P: tl.constexpr, Q: tl.constexpr):
    """exp(w) P(a) / Q(a) for float64 a >= 0 and w = -a^2 (or -a^2/2) exact, tab = EXP_TABLE; P, Q
    of degrees 8 and 9 (ERFC_P, ERFC_Q or GELU_ERF_P, GELU_ERF_Q)."""
    return quotient(exp_core(w, tab) * horner(a, P, 9), horner(a, Q, 10))


@triton.jit
def erfc(x, tab):
    """x float32, tab = EXP_TABLE -> (float64 erfc(x), hard: NaN and subnormal results near a
    boundary)."""
    a = tl.minimum(tl.abs(x), ERFC_CLAMP, propagate_nan=tl.PropagateNan.ALL).to(tl.float64)
    v = erfc_abs(a, a * (a * -1.0), tab, ERFC_P, ERFC_Q)
    y = tl.where(x < 0, 2.0 - v, v)
    return y, subnormal_hard(y, HARD_K)


ERFC = FastPath(erfc, table=EXP_TABLE, k=HARD_K, reference=kernel_math.erfc)
