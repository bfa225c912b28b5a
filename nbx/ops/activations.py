"""Activations: relu ... log_sigmoid, threshold, glu, swiglu, silu_and_mul, dropout (inference).

Every float formula is evaluated whole in float64 (m.widen) and rounded once: to float32 in the
body, or to float16/bfloat16 on the store (rule F computes those in float64). That makes the result
correctly rounded except within ~2^-29 float32 ulp (2^-41 float16 ulp) of a rounding boundary; for
float64 inputs the same formulas run in float64 and cost a few ulp. Where a result narrower than
float64 is x*c, a rounding tie of a subnormal result (silu, gelu, hardswish and elu's alpha x, glu
and swiglu's a/2), float64 holds the tie and loses the x^2 term that moves the exact value off it;
those bodies add that term rounded to odd (m.with_residual, below |x| = 2^-30) for float32 and, as
their `_16` forms, for float16/bfloat16: 0 of 65,536 bfloat16 inputs of silu misrounded, where
ties-to-even on x/2 misrounds 128 (`nbx run --suite exhaustive16 --op silu --dtype bfloat16`).
The float64 arithmetic is not hidden behind memory: on the H200 these ops run at 0.30 (gelu, mish)
to 0.94 (relu, leaky_relu) of a device copy (reports/h200/gpu-check-20261204.md).

Parameters (alpha, negative_slope, beta, threshold) travel as float64, the binary64 value the
caller passed, so `negative_slope * x` is the product of the two exact values rounded once (the
oracle's definition), and softplus's branch `x*beta > threshold` is decided on the exact product
for float32 inputs.
"""
import math

import triton
import triton.language as tl

from ..dtype import ALL, NUMERIC, float64, int64
from ..kernels import math as m
from ..kernels.fast32 import activations as fast
from ..kernels.fast32 import exp
from ..kernels.fastpath import FastPath
from ..kernels.fast32.activations import GELU_TANH_COEFF, INV6, SELU_ALPHA, SELU_SCALE, SQRT_2_OVER_PI
from ..tensor import Tensor
from .registry import Choices, OpSpec, Param, by_storage, composed, op, run
from .verify import CR16, Order, Split, Variant, Verify, in_operand_dtype


# ATen's SELU and GELU constants are kernels/fast32/activations.py's, which the fast paths share.
SQRT_HALF = tl.constexpr(0.70710678118654752440084436210485)
# What each float64 constant above misses of the exact value (mpmath at 300 bits; 0.044715 as the
# decimal), for gelu's double-double arguments
SQRT_HALF_LO = tl.constexpr(-4.833646656726457e-17)
SQRT_2_OVER_PI_LO = tl.constexpr(-4.98465440455546e-17)
GELU_TANH_COEFF_LO = tl.constexpr(2.1960211427085595e-18)
TWO_OVER_SQRT_PI = tl.constexpr(1.1283791670955126)      # -erfc'(t) = 2/sqrt(pi) exp(-t^2)
# Below |x| = 2^-30 the bodies of narrow results take x*c + d*x^2 (with_residual). float64 keeps
# nothing of d*x^2 where it is under half an ulp of x*c (silu's sigmoid(x) is 0.5 exactly below
# |x| ~ 2^-52); the next term of each series is at most |x|/3 of the residual (elu; x^2/12 for the
# others), and the only rounding boundary within 2^-25 |x c| of x*c is x*c itself, at the residual's
# distance: so v + lo rounded to odd and the exact value round alike.
TINY = tl.constexpr(2.0 ** -30)
INV_SQRT_2PI = tl.constexpr(0.39894228040143267793994605993438)   # gelu(x) = x/2 + x^2/sqrt(2 pi) + O(x^4)


# ---------------------------------------------------------------- bodies
@triton.jit
def _neg_zero(like):
    # -0.0 from the bits: a literal -0.0 and `-x` (Triton lowers it to 0 - x) both give +0.0
    return m.copysign(tl.zeros_like(like), tl.full(like.shape, -1.0, like.dtype))


@triton.jit
def _relu(x):
    # relu(-0) = +0 (max with -0 < +0); NaN stays NaN
    if x.dtype.is_floating():
        return tl.where(x > 0, x, tl.where(x != x, x, tl.zeros_like(x)))
    else:
        return tl.where(x > 0, x, tl.zeros_like(x))


@triton.jit
def _sigmoid(x):
    return m.rounded_later(m.sigmoid_stable(m.widen(x)), x)


@triton.jit
def _tie_safe(x, w, r, v, lo, NARROW: tl.constexpr):
    """r, or below |x| = TINY v + lo rounded to odd (m.with_residual), where the result is stored
    narrower than float64: a float32 computation, or NARROW (the `_16` bodies: float16/bfloat16
    computed in float64). v is the series' exact first term (x/2), lo the term float64 loses."""
    if NARROW or x.dtype == tl.float32:
        r = tl.where((tl.abs(w) < TINY) & (w != 0), m.with_residual(v, lo), r)
    return r


@triton.jit
def _silu_impl(x, NARROW: tl.constexpr):
    # x * sigmoid(x): at x = -inf the product is -inf * 0; the limit (and the value at every large
    # negative finite x) is -0. silu(x) = x/2 + x^2/4 + O(x^4).
    w = m.widen(x)
    r = _tie_safe(x, w, w * m.sigmoid_stable(w), w * 0.5, w * w * 0.25, NARROW)
    return m.rounded_later(tl.where(w == -float("inf"), _neg_zero(w), r), x)


@triton.jit
def _silu(x):
    return _silu_impl(x, False)


@triton.jit
def _silu_16(x):
    return _silu_impl(x, True)


@triton.jit
def _finite_or_zero(v):
    return tl.where(v - v == 0, v, 0.0)


@triton.jit
def _gelu_erf_impl(x, NARROW: tl.constexpr):
    # 0.5x(1 + erf(x/sqrt2)) = 0.5x erfc(-x/sqrt2): no cancellation for x << 0, where 1 + erf
    # loses every digit (x = -5: 1 + erf = 1.5e-12 from two O(1) numbers). For a float32 result
    # erfc's relative condition there, 2t^2 (t = -x/sqrt2 up to 10.3 before the result
    # underflows), would turn t's own rounding into ~200 float64 ulps, beyond the hard-case window
    # (hard32.HARD32_K = 8): t is carried as t + e (an fma residual and sqrt(1/2)'s missing part)
    # and erfc(t + e) = erfc(t) - e 2/sqrt(pi) exp(-t^2), the next term e^2 t of the first.
    # float64 keeps the documented order (GELU_ORDERS).
    w = m.widen(x)
    c = tl.full(w.shape, -SQRT_HALF, tl.float64)
    t = w * c
    v = m.erfc(t)
    if x.dtype == tl.float32:
        e = _finite_or_zero(m.fma(w, c, -t) + w * -SQRT_HALF_LO)
        v = v - e * TWO_OVER_SQRT_PI * m.exp(-t * t)
    r = _tie_safe(x, w, 0.5 * w * v, w * 0.5, w * w * INV_SQRT_2PI, NARROW)
    return m.rounded_later(tl.where(w == -float("inf"), _neg_zero(w), r), x)


@triton.jit
def _gelu_tanh_impl(x, NARROW: tl.constexpr):
    # 0.5x(1 + tanh(u)) = x / (1 + exp(-2u)): exact identity; the right side has no cancellation
    # for u << 0 and exp(-2u) overflowing to inf gives -0 (the limit) instead of NaN. Near 0 it is
    # x/2 + x^2/sqrt(2 pi) + O(x^4), as the erf form. For a float32 result exp(-2u)'s relative
    # condition, 2|u| (up to ~103 before the result underflows), would cost ~300 float64 ulps:
    # u = sqrt(2/pi) (x + 0.044715 x^3) is carried as a double-double (x^2 exact, x^3 and each
    # product split by an fma, both constants' missing parts), and exp(-2(u + ul)) = exp(-2u)
    # (1 - 2 ul) to 2^-90. float64 keeps the documented order (GELU_ORDERS).
    w = m.widen(x)
    if x.dtype == tl.float32:
        w2 = w * w                                           # exact: 48 bits of a float32 square
        h3 = w2 * w
        l3 = m.fma(w2, w, -h3)
        k = tl.full(w.shape, GELU_TANH_COEFF, tl.float64)
        a = m.product_rn(h3, k)                              # unfused: two_sum below needs it rounded
        al = m.fma(h3, k, -a) + (h3 * GELU_TANH_COEFF_LO + l3 * k)
        s, sl = m.two_sum(w, a)
        sl = sl + al
        c = tl.full(w.shape, SQRT_2_OVER_PI, tl.float64)
        u = s * c
        # beyond |u| = 1024 exp(-2u) is 0 or inf whatever ul is (and ul may be inf or NaN there)
        ul = tl.where(tl.abs(u) < 1024.0, m.fma(s, c, -u) + (s * SQRT_2_OVER_PI_LO + sl * c), 0.0)
        big = m.exp(-2.0 * u) * (1.0 - 2.0 * ul)
    else:
        big = m.exp(-2.0 * ((w + w * w * w * GELU_TANH_COEFF) * SQRT_2_OVER_PI))
    r = _tie_safe(x, w, w / (1.0 + big), w * 0.5, w * w * INV_SQRT_2PI, NARROW)
    return m.rounded_later(tl.where(w == -float("inf"), _neg_zero(w), r), x)


@triton.jit
def _gelu_tanh_exact(w):
    """gelu tanh's exact body at a float32 value held as float64: what its fast path approximates."""
    return _gelu_tanh_impl(w.to(tl.float32), False)


GELU_TANH = FastPath(fast.gelu_tanh, table=exp.EXP_TABLE, k=fast.GELU_TANH_K.value, reference=_gelu_tanh_exact,
                     pieces=True)


@triton.jit
def _gelu_erf_exact(w):
    """gelu's exact body at a float32 value held as float64: what its fast path approximates."""
    return _gelu_erf_impl(w.to(tl.float32), False)


GELU_ERF = FastPath(fast.gelu_erf, table=exp.EXP_TABLE, reference=_gelu_erf_exact)


@triton.jit
def _gelu_erf(x):
    return _gelu_erf_impl(x, False)


@triton.jit
def _gelu_erf_16(x):
    return _gelu_erf_impl(x, True)


@triton.jit
def _gelu_tanh(x):
    return _gelu_tanh_impl(x, False)


@triton.jit
def _gelu_tanh_16(x):
    return _gelu_tanh_impl(x, True)


@triton.jit
def _tanh(x):
    return m.tanh(x)


@triton.jit
def _sixth_to_odd(nh, nl):
    """(nh + nl)/6 rounded to odd, for the store's one rounding: q from a product by 1/6 (within
    ~0.6 ulp), corrected once by the exact remainder fma(q, -6, nh) + nl to within half an ulp and a
    hair, then moved to odd by the sign of the next remainder (math.round_to_odd). No float64
    division: DDIV is a subroutine, and held float32 hardsigmoid at 0.65 of copy on an H100."""
    six = tl.full(nh.shape, -6.0, tl.float64)
    q = nh * INV6
    q = q + (m.fma(q, six, nh) + nl) * INV6
    return m.round_to_odd(q, m.fma(q, six, nh) + nl)


@triton.jit
def _hardsigmoid(x):
    # ATen: min(max(x + 3, 0), 6) / 6; NaN propagates through the explicit where. A float32
    # computation is exact: x + 3 = nh + nl by TwoSum (x + 3 loses bits of x below 2^-28), sixth
    # rounded to odd; float64 keeps ATen's order (w + 3 rounded, one division)
    w = m.widen(x)
    if x.dtype == tl.float32:
        nh, nl = m.two_sum(w, tl.full(w.shape, 3.0, tl.float64))
        r = tl.where(w <= -3.0, 0.0, tl.where(w >= 3.0, 1.0, _sixth_to_odd(nh, nl)))
    else:
        r = tl.minimum(tl.maximum(w + 3.0, 0.0), 6.0) / 6.0
    return m.rounded_later(tl.where(w != w, w, r), x)


@triton.jit
def _hardswish_impl(x, NARROW: tl.constexpr):
    # piecewise: 0 for x <= -3, x for x >= 3, x(x+3)/6 = x/2 + x^2/6 between (ATen's
    # x*min(max(x+3,0),6)/6 is NaN at -inf; the definition gives 0). A result stored narrower than
    # float64 is exact: N = x^2 + 3x is a sum of two exact float64 values (a float32 square has 48
    # bits), held as Nh + Nl by TwoSum, and N/6 rounded to odd (_sixth_to_odd), which the store
    # then rounds as it would N/6. Rational, so no table of hard cases is needed:
    # x(x+3)/6 rounded from float64 lands within 8 float64 ulps of a float32 midpoint on 2,954
    # inputs besides the 2^23 subnormal ties x/2.
    w = m.widen(x)
    if NARROW or x.dtype == tl.float32:
        nh, nl = m.two_sum(w * w, w * 3.0)
        mid = tl.where(w == 0, w, _sixth_to_odd(nh, nl))
    else:
        mid = w * (w + 3.0) / 6.0
    return m.rounded_later(tl.where(w <= -3.0, 0.0, tl.where(w >= 3.0, w, mid)), x)


@triton.jit
def _hardswish(x):
    return _hardswish_impl(x, False)


@triton.jit
def _hardswish_16(x):
    return _hardswish_impl(x, True)


@triton.jit
def _leaky_relu_impl(x, slope, NARROW: tl.constexpr):
    # negative_slope*x rounded to float64 can be a tie of a subnormal narrow result that the exact
    # product misses (float16 0x8032 = -50 * 2^-24 times float64 0.01, which is 0.01 + 2.1e-19:
    # 2^-25 + 2^-80, rounded to float64 2^-25, then to even -0): the product's fma error added
    # rounded to odd keeps its side (float16 21 and bfloat16 3 of 65,536 inputs misrounded without)
    w = m.widen(x)
    v = slope * w
    if NARROW or x.dtype == tl.float32:
        p = m.product_rn(slope, w)
        v = tl.where(w == 0, v, m.with_residual(p, m.fma(slope, w, p * -1.0)))
    return tl.where(w > 0, w, v).to(x.dtype)


@triton.jit
def _leaky_relu(x, slope):
    return _leaky_relu_impl(x, slope, False)


@triton.jit
def _leaky_relu_16(x, slope):
    return _leaky_relu_impl(x, slope, True)


@triton.jit
def _elu_impl(x, alpha, NARROW: tl.constexpr):
    # expm1, not exp(x) - 1: near 0 the difference cancels (x = -1e-8: exp - 1 keeps 8 digits).
    # alpha*expm1(x) = alpha x + alpha x^2/2 + O(x^3); alpha x rounds in float64 unless alpha is
    # short, so the residual carries the product's error (fma) too.
    w = m.widen(x)
    v = m.product_rn(alpha, w)
    lo = m.fma(alpha, w, v * -1.0) + v * w * 0.5
    r = _tie_safe(x, w, alpha * m.expm1(w), v, lo, NARROW)
    return tl.where(w > 0, w, r).to(x.dtype)


@triton.jit
def _elu(x, alpha):
    return _elu_impl(x, alpha, False)


@triton.jit
def _elu_16(x, alpha):
    return _elu_impl(x, alpha, True)


@triton.jit
def _celu(x, alpha):
    # ATen's form x > 0 ? x : alpha*expm1(x/alpha): celu(-0) = -0
    w = m.widen(x)
    return tl.where(w > 0, w, alpha * m.expm1(w / alpha)).to(x.dtype)


@triton.jit
def _selu(x):
    w = m.widen(x)
    return m.rounded_later(tl.where(w > 0, w, m.expm1(w) * SELU_ALPHA) * SELU_SCALE, x)


@triton.jit
def _mish(x):
    # x * tanh(softplus(x)) with the stable softplus; -inf * tanh(0) is NaN, the limit is -0
    w = m.widen(x)
    r = w * m.tanh(m.softplus_stable(w))
    return m.rounded_later(tl.where(w == -float("inf"), _neg_zero(w), r), x)


@triton.jit
def _softplus(x, beta, threshold):
    # ATen: x*beta > threshold ? x : log1p(exp(beta*x))/beta, with the overflow-free softplus
    w = m.widen(x)
    u = w * beta
    return m.rounded_later(tl.where(u > threshold, w, m.softplus_stable(u) / beta), x)


@triton.jit
def _log_sigmoid(x):
    # -softplus(-x) = min(x, 0) - log1p(exp(-|x|)): never exp of a large number, and at large x the
    # tiny -exp(-x) survives in log1p
    w = m.widen(x)
    return m.rounded_later(m.softplus_stable(w * -1.0) * -1.0, x)


@triton.jit
def _threshold(x, thr, value):
    # ATen: x <= threshold ? value : x (so NaN stays NaN)
    if x.dtype.is_floating():
        return tl.where(m.widen(x) <= thr, value.to(x.dtype), x)
    else:
        return tl.where(x <= thr, value.to(x.dtype), x)


@triton.jit
def _series_tie_safe(c, z, h, t1, e1, cz, r):
    """For 0 < |z| < 2^-12 and a finite nonzero c: c sigmoid(z) = h + t1 + e1 + (-cz z^2/48) + O(c z^5)
    (h = c/2, t1 + e1 = c z/4 exactly, cz = c z) as the exact sum h + t1 rounded to odd with the rest:
    the narrow result's rounding tie that h + t1 can be is decided by the cubic term, which float64
    drops. The next term is z^2/10 of the cubic one, and h + t1 + cubic lies at least a third of
    the exact terms' grid from a midpoint, so the series rounds as the exact value does; r elsewhere."""
    small = (tl.abs(z) < 2.0 ** -12) & (z != 0) & (c != 0) & (tl.abs(c) < float("inf"))
    s, l = m.two_sum(h, t1)
    rest = (l + e1) + cz * (z * z) * (-1.0 / 48.0)
    return tl.where(small, m.with_residual(s, rest), r)


@triton.jit
def _glu_impl(a, b, NARROW: tl.constexpr):
    # a sigmoid(b) = a/2 + a b/4 - a b^3/48 + O(a b^5): a/2 is a tie where a is a subnormal with an
    # odd last bit, and a/2 + a b/4 (exact) a tie of the narrow format that -a b^3/48, below
    # float64's last bit, decides (float32 glu(0x4a000000, 0x36680000): 6 of 2^18 stratified tuples
    # misrounded on the interpreter without the series)
    wa = m.widen(a)
    wb = m.widen(b)
    r = wa * m.sigmoid_stable(wb)
    if NARROW or a.dtype == tl.float32:
        r = _series_tie_safe(wa, wb, wa * 0.5, wa * wb * 0.25, 0.0, wa * wb, r)
    return m.rounded_later(r, a)


@triton.jit
def _glu(a, b):
    return _glu_impl(a, b, False)


@triton.jit
def _glu_16(a, b):
    return _glu_impl(a, b, True)


@triton.jit
def _swiglu_impl(gate, up, NARROW: tl.constexpr):
    # gate * (sigmoid(gate) * up), not silu(gate) * up: silu(5e-324) underflows to 0 before the
    # product with a large up (float64: measured 9e15 ulp on the H200 and the interpreter). Near
    # gate = 0 it is gate up/2 + gate^2 up/4 + O(gate^4 up); gate*up is exact for operands narrower
    # than float64.
    g = m.widen(gate)
    u = m.widen(up)
    gu = g * u
    r = g * (m.sigmoid_stable(g) * u)
    if NARROW or gate.dtype == tl.float32:
        # gate up (1/2 + gate/4 - gate^3/48): gate up gate has up to 72 bits, so its float64 value q
        # and the fma remainder e both enter
        q = gu * g
        e = m.fma(gu, g, q * -1.0)
        r = _series_tie_safe(gu, g, gu * 0.5, q * 0.25, e * 0.25, q, r)
        # from gate ~ 37.4 on sigmoid(gate) is 1.0 in float64 and gate*up, a tie where it has one bit
        # more than the format (float16 62 * 62.5 = 3875), loses -gate up e^-gate (float16 16 and
        # bfloat16 27 of 2^16 nightly pairs misrounded without). Only the residual's sign counts once
        # it is below half a float64 ulp of gate up; e^-gate underflows to 0 from gate ~ 745 on, so
        # it is kept at 2^-200 or more (gate = 3 2^98 with gate up a float32 tie: misrounded without)
        r = tl.where(g > 32.0, m.with_residual(gu, gu * tl.maximum(m.exp(g * -1.0), 2.0 ** -200) * -1.0), r)
    return m.rounded_later(tl.where(g == -float("inf"), _neg_zero(g) * u, r), gate)


@triton.jit
def _swiglu(gate, up):
    return _swiglu_impl(gate, up, False)


@triton.jit
def _swiglu_16(gate, up):
    return _swiglu_impl(gate, up, True)


@triton.jit
def _identity(x):
    return x


# ---------------------------------------------------------------- specs
def _f64_params(*names):
    return lambda params, t: [(params[n], float64) for n in names]


def activation(name, rule, dtypes, body, doc, **kw):
    return op(name, 1, rule, tuple(dtypes), body, doc=doc, **kw)


# float64: the documented orders below, measured against nbx/oracles/order.py (0 ulp); their error
# against the exact value is reported beside. sigmoid(b) is e/(1+e) or 1/(1+e), e = exp(-|b|).
_ARG_ROUNDED = ("the argument of the libm step is rounded, and the step's condition number multiplies "
                "that rounding: ~2z^2 for erfc(z), ~2|u| for 1/(1 + exp(-2u)), up to ~10^3 ulp in the "
                "negative tail; the exact value would need the argument in double-double")
GELU_ORDERS = {"none": Order("(0.5*x) * erfc((-x)*sqrt(1/2)): each product rounded to float64, erfc the "
                             "backend's float64 erfc", _ARG_ROUNDED),
               "tanh": Order("x / (1 + exp(-2u)), u = (x + ((x*x)*x)*0.044715) * sqrt(2/pi): each operation "
                             "rounded to float64, exp the backend's float64 exp", _ARG_ROUNDED)}
GLU_ORDER = Order("a * sigmoid(b): exp, a sum, a quotient and a product, each rounded to float64",
                  "sigmoid's libm exp and three roundings: the exact value would need exp to more than "
                  "float64 precision")
GATED_SILU_ORDER = Order("gate * (sigmoid(gate) * up), each step rounded to float64 (sigmoid as for glu)",
                         "as glu; the product is taken in this order so that silu(gate) never underflows "
                         "before the product with a large up")

activation("relu", "S", NUMERIC, _relu, "max(x, 0); relu(-0.0) = +0.0; NaN stays NaN.", verify=Verify(correctly_rounded=CR16))
activation("sigmoid", "F", ALL, _sigmoid, "1/(1+exp(-x)), two branches on exp(-|x|): no NaN at either end.",
           fast32=fast.SIGMOID, verify=Verify(correctly_rounded=CR16))
activation("silu", "F", ALL, by_storage(_silu, _silu_16), "x * sigmoid(x); silu(-inf) = -0.0.",
           fast32=fast.SILU, verify=Verify(correctly_rounded=CR16))
activation("gelu", "F", ALL, Choices("approximate", {"none": by_storage(_gelu_erf, _gelu_erf_16),
                                                     "tanh": by_storage(_gelu_tanh, _gelu_tanh_16)}),
           "'none': 0.5x(1+erf(x/sqrt2)), as x/2*erfc(-x/sqrt2); 'tanh': 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))), "
           "as x/(1+exp(-2u)). gelu(-inf) = -0.0.",
           params=(Param("approximate", "none", kind="choice", choices=("none", "tanh")),),
           # double-double argument and hard-case tables (gelu.json, gelu@approximate=tanh.json): 0 of
           # 2^32 float32 inputs misrounded and none left out for either form (H100)
           verify=Verify(correctly_rounded=CR16, variants=(Variant({"approximate": "tanh"}),)),
           order=Choices("approximate", GELU_ORDERS), fast32=Choices("approximate", {"none": GELU_ERF, "tanh": GELU_TANH}))
activation("tanh", "F", ALL, _tanh, "tanh(x).", fast32=exp.TANH, verify=Verify(correctly_rounded=CR16))
activation("hardsigmoid", "F", ALL, _hardsigmoid, "clamp(x/6 + 1/2, 0, 1), as ATen's min(max(x+3, 0), 6)/6.",
           verify=Verify(correctly_rounded=CR16))
activation("hardswish", "F", ALL, by_storage(_hardswish, _hardswish_16), "x * hardsigmoid(x): 0 for x <= -3, x for x >= 3.",
           fast32=fast.HARDSWISH, verify=Verify(correctly_rounded=CR16, exact32="x(x+3)/6 from exact parts, rounded to odd"))
activation("leaky_relu", "F", ALL, by_storage(_leaky_relu, _leaky_relu_16), "x > 0 ? x : negative_slope*x.",
           params=(Param("negative_slope", 0.01, dtype="float64"),),
           # negative_slope*x's error kept by math.with_residual: 0 of 2^32 float32 inputs misrounded
           # for either variant (H100)
           verify=Verify(correctly_rounded=CR16, variants=(Variant({"negative_slope": 0.2}),)))
activation("elu", "F", ALL, by_storage(_elu, _elu_16), "x > 0 ? x : alpha*expm1(x).", params=(Param("alpha", 1.0, dtype="float64"),),
           fast32=fast.ELU,
           # alpha*x's subnormal ties decided by math.with_residual: 0 of 2^32 float32 inputs misrounded
           # for alpha 1 and 0.5 (H100)
           verify=Verify(correctly_rounded=CR16, variants=(Variant({"alpha": 0.5}),)))
activation("celu", "F", ALL, _celu, "x > 0 ? x : alpha*expm1(x/alpha) (= max(0,x) + min(0, alpha*expm1(x/alpha)), "
           "except celu(-0.0) = -0.0).", params=(Param("alpha", 1.0, dtype="float64"),), fast32=fast.CELU,
           verify=Verify(variants=(Variant({"alpha": 2.0}),), correctly_rounded=CR16))
activation("selu", "F", ALL, _selu, "scale*(x > 0 ? x : alpha*expm1(x)), ATen's scale and alpha.",
           fast32=fast.SELU, verify=Verify(correctly_rounded=CR16))
activation("mish", "F", ALL, _mish, "x * tanh(softplus(x)), softplus overflow-free; mish(-inf) = -0.0.",
           fast32=fast.MISH, verify=Verify(correctly_rounded=CR16))
activation("softplus", "F", ALL, _softplus,
           "x*beta > threshold ? x : log1p(exp(beta*x))/beta, evaluated as (max(u,0) + log1p(exp(-|u|)))/beta.",
           params=(Param("beta", 1.0, dtype="float64"), Param("threshold", 20.0, dtype="float64")), fast32=fast.SOFTPLUS,
           verify=Verify(correctly_rounded=CR16, variants=(Variant({"beta": 2.0, "threshold": 10.0}),)))
activation("log_sigmoid", "F", ALL, _log_sigmoid, "log(sigmoid(x)) = min(x,0) - log1p(exp(-|x|)).",
           fast32=fast.LOG_SIGMOID, verify=Verify(correctly_rounded=CR16))


def _threshold_params(params, t):
    for n in ("threshold", "value"):
        if params[n] is None:
            raise TypeError(f"nbx.threshold: argument '{n}' is required (a Python number)")
    thr, value = params["threshold"], params["value"]
    if t.common.is_float:
        return [(thr, float64), (value, t.common)]
    # integers: x <= t  <=>  x <= floor(t), compared in int64 (exact for every integer dtype)
    if isinstance(thr, float) and math.isnan(thr):
        # ATen refuses a NaN threshold for integers (it does not convert); comparing would
        # replace nothing, but floor(NaN) has no integer value to send
        raise ValueError(f"nbx.threshold: threshold=nan cannot be compared with {t.common.name} input; "
                         "allowed: a number that is not NaN (inf and -inf included)")
    if isinstance(thr, float) and math.isinf(thr):
        floor = int64.max if thr > 0 else int64.min - 1
    else:
        floor = math.floor(thr)
    if floor < int64.min and t.common is int64:
        # no int64 sits below every int64: x <= int64.min would still replace int64.min
        raise ValueError(f"nbx.threshold: threshold={thr!r} is below every int64 value; allowed for "
                         f"int64 input: threshold >= {int64.min}")
    thr_int = max(int64.min, min(int64.max, floor))
    return [(thr_int, int64), (value, t.common)]


activation("threshold", "S", NUMERIC, _threshold,
           "x <= threshold ? value : x (ATen; NaN stays NaN). value is rounded to the input's dtype; for "
           "integer inputs value must be an integer that fits.",
           params=(Param("threshold", None), Param("value", None)), kernel_params=_threshold_params,
           verify=Verify(variants=(in_operand_dtype(threshold=0.5, value=-2.0), in_operand_dtype(threshold=0, value=7)),
                         measure_default=False, correctly_rounded=CR16))


# ---------------------------------------------------------------- compositions over views
_GLU2 = composed(OpSpec("glu", 2, "F", ALL, by_storage(_glu, _glu_16), family="activations",
                        operand_names=("input[first half]", "input[second half]"), order=GLU_ORDER,
                        fast32=fast.GLU))
_SILU_AND_MUL2 = composed(OpSpec("silu_and_mul", 2, "F", ALL, by_storage(_swiglu, _swiglu_16),
                                 family="activations", operand_names=("input[..., :d]", "input[..., d:]"),
                                 order=GATED_SILU_ORDER, fast32=fast.SWIGLU))


def _halves(name, x, dim):
    if not isinstance(x, Tensor):
        raise TypeError(f"nbx.{name}: argument 'input' must be an nbx Tensor, got {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError(f"nbx.{name}: input is 0-dim; it needs a dim to split in two halves")
    if isinstance(dim, bool) or not isinstance(dim, int) or not -x.ndim <= dim < x.ndim:
        raise ValueError(f"nbx.{name}: dim={dim!r} out of range for a tensor of {x.ndim} dims "
                         f"(allowed {-x.ndim}..{x.ndim - 1})")
    d = dim % x.ndim
    n = x.shape[d]
    if n % 2:
        raise ValueError(f"nbx.{name}: argument 'input' has odd size {n} in the split dim {dim} (shape "
                         f"{x.shape}); it must be even")
    return x.narrow(d, 0, n // 2), x.narrow(d, n // 2, n // 2)


def _glu_compose(spec, operands, params, out):
    a, b = _halves("glu", operands[0], params["dim"])
    return run(_GLU2, [a, b], {}, out=out)


def _silu_and_mul_compose(spec, operands, params, out):
    a, b = _halves("silu_and_mul", operands[0], -1)
    return run(_SILU_AND_MUL2, [a, b], {}, out=out)


activation("glu", "F", ALL, by_storage(_glu, _glu_16), "a * sigmoid(b), a and b the two halves of `dim` (views, no copies).",
           params=(Param("dim", -1, dtype="int64"),), compose=_glu_compose,
           # 0 of 2^32 stratified float32 tuples misrounded, none left out, and 0 of every float16
           # and bfloat16 pair (H100, exhaustive profile)
           verify=Verify(correctly_rounded=CR16, split=Split("dim")),
           order=GLU_ORDER)
activation("silu_and_mul", "F", ALL, by_storage(_swiglu, _swiglu_16),
           "silu(x[..., :d]) * x[..., d:] with d half the last dim (views, no copies).",
           compose=_silu_and_mul_compose, order=GATED_SILU_ORDER,
           # 0 of 2^32 stratified float32 tuples and 0 of every float16 and bfloat16 pair misrounded,
           # none left out (H100, exhaustive profile)
           verify=Verify(correctly_rounded=CR16, split=Split(),
                         ci_rank8="compose over views: the two halves of the last dim"))
op("swiglu", 2, "F", ALL, by_storage(_swiglu, _swiglu_16), operand_names=("gate", "up"),
   doc="silu(gate) * up; both broadcast.", order=GATED_SILU_ORDER, fast32=fast.SWIGLU,
   # 0 of 2^32 stratified float32 tuples and 0 of every float16 and bfloat16 pair misrounded, none
   # left out (H100, exhaustive profile)
   verify=Verify(correctly_rounded=CR16))

_DROPOUT_COPY = composed(OpSpec("dropout", 1, "S", ALL, _identity, family="activations", operand_names=("input",)))


def _dropout_compose(spec, operands, params, out):
    p, train = params["p"], params["train"]
    if not isinstance(train, bool):
        raise TypeError(f"nbx.dropout: train must be a bool, got {type(train).__name__}")
    if isinstance(p, bool) or not 0.0 <= p <= 1.0:
        raise ValueError(f"nbx.dropout: p={p!r} must be a probability in [0, 1]")
    if train:
        raise NotImplementedError("nbx.dropout: train=True is not supported (nbx has no random number "
                                  "generator); inference (train=False) is the identity")
    return run(_DROPOUT_COPY, operands, {}, out=out)


activation("dropout", "S", ALL, _identity, "Inference dropout: a copy (train=True is an error).",
           params=(Param("p", 0.5), Param("train", False, kind="flag")), compose=_dropout_compose,
           verify=Verify(correctly_rounded=CR16))

