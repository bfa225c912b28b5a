"""Device oracles of binary arithmetic on float16, bfloat16 and float32 operands, in float64.

A sum or difference of two float16 values is exact in float64 (11-bit significands, exponents
within 2^-24 .. 2^15: at most 51 bits); products of two values of any of the three formats are exact
(at most 48 bits). Sums of bfloat16 or float32 values can need more bits than float64 has, so they
take one rounding (k = 2) and fma forms likewise (alpha b + a, rounded once)."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from . import device

ROUNDED = 2


@triton.jit
def _add(a, b, alpha, p1):
    return libdevice.fma(alpha, b, a)


@triton.jit
def _sub(a, b, alpha, p1):
    return libdevice.fma(alpha * -1.0, b, a)


@triton.jit
def _rsub(a, b, alpha, p1):
    return libdevice.fma(alpha * -1.0, a, b)


@triton.jit
def two_sum(a, b):
    """s + t = a + b exactly (Knuth), s = fl(a + b)."""
    s = a + b
    bb = s - a
    t = (a - (s - bb)) + (b - bb)
    return s, t


@triton.jit
def fma_residual(x, y, z):
    """lo with fma(x, y, z) + lo == x y + z exactly, where the product x y is exact in float64 (its
    fma error is 0) and the sum finite: TwoSum's error of p + z. NaN elsewhere (unknown)."""
    p = x * y
    e = libdevice.fma(x, y, -p)
    s = p + z
    bb = s - p
    t = (p - (s - bb)) + (z - bb)
    return tl.where((e == 0) & (s - s == 0), t, float("nan"))


@triton.jit
def _fma_exact(x, y, z):
    """Whether fma(x, y, z) is the exact x y + z: its residual is 0 (NaN, unknown, is not)."""
    return fma_residual(x, y, z) == 0


@triton.jit
def _add_residual(a, b, alpha, p1):
    return fma_residual(alpha, b, a)


@triton.jit
def _sub_residual(a, b, alpha, p1):
    return fma_residual(alpha * -1.0, b, a)


@triton.jit
def _rsub_residual(a, b, alpha, p1):
    return fma_residual(alpha * -1.0, a, b)


@triton.jit
def _mul(a, b, p0, p1):
    return a * b


@triton.jit
def _div(a, b, p0, p1):
    return a / b


@triton.jit
def _div_exact(a, b, p0, p1):
    """Where a/b is computed exactly: a quotient q of at most 29 significant bits (its low 24
    mantissa bits zero) with q*b == a. q*b of 29 + 24 bits is exact in float64 (fused or not), so
    equality means q = a/b. A float32 midpoint has 25 bits: such ties are decided on the device."""
    q = a / b
    short = (q.to(tl.int64, bitcast=True) & ((1 << 24) - 1)) == 0
    finite = (tl.abs(q) < float("inf")) & (q != 0)
    return (finite & short & (q * b == a)) | (a == 0) & (b != 0) & (b == b)


@triton.jit
def larger(a, b):
    """The larger of two non-NaN values, -0 < +0."""
    r = tl.where(a > b, a, b)
    return tl.where(a == b, tl.where(a.to(tl.int64, bitcast=True) < 0, b, a), r)


@triton.jit
def smaller(a, b):
    """The smaller of two non-NaN values, -0 < +0."""
    r = tl.where(a < b, a, b)
    return tl.where(a == b, tl.where(a.to(tl.int64, bitcast=True) < 0, a, b), r)


@triton.jit
def _maximum(a, b, p0, p1):
    return tl.where(a != a, a, tl.where(b != b, b, larger(a, b)))


@triton.jit
def _minimum(a, b, p0, p1):
    return tl.where(a != a, a, tl.where(b != b, b, smaller(a, b)))


WHY_FMA = "alpha b + a in one fma: one rounding (exact for float16 and alpha = 1)"
# the residual (TwoSum's error, where the product is exact) also marks the exact sums: lo == 0
device("add", _add, ROUNDED, ("alpha",), WHY_FMA, arity=2, residual=_add_residual)
device("sub", _sub, ROUNDED, ("alpha",), WHY_FMA, arity=2, residual=_sub_residual)
device("rsub", _rsub, ROUNDED, ("alpha",), WHY_FMA, arity=2, residual=_rsub_residual)
device("mul", _mul, 0, why="a product of two 24-bit significands is exact in float64", arity=2)
device("div", _div, ROUNDED, why="IEEE division: one rounding", arity=2, exact_at=_div_exact)
device("maximum", _maximum, 0, why="a selection, NaN first, -0 < +0", arity=2)
device("minimum", _minimum, 0, why="a selection, NaN first, -0 < +0", arity=2)
