"""Device oracles of the ops whose result is exact and need not be the operand's format: predicates
and comparisons (bool), logical ops (bool), casts (to another dtype), clamp by scalars and
nan_to_num. Each value is the exact result as a float64 (bool as 0 or 1, an integer as its value):
The device scorer compares bool and integer results with it exactly (an int64 result saturates at
2^63 - 1, which float64 cannot hold), and rounds it once to a float result's format (a cast to
float16 from float32 is that one rounding). k = 0 throughout.

A label's oracle takes its parameters from the target (`args`): a cast's integer range comes from
its dtype, nan_to_num's default +-inf replacement is the result format's largest finite value, and
clamp's absent bound is NaN (no bound)."""
import numpy as np
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from . import DEVICE_ORACLES, device

_BEFORE = set(DEVICE_ORACLES)


@triton.jit
def _b(c):
    return c.to(tl.float64)


@triton.jit
def _eq(a, b, p0, p1):
    return _b(a == b)


@triton.jit
def _ne(a, b, p0, p1):
    return _b(a != b)


@triton.jit
def _lt(a, b, p0, p1):
    return _b(a < b)


@triton.jit
def _le(a, b, p0, p1):
    return _b(a <= b)


@triton.jit
def _gt(a, b, p0, p1):
    return _b(a > b)


@triton.jit
def _ge(a, b, p0, p1):
    return _b(a >= b)


@triton.jit
def _logical_and(a, b, p0, p1):
    return _b((a != 0) & (b != 0))          # NaN != 0: true


@triton.jit
def _logical_or(a, b, p0, p1):
    return _b((a != 0) | (b != 0))


@triton.jit
def _logical_xor(a, b, p0, p1):
    return _b((a != 0) != (b != 0))


@triton.jit
def _logical_not(x, p0, p1):
    return _b(x == 0)


@triton.jit
def _isfinite(x, p0, p1):
    return _b(tl.abs(x) < float("inf"))


@triton.jit
def _isinf(x, p0, p1):
    return _b(tl.abs(x) == float("inf"))


@triton.jit
def _isnan(x, p0, p1):
    return _b(x != x)


@triton.jit
def _signbit(x, p0, p1):
    return _b(x.to(tl.int64, bitcast=True) < 0)


@triton.jit
def _to_bool(x, p0, p1):
    return _b(x != 0)


@triton.jit
def _to_int(x, lo, hi):
    """trunc toward zero, saturated to [lo, hi]; NaN -> 0 (nbx's cast; the CPU oracle's to_f64)."""
    t = tl.where(x != x, 0.0, libdevice.trunc(x))
    return tl.minimum(tl.maximum(t, lo), hi) + 0.0


@triton.jit
def _identity(x, p0, p1):
    return x


@triton.jit
def _clamp(x, lo, hi):
    """minimum(maximum(x, lo), hi) with NaN propagating from x; an absent bound is NaN here. As
    the op: -0.0 < +0.0 (maximum(-0.0, +0.0) is +0.0)."""
    lo_ = tl.where(lo != lo, -float("inf"), lo)
    hi_ = tl.where(hi != hi, float("inf"), hi)
    up = tl.where((x < lo_) | ((x == lo_) & (x.to(tl.int64, bitcast=True) < 0)), lo_, x)
    r = tl.where((up > hi_) | ((up == hi_) & (hi_.to(tl.int64, bitcast=True) < 0)), hi_, up)
    return tl.where(x != x, x, r)


@triton.jit
def _nan_to_num(x, nan, big):
    return tl.where(x != x, nan, tl.where(x == float("inf"), big, tl.where(x == -float("inf"), -big, x)))


for _name, _fn in [("eq", _eq), ("ne", _ne), ("lt", _lt), ("le", _le), ("gt", _gt), ("ge", _ge),
                   ("logical_and", _logical_and), ("logical_or", _logical_or), ("logical_xor", _logical_xor)]:
    device(_name, _fn, 0, why="an exact comparison of the float64 operands (IEEE: NaN unordered)", arity=2)
for _name, _fn in [("logical_not", _logical_not), ("isfinite", _isfinite), ("isinf", _isinf),
                   ("isnan", _isnan), ("signbit", _signbit)]:
    device(_name, _fn, 0, why="an exact predicate of the float64 operand")


def _dtype(t) -> str:
    return str(t.params["dtype"])


device("to:dtype=bool", _to_bool, 0, why="x != 0 (NaN is true)")
for _int in ("uint8", "int8", "int16", "int32", "int64"):
    device(f"to:dtype={_int}", _to_int, 0, ("int_min", "int_max"),
           why="trunc toward zero, saturated to the dtype's range, NaN -> 0: exact in float64",
           args=lambda t: (float(np.iinfo(_dtype(t)).min), float(np.iinfo(_dtype(t)).max)))
for _flt in ("float16", "bfloat16", "float32", "float64"):
    device(f"to:dtype={_flt}", _identity, 0, why="the exact input, rounded once to the result's format")
device("nan_to_num", _nan_to_num, 0, ("nan", "fmt_max"),
       why="a selection of the input and exact replacements",
       args=lambda t: (float(t.params.get("nan", 0.0)), float(t.dtype.max))
       if t.params.get("posinf") is None and t.params.get("neginf") is None else None)
device("clamp/1", _clamp, 0, ("min", "max"), why="a selection of the input and the scalar bounds",
       args=lambda t: tuple(float("nan") if t.params.get(k) is None else float(t.params[k]) for k in ("min", "max")))

LABELS = tuple(k for k in DEVICE_ORACLES if k not in _BEFORE)     # the oracles of this module
