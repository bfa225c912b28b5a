"""Device oracles of the unary family. libdevice's float64 functions are within 1-5 ulp of the
exact value over their full range by NVIDIA's tables (1-3 for glibc's, which the interpreter calls);
k = 16 (E = 2^-49) leaves them a factor of 3 or more, and 32 for erfc (5 ulp tabled). Exact
operations take k = 0; one IEEE rounding k = 2 (|v - f| <= 2^-53 |f| <= 2^-52 |v|)."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from . import device

LIBM = 16          # libdevice / glibc float64 functions, NVIDIA's table <= 5 ulp (erfc: ERFC)
ERFC = 32
ROUNDED = 2        # one IEEE rounding
TWICE = 4          # two IEEE roundings in a row


@triton.jit
def _neg(x, p0, p1):
    return x * -1.0


@triton.jit
def _abs(x, p0, p1):
    return tl.abs(x)


@triton.jit
def _floor(x, p0, p1):
    return libdevice.floor(x)


@triton.jit
def _ceil(x, p0, p1):
    return libdevice.ceil(x)


@triton.jit
def _trunc(x, p0, p1):
    return libdevice.trunc(x)


@triton.jit
def _round(x, p0, p1):
    return libdevice.rint(x)


@triton.jit
def _sign(x, p0, p1):
    one = tl.full(x.shape, 1.0, tl.float64)
    return tl.where(x > 0, one, tl.where(x < 0, one * -1.0, x))


@triton.jit
def _frac(x, p0, p1):
    return x - libdevice.trunc(x)


@triton.jit
def _square(x, p0, p1):
    return x * x


@triton.jit
def _sqrt(x, p0, p1):
    return libdevice.sqrt(x)


@triton.jit
def _rsqrt(x, p0, p1):
    return 1.0 / libdevice.sqrt(x)


@triton.jit
def _reciprocal(x, p0, p1):
    return 1.0 / x


@triton.jit
def _exp(x, p0, p1):
    return libdevice.exp(x)


@triton.jit
def _exp2(x, p0, p1):
    return libdevice.exp2(x)


@triton.jit
def _expm1(x, p0, p1):
    return libdevice.expm1(x)


@triton.jit
def _log(x, p0, p1):
    return libdevice.log(x)


@triton.jit
def _log2(x, p0, p1):
    return libdevice.log2(x)


@triton.jit
def _log10(x, p0, p1):
    return libdevice.log10(x)


@triton.jit
def _log1p(x, p0, p1):
    return libdevice.log1p(x)


@triton.jit
def _sin(x, p0, p1):
    return libdevice.sin(x)


@triton.jit
def _cos(x, p0, p1):
    return libdevice.cos(x)


@triton.jit
def _tan(x, p0, p1):
    return libdevice.tan(x)


@triton.jit
def _sinh(x, p0, p1):
    return libdevice.sinh(x)


@triton.jit
def _cosh(x, p0, p1):
    return libdevice.cosh(x)


@triton.jit
def _asin(x, p0, p1):
    return libdevice.asin(x)


@triton.jit
def _acos(x, p0, p1):
    return libdevice.acos(x)


@triton.jit
def _atan(x, p0, p1):
    return libdevice.atan(x)


@triton.jit
def _asinh(x, p0, p1):
    return libdevice.asinh(x)


@triton.jit
def _acosh(x, p0, p1):
    return libdevice.acosh(x)


@triton.jit
def _atanh(x, p0, p1):
    return libdevice.atanh(x)


@triton.jit
def _cbrt(x, p0, p1):
    return libdevice.cbrt(x)


@triton.jit
def _erf(x, p0, p1):
    return libdevice.erf(x)


@triton.jit
def _erfc(x, p0, p1):
    return libdevice.erfc(x)


EXACT = "exact in float64 for every float32, float16 and bfloat16 input"
for _name, _fn in [("neg", _neg), ("abs", _abs), ("floor", _floor), ("ceil", _ceil), ("trunc", _trunc),
                   ("round", _round), ("sign", _sign), ("frac", _frac), ("square", _square)]:
    device(_name, _fn, 0, why=EXACT + (" (a 24-bit square has 48 bits)" if _name == "square" else ""))
device("sqrt", _sqrt, ROUNDED, why="IEEE square root: one rounding")
device("reciprocal", _reciprocal, ROUNDED, why="IEEE division: one rounding")
device("rsqrt", _rsqrt, TWICE, why="a square root and a division, each rounded once")
for _name, _fn in [("exp", _exp), ("exp2", _exp2), ("expm1", _expm1), ("log", _log), ("log2", _log2),
                   ("log10", _log10), ("log1p", _log1p), ("sin", _sin), ("cos", _cos), ("tan", _tan),
                   ("sinh", _sinh), ("cosh", _cosh), ("asin", _asin), ("acos", _acos), ("atan", _atan),
                   ("asinh", _asinh), ("acosh", _acosh), ("atanh", _atanh), ("cbrt", _cbrt), ("erf", _erf)]:
    device(_name, _fn, LIBM, why="one libdevice float64 function of an exact argument")
device("erfc", _erfc, ERFC, why="libdevice's erfc, 5 ulp in NVIDIA's table")
