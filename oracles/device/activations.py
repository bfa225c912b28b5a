"""Device oracles of the activations, each the stable float64 form of oracles/activations.py.

The bounds add the roundings of each form to libdevice's bound (unary.LIBM), times the condition
of the steps that follow a rounded argument. Where a rounded argument u feeds a function whose
relative condition |u g'(u) / g(u)| grows (erfc's and exp's tails), the bound is taken at the
largest condition that still gives a float32 result at or above 2^-149: there g(u) >= 2^-150, so
|u| <= 104 and the condition is <= 2 u^2 (erfc) or |u| (exp), times the argument's own error."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from . import device
from .unary import LIBM

# float64 constants (a kernel reads only constexpr globals; a float constant that float32 cannot
# hold exactly takes float64)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
SELU_SCALE_ALPHA = tl.constexpr(SELU_SCALE * SELU_ALPHA)
SELU_SCALE_C = tl.constexpr(SELU_SCALE)
SQRT_HALF = tl.constexpr(0.7071067811865476)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
GELU_TANH_COEFF = tl.constexpr(0.044715)


@triton.jit
def neg_zero(x):
    """-0.0 in x's shape, from its bits: Triton's -0.0 literal is 0 - 0.0, which is +0."""
    return tl.full(x.shape, -0x7FFFFFFFFFFFFFFF - 1, tl.int64).to(tl.float64, bitcast=True)


@triton.jit
def sigmoid64(x):
    """1/(1+e) or e/(1+e), e = exp(-|x|) <= 1: no overflow, full relative accuracy in both tails."""
    e = libdevice.exp(-tl.abs(x))
    return tl.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


@triton.jit
def softplus64(u):
    """log(1 + exp(u)) = max(u, 0) + log1p(exp(-|u|))."""
    return tl.where(u > 0, u, 0.0) + libdevice.log1p(libdevice.exp(-tl.abs(u)))


@triton.jit
def _relu(x, p0, p1):
    return tl.where(x > 0, x, tl.where(x != x, x, 0.0))


@triton.jit
def _sigmoid(x, p0, p1):
    return sigmoid64(x)


@triton.jit
def _silu(x, p0, p1):
    return tl.where(x == -float("inf"), neg_zero(x), x * sigmoid64(x))


@triton.jit
def _gelu(x, p0, p1):
    return tl.where(x == -float("inf"), neg_zero(x), 0.5 * x * libdevice.erfc(x * -SQRT_HALF))


@triton.jit
def _gelu_tanh(x, p0, p1):
    u = SQRT_2_OVER_PI * (x + GELU_TANH_COEFF * (x * x * x))
    return tl.where(x == -float("inf"), neg_zero(x), x / (1.0 + libdevice.exp(-2.0 * u)))


@triton.jit
def _tanh(x, p0, p1):
    return libdevice.tanh(x)


@triton.jit
def _hardsigmoid(x, p0, p1):
    return tl.minimum(tl.maximum((x + 3.0) / 6.0, 0.0, propagate_nan=tl.PropagateNan.ALL), 1.0,
                      propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _hardsigmoid_exact(x, p0, p1):
    """Where (x + 3)/6 is computed exactly: x + 3 exact (its TwoSum error is 0) and the quotient v
    of at most 25 significant bits with v*6 == x + 3 (a product of 25 + 3 bits, exact, so equality
    means v = (x + 3)/6). Those are the exact values that can be float32 midpoints: (x + 3)/6 is a
    tie there (4% of the float32 inputs in [0.17, 0.19)) and ties-to-even decides it on the device.
    Clamped results (0, 1) are exact too."""
    s = x + 3.0
    bb = s - x
    err = (x - (s - bb)) + (3.0 - bb)
    v = s / 6.0
    low = v.to(tl.int64, bitcast=True) & ((1 << 28) - 1)
    return ((err == 0.0) & (low == 0) & (v * 6.0 == s)) | (s <= 0.0) | (s >= 6.0)


@triton.jit
def _hardswish(x, p0, p1):
    return tl.where(x <= -3.0, 0.0, tl.where(x >= 3.0, x, x * (x + 3.0) / 6.0))


@triton.jit
def _leaky_relu(x, slope, p1):
    return tl.where(x > 0, x, slope * x)


@triton.jit
def _elu(x, alpha, p1):
    return tl.where(x > 0, x, alpha * libdevice.expm1(x))


@triton.jit
def _celu(x, alpha, p1):
    return tl.where(x > 0, x, alpha * libdevice.expm1(x / alpha))


@triton.jit
def _selu(x, p0, p1):
    return tl.where(x > 0, SELU_SCALE_C * x, SELU_SCALE_ALPHA * libdevice.expm1(x))


@triton.jit
def _mish(x, p0, p1):
    return tl.where(x == -float("inf"), neg_zero(x), x * libdevice.tanh(softplus64(x)))


@triton.jit
def _softplus(x, beta, threshold):
    # the branch on the exact product: x * beta rounds monotonically, so a rounded product above
    # (below) the threshold means an exact one above (below); on a tie the fma's residual decides
    u = x * beta
    above = (u > threshold) | ((u == threshold) & (libdevice.fma(x, beta, -u) > 0))
    return tl.where(above, x, softplus64(u) / beta)


@triton.jit
def _log_sigmoid(x, p0, p1):
    return tl.where(x < 0, x, 0.0) - libdevice.log1p(libdevice.exp(-tl.abs(x)))


@triton.jit
def _threshold(x, threshold, value):
    return tl.where(x <= threshold, value, x)


@triton.jit
def _dropout(x, p0, p1):
    return x


device("relu", _relu, 0, why="exact")
device("threshold", _threshold, 0, ("threshold", "value"), why="a selection of exact values")
device("dropout", _dropout, 0, why="the identity in inference")
device("sigmoid", _sigmoid, 2 * LIBM, why="exp (LIBM), a sum and a quotient each rounded once")
device("silu", _silu, 2 * LIBM, why="sigmoid's bound and one product")
device("tanh", _tanh, LIBM, why="libdevice's tanh")
device("hardsigmoid", _hardsigmoid, 4, why="x + 3 (exact near -3, rounded once elsewhere) and /6",
       exact_at=_hardsigmoid_exact)
device("hardswish", _hardswish, 8, why="x + 3, a product and /6, each rounded once")
device("leaky_relu", _leaky_relu, 2, ("negative_slope",), why="one product")
device("elu", _elu, LIBM + 2, ("alpha",), why="expm1 (LIBM) and one product")
device("selu", _selu, LIBM + 8, why="expm1, the two constants' own roundings and two products")
device("celu", _celu, 4 * LIBM, ("alpha",), why="x/alpha rounded once, expm1's condition <= 1 for x < 0, "
                                                 "one product")
device("mish", _mish, 8 * LIBM, why="softplus (exp, log1p, a sum), tanh (condition <= 1) and a product")
device("log_sigmoid", _log_sigmoid, 4 * LIBM, why="exp and log1p (LIBM each), and a sum of like signs")
# erfc(z) at z = -x sqrt(1/2): z carries 2 roundings (2^-52), erfc's condition 2 z^2 <= 2 * 10.1^2
# where the result stays >= 2^-149 (z <= 10.1): ~204 x 2^-52, plus erfc's own and a product
device("gelu", _gelu, 1024, why="erfc's condition on a rounded argument (see comment)")
# u = sqrt(2/pi) (x + c x^3) carries ~6 roundings; 1/(1 + exp(-2u)) has condition <= 2|u| <= 104 where
# the result stays >= 2^-149: ~624 x 2^-53, plus exp's own, a sum and a quotient
device("gelu:approximate=tanh", _gelu_tanh, 2048, why="exp's condition on a rounded argument (see comment)")
# u = x beta rounded once; softplus(u) has condition <= |u| <= 104 where the result stays >= 2^-149
device("softplus", _softplus, 512, ("beta", "threshold"), why="exp's condition on the rounded product x beta")


@triton.jit
def sigmoid_mul64(m, b):
    """m sigmoid(b) for finite m (an exact product of the operands) and b not NaN. Below b = -600,
    sigmoid(b) = e^b (1 - e^b + ...) is e^b to 2^-865, and m e^b as (m h) h with h = e^(b/2) (b/2
    exact): e^b itself would be a float64 subnormal there (b < -708), of few bits, while m (up to
    2^256) lifts the product back above 2^-1000."""
    h = libdevice.exp(b * 0.5)
    return tl.where(b < -600.0, (m * h) * h, m * sigmoid64(b))


@triton.jit
def _glu(a, b, p0, p1):
    # an infinite a keeps the plain form a * sigmoid(b) (the CPU oracle's: inf * 0 is NaN at b = -inf)
    plain = a * sigmoid64(b)
    return tl.where(tl.abs(a) < float("inf"), sigmoid_mul64(a, b), plain)


@triton.jit
def _swiglu(gate, up, p0, p1):
    # silu(gate) * up; where an operand is infinite or NaN, the CPU oracle's form: gate * (sigmoid(gate)
    # * up), and -0 * up at gate = -inf
    plain = tl.where(gate == -float("inf"), neg_zero(gate) * up, gate * (sigmoid64(gate) * up))
    finite = (tl.abs(gate) < float("inf")) & (tl.abs(up) < float("inf"))
    return tl.where(finite, sigmoid_mul64(gate * up, gate), plain)


# m sigmoid(b): sigmoid's bound (2 LIBM: exp, a sum, a quotient) and one product; below b = -600
# two exps of an exact argument and two products; m = gate * up is exact for these formats
device("glu", _glu, 3 * LIBM, why="a * sigmoid(b): sigmoid's bound and one product, e^b split below b = -600",
       arity=2)
WHY_SWIGLU = "(gate up, exact) * sigmoid(gate): sigmoid's bound and one product, e^gate split below -600"
device("swiglu", _swiglu, 3 * LIBM, why=WHY_SWIGLU, arity=2)
device("silu_and_mul", _swiglu, 3 * LIBM, why=WHY_SWIGLU, arity=2)
