"""float64 division and square root without libdevice's special-case branches, and the exact
floor/trunc quotient.

The hardware's reciprocal approximation (MUFU.RCP64H, ~2^-20; the interpreter keeps 20 bits of 1/d)
refined by fmas: quotient() is n/d to ~2^-52 relative for normal d in 4 float64 operations,
reciprocal() is 1/d to ~2^-40 in 3. Negations are written v * -1.0, which the compiler folds into a
DFMA operand (Triton's unary minus is 0 - v, a DADD per use, and +0 for v = +0).
"""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from ..fastpath import FastPath
from .reduce import MAGIC


@triton.jit
def flip_sign(y, flip):
    """-y where flip, from the sign bit (Triton's unary minus is 0 - y, which gives +0 for y = +0)."""
    b = y.to(tl.int64, bitcast=True)
    return tl.where(flip, b ^ (-0x7FFFFFFFFFFFFFFF - 1), b).to(tl.float64, bitcast=True)


@triton.jit
def minus(v):
    """-v, folded into the consuming DFMA's operand."""
    return v * -1.0


@triton.jit
def reciprocal(d):
    """1/d to ~2^-40 relative for normal d: the hardware's approximation and one Newton step."""
    r = libdevice.rcp64h(d)
    return tl.fma(r, tl.fma(minus(d), r, 1.0), r)


@triton.jit
def quotient(n, d):
    """n/d to ~2^-52 relative (normal d) in 4 float64 operations: r = the hardware's ~2^-20
    reciprocal, e = 1 - d r, 1/d = r (1 + e + e^2) + O(e^3 = 2^-60), then one product (n = -0 gives -0)."""
    r = libdevice.rcp64h(d)
    e = tl.fma(minus(d), r, 1.0)
    return n * tl.fma(r, tl.fma(e, e, e), r)


@triton.jit
def sqrt_seeded(v, v32):
    """sqrt(v) for float64 v >= 0 within 1.5 2^-53 relative, given v32, v to ~2^-22 in float32 (0 <=
    v32 < inf): g = v y0 with y0 float32's rsqrt of v32 (MUFU, ~2^-22 with v32's error), e = 1 -
    g y0, sqrt v = g (1 + e/2 + 3e^2/8) + O(e^3 = 2^-64). g's rounding reaches e too and half of it
    cancels. v = 0 gives +0 (v32 clamped at 2^-126, so y0 is finite). 7 operations where
    libdevice's float64 sqrt takes ~20 and a branch for special values."""
    y0 = libdevice.rsqrt(tl.maximum(v32, 1.1754943508222875e-38)).to(tl.float64)
    g = v * y0
    e = tl.fma(minus(g), y0, 1.0)
    return tl.fma(g * e, tl.fma(e, 0.375, 0.5), g)


@triton.jit
def divide_integral(a, b, TRUNC: tl.constexpr):
    """a, b float32 -> (floor(a / b) or trunc(a / b) exactly, as float64; outside mask).

    n = the quotient rounded to an integer is floor or ceil of the exact a / b when |a / b| < 2^22;
    r = a - n b is then exact (n b has <= 46 bits; the difference is a short multiple of the smaller
    ulp), and its sign against b's says which. Zero results take the sign of a / b (ATen's
    div_floor_floating). Outside: b zero or non-finite, a non-finite, |a / b| >= 2^22."""
    A = a.to(tl.float64)
    B = b.to(tl.float64)
    q = A * reciprocal(B)                                   # within 2^-18 of a / b: n is floor or ceil
    outside = ~(tl.abs(q) < 4194304.0) | ((B - B) != 0)
    n = (q + MAGIC) - MAGIC
    r = A - n * B
    below = (r != 0) & ((r < 0) != (B < 0))                # a / b < n
    res = tl.where(below, n - 1.0, n)
    if TRUNC:
        above = (r != 0) & ((r < 0) == (B < 0))            # a / b > n
        res = tl.where((A < 0) != (B < 0), tl.where(above, n + 1.0, n), res)
    negative = (A.to(tl.int64, bitcast=True) < 0) != (B.to(tl.int64, bitcast=True) < 0)   # signs, -0 too
    zero = flip_sign(tl.zeros_like(A), negative)
    return tl.where(res != 0, res, zero), outside


@triton.jit
def floor_quotient(a, b):
    return divide_integral(a, b, False)


@triton.jit
def trunc_quotient(a, b):
    return divide_integral(a, b, True)


# Exact on the domain (k = 0: no rounding test, only the outside mask), so the fmod path (the
# op's body) runs only for flagged tiles: floor_divide at 1.01 of copy on the H200
# (reports/h200/gpu-check-20261204.md)
FLOOR_QUOTIENT = FastPath(floor_quotient, k=0)
TRUNC_QUOTIENT = FastPath(trunc_quotient, k=0)
