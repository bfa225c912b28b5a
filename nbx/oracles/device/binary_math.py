"""Device oracles of the binary math family, in float64: exact selections and remainders, and
libdevice's two-argument functions of exact arguments (unary.LIBM's room)."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from . import device
from .arithmetic import larger, smaller
from .unary import LIBM


@triton.jit
def _fmax(a, b, p0, p1):
    return tl.where(a != a, b, tl.where(b != b, a, larger(a, b)))


@triton.jit
def _fmin(a, b, p0, p1):
    return tl.where(a != a, b, tl.where(b != b, a, smaller(a, b)))


@triton.jit
def _copysign(a, b, p0, p1):
    return libdevice.copysign(a, b)


@triton.jit
def _fmod(a, b, p0, p1):
    return libdevice.fmod(a, b)


@triton.jit
def _atan2(a, b, p0, p1):
    return libdevice.atan2(a, b)


@triton.jit
def _hypot_parts(a, b):
    """(h, lo, finite): h = sqrt(s) with s = a^2 + b^2, the squares of float32 values exact and the
    sum's error e from TwoSum; the root of s + e is h + lo, lo = (fma(-h, h, s) + e) / (2h), to a
    relative 2^-100 (the remainder s - h^2 of a correctly rounded root is a float64, so the fma
    is exact; the next term, lo^2 / 2h, is 2^-53 of lo). lo == 0 exactly where h is the root."""
    aa = a * a
    bb = b * b
    s = aa + bb
    z = s - aa
    e = (aa - (s - z)) + (bb - z)
    h = libdevice.sqrt(s)
    r = libdevice.fma(-h, h, s) + e
    lo = tl.where(h > 0, r / (2.0 * h), 0.0)
    finite = (tl.abs(s) < float("inf")) & (s == s)
    return h, lo, finite


@triton.jit
def _hypot(a, b, p0, p1):
    h, lo, finite = _hypot_parts(a, b)
    return tl.where(finite, h, libdevice.hypot(a, b))


@triton.jit
def _hypot_residual(a, b, p0, p1):
    h, lo, finite = _hypot_parts(a, b)
    return tl.where(finite, lo, float("nan"))


device("fmax", _fmax, 0, why="a selection: a NaN loses to a number, -0 < +0", arity=2)
device("fmin", _fmin, 0, why="a selection: a NaN loses to a number, -0 < +0", arity=2)
device("copysign", _copysign, 0, why="exact", arity=2)
device("fmod", _fmod, 0, why="C fmod is exact", arity=2)
device("atan2", _atan2, LIBM, why="libdevice's atan2 of exact arguments", arity=2)
device("hypot", _hypot, 4, why="sqrt of the float64 sum of two exact squares (two roundings); the residual "
                              "carries the root to 2^-100", arity=2, residual=_hypot_residual)


@triton.jit
def _pow(x, y, p0, p1):
    # libdevice's pow (a double-double log and exp inside: NVIDIA's table gives 2 ulp over the whole
    # range, near x = 1 and at huge and tiny results included); x^2 and x^3 by products where those
    # are exact (x^2 always for these formats, x^3 where the fma residual is 0), so that their ties
    # are known exact (_pow_exact). C99's rules restated where numpy's power (the interpreter's)
    # might differ: pow(x, +-0) = 1, pow(+-0, y > 0 not an odd integer) = +0, pow(-inf, y) for y not
    # an odd integer is +inf or +0.
    r = libdevice.pow(x, y)
    sq = x * x
    cube = sq * x
    r = tl.where(y == 2.0, sq, tl.where((y == 3.0) & (libdevice.fma(sq, x, cube * -1.0) == 0), cube, r))
    odd = tl.abs(libdevice.fmod(y, tl.full(y.shape, 2.0, tl.float64))) == 1.0
    r = tl.where((x == 0) & (y > 0) & ~odd, 0.0, r)
    r = tl.where((x == -float("inf")) & ~odd & (y == y), tl.where(y > 0, float("inf"), 0.0), r)
    return tl.where(y == 0, 1.0, r)


@triton.jit
def _pow_exact(x, y, p0, p1):
    sq = x * x
    return (y == 2.0) | ((y == 3.0) & (libdevice.fma(sq, x, sq * x * -1.0) == 0))


device("pow", _pow, LIBM, why="libdevice's pow of exact arguments (2 ulp in NVIDIA's table, glibc's < 1); x^2 "
                              "and exact x^3 as products (EXACT_AT)", arity=2, exact_at=_pow_exact)
