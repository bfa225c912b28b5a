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
def _hypot(a, b, p0, p1):
    return libdevice.hypot(a, b)


device("fmax", _fmax, 0, why="a selection: a NaN loses to a number, -0 < +0", arity=2)
device("fmin", _fmin, 0, why="a selection: a NaN loses to a number, -0 < +0", arity=2)
device("copysign", _copysign, 0, why="exact", arity=2)
device("fmod", _fmod, 0, why="C fmod is exact", arity=2)
device("atan2", _atan2, LIBM, why="libdevice's atan2 of exact arguments", arity=2)
device("hypot", _hypot, LIBM, why="libdevice's hypot of exact arguments", arity=2)
