"""Unary math beyond the seed: expm1 ... erfc (float math, rule F), sign, signbit, square, frac."""
import triton
import triton.language as tl

from .. import dtype as D
from ..kernels import math as m
from .registry import OpSpec, register

ALL = D.ALL
NUMERIC = D.NUMERIC


@triton.jit
def _sign(x):
    # floats: sign(-0) = -0 and sign(NaN) = NaN (the zero and the NaN pass through); ATen's
    # (0 < x) - (x < 0) gives +0 for both.
    if x.dtype.is_floating():
        one = tl.full(x.shape, 1.0, x.dtype)
        return tl.where(x > 0, one, tl.where(x < 0, one * -1.0, x))
    else:
        return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)


@triton.jit
def _signbit(x):
    if x.dtype.is_floating():
        return m.signbit(x)
    else:
        return x < 0


@triton.jit
def _square(x):
    # one multiplication: the exact square rounded once (float16/bfloat16 squares are exact in
    # float32, so the store is the only rounding); integers wrap
    return x * x


@triton.jit
def _frac(x):
    # x - trunc(x) is exact (Sterbenz); an integral x gives +0.0 (x - x), inf gives NaN
    if x.dtype.is_floating():
        return x - m.trunc(x)
    else:
        return x - x


def unary(name, rule, dtypes, body, doc):
    return register(OpSpec(name, 1, rule, tuple(dtypes), body, doc=doc, family="unary"))


for _name, _body in [("expm1", m.expm1), ("log1p", m.log1p), ("log2", m.log2), ("log10", m.log10),
                     ("sinh", m.sinh), ("cosh", m.cosh), ("asin", m.asin), ("acos", m.acos),
                     ("atan", m.atan), ("asinh", m.asinh), ("acosh", m.acosh), ("atanh", m.atanh),
                     ("cbrt", m.cbrt), ("erfc", m.erfc)]:
    unary(_name, "F", ALL, _body, f"{_name}(x), float math (rule F): integers and bool compute in float32.")
unary("sign", "S", ALL, _sign, "-1, 0 or 1 with the input's dtype; sign(-0.0) = -0.0, sign(NaN) = NaN.")
unary("signbit", "B", ALL, _signbit, "True where the sign bit is set (signbit(-0.0) is True); integers: x < 0.")
unary("square", "S", NUMERIC, _square, "x * x (integers wrap).")
unary("frac", "S", NUMERIC, _frac, "x - trunc(x) with the sign of x; +0.0 for integral x; 0 for integer dtypes.")
