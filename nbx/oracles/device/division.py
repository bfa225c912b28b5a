"""Device oracles of the division family beyond true division: floor and trunc quotients
(floor_divide, div with rounding_mode "floor" and "trunc") and remainder, in float64, for float16,
bfloat16 and float32 operands.

The floor quotient of the exact a/b: q = a/b rounded once and f = floor(q); since |q - a/b| <=
2^-53 |a/b| < 1 below 2^53, f is floor(a/b) or one off, and the sign of a - f b (one fma: the exact
residual rounded once, which keeps its sign and is never 0 unless exact, since a and f b are
multiples of 2^-298 for these formats) says which: f is then exactly floor(a/b) (k = 0 there,
EXACT_AT). From |q| >= 2^53 on, q is an integer and floor(a/b) is within 1 <= 2^-53 |a/b| of a/b,
so |q - floor(a/b)| <= 2^-52 |a/b|: k = 4 leaves room. The specials follow the CPU oracles
(nbx/oracles/arithmetic.py: Python's // for floor, trunc of the exact quotient with a/b for an infinite
dividend over a finite divisor).

remainder: r = fmod(a, b) is exact; where r is nonzero and its sign differs from b's, r + b is
rounded once (k = 2) and exact wherever TwoSum says so (always for float16, and where the operands'
exponents are close)."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from . import device
from .arithmetic import _fma_exact

BIG = tl.constexpr(9007199254740992.0)      # 2^53: below it, floor(q) +- 1 is exact and corrected


@triton.jit
def _floor_q(a, b):
    """floor(a/b) for finite a and finite nonzero b (else as a/b), and whether it is exact."""
    q = a / b
    f = libdevice.floor(q)
    small = tl.abs(q) < BIG
    s = libdevice.fma(f * -1.0, b, a)                  # a - f b, its sign exact
    below = small & (s != 0) & ((s < 0) != (b < 0))    # a/b < f
    f = tl.where(below, f - 1.0, f)
    s1 = libdevice.fma((f + 1.0) * -1.0, b, a)         # a - (f + 1) b
    above = small & ~below & ((s1 == 0) | ((s1 < 0) == (b < 0)))   # a/b >= f + 1
    f = tl.where(above, f + 1.0, f)
    return f, small


@triton.jit
def floor_divide64(a, b):
    """Python's float a // b of the exact quotient; x // 0 is a/0, inf // finite NaN, and a
    finite nonzero a over an infinite b of the other sign -1 (else a/b, a signed zero)."""
    f, small = _floor_q(a, b)
    q = a / b
    fin_a = tl.abs(a) < float("inf")
    fin_b = tl.abs(b) < float("inf")
    ok = fin_a & fin_b & (b != 0)
    other = (a != 0) & ((a < 0) != (b < 0))
    nan = q * 0.0 + (a - a)                            # NaN for an infinite a, else NaN only for NaN inputs
    r = tl.where(fin_a & ~fin_b & (b == b), tl.where(other, -1.0, q), q)
    r = tl.where(~fin_a & (a == a) & (b == b) & (b != 0), nan, r)
    return tl.where(ok, f, r)


@triton.jit
def floor_exact64(a, b):
    f, small = _floor_q(a, b)
    return small


@triton.jit
def _floor_divide(a, b, p0, p1):
    return floor_divide64(a, b)


@triton.jit
def _floor_exact(a, b, p0, p1):
    return floor_exact64(a, b)


@triton.jit
def _div_trunc(a, b, p0, p1):
    # trunc of the exact quotient: floor of |a| / |b| with the sign of a/b; +-inf for an infinite
    # dividend over a finite divisor (the CPU oracle's definition)
    q = a / b
    t = libdevice.copysign(floor_divide64(tl.abs(a), tl.abs(b)), q)
    return tl.where((tl.abs(a) == float("inf")) & (tl.abs(b) < float("inf")), q, t)


@triton.jit
def _trunc_exact(a, b, p0, p1):
    return floor_exact64(tl.abs(a), tl.abs(b))


@triton.jit
def _remainder(a, b, p0, p1):
    r = libdevice.fmod(a, b)
    return tl.where((r != 0) & ((b < 0) != (r < 0)), r + b, r)


@triton.jit
def _remainder_exact(a, b, p0, p1):
    r = libdevice.fmod(a, b)
    fix = (r != 0) & ((b < 0) != (r < 0))
    return ~fix | _fma_exact(r, tl.full(r.shape, 1.0, tl.float64), b)


WHY_FLOOR = ("a/b rounded once, floored and corrected by the sign of the fma residual a - f b: exact below "
             "2^53 (EXACT_AT); above, |q - floor(a/b)| <= 2^-52 |a/b|")
device("floor_divide", _floor_divide, 4, why=WHY_FLOOR, arity=2, exact_at=_floor_exact)
device("div:rounding_mode=floor", _floor_divide, 4, why=WHY_FLOOR, arity=2, exact_at=_floor_exact)
device("div:rounding_mode=trunc", _div_trunc, 4, why=WHY_FLOOR + "; trunc as floor of |a|/|b| with a/b's sign",
       arity=2, exact_at=_trunc_exact)
device("remainder", _remainder, 2, why="fmod is exact; r + b (where the signs differ) is rounded once, exact where "
                                       "TwoSum says so (EXACT_AT)", arity=2, exact_at=_remainder_exact)
