"""The rounding test of the float32 fast paths: per-element keys and the tile's threshold.

A fast path evaluates a float32 function in float64 as y, with |y - f(x)| <= E |y| on its domain,
E = K 2^-53 (K: the window in float64 ulps of y). y rounds to a float32 other than f(x)'s only if
a float32 rounding midpoint lies within K float64 ulps of y. For y zero or inside float32's normal
range the bits of y below a float32 ulp are its low 29 mantissa bits, and a midpoint is the pattern
2^28 there, so an element is hard exactly where |low29(y) - 2^28| <= K, or where x is outside the
fast path's domain. A random element is hard with probability 2K / 2^29.

The keys are int32, one per element, <= key_hard(K) exactly where the element is hard; the launcher
takes one min over a tile's keys (a CTA-wide reduction, so the branch on it is uniform) and runs
the op's exact body over a tile whose least key is <= key_hard(K).
"""
import triton
import triton.language as tl

# the window for fast paths with a relative error of 2^-50 or better: E = 2^-45, >= 16x their worst
# error over every float32 input (bench/fast32_exhaustive.py)
HARD_K = tl.constexpr(256)
KEY_OUTSIDE = tl.constexpr(-2 ** 31)          # the least int32: outside the domain


def key_hard(K) -> int:
    """The keys' threshold for a window of K float64 ulps: an element is hard iff its key is
    <= key_hard(K). K = 0 is a fast path whose values are exact on its domain: only KEY_OUTSIDE."""
    return 16 * int(K) - 2 ** 31


KEY_HARD = tl.constexpr(key_hard(HARD_K))


@triton.jit
def midpoint_key(y, K: tl.constexpr):
    """8 w - 2^31 as int32, w = (low29(y) - 2^28 + K) mod 2^29, in one LEA: the low word of y times 8
    drops the bits above the low 29 (8 * 2^29 = 2^32) and the 32-bit sum wraps as mod 2^29 would, so
    8 low + 8K = 8 (low29 - 2^28 + K) - 2^31 (mod 2^32). w <= 2K, i.e. the key <= 16K - 2^31,
    exactly where y's low 29 mantissa bits lie within K of 2^28, a float32 rounding midpoint."""
    low = y.to(tl.int64, bitcast=True).to(tl.int32)
    return low * 8 + 8 * K


@triton.jit
def hard_to_round(y, K: tl.constexpr):
    """True where float64 y might round to a float32 other than the exact value's. Valid where y is
    zero or inside float32's normal range, which each fast path guarantees on its domain."""
    return midpoint_key(y, K) <= 16 * K - 2 ** 31


@triton.jit
def hard_key(y, outside, K: tl.constexpr):
    """Per element: <= key_hard(K) exactly where hard_to_round or outside (KEY_OUTSIDE there), in 2
    instructions. K = 0: the values are exact inside the domain, so only outside is hard."""
    if K == 0:
        return tl.where(outside, KEY_OUTSIDE, 0)
    else:
        return tl.where(outside, KEY_OUTSIDE, midpoint_key(y, K))


@triton.jit
def tiny_or_nan(r):
    """r float32, a fast value rounded: True where 0 < |r| <= 2^-126 or r is NaN, in two FSETPs
    (r != 0 holds for NaN, |r| > 2^-126 does not). The test reads y's low 29 bits as the bits below
    a float32 ulp, which holds for normal results only (float32's grid keeps the spacing 2^-149
    below 2^-126; r = 2^-126 may come from a y below it). A NaN falls back so that its payload is
    the exact path's (a NaN stored from y would be the FP64 unit's canonical NaN)."""
    return (r != 0) & ~(tl.abs(r) > 1.1754943508222875e-38)




@triton.jit
def near_midpoint(y, K: tl.constexpr):
    """True where the float64 y lies within K float64 ulps of a float32 rounding midpoint. A
    float32-subnormal y is moved by 2^-126 (with y's sign) into [2^-126, 2^-125) first, where the
    float32 spacing is the subnormals' 2^-149 and a midpoint again has low 29 bits 2^28 (the sum's
    rounding, half a float64 ulp there, is within the window's slack). An overflow boundary is a
    midpoint pattern too (the largest float32 plus half its ulp)."""
    tiny = tl.abs(y) < 1.1754943508222875e-38
    z = tl.where(tiny, y + tl.where(y < 0, -1.1754943508222875e-38, 1.1754943508222875e-38), y)
    return midpoint_key(z, K) <= 16 * K - 2 ** 31


@triton.jit
def subnormal_hard(y, K: tl.constexpr):
    """y float64, a fast value within E = K 2^-53 of the exact one: True where y is NaN, or below
    float32's normal range and near a midpoint there (near_midpoint: y + 2^-126 rounded to float64
    is off by at most E 2^-126 = K/2 ulps of it, plus half an ulp). The launcher's key of y is void
    there (it may flag such an element, never pass one), so a fast path keeps its subnormal and
    zero results: gelu of x in [-12, -10] is subnormal, 0.4% of randn * 4 inputs."""
    return (y != y) | ((tl.abs(y) < 1.1754943508222875e-38) & near_midpoint(y, K))


@triton.jit
def subnormal_or_nan(x):
    """x float32: True where x is a nonzero subnormal or NaN, in integer operations (the INT pipe,
    not the FP64 one). For the fast paths whose result is subnormal only at a subnormal x (|f(x)|
    within a hair of |x| or above it: expm1, tanh, sinh, selu, log1p)."""
    a = x.to(tl.int32, bitcast=True) & 0x7FFFFFFF
    return ((a - 1).to(tl.uint32, bitcast=True) < 0x007FFFFF) | (a > 0x7F800000)
