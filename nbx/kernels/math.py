"""Scalar math helpers the op bodies call. Precision decisions live here, with their reasons.

One source for both backends: calls go to libdevice, which on the GPU is NVIDIA's and under the
interpreter is numpy's (backend/interpreter_libdevice.py). Launches pass `enable_reflect_ftz=False`:
Triton links libdevice with flush-to-zero on by default, and on the H200 sin, tanh, erf and sqrt of
subnormal inputs came back 8.4e6 ulp off (zero) until it was turned off (PRECISION.md).

float32 transcendentals are evaluated in float64 and rounded once. libdevice's float64 functions
are within ~1 float64 ulp, i.e. 2^-29 float32 ulp, so the float32 result is correctly rounded except
when the exact value lies within 2^-29 ulp of a rounding boundary. The bandwidth figures in
PRECISION.md (an element-wise exp at 4.21 TB/s against a 4.23 TB/s copy) say the extra arithmetic
is hidden behind memory on the H200. tl.exp is `ex2.approx(x*log2e)`: 60 ulp; never used here.
"""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def _wide(x):
    """float32 -> float64 for evaluation; float64 stays."""
    return x.to(tl.float64)


# ---------------------------------------------------------------- exact IEEE operations
@triton.jit
def div(a, b):
    # fp32 `/` in Triton is div.full.f32 (~2 ulp); div_rn is IEEE division. fp64 `/` is div.rn.f64.
    if a.dtype == tl.float32:
        return tl.div_rn(a, b)
    else:
        return a / b


@triton.jit
def sqrt(x):
    # tl.sqrt is sqrt.approx with subnormals flushed (1.7e7 ulp on the H200); sqrt_rn is IEEE.
    if x.dtype == tl.float32:
        return tl.sqrt_rn(x)
    else:
        return libdevice.sqrt(x)


@triton.jit
def reciprocal(x):
    return div(tl.full(x.shape, 1.0, x.dtype), x)


@triton.jit
def rsqrt(x):
    # libdevice rsqrt returns inf on subnormal float32 inputs (H200); 1/sqrt in float64 is
    # correctly rounded before the final rounding to float32.
    if x.dtype == tl.float32:
        w = _wide(x)
        return (1.0 / libdevice.sqrt(w)).to(tl.float32)
    else:
        return libdevice.rsqrt(x)


@triton.jit
def floor(x):
    return libdevice.floor(x)


@triton.jit
def ceil(x):
    return libdevice.ceil(x)


@triton.jit
def trunc(x):
    return libdevice.trunc(x)


@triton.jit
def rint(x):
    """Round half to even (IEEE roundToIntegralTiesToEven)."""
    return libdevice.rint(x)


@triton.jit
def fmod(a, b):
    return libdevice.fmod(a, b)


@triton.jit
def copysign(a, b):
    return libdevice.copysign(a, b)


@triton.jit
def is_nan(x):
    return x != x


@triton.jit
def signbit(x):
    """True for -0.0 and negative values (and NaNs with the sign bit), from the bits."""
    if x.dtype == tl.float64:
        return (x.to(tl.int64, bitcast=True) < 0)
    else:
        return (x.to(tl.int32, bitcast=True) < 0)


# ---------------------------------------------------------------- transcendentals (float32 via float64)
@triton.jit
def exp(x):
    return libdevice.exp(_wide(x)).to(x.dtype)


@triton.jit
def exp2(x):
    return libdevice.exp2(_wide(x)).to(x.dtype)


@triton.jit
def expm1(x):
    return libdevice.expm1(_wide(x)).to(x.dtype)


@triton.jit
def log(x):
    return libdevice.log(_wide(x)).to(x.dtype)


@triton.jit
def log2(x):
    return libdevice.log2(_wide(x)).to(x.dtype)


@triton.jit
def log10(x):
    return libdevice.log10(_wide(x)).to(x.dtype)


@triton.jit
def log1p(x):
    return libdevice.log1p(_wide(x)).to(x.dtype)


@triton.jit
def sin(x):
    return libdevice.sin(_wide(x)).to(x.dtype)


@triton.jit
def cos(x):
    return libdevice.cos(_wide(x)).to(x.dtype)


@triton.jit
def tan(x):
    return libdevice.tan(_wide(x)).to(x.dtype)


@triton.jit
def sinh(x):
    return libdevice.sinh(_wide(x)).to(x.dtype)


@triton.jit
def cosh(x):
    return libdevice.cosh(_wide(x)).to(x.dtype)


@triton.jit
def tanh(x):
    return libdevice.tanh(_wide(x)).to(x.dtype)


@triton.jit
def asin(x):
    return libdevice.asin(_wide(x)).to(x.dtype)


@triton.jit
def acos(x):
    return libdevice.acos(_wide(x)).to(x.dtype)


@triton.jit
def atan(x):
    return libdevice.atan(_wide(x)).to(x.dtype)


@triton.jit
def asinh(x):
    return libdevice.asinh(_wide(x)).to(x.dtype)


@triton.jit
def acosh(x):
    return libdevice.acosh(_wide(x)).to(x.dtype)


@triton.jit
def atanh(x):
    return libdevice.atanh(_wide(x)).to(x.dtype)


@triton.jit
def cbrt(x):
    return libdevice.cbrt(_wide(x)).to(x.dtype)


@triton.jit
def erf(x):
    return libdevice.erf(_wide(x)).to(x.dtype)


@triton.jit
def erfc(x):
    return libdevice.erfc(_wide(x)).to(x.dtype)


@triton.jit
def atan2(y, x):
    return libdevice.atan2(_wide(y), _wide(x)).to(y.dtype)


@triton.jit
def hypot(a, b):
    return libdevice.hypot(_wide(a), _wide(b)).to(a.dtype)


@triton.jit
def pow(a, b):
    return libdevice.pow(_wide(a), _wide(b)).to(a.dtype)


# ---------------------------------------------------------------- conversions
@triton.jit
def _f32_round_to_odd(x):
    """float64 -> float32 rounded to odd: the nearest-even result, moved to the odd neighbour toward
    zero when inexact. Rounding that to bfloat16 (8 bits <= 24 - 2) is then a single correct
    rounding; the direct float64->float32->bfloat16 path rounds twice."""
    r = x.to(tl.float32)
    back = r.to(tl.float64)
    bits = r.to(tl.uint32, bitcast=True)
    over = tl.abs(back) > tl.abs(x)            # nearest went away from zero: step back toward zero
    bits = tl.where(over & (x == x), bits - 1, bits)
    inexact = (back != x) & (x == x)
    bits = tl.where(inexact, bits | 1, bits)
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def to_bfloat16(x):
    """Round float32/float64 to bfloat16, nearest even, with integer bit operations.

    The interpreter's float32->bfloat16 `.to()` truncates (seen on Triton 3.9: 49% of exp results one
    bf16 ulp off); the GPU rounds to nearest even. This helper is what both backends run.
    """
    if x.dtype == tl.float64:
        f = _f32_round_to_odd(x)
    else:
        f = x.to(tl.float32)
    bits = f.to(tl.uint32, bitcast=True)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16       # carries into the exponent: overflow -> inf
    quiet_nan = (bits >> 16) | 0x0040
    out = tl.where(f != f, quiet_nan, rounded)
    return out.to(tl.uint16).to(tl.bfloat16, bitcast=True)


@triton.jit
def cast(x, DST: tl.constexpr):
    """Convert a computed value to the output dtype, the same way on both backends.

    floats -> bfloat16: nbx's rounding helper. float -> integer: truncate toward zero, saturate at the
    integer range, NaN -> 0 (nbx's definition; ATen leaves it undefined). anything -> bool: x != 0.
    """
    if DST == tl.int1:
        return x != 0
    elif DST == tl.bfloat16:
        if x.dtype.is_floating():
            return to_bfloat16(x)
        else:
            return to_bfloat16(x.to(tl.float64))
    elif DST.is_int() and x.dtype.is_floating():
        return _float_to_int(x, DST)
    else:
        return x.to(DST)


@triton.jit
def _float_to_int(x, DST: tl.constexpr):
    # Bounds are powers of two, exact in float64: t < HI means t <= the integer maximum.
    if DST == tl.uint8:
        LO: tl.constexpr = 0.0
        HI: tl.constexpr = 256.0
        MN: tl.constexpr = 0
        MX: tl.constexpr = 255
    elif DST == tl.int8:
        LO: tl.constexpr = -128.0
        HI: tl.constexpr = 128.0
        MN: tl.constexpr = -128
        MX: tl.constexpr = 127
    elif DST == tl.int16:
        LO: tl.constexpr = -32768.0
        HI: tl.constexpr = 32768.0
        MN: tl.constexpr = -32768
        MX: tl.constexpr = 32767
    elif DST == tl.int32:
        LO: tl.constexpr = -2147483648.0
        HI: tl.constexpr = 2147483648.0
        MN: tl.constexpr = -2147483648
        MX: tl.constexpr = 2147483647
    else:
        LO: tl.constexpr = -9223372036854775808.0
        HI: tl.constexpr = 9223372036854775808.0
        MN: tl.constexpr = -9223372036854775807 - 1
        MX: tl.constexpr = 9223372036854775807
    t = libdevice.trunc(x.to(tl.float64))
    inside = (t >= LO) & (t < HI)
    v = tl.where(inside, t, 0.0).to(DST)
    v = tl.where(t >= HI, tl.full(t.shape, MX, DST), v)
    v = tl.where(t < LO, tl.full(t.shape, MN, DST), v)
    return tl.where(t != t, tl.full(t.shape, 0, DST), v)
