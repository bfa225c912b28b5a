"""Unary math: neg, abs, exp ... erf, floor/ceil/trunc/round, isfinite/isinf/isnan, expm1 ... erfc
(float math, rule F), sign, signbit, square, frac."""
import triton
import triton.language as tl

from ..dtype import ALL, NUMERIC, int8
from ..kernels import math as m
from ..kernels.fast32 import atan, cbrt, erf, erfc, exp, log, rsqrt, trig
from .registry import Select, op
from .verify import CR16, BigCase, Verify



@triton.jit
def _identity(x):
    return x


@triton.jit
def _neg(x):
    # Triton's unary minus is `0 - x`, which gives +0.0 for x = +0.0 (seen in tests/test_ops_values.py
    # neg-float32); multiplying by -1 is exact and flips the sign of zeros and NaNs too.
    if x.dtype.is_floating():
        return x * -1.0
    else:
        return -x


@triton.jit
def _abs(x):
    return tl.abs(x)


@triton.jit
def _isfinite(x):
    return (x - x) == 0          # inf - inf and NaN - NaN are NaN; integers always give 0


@triton.jit
def _isinf(x):
    return (x == x) & ((x - x) != 0)


@triton.jit
def _isnan(x):
    return x != x


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


def _float_or_identity(float_body):
    """Rounding ops are the identity on integers (ATen)."""
    return Select(lambda params, t: float_body if t.common.is_float else _identity)


def unary(name, rule, dtypes, body, doc, **kw):
    return op(name, 1, rule, tuple(dtypes), body, doc=doc, **kw)


unary("neg", "S", NUMERIC, _neg, "-x. neg(0.0) = -0.0; integers wrap at INT_MIN as ATen does.",
      verify=Verify(big=BigCase(int8, lambda a: -a), correctly_rounded=CR16))
unary("abs", "S", NUMERIC, _abs, "|x|. abs(-0.0) = +0.0; integers wrap at INT_MIN as ATen does.", verify=Verify(correctly_rounded=CR16))
# float math (rule F): the float64 function rounded once by the store. float32: its hard cases (the
# inputs whose exact value lies within 9 float64 ulps of a midpoint) take their correctly rounded
# results from nbx/kernels/hard32_cases/<op>.json (kernels/hard32.py); 0 of 2^32 inputs misrounded
# on an H100 for each op. float16/bfloat16 compute in float64 (registry.float_math_dtype).
unary("exp", "F", ALL, m.exp, "exp(x), float math (rule F): integers and bool compute in float32.",
      verify=Verify(correctly_rounded=CR16,
                    ci_rank8="unary with a float result of integer and bool operands (rule F)"))
unary("exp2", "F", ALL, m.exp2, "exp2(x), float math (rule F): integers and bool compute in float32.",
      verify=Verify(correctly_rounded=CR16))
unary("log", "F", ALL, m.log, "log(x), float math (rule F): integers and bool compute in float32.", fast32=log.LOG,
      verify=Verify(correctly_rounded=CR16))
unary("sin", "F", ALL, m.sin, "sin(x), float math (rule F): integers and bool compute in float32.", fast32=trig.SIN,
      verify=Verify(correctly_rounded=CR16))
unary("cos", "F", ALL, m.cos, "cos(x), float math (rule F): integers and bool compute in float32.", fast32=trig.COS,
      verify=Verify(correctly_rounded=CR16))
unary("tan", "F", ALL, m.tan, "tan(x), float math (rule F): integers and bool compute in float32.", fast32=trig.TAN,
      verify=Verify(correctly_rounded=CR16))
unary("sqrt", "F", ALL, m.sqrt, "sqrt(x), float math (rule F): integers and bool compute in float32.",
      verify=Verify(correctly_rounded=CR16))
unary("rsqrt", "F", ALL, m.rsqrt, "rsqrt(x), float math (rule F): integers and bool compute in float32.", fast32=rsqrt.RSQRT,
      verify=Verify(correctly_rounded=CR16))
unary("reciprocal", "F", ALL, m.reciprocal, "reciprocal(x), float math (rule F): integers and bool compute in float32.",
      verify=Verify(correctly_rounded=CR16))
unary("erf", "F", ALL, m.erf, "erf(x), float math (rule F): integers and bool compute in float32.", fast32=erf.ERF,
      verify=Verify(correctly_rounded=CR16))
unary("floor", "S", NUMERIC, _float_or_identity(m.floor), "floor(x); identity on integers.",
      verify=Verify(correctly_rounded=CR16))
unary("ceil", "S", NUMERIC, _float_or_identity(m.ceil), "ceil(x); identity on integers.",
      verify=Verify(correctly_rounded=CR16))
unary("trunc", "S", NUMERIC, _float_or_identity(m.trunc), "trunc(x); identity on integers.",
      verify=Verify(correctly_rounded=CR16))
unary("round", "S", NUMERIC, _float_or_identity(m.rint), "round(x); identity on integers. Half to even.",
      verify=Verify(correctly_rounded=CR16))
unary("isfinite", "B", ALL, _isfinite, "True where x is neither inf nor NaN; integers are finite.", verify=Verify(correctly_rounded=CR16))
unary("isinf", "B", ALL, _isinf, "True where x is +inf or -inf; never for integers.", verify=Verify(correctly_rounded=CR16))
unary("isnan", "B", ALL, _isnan, "True where x is NaN; never for integers.", verify=Verify(correctly_rounded=CR16))
unary("expm1", "F", ALL, m.expm1, "expm1(x), float math (rule F): integers and bool compute in float32.", fast32=exp.EXPM1,
      verify=Verify(correctly_rounded=CR16))
unary("log1p", "F", ALL, m.log1p, "log1p(x), float math (rule F): integers and bool compute in float32.", fast32=log.LOG1P,
      verify=Verify(correctly_rounded=CR16))
unary("log2", "F", ALL, m.log2, "log2(x), float math (rule F): integers and bool compute in float32.", fast32=log.LOG2,
      verify=Verify(correctly_rounded=CR16))
unary("log10", "F", ALL, m.log10, "log10(x), float math (rule F): integers and bool compute in float32.", fast32=log.LOG10,
      verify=Verify(correctly_rounded=CR16))
unary("sinh", "F", ALL, m.sinh, "sinh(x), float math (rule F): integers and bool compute in float32.", fast32=exp.SINH,
      verify=Verify(correctly_rounded=CR16))
unary("cosh", "F", ALL, m.cosh, "cosh(x), float math (rule F): integers and bool compute in float32.", fast32=exp.COSH,
      verify=Verify(correctly_rounded=CR16))
unary("asin", "F", ALL, m.asin, "asin(x), float math (rule F): integers and bool compute in float32.",
      fast32=atan.ASIN,
      verify=Verify(correctly_rounded=CR16))
unary("acos", "F", ALL, m.acos, "acos(x), float math (rule F): integers and bool compute in float32.",
      fast32=atan.ACOS,
      verify=Verify(correctly_rounded=CR16))
unary("atan", "F", ALL, m.atan, "atan(x), float math (rule F): integers and bool compute in float32.",
      fast32=atan.ATAN,
      verify=Verify(correctly_rounded=CR16))
unary("asinh", "F", ALL, m.asinh, "asinh(x), float math (rule F): integers and bool compute in float32.",
      fast32=log.ASINH,
      verify=Verify(correctly_rounded=CR16))
unary("acosh", "F", ALL, m.acosh, "acosh(x), float math (rule F): integers and bool compute in float32.",
      fast32=log.ACOSH,
      verify=Verify(correctly_rounded=CR16))
unary("atanh", "F", ALL, m.atanh, "atanh(x), float math (rule F): integers and bool compute in float32.",
      fast32=log.ATANH,
      verify=Verify(correctly_rounded=CR16))
unary("cbrt", "F", ALL, m.cbrt, "cbrt(x), float math (rule F): integers and bool compute in float32.",
      fast32=cbrt.CBRT, verify=Verify(correctly_rounded=CR16))
unary("erfc", "F", ALL, m.erfc, "erfc(x), float math (rule F): integers and bool compute in float32.",
      fast32=erfc.ERFC, verify=Verify(correctly_rounded=CR16))
unary("sign", "S", ALL, _sign, "-1, 0 or 1 with the input's dtype; sign(-0.0) = -0.0, sign(NaN) = NaN.",
      verify=Verify(correctly_rounded=CR16))
unary("signbit", "B", ALL, _signbit, "True where the sign bit is set (signbit(-0.0) is True); integers: x < 0.",
      verify=Verify(correctly_rounded=CR16))
unary("square", "S", NUMERIC, _square, "x * x (integers wrap).", verify=Verify(correctly_rounded=CR16))
unary("frac", "S", NUMERIC, _frac, "x - trunc(x) with the sign of x; +0.0 for integral x; 0 for integer dtypes.",
      verify=Verify(correctly_rounded=CR16))
