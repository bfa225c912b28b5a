"""Device oracles of the activations, each the stable float64 form of nbx/oracles/activations.py.

The bounds add the roundings of each form to libdevice's bound (unary.LIBM), times the condition
of the steps that follow a rounded argument. Where a rounded argument u feeds a function whose
relative condition |u g'(u) / g(u)| grows (erfc's and exp's tails), the bound is taken at the
largest condition that still gives a float32 result at or above 2^-149: there g(u) >= 2^-150, so
|u| <= 104 and the condition is <= 2 u^2 (erfc) or |u| (exp), times the argument's own error."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from . import device
from .arithmetic import two_sum
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
INV_SQRT_2PI = tl.constexpr(0.3989422804014327)
SIXTH = tl.constexpr(1.0 / 6.0)
MINUS_48TH = tl.constexpr(-1.0 / 48.0)
TWO_M8 = tl.constexpr(2.0 ** -8)
TWO_M50 = tl.constexpr(2.0 ** -50)
TWO_M900 = tl.constexpr(2.0 ** -900)
TWO_M600 = tl.constexpr(2.0 ** -600)
# Below these |x| each form is exactly x/2 in float64 (elu's alpha x), and the oracle says so by a
# branch (libdevice's last bit is not in NVIDIA's tables): silu: exp(-|x|) lies in (1 - 2^-54, 1],
# which rounds to 1 (the midpoint below 1 is 1 - 2^-54), so sigmoid is 1/2; gelu: erfc(-x sqrt(1/2))
# is within 0.8|x| < 2^-54 of 1; gelu tanh: exp(-2u) with |2u| < 1.6|x| < 2^-54; hardswish (no
# branch): x + 3 rounds to 3 for |x| <= 2^-52, 3x is exact and 3x/6 = x/2; elu: expm1(x) =
# x (1 + x/2 + ...) rounds to x for |x| < 2^-53.
HALF_X_EXP = tl.constexpr(2.0 ** -54)
HALF_X_TANH = tl.constexpr(2.0 ** -55)
HALF_X_HARDSWISH = tl.constexpr(2.0 ** -52)
EXPM1_X = tl.constexpr(2.0 ** -53)
# |b| at most this: m sigmoid(b) as a double-double (sigmoid_mul_tiny); gate >= 38: sigmoid(gate) is 1
# to within e^-38 < 2^-54
TINY_SIGMOID = tl.constexpr(2.0 ** -20)
ONE_SWIGLU = tl.constexpr(38.0)


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
def half_x_residual(x, c: tl.constexpr, t: tl.constexpr):
    """c x^2 where |x| < t, NaN elsewhere: the residual of a form that is exactly x/2 there and whose
    exact value is x/2 + c x^2 (1 + O(x^2)). x/2 is a float32 midpoint where x is subnormal or in
    [2^-126, 2^-125) with an odd last bit (2^24 float32 inputs, all undecided without it). x^2 is
    exact (>= 2^-298 for these formats), and c x^2 < 2^-54.5 |x| (c < 0.4 below 2^-54, 1/6 below
    2^-52) is less than x/2's float64 gap (>= 2^-54 |x|): no float64, so no rounding boundary, lies
    strictly between x/2 and the exact value."""
    return tl.where(tl.abs(x) < t, c * (x * x), float("nan"))


@triton.jit
def _silu(x, p0, p1):
    v = tl.where(x == -float("inf"), neg_zero(x), x * sigmoid64(x))
    return tl.where(tl.abs(x) < HALF_X_EXP, x * 0.5, v)


@triton.jit
def _silu_residual(x, p0, p1):
    # x sigmoid(x) = x/2 + x^2/4 - x^4/48 + ...
    return half_x_residual(x, 0.25, HALF_X_EXP)


@triton.jit
def _gelu(x, p0, p1):
    v = tl.where(x == -float("inf"), neg_zero(x), 0.5 * x * libdevice.erfc(x * -SQRT_HALF))
    return tl.where(tl.abs(x) < HALF_X_EXP, x * 0.5, v)


@triton.jit
def _gelu_residual(x, p0, p1):
    # x Phi(x) = x/2 + x^2/sqrt(2 pi) - x^4/(6 sqrt(2 pi)) + ...
    return half_x_residual(x, INV_SQRT_2PI, HALF_X_EXP)


@triton.jit
def _gelu_tanh(x, p0, p1):
    u = SQRT_2_OVER_PI * (x + GELU_TANH_COEFF * (x * x * x))
    v = tl.where(x == -float("inf"), neg_zero(x), x / (1.0 + libdevice.exp(-2.0 * u)))
    return tl.where(tl.abs(x) < HALF_X_TANH, x * 0.5, v)


@triton.jit
def _gelu_tanh_residual(x, p0, p1):
    # x / (1 + e^(-2u)) = x/2 + x u/2 + O(x u^3) with u = sqrt(2/pi) (x + 0.044715 x^3):
    # x/2 + x^2/sqrt(2 pi) + O(x^4)
    return half_x_residual(x, INV_SQRT_2PI, HALF_X_TANH)


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
def _hardswish_residual(x, p0, p1):
    # x (x + 3) / 6 = x/2 + x^2/6 exactly
    return half_x_residual(x, SIXTH, HALF_X_HARDSWISH)


@triton.jit
def product_residual(a, x):
    """fma(a, x, -a x): the exact error of the product a x (TwoProd), NaN where it might not be
    representable (|a x| below 2^-900, unless a or x is 0) or the product is not finite."""
    p = a * x
    e = libdevice.fma(a, x, p * -1.0)
    ok = (tl.abs(p) >= TWO_M900) & (tl.abs(p) < float("inf"))
    zero = ((tl.zeros_like(p) + a) == 0) | ((tl.zeros_like(p) + x) == 0)
    return tl.where(ok | zero, e, float("nan"))


@triton.jit
def _leaky_relu(x, slope, p1):
    return tl.where(x > 0, x, slope * x)


@triton.jit
def _leaky_relu_residual(x, slope, p1):
    # slope x rounded once; the exact product is v + lo. float64 0.01 is 0.01 (1 + 2^-55.4), so where
    # the real 0.01 x is a float32 midpoint (a subnormal result: x = -(100k + 50) 2^-149, or -(50k + 25)
    # 2^-148) v is that midpoint: 83,886 negative subnormals, as many in [-2^-125, -2^-126) and
    # 167,772 in the binade below were undecided without it
    return tl.where(x > 0, 0.0, product_residual(slope, x))


@triton.jit
def _elu(x, alpha, p1):
    return tl.where(x > 0, x, tl.where(tl.abs(x) < EXPM1_X, alpha * x, alpha * libdevice.expm1(x)))


@triton.jit
def _elu_residual(x, alpha, p1):
    # alpha expm1(x) = alpha x + alpha x^2/2 (1 + x/3 + ...): where v = alpha x is exact (its product
    # residual 0) and |x| < 2^-53, lo = alpha x^2/2, below half a float64 ulp of v. v is a float32
    # midpoint where alpha x is one (alpha = 0.5, x a subnormal with an odd last bit). A lo that
    # underflows to 0 is no tie.
    lo = (alpha * 0.5) * (x * x)
    exact_v = product_residual(alpha, x) == 0
    zero = ((tl.zeros_like(x) + alpha) == 0) | (x == 0)
    known = (x <= 0) & (tl.abs(x) < EXPM1_X) & exact_v & ((lo != 0) | zero)
    return tl.where(known, lo, float("nan"))


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
device("silu", _silu, 2 * LIBM, why="sigmoid's bound and one product; x/2 and the residual x^2/4 below 2^-54",
       residual=_silu_residual)
device("tanh", _tanh, LIBM, why="libdevice's tanh")
device("hardsigmoid", _hardsigmoid, 4, why="x + 3 (exact near -3, rounded once elsewhere) and /6",
       exact_at=_hardsigmoid_exact)
device("hardswish", _hardswish, 8, why="x + 3, a product and /6, each rounded once; the residual x^2/6 below "
                                       "2^-52", residual=_hardswish_residual)
device("leaky_relu", _leaky_relu, 2, ("negative_slope",), why="one product; the residual is its exact error",
       residual=_leaky_relu_residual)
device("elu", _elu, LIBM + 2, ("alpha",), why="expm1 (LIBM) and one product; the residual alpha x^2/2 where "
                                              "alpha x is exact and |x| < 2^-53", residual=_elu_residual)
device("selu", _selu, LIBM + 8, why="expm1, the two constants' own roundings and two products")
device("celu", _celu, 4 * LIBM, ("alpha",), why="x/alpha rounded once, expm1's condition <= 1 for x < 0, "
                                                 "one product")
device("mish", _mish, 8 * LIBM, why="softplus (exp, log1p, a sum), tanh (condition <= 1) and a product")
device("log_sigmoid", _log_sigmoid, 4 * LIBM, why="exp and log1p (LIBM each), and a sum of like signs")
# erfc(z) at z = -x sqrt(1/2): z carries 2 roundings (2^-52), erfc's condition 2 z^2 <= 2 * 10.1^2
# where the result stays >= 2^-149 (z <= 10.1): ~204 x 2^-52, plus erfc's own and a product
device("gelu", _gelu, 1024, why="erfc's condition on a rounded argument (see comment); x/2 and the residual "
                                "x^2/sqrt(2 pi) below 2^-54", residual=_gelu_residual)
# u = sqrt(2/pi) (x + c x^3) carries ~6 roundings; 1/(1 + exp(-2u)) has condition <= 2|u| <= 104 where
# the result stays >= 2^-149: ~624 x 2^-53, plus exp's own, a sum and a quotient
device("gelu:approximate=tanh", _gelu_tanh, 2048, why="exp's condition on a rounded argument (see comment); x/2 "
                                                      "and the residual x^2/sqrt(2 pi) below 2^-55",
       residual=_gelu_tanh_residual)
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
def sigmoid_mul_tiny(m, b):
    """(s, lo) for |b| <= 2^-20 and finite m of at most 48 significant bits (a product of two
    float32 values): m sigmoid(b) = m/2 + m b/4 - m b^3/48 + d, |d| <= |m b^5|/480, and
    m/2 + m b/4 = s + e + pe/4 exactly (TwoProd p + pe = m b, TwoSum s + e). lo = r + t3, r =
    e + pe/4 and the cubic term t3 each rounded (within u and 5u of their own size), is kept where
    it exceeds 2^-50 (|r| + |t3|) plus d's bound |p| b^4/256 (where that underflows, |d| < 2^-1074
    while |r| + |t3| >= 2^-751): there its sign is the side of s the exact value lies on; NaN
    elsewhere. All terms are multiples of U = ulp(m) ulp(b)/4 > |m b| 2^-74 (2^-50 where m has 24
    bits), ulp being a significand's last place, so r is 0 or at least U, which for |b| <= 2^-35
    (2^-23) is over twice |t3|: lo is kept there always. |exact - s - e| <= 2^-11 u |s| and |e| is
    at most half s's float64 gap: no float64 lies strictly between s and the exact value. The ties:
    m/2 a float32 midpoint (a subnormal a of glu with an odd last bit, a 25-bit gate up of swiglu)
    and b tiny, or m/2 + m b/4 one (glu(2^12, 2^-23) = 2^11 + 2^-13 - 2^-61/3). Where m b = 0,
    s = m/2 with m's zero sign and lo = 0 (sigmoid(0) = 1/2)."""
    p = m * b
    pe = libdevice.fma(m, b, p * -1.0)
    s, e = two_sum(m * 0.5, p * 0.25)
    r = e + pe * 0.25
    bb = b * b
    t3 = p * bb * MINUS_48TH
    lo = r + t3
    known = tl.abs(lo) > (tl.abs(r) + tl.abs(t3)) * TWO_M50 + tl.abs(p * bb * bb) * TWO_M8
    return tl.where(p == 0, m * 0.5, s), tl.where(known | (p == 0), lo, float("nan"))


@triton.jit
def _glu(a, b, p0, p1):
    # an infinite a keeps the plain form a * sigmoid(b) (the CPU oracle's: inf * 0 is NaN at b = -inf)
    plain = a * sigmoid64(b)
    s, lo = sigmoid_mul_tiny(a, b)
    v = tl.where(tl.abs(b) <= TINY_SIGMOID, s, sigmoid_mul64(a, b))
    return tl.where(tl.abs(a) < float("inf"), v, plain)


@triton.jit
def _glu_residual(a, b, p0, p1):
    s, lo = sigmoid_mul_tiny(a, b)
    return tl.where((tl.abs(b) <= TINY_SIGMOID) & (tl.abs(a) < float("inf")), lo, float("nan"))


@triton.jit
def _swiglu(gate, up, p0, p1):
    # silu(gate) * up; where an operand is infinite or NaN, the CPU oracle's form: gate * (sigmoid(gate)
    # * up), and -0 * up at gate = -inf
    plain = tl.where(gate == -float("inf"), neg_zero(gate) * up, gate * (sigmoid64(gate) * up))
    finite = (tl.abs(gate) < float("inf")) & (tl.abs(up) < float("inf"))
    m = gate * up
    s, lo = sigmoid_mul_tiny(m, gate)
    v = tl.where(gate >= ONE_SWIGLU, m, sigmoid_mul64(m, gate))
    v = tl.where(tl.abs(gate) <= TINY_SIGMOID, s, v)
    return tl.where(finite, v, plain)


@triton.jit
def _swiglu_residual(gate, up, p0, p1):
    # gate >= 38: the value is m = gate up, a float32 midpoint where it has 25 significant bits, and the
    # exact value m - m e^-g / (1 + e^-g) lies below |m| by less than |m| 2^-54, half its float64 gap:
    # lo = -m e^-g, floored at |m| 2^-600 (e^-g underflows from g = 745; |m| >= 38 2^-149), which keeps
    # its sign and v + lo within 2^-600 |v| of the exact value
    finite = (tl.abs(gate) < float("inf")) & (tl.abs(up) < float("inf"))
    m = gate * up
    s, lo = sigmoid_mul_tiny(m, gate)
    one = (m * tl.maximum(libdevice.exp(gate * -1.0), TWO_M600)) * -1.0
    return tl.where(finite & (tl.abs(gate) <= TINY_SIGMOID), lo,
                    tl.where(finite & (gate >= ONE_SWIGLU), one, float("nan")))


# m sigmoid(b): sigmoid's bound (2 LIBM: exp, a sum, a quotient) and one product; below b = -600
# two exps of an exact argument and two products; m = gate * up is exact for these formats; for tiny b
# a double-double (sigmoid_mul_tiny) and its residual
device("glu", _glu, 3 * LIBM, why="a * sigmoid(b): sigmoid's bound and one product, e^b split below b = -600; "
                                  "a/2 + a b/4 and the residual for |b| <= 2^-20", arity=2,
       residual=_glu_residual)
WHY_SWIGLU = ("(gate up, exact) * sigmoid(gate): sigmoid's bound and one product, e^gate split below -600; "
              "m/2 + m gate/4 and the residual for |gate| <= 2^-20, m and -m e^-gate from gate = 38")
device("swiglu", _swiglu, 3 * LIBM, why=WHY_SWIGLU, arity=2, residual=_swiglu_residual)
device("silu_and_mul", _swiglu, 3 * LIBM, why=WHY_SWIGLU, arity=2, residual=_swiglu_residual)
