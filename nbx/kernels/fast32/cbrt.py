"""cbrt of float32 x: the float32 cube root refined by one Halley step in float64.

    y0 = cbrtf(|x|)                       float32, within 1 float32 ulp: y0 = c (1 + e), |e| <= 2^-22.9
    cbrt |x| = y0 (y0^3 + 2a) / (2 y0^3 + a),  a = |x|
Halley's step for y^3 = a leaves a relative error of about e^3 (2^-68). The float64 steps: y0^2 is
exact (48 bits) and y0^3 rounds once; its error reaches the quotient times -1/3 (the quotient's
derivative in y0^3 at y0^3 = a, times y0^3); the two sums, the quotient (divide.quotient, ~2^-52)
and the product round once each: within about 5.4 * 2^-53 = 2^-50.6 in all, so K = 256 (E = 2^-45)
holds with room 40. The sign is copied from x in integer operations (cbrt is odd; cbrt(-0) = -0).
x = 0, +-inf and NaN are outside (the step would give 0/0 or inf/inf): the exact body gives
them. Every other float32 x, subnormals included, has a normal cube root, which the step keeps
(a = 2^-149 gives y0 ~ 2^-49.7).

On sm_90 libdevice's float64 cbrt, the exact body, is a subroutine with its own special-case
branches, and held float32 cbrt at 0.78 of copy on the H200.
"""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from .. import math as kernel_math
from ..fastpath import FastPath
from .divide import quotient
from .exp import with_sign_of
from .keys import HARD_K


@triton.jit
def cbrt(x):
    """x float32 -> (float64 cbrt(x), outside: 0, +-inf, NaN)."""
    ax = tl.abs(x)
    y0 = libdevice.cbrt(ax).to(tl.float64)
    a = ax.to(tl.float64)
    t = y0 * y0 * y0
    y = y0 * quotient(t + 2.0 * a, 2.0 * t + a)
    outside = ~(ax < float("inf")) | (ax == 0)
    return with_sign_of(y, x), outside


CBRT = FastPath(cbrt, k=HARD_K, reference=kernel_math.cbrt)
