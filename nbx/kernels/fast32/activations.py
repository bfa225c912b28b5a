"""The activations' float32 fast paths on exp.py's cores: sigmoid, silu, mish, selu, elu, celu, gelu
(tanh form; erf form on erfc.py's rational), log_sigmoid and softplus (with log.py's log1p core);
hardswish; the binary gates glu and swiglu (silu_and_mul).

With e = exp(-|x|) in [2^-1010, 1] (the argument clamped to -700: below x = -104 sigmoid rounds
to +0, and a clamped e/(1 + e) < 2^-151 rounds there too; keys.subnormal_hard judges the
subnormal results):
    sigmoid x = n / (1 + e),         n = 1 (x >= 0) or e (x < 0)
    silu x    = x n / (1 + e),       x clamped to -700 first (silu(-inf) = -0, not -inf * 0)
    mish x    = x q / (q + 2),       q = v (v + 2), v = exp(x), x clamped to [-700, 100]
              (tanh(softplus x) = ((1 + v)^2 - 1) / ((1 + v)^2 + 1); from x = 100 it is 1 - 2^-288,
              1.0 in float64, and x q / (q + 2) = x exactly, as mish rounds)
    selu x    = SCALE x (x > 0), SCALE ALPHA expm1(x) (x <= 0, clamped to -200)
    gelu x    = x / (1 + exp(-2u)),  u = x (C1 + C2 x^2), C1 = sqrt(2/pi), C2 = 0.044715 C1
    gelu x    = x h (x < 0), x (1 - h) (x >= 0), h = erfc(|x|/sqrt2) / 2 = exp(-x^2/2) P(|x|) / Q(|x|)
              (approximate='none'; erfc.py: x^2/2 exact, h <= 1/2 so 1 - h does not cancel)
    log_sigmoid x = min(x, 0) - log1p(e), log.py's log1p core (two non-positive terms)
    softplus x = x (u > threshold), else (max(u, 0) + log1p(exp(-|u|))) / beta, u = x beta
    elu x     = x (x > 0), alpha expm1(x) (x <= 0, clamped to -200)
    celu x    = x (x >= 0), alpha expm1(x / alpha) (x < 0)
              (the op's number parameters reach the fast path as they reach the exact body, and
              u = x beta, x / alpha round as there: the fast value approximates the same function)
    hardswish x = x (x + 3) / 6, a product by 1/6 (the exact body corrects it and rounds to odd)
    glu(a, b) = a n_b / (1 + e_b), swiglu(g, u) = g u n_g / (1 + e_g), e on exp's core
No step cancels; each value is within 2^-49.5 of the exact one, so K = 256 (E = 2^-45) holds with
room 11, except gelu's: u carries ~3.5 float64 ulps and exp(-2u) multiplies them by 2|u|, up to ~90
where the result is still normal (x >= -12), 2^-44.7 in all: K = 2048 (E = 2^-42), and a flagged
tile recomputes only its pieces that hold a hard element. gelu's erf form is within 2^-49.4 of its
exact body on the interpreter's samples (K = 256); its results are subnormal for x in [-14.356,
-13.146] and for |x| < 2^-125 (x/2 a tie of the subnormal grid at odd x, which falls back), and
from x = -14.4375 (clamped there, -inf too) gelu is -2^-151.7 or nearer 0 and rounds to -0.
44 float64 instructions per element on sm_90.
"""
import numpy as np
import triton
import triton.language as tl

from .. import math as kernel_math
from ..fastpath import FastPath
from .divide import quotient
from .erfc import GELU_ERF_P, GELU_ERF_Q, erfc_abs
from .exp import EXP_MAX_ARG, EXP_TABLE, EXPM1_LOW, clamp, exp_core, expm1_core
from .keys import HARD_K, subnormal_hard, subnormal_or_nan
from .log import LOG_TABLE, log1p64

# ATen's constants (aten/src/ATen/native/Activation.cpp, torch/nn/functional.py).
SELU_ALPHA = tl.constexpr(1.6732632423543772848170429916717)
SELU_SCALE = tl.constexpr(1.0507009873554804934193349852946)
SQRT_2_OVER_PI = tl.constexpr(0.79788456080286535587989211986876)
GELU_TANH_COEFF = tl.constexpr(0.044715)
SELU_SCALE_ALPHA = tl.constexpr(SELU_SCALE.value * SELU_ALPHA.value)          # within 2^-53 of the product
GELU_C2 = tl.constexpr(SQRT_2_OVER_PI.value * GELU_TANH_COEFF.value)
MISH_CLAMP = tl.constexpr(100.0)
CELU_HIGH = tl.constexpr(16.0)                 # celu's u = x / alpha above it (alpha < 0) falls back
INV6 = tl.constexpr(1.0 / 6.0)                 # within 2^-54 relative: hardswish's fast path, the exact sixths

# log_sigmoid reads both tables: exp's, then log's from LOG_OFFSET on
EXP_LOG_TABLE = np.concatenate([EXP_TABLE, LOG_TABLE])
LOG_OFFSET = tl.constexpr(len(EXP_TABLE))
GELU_TANH_K = tl.constexpr(2048)
GELU_TANH_CLAMP = tl.constexpr(20.0)           # gelu tanh's u at |x| <= 20: |2u| <= 602
GELU_ERF_CLAMP = tl.constexpr(14.4375)         # gelu(-14.4375) = -2^-151.7 rounds to -0


@triton.jit
def _exp_neg_abs(x, tab):
    """(n, 1 + e) of sigmoid for float32 x: e = exp(-|x|), n = 1 for x >= 0 else e (NaN for NaN).
    -|x| is clamped at -700 in float32 (one FMNMX keeping NaN; a float64 clamp keeping NaN is ~8
    instructions on sm_90) and then widened, exactly."""
    e = exp_core(tl.maximum(tl.abs(x) * -1.0, EXP_MAX_ARG * -1.0, propagate_nan=tl.PropagateNan.ALL).to(tl.float64),
                 tab)
    return tl.where(x >= 0, 1.0, e), 1.0 + e


@triton.jit
def sigmoid(x, tab):
    """x float32 -> (float64 sigmoid(x), hard: NaN and subnormal results near a boundary)."""
    n, d = _exp_neg_abs(x, tab)
    y = quotient(n, d)
    return y, subnormal_hard(y, HARD_K)


@triton.jit
def silu(x, tab):
    """x float32 -> (float64 silu(x), hard: NaN and subnormal results near a boundary)."""
    w32 = tl.maximum(x, EXP_MAX_ARG * -1.0, propagate_nan=tl.PropagateNan.ALL)
    n, d = _exp_neg_abs(w32, tab)
    y = quotient(w32.to(tl.float64) * n, d)
    return y, subnormal_hard(y, HARD_K)


@triton.jit
def mish(x, tab):
    """x float32 -> (float64 mish(x), hard: NaN and subnormal results near a boundary)."""
    w32 = tl.maximum(x, EXP_MAX_ARG * -1.0, propagate_nan=tl.PropagateNan.ALL)
    w = w32.to(tl.float64)
    v = exp_core(tl.minimum(w32, MISH_CLAMP, propagate_nan=tl.PropagateNan.ALL).to(tl.float64), tab)
    q = v * (v + 2.0)
    y = quotient(w * q, q + 2.0)
    return y, subnormal_hard(y, HARD_K)


@triton.jit
def selu(x, tab):
    """x float32 -> (float64 selu(x), hard: NaN and subnormal results near a boundary). selu(-0) = -0: expm1_core(-0) = +0 takes x's sign."""
    w = x.to(tl.float64)
    neg = expm1_core(tl.maximum(x, EXPM1_LOW, propagate_nan=tl.PropagateNan.ALL).to(tl.float64), tab) * SELU_SCALE_ALPHA
    y = tl.where(w > 0, w * SELU_SCALE, tl.where(w == 0, w, neg))
    return y, subnormal_or_nan(x)


@triton.jit
def gelu_tanh(x, tab):
    """x float32 -> (float64 gelu(x, approximate='tanh'), hard: NaN and subnormal results near a
    boundary). u is taken at x clamped to +-20 in float32 (|2u| <= 602, inside exp's domain): from
    x = 20, exp(-2u) < 2^-860 and y = x, as gelu rounds; below -20, x clamped to -1e4 over 1 + e^602
    is below 2^-850 and rounds to -0, as gelu (and its limit at -inf) does. The clamps are float32
    FMNMX keeping NaN, where float64 ones cost ~8 instructions each."""
    c = clamp(x, -GELU_TANH_CLAMP, GELU_TANH_CLAMP).to(tl.float64)
    u = c * (c * c * GELU_C2 + SQRT_2_OVER_PI)
    e = exp_core(u * -2.0, tab)
    y = quotient(tl.maximum(x, -1.0e4, propagate_nan=tl.PropagateNan.ALL).to(tl.float64), 1.0 + e)
    return y, subnormal_hard(y, GELU_TANH_K)


@triton.jit
def gelu_erf(x, tab):
    """x float32, tab = EXP_TABLE -> (float64 gelu(x) = x erfc(-x/sqrt2) / 2, hard: NaN and subnormal
    results near a boundary). x clamped below at -GELU_ERF_CLAMP: -inf gives -0; +inf gives inf
    (1 - h = 1); -0 gives -0 (1 - h = 1/2). Near 0, x/2 + x^2/sqrt(2 pi) + O(x^4) keeps the
    rational's relative error: the exact body's x/2 + x^2/sqrt(2 pi) rounded to odd (below |x| =
    2^-30) is within 2^-52 of it."""
    w32 = tl.maximum(x, GELU_ERF_CLAMP * -1.0, propagate_nan=tl.PropagateNan.ALL)
    w = w32.to(tl.float64)
    a = tl.minimum(tl.abs(w32), GELU_ERF_CLAMP).to(tl.float64)        # float32 FMNMX, then widened
    h = erfc_abs(a, a * (a * -0.5), tab, GELU_ERF_P, GELU_ERF_Q)
    y = w * tl.where(x < 0, h, 1.0 - h)
    return y, subnormal_hard(y, HARD_K)


@triton.jit
def log_sigmoid(x, tab):
    """x float32 -> (float64 log_sigmoid(x), hard: as sigmoid's); tab = EXP_LOG_TABLE. -inf gives
    -inf; +inf gives -e^-700, which rounds to -0 as the exact body's -(0 + log1p(0)) is. min(x, 0)
    is taken in float32 and widened (a NaN x gives a NaN e)."""
    e = exp_core(tl.maximum(tl.abs(x) * -1.0, EXP_MAX_ARG * -1.0, propagate_nan=tl.PropagateNan.ALL).to(tl.float64),
                 tab)
    y = tl.minimum(x, 0.0).to(tl.float64) - log1p64(e, tab + LOG_OFFSET)
    return y, subnormal_hard(y, HARD_K)


@triton.jit
def _or_bad(hard, q, least, most):
    """hard, or every element where the scalar parameter q is NaN or its magnitude is not in
    (least, most) (the op's exact body decides then). A select: the interpreter cannot OR a tile
    with a scalar's comparison."""
    return tl.where((q != q) | (tl.abs(q) <= least) | (tl.abs(q) >= most), True, hard)


@triton.jit
def softplus(x, beta, threshold, tab):
    """x float32, beta and threshold float64 (the op's parameters), tab = EXP_LOG_TABLE -> (float64
    softplus(x), hard: as sigmoid's, and every element where |beta| is not in (2^-800, 2^1000)).
    u = x beta rounds as in the exact body, which evaluates the same function of it: x where u >
    threshold, else (max(u, 0) + log1p(exp(-|u|))) / beta, two non-negative terms and one quotient
    (divide.quotient, ~2^-52). Below u = -700 exp's clamp gives e^-700 / beta, at most 2^-210 for
    |beta| > 2^-800, where the exact value is smaller still: both round to beta's zero."""
    w = x.to(tl.float64)
    u = w * beta
    # u is born in float64: its clamp drops NaN (a NaN-keeping float64 max is ~8 instructions on
    # sm_90) and a NaN x is flagged from x itself
    e = exp_core(tl.maximum(tl.abs(u) * -1.0, EXP_MAX_ARG * -1.0), tab)
    s = tl.maximum(u, 0.0) + log1p64(e, tab + LOG_OFFSET)
    y = tl.where(u > threshold, w, quotient(s, beta))
    return y, _or_bad(subnormal_hard(y, HARD_K) | (x != x), beta, 2.0 ** -800, 2.0 ** 1000)


@triton.jit
def elu(x, alpha, tab):
    """x float32, alpha float64, tab = EXP_TABLE -> (float64 elu(x), hard: NaN, subnormal results
    near a boundary, every element where alpha is 0 or not finite). alpha expm1(x) for x <= 0 (x
    clamped to -200, where expm1 is -1 in float64), alpha times x's zero for a zero x (elu(-0) is
    alpha (-0) as in the exact body)."""
    w = x.to(tl.float64)
    neg = alpha * expm1_core(tl.maximum(x, EXPM1_LOW, propagate_nan=tl.PropagateNan.ALL).to(tl.float64), tab)
    y = tl.where(w > 0, w, tl.where(w == 0, alpha * w, neg))
    return y, _or_bad(subnormal_hard(y, HARD_K), alpha, 0.0, float("inf"))


@triton.jit
def celu(x, alpha, tab):
    """x float32, alpha float64, tab = EXP_TABLE -> (float64 celu(x), hard: NaN, subnormal results
    near a boundary, x < 0 with u = x / alpha > 16 (a negative alpha), every element where |alpha|
    is not in (2^-1000, 2^1000)). alpha expm1(u) for x < 0, u clamped below at -200, x itself for
    x >= 0 (celu(-0) = -0). u is divide.quotient's (~2^-52) where the exact body rounds x / alpha
    once: expm1's condition number u e^u / (e^u - 1) is at most 1 for u <= 0 and below 16 up to
    u = 16, so the two values stay within 2^-47 of each other."""
    w = x.to(tl.float64)
    u = quotient(w, alpha)
    # u's clamp drops NaN (as softplus's does) and a NaN x is flagged from x itself
    neg = alpha * expm1_core(tl.minimum(tl.maximum(u, EXPM1_LOW), CELU_HIGH), tab)
    y = tl.where(w >= 0, w, neg)
    hard = subnormal_hard(y, HARD_K) | ((u > CELU_HIGH) & (w < 0)) | (x != x)
    return y, _or_bad(hard, alpha, 2.0 ** -1000, 2.0 ** 1000)


@triton.jit
def hardswish(x):
    """x float32 -> (float64 hardswish(x), hard: as sigmoid's): x (x + 3) / 6 between -3 and 3, with
    x + 3 rounded (exact by Sterbenz near -3, where the product is small), x (x + 3) rounded and
    times 1/6 rounded: 2^-51. -0 gives -0; -inf 0; NaN falls back."""
    w = x.to(tl.float64)
    y = tl.where(w <= -3.0, 0.0, tl.where(w >= 3.0, w, (w * (w + 3.0)) * INV6))
    y = tl.where(w != w, w, y)
    return y, subnormal_hard(y, HARD_K)


@triton.jit
def _finite(a, b):
    return (tl.abs(a) < float("inf")) & (tl.abs(b) < float("inf"))


@triton.jit
def glu(a, b, tab):
    """a, b float32 -> (float64 a sigmoid(b), hard: an infinite or NaN operand (a = inf with b = -inf
    is inf * 0 there), NaN and subnormal results near a boundary). a n rounds once, the quotient
    ~2^-52: within 2^-51."""
    n, d = _exp_neg_abs(b, tab)
    y = quotient(a.to(tl.float64) * n, d)
    return y, ~_finite(a, b) | subnormal_hard(y, HARD_K)


@triton.jit
def swiglu(g, u, tab):
    """g, u float32 -> (float64 g sigmoid(g) u, hard: as glu's). g u is exact in float64 (48 bits);
    where g u is a float32 tie (g > 32: sigmoid 1 - e with e under the window, or tiny g: g u/2)
    the value lies within the window of it and the exact body, which keeps the residual, decides."""
    wg = g.to(tl.float64)
    n, d = _exp_neg_abs(g, tab)
    y = quotient((wg * u.to(tl.float64)) * n, d)
    return y, ~_finite(g, u) | subnormal_hard(y, HARD_K)


@triton.jit
def silu64(w):
    return w * kernel_math.sigmoid_stable(w)


@triton.jit
def mish64(w):
    return w * kernel_math.tanh(kernel_math.softplus_stable(w))


@triton.jit
def log_sigmoid64(w):
    return kernel_math.softplus_stable(w * -1.0) * -1.0


@triton.jit
def hardswish64(w):
    return tl.where(w <= -3.0, 0.0, tl.where(w >= 3.0, w, w * (w + 3.0) / 6.0))


@triton.jit
def softplus64(w, beta, threshold):
    u = w * beta
    return tl.where(u > threshold, w, kernel_math.softplus_stable(u) / beta)


@triton.jit
def elu64(w, alpha):
    return tl.where(w > 0, w, alpha * kernel_math.expm1(w))


@triton.jit
def celu64(w, alpha):
    return tl.where(w > 0, w, alpha * kernel_math.expm1(w / alpha))


@triton.jit
def selu64(w):
    return tl.where(w > 0, w, kernel_math.expm1(w) * SELU_ALPHA) * SELU_SCALE


SIGMOID = FastPath(sigmoid, table=EXP_TABLE, k=HARD_K, reference=kernel_math.sigmoid_stable)
SILU = FastPath(silu, table=EXP_TABLE, k=HARD_K, reference=silu64)
MISH = FastPath(mish, table=EXP_TABLE, k=HARD_K, reference=mish64)
SELU = FastPath(selu, table=EXP_TABLE, k=HARD_K, reference=selu64)
LOG_SIGMOID = FastPath(log_sigmoid, table=EXP_LOG_TABLE, k=HARD_K, reference=log_sigmoid64)
SOFTPLUS = FastPath(softplus, table=EXP_LOG_TABLE, k=HARD_K, reference=softplus64)
ELU = FastPath(elu, table=EXP_TABLE, k=HARD_K, reference=elu64)
CELU = FastPath(celu, table=EXP_TABLE, k=HARD_K, reference=celu64)
HARDSWISH = FastPath(hardswish, k=HARD_K, reference=hardswish64)
GLU = FastPath(glu, table=EXP_TABLE, k=HARD_K)
SWIGLU = FastPath(swiglu, table=EXP_TABLE, k=HARD_K)
