"""Activations. Each is the mathematical formula of docs/OPS.md; where the literal formula gives NaN
at an infinity (silu = x*sigmoid(x), gelu, mish at -inf are -inf*0) the oracle takes the limit,
-0.0, which is also what the formula gives at every large finite x."""
from __future__ import annotations

import math

import numpy as np
from mpmath import mp

from .base import (INF, LN2, NAN, MpConst, exact_add, exact_half, exact_mul, from_fraction, oracle, to_fraction,
                   unary_rows, vectorize)

REAL = "real"
EXACT = "exactly-representable"

# ATen's selu constants (torch/nn/functional.py, aten/src/ATen/native/Activation.cpp).
SELU_ALPHA = "1.6732632423543772848170429916717"
SELU_SCALE = "1.0507009873554804934193349852946"
GELU_TANH_COEFF = "0.044715"
_erfc = vectorize(math.erfc)


# float64 building blocks: each stable at both ends.
def sigmoid_f64(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def silu_f64(x):
    # x * sigmoid(x) with the stable sigmoid: x / (1 + exp(-x)) turns x = -711 into -0 (exp(711)
    # overflows) where the value is -7e-307, and -0 * inf then gives NaN instead of -inf (seen on
    # the H200 nightly: swiglu(-711, inf), where nbx's +-inf was right and this oracle was not).
    return np.where(x == -INF, -0.0, x * sigmoid_f64(x))


def gated_silu_f64(gate, up):
    """silu(gate) * up as gate * (sigmoid(gate) * up): silu(5e-324) underflows before the product."""
    return np.where(gate == -INF, silu_f64(gate) * up, gate * (sigmoid_f64(gate) * up))


def softplus_f64(u):
    return np.logaddexp(0.0, u)


# mpmath building blocks. softplus(u) = max(u, 0) + log1p(exp(-|u|)) never forms exp of a large
# positive number, and log1p keeps the tiny correction at large |u| instead of losing it to 1+.
def sigmoid_mp(x):
    return 1 / (1 + mp.exp(-x))


def softplus_mp(u):
    return max(u, 0) + mp.log1p(mp.exp(-abs(u)))


def _gelu_tanh_arg(x):
    # 1 + tanh(u) = 2/(1 + exp(-2u)): the form without cancellation for u << 0.
    return mp.sqrt(2 / mp.pi) * (x + mp.mpf(GELU_TANH_COEFF) * x ** 3)


def gelu_f64(x, approximate="none"):
    if approximate == "none":
        value = 0.5 * x * _erfc(-x * math.sqrt(0.5))
    elif approximate == "tanh":
        u = math.sqrt(2 / math.pi) * (x + float(GELU_TANH_COEFF) * x ** 3)
        value = x / (1.0 + np.exp(-2.0 * u))
    else:
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return np.where(x == -INF, -0.0, value)


def gelu_mp(x, approximate="none"):
    if approximate == "none":
        return x / 2 * mp.erfc(-x / mp.sqrt(2))
    if approximate == "tanh":
        return x / (1 + mp.exp(-2 * _gelu_tanh_arg(x)))
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def softplus_branch_f64(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, softplus_f64(beta * x) / beta)


def softplus_branch_mp(x, beta=1.0, threshold=20.0):
    # The threshold branch is part of the op (ATen), decided on the exact product x*beta.
    u = exact_mul(x, beta)
    return x if u > threshold else softplus_mp(u) / beta


def _at_zero_softplus(p):
    beta = p["beta"]
    return LN2 if beta == 1 else MpConst(lambda: mp.log(2) / beta)


# Splits (base.py, "Oracle splits"): value = exact main + a rest evaluated on its own, for the ops whose
# value comes within 2^-888 of a dyadic main part that can be a rounding midpoint; every working
# precision up to 1024 bits then returns the main part, and only the rest's sign decides the rounding.
# - m sigmoid(t) with m exact (silu: x sigmoid(x); glu: a sigmoid(b); swiglu: (gate up) sigmoid(gate);
#   gelu tanh: x sigmoid(2u)) is m - m/(1 + e^t): the rest is below 2^-888 |m| from t ~ 616 on, and m =
#   gate up of two floats is a midpoint where it has p + 1 significant bits, in every format. It is also
#   m/2 + m tanh(t/2)/2: below 2^-1016 |m| for |t| < 2^-1015 (float64 operands only), where m/2 is a
#   midpoint for an m with an odd last bit in the subnormal grid. sigmoid(t) is transcendental for a
#   rational t != 0 (e^t is, Lindemann), so the value is never exact where the rest is not 0.
# - gelu: x/2 erfc(-x/sqrt2) = x - x/2 erfc(x/sqrt2) = x/2 + x/2 erf(x/sqrt2); the second for float64's
#   smallest x, as above.
# - elu (x < 0): alpha expm1(x) = -alpha + alpha e^x (x < -710, where a parameter alpha may be a
#   midpoint of the output format) = alpha x + alpha (expm1(x) - x) (|x| < 2^-1015: alpha x is a midpoint
#   for alpha = 0.5 and an odd subnormal x); celu's -alpha + alpha e^(x/alpha) likewise (its small-x part
#   is x itself, a value of the output format, which Ziv's loop decides).
# - hardswish (|x| < 3): x(x + 3)/6 = x/2 + x^2/6, rational: for |x| < 2^-1016 every working precision
#   rounds it to x/2. With x = M 2^e (M odd) the value is dyadic only where 3 divides M, and may then be
#   an exact tie, or x/2 plus a dyadic rest of 2000 bits; there the split is the exact value, rest 0.
# The other activations approach only values of the output format (sigmoid's 0, 1/2 and 1, tanh's +-1,
# mish's, softplus's and log_sigmoid's x), no dyadic value (selu's decimal constants, mish's 3x/5,
# softplus's log 2/beta), or are exact (relu, threshold, leaky_relu, hardsigmoid, dropout).
def _sigmoid_splits(factors):
    """The two splits of m sigmoid(t), (m, t) = factors(*inputs, **params) with m exact: the first for
    t > 1, the second for |t| < 1 (elsewhere main and rest cancel). At t = 0 the value m/2 is exact:
    the second has rest 0."""
    def whole(*xs, **kw):
        m, t = factors(*xs, **kw)
        return (m, -m / (1 + mp.exp(t))) if t > 1 else None

    def half(*xs, **kw):
        m, t = factors(*xs, **kw)
        return (exact_half(m), m * mp.tanh(t / 2) / 2) if abs(t) < 1 else None
    return whole, half


def _gelu_splits():
    def whole(x, approximate="none"):
        if not x > 1:
            return None
        if approximate == "tanh":
            return x, -x / (1 + mp.exp(2 * _gelu_tanh_arg(x)))
        return x, -x / 2 * mp.erfc(x / mp.sqrt(2))

    def half(x, approximate="none"):
        if not abs(x) < 1:
            return None
        if approximate == "tanh":
            return exact_half(x), x * mp.tanh(_gelu_tanh_arg(x)) / 2
        return exact_half(x), x / 2 * mp.erf(x / mp.sqrt(2))
    return whole, half


def _expm1_minus_x(x):
    """e^x - 1 - x without cancellation: expm1(x) and x agree to about log2(2/|x|) bits, so those many
    more are carried."""
    with mp.extraprec(max(0, -int(mp.mag(x))) + 16):
        return mp.expm1(x) - x


def _elu_splits(scaled):
    """alpha expm1(x/s) for x < 0 (s = 1: elu; s = alpha: celu): -alpha + alpha e^(x/s) for x/s < -700,
    and for elu alpha x + alpha (expm1(x) - x) for |x| < 1 (elsewhere main and rest cancel). exp(x/alpha)
    carries the bits its argument's size costs."""
    def saturated(x, alpha=1.0):
        if alpha == 0 or not x / (alpha if scaled else 1) < -700:
            return None
        if not scaled:
            return exact_mul(alpha, -1), alpha * mp.exp(x)
        with mp.extraprec(max(0, int(mp.mag(x)) - int(mp.mag(alpha))) + 16):
            return exact_mul(alpha, -1), alpha * mp.exp(x / alpha)

    def linear(x, alpha=1.0):
        return None if not -1 < x < 0 or alpha == 0 else (exact_mul(alpha, x), alpha * _expm1_minus_x(x))
    return (saturated,) if scaled else (saturated, linear)


def _hardswish_split(x):
    if not 0 < abs(x) < 3:
        return None
    q = to_fraction(x) * (to_fraction(x) + 3) / 6
    if q.denominator & (q.denominator - 1) == 0:
        return from_fraction(q), mp.zero
    return exact_half(x), exact_mul(x, x) / 6


SELU_ALPHA_F, SELU_SCALE_F = float(SELU_ALPHA), float(SELU_SCALE)
SELU_AT_NINF = MpConst(lambda: -mp.mpf(SELU_SCALE) * mp.mpf(SELU_ALPHA))


def _identity(x, *_, **__):
    return x


ORACLES = [
    oracle("relu", 1, EXACT, lambda x: np.where(x > 0, x, np.where(np.isnan(x), x, 0.0)),
           lambda x: x if x > 0 else mp.zero, lambda a: max(a, 0),
           specials=unary_rows(NAN, INF, 0.0, 0.0, 0.0, (-2.0, 0.0), (2.0, 2.0)),
           notes="max(x, 0) with -0 < +0, so relu(-0) = +0 (as nbx's maximum); NaN stays NaN"),
    oracle("threshold", 1, EXACT,
           lambda x, threshold=0.0, value=0.0: np.where(x <= threshold, value, x),
           lambda x, threshold=0.0, value=0.0: mp.mpf(value) if x <= threshold else x,
           lambda a, threshold=0.0, value=0.0: value if a <= threshold else a,
           params={"threshold": 0.0, "value": 0.0},
           specials=unary_rows(NAN, lambda p: p["value"] if INF <= p["threshold"] else INF,
                               lambda p: p["value"],
                               lambda p: p["value"] if 0.0 <= p["threshold"] else 0.0,
                               lambda p: p["value"] if 0.0 <= p["threshold"] else -0.0),
           notes="ATen's x <= threshold ? value : x, so NaN stays NaN (docs/OPS.md's x > threshold ? "
                 "x : value would give value)"),
    oracle("sigmoid", 1, REAL, sigmoid_f64, sigmoid_mp,
           specials=unary_rows(NAN, 1.0, 0.0, 0.5, 0.5, (-1000.0, 0.0), (1000.0, 1.0)),
           notes="the +-1000 rows are the exact values rounded: 0 and 1 in every format"),
    oracle("silu", 1, REAL, silu_f64, lambda x: x / (1 + mp.exp(-x)),
           specials=unary_rows(NAN, INF, -0.0, 0.0, -0.0), splits=_sigmoid_splits(lambda x: (x, x))),
    oracle("gelu", 1, REAL, gelu_f64, gelu_mp, params={"approximate": "none"},
           specials=unary_rows(NAN, INF, -0.0, 0.0, -0.0), splits=_gelu_splits(),
           notes="'none': x/2*erfc(-x/sqrt2) (= 0.5x(1+erf(x/sqrt2)) without cancellation); "
                 "'tanh': 0.5x(1+tanh(u)) = x/(1+exp(-2u)), the constant 0.044715 as a decimal"),
    oracle("tanh", 1, REAL, np.tanh, mp.tanh, specials=unary_rows(NAN, 1.0, -1.0, 0.0, -0.0)),
    oracle("hardsigmoid", 1, REAL, lambda x: np.clip(x / 6.0 + 0.5, 0.0, 1.0),
           lambda x: min(max(exact_add(x, 3) / 6, 0), 1),
           specials=unary_rows(NAN, 1.0, 0.0, 0.5, 0.5, (3.0, 1.0), (-3.0, 0.0), (-4.0, 0.0))),
    oracle("hardswish", 1, REAL,
           lambda x: np.where(x <= -3.0, 0.0, np.where(x >= 3.0, x, x * (x + 3.0) / 6.0)),
           lambda x: mp.zero if x <= -3 else (x if x >= 3 else exact_mul(x, exact_add(x, 3)) / 6),
           specials=unary_rows(NAN, INF, 0.0, 0.0, -0.0, (-3.0, 0.0), (3.0, 3.0)),
           zero_sign_matters=False, splits=(_hardswish_split,),
           notes="the piecewise definition (0 for x <= -3, x for x >= 3): hardswish(-inf) = 0 "
                 "where ATen's x*min(max(x+3,0),6)/6 gives NaN; the zero's sign for x <= -3 is "
                 "-0 in ATen's formula and +0 in the definition, so it is not compared"),
    oracle("leaky_relu", 1, REAL,
           lambda x, negative_slope=0.01: np.where(x > 0, x, negative_slope * x),
           lambda x, negative_slope=0.01: x if x > 0 else exact_mul(negative_slope, x),
           params={"negative_slope": 0.01},
           specials=unary_rows(NAN, INF, lambda p: -INF if p["negative_slope"] > 0 else NAN
                               if p["negative_slope"] == 0 else INF, 0.0,
                               lambda p: -0.0 if p["negative_slope"] >= 0 else 0.0),
           notes="parameters are the binary64 values passed (0.01 is 0.01000000000000000020816)"),
    oracle("elu", 1, REAL, lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(x)),
           lambda x, alpha=1.0: x if x > 0 else alpha * mp.expm1(x), params={"alpha": 1.0},
           specials=unary_rows(NAN, INF, lambda p: -p["alpha"], 0.0,
                               lambda p: -0.0 if p["alpha"] >= 0 else 0.0),
           splits=_elu_splits(scaled=False)),
    oracle("celu", 1, REAL, lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(x / alpha)),
           lambda x, alpha=1.0: x if x > 0 else alpha * mp.expm1(x / alpha),
           params={"alpha": 1.0},
           specials=unary_rows(NAN, INF, lambda p: -p["alpha"], 0.0, -0.0),
           splits=_elu_splits(scaled=True),
           notes="ATen's form x > 0 ? x : alpha*expm1(x/alpha), equal to max(0,x) + min(0, "
                 "alpha*expm1(x/alpha)) except that celu(-0) = -0 (the max/min form gives +0)"),
    oracle("selu", 1, REAL,
           lambda x: np.where(x > 0, SELU_SCALE_F * x, SELU_SCALE_F * SELU_ALPHA_F * np.expm1(x)),
           lambda x: mp.mpf(SELU_SCALE) * (x if x > 0 else mp.mpf(SELU_ALPHA) * mp.expm1(x)),
           specials=unary_rows(NAN, INF, SELU_AT_NINF, 0.0, -0.0),
           notes="ATen's elu form: scale*x or scale*alpha*expm1(x); selu(-0) = -0"),
    oracle("mish", 1, REAL, lambda x: np.where(x == -INF, -0.0, x * np.tanh(softplus_f64(x))),
           lambda x: x * mp.tanh(softplus_mp(x)),
           specials=unary_rows(NAN, INF, -0.0, 0.0, -0.0)),
    oracle("softplus", 1, REAL, softplus_branch_f64, softplus_branch_mp,
           params={"beta": 1.0, "threshold": 20.0},
           specials=unary_rows(NAN, INF, 0.0, _at_zero_softplus, _at_zero_softplus),
           notes="x*beta > threshold ? x : log1p(exp(beta*x))/beta, the branch decided on the "
                 "exact product (it is part of the op: softplus(21) is 21, not 21 + 7.6e-10)"),
    oracle("log_sigmoid", 1, REAL,
           lambda x: np.minimum(x, 0.0) - np.log1p(np.exp(-np.abs(x))),
           lambda x: min(x, 0) - mp.log1p(mp.exp(-abs(x))),
           specials=unary_rows(NAN, 0.0, -INF, -LN2, -LN2), zero_sign_matters=False,
           notes="for large x the exact value is a tiny negative number that rounds to -0; the "
                 "stable formula gives 0 - 0 = +0, so the zero's sign is not compared"),
    oracle("glu", 2, REAL, lambda a, b: a * sigmoid_f64(b), lambda a, b: a * sigmoid_mp(b),
           specials=(((NAN, 0.0), NAN), ((0.0, NAN), NAN), ((INF, 0.0), INF),
                     ((INF, -INF), NAN), ((1.0, INF), 1.0), ((1.0, -INF), 0.0),
                     ((-1.0, -INF), -0.0), ((0.0, 0.0), 0.0), ((-0.0, 0.0), -0.0),
                     ((2.0, 0.0), 1.0)),
           splits=_sigmoid_splits(lambda a, b: (a, b)),
           notes="binary on the two halves: a * sigmoid(b)"),
    oracle("swiglu", 2, REAL, gated_silu_f64,
           lambda gate, up: gate * up / (1 + mp.exp(-gate)),
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((INF, 1.0), INF),
                     ((-INF, 1.0), -0.0), ((-INF, INF), NAN), ((0.0, 1.0), 0.0),
                     ((-0.0, 1.0), -0.0), ((1.0, INF), INF), ((0.0, -1.0), -0.0)),
           splits=_sigmoid_splits(lambda gate, up: (exact_mul(gate, up), gate)),
           notes="silu(gate) * up"),
    oracle("silu_and_mul", 2, REAL, gated_silu_f64,
           lambda gate, up: gate * up / (1 + mp.exp(-gate)),
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((INF, 1.0), INF),
                     ((-INF, 1.0), -0.0), ((-INF, INF), NAN), ((0.0, 1.0), 0.0),
                     ((-0.0, 1.0), -0.0), ((1.0, INF), INF), ((0.0, -1.0), -0.0)),
           splits=_sigmoid_splits(lambda gate, up: (exact_mul(gate, up), gate)),
           notes="binary on the two halves of the last dim: silu(first) * second"),
    oracle("dropout", 1, EXACT, _identity, _identity, _identity,
           specials=unary_rows(NAN, INF, -INF, 0.0, -0.0),
           notes="inference: identity (extra keywords such as p are ignored)"),
]
