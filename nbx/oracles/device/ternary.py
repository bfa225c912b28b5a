"""Device oracles of the ternary family (lerp, addcmul, addcdiv, clamp) and clamp_min, in float64,
for float16, bfloat16 and float32 operands.

Products of two operands are exact in float64 (at most 48 bits, exponents within 2^-298 .. 2^256),
so each form below is a short sum of exact terms:
- addcmul: x + value t1 t2 = fma(value, t1 t2, x), one rounding (k = 2) for any float64 value;
- addcdiv: (x t2 + value t1) / t2 (the CPU oracle's form), an fma and a division: two roundings
  (k = 4);
- lerp: start + w (end - start) = start + w end - w start, three exact terms summed with two TwoSums
  and one final rounding: within u |f| + 3 u^2 |f| (u = 2^-53; a cancellation between start and the
  sum of the products makes that step exact by Sterbenz), k = 4 with room.
Each is exact where its error terms vanish (EXACT_AT, or a residual of 0), so exact ties are decided on
the device; lerp's and addcmul's residuals decide the near ones too.
Infinite and NaN operands take the CPU oracle's float64 form, which defines the op there."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from . import device
from .arithmetic import _fma_exact, _maximum, _minimum, fma_residual, two_sum


@triton.jit
def _finite3(a, b, c):
    return (tl.abs(a) < float("inf")) & (tl.abs(b) < float("inf")) & (tl.abs(c) < float("inf"))


@triton.jit
def _lerp_parts(start, end, w):
    """(r, lo): start + w end - w start = r + er + et exactly (the TwoSums' errors), lo = er + et
    rounded once, so its sign is that of the exact value - r and it is 0 only where r is exact.
    |er| is at most half r's float64 gap on its side; |et| <= u |t| <= 5 u^2 |r| (t = e1 + e2 is at
    most 4u |s2| unless start + s1 cancels by Sterbenz, where e2 = 0 and et = 0): no float64 lies
    strictly between r and the exact value. start + w (end - start) a hair off a float32 midpoint (a
    tiny start beside a product w end of 25 bits) left 2,376 of 2^20 stratified tuples undecided."""
    s1, e1 = two_sum(w * end, (w * start) * -1.0)
    s2, e2 = two_sum(start, s1)
    t, et = two_sum(e1, e2)
    r, er = two_sum(s2, t)
    return r, er + et


@triton.jit
def _lerp(start, end, w, p0, p1):
    # non-finite operands: ATen's two branches, as the CPU oracle (lerp(0, inf, 0.5) is NaN)
    diff = end - start
    aten = tl.where(tl.abs(w) < 0.5, start + w * diff, end - diff * (1.0 - w))
    r, lo = _lerp_parts(start, end, w)
    return tl.where(_finite3(start, end, w), r, aten)


@triton.jit
def _lerp_residual(start, end, w, p0, p1):
    r, lo = _lerp_parts(start, end, w)
    return tl.where(_finite3(start, end, w), lo, float("nan"))


@triton.jit
def _addcmul(x, t1, t2, value, p1):
    return libdevice.fma(value, t1 * t2, x)


@triton.jit
def _addcmul_residual(x, t1, t2, value, p1):
    return fma_residual(value, t1 * t2, x)


@triton.jit
def _addcdiv(x, t1, t2, value, p1):
    n = libdevice.fma(value, t1, x * t2)
    r = n / t2
    # an exact zero numerator: the zero of IEEE's sum x + value t1 / t2 (+0 unless both are -0)
    z = tl.where((x == 0) & (value * t1 == 0), x + (value * t1) / t2, tl.zeros_like(r))
    r = tl.where((n == 0) & (t2 != 0), z, r)
    return tl.where(_finite3(x, t1, t2), r, x + (value * t1) / t2)


@triton.jit
def _addcdiv_exact(x, t1, t2, value, p1):
    n = libdevice.fma(value, t1, x * t2)
    r = n / t2
    return _fma_exact(value, t1, x * t2) & (libdevice.fma(r, t2, n * -1.0) == 0) & _finite3(x, t1, t2)


@triton.jit
def _clamp(x, lo, hi, p0, p1):
    return _minimum(_maximum(x, lo, p0, p1), hi, p0, p1)


@triton.jit
def _clamp_min(x, lo, p0, p1):
    return _maximum(x, lo, p0, p1)


device("lerp", _lerp, 4, why="start + w end - w start: exact products, two TwoSums, one final rounding "
                             "(u |f| + 3 u^2 |f|); the TwoSums' errors are the residual", arity=3,
       residual=_lerp_residual)
device("addcmul", _addcmul, 2, ("value",), why="fma(value, t1 t2, x), t1 t2 exact: one rounding (the residual "
                                               "decides its ties)", arity=3, residual=_addcmul_residual)
device("addcdiv", _addcdiv, 4, ("value",), why="(x t2 + value t1) / t2: an fma of exact terms and a division, two "
                                               "roundings (EXACT_AT where both are exact)", arity=3,
       exact_at=_addcdiv_exact)
device("clamp", _clamp, 0, why="minimum(maximum(x, min), max): selections, NaN first, -0 < +0", arity=3)
device("clamp_min", _clamp_min, 0, why="maximum(x, min): a selection, NaN first, -0 < +0", arity=2)
