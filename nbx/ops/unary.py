"""Unary math: neg, abs, exp ... erf, floor/ceil/trunc/round, isfinite/isinf/isnan, copy, to."""
import triton
import triton.language as tl

from .. import dtype as D
from ..kernels import math as m
from ..kernels.fast32 import erf, log, rsqrt, trig
from .registry import OpSpec, Param, Typing, compute_dtype, register

NUMERIC = D.NUMERIC
ALL = D.ALL


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


def _float_or_identity(float_body):
    """Rounding ops are the identity on integers (ATen)."""
    return lambda params, t: float_body if t.common.is_float else _identity


def unary(name, rule, dtypes, body, doc, **kw):
    return register(OpSpec(name, 1, rule, tuple(dtypes), body, doc=doc, family="unary", **kw))


unary("neg", "S", NUMERIC, _neg, "-x. neg(0.0) = -0.0; integers wrap at INT_MIN as ATen does.")
unary("abs", "S", NUMERIC, _abs, "|x|. abs(-0.0) = +0.0; integers wrap at INT_MIN as ATen does.")
# (name, exact body, float32 fast path)
for _name, _body, _fast in [("exp", m.exp, None), ("exp2", m.exp2, None), ("log", m.log, log.LOG),
                            ("sin", m.sin, trig.SIN), ("cos", m.cos, trig.COS), ("tan", m.tan, trig.TAN),
                            ("sqrt", m.sqrt, None), ("rsqrt", m.rsqrt, rsqrt.RSQRT),
                            ("reciprocal", m.reciprocal, None), ("erf", m.erf, erf.ERF)]:
    unary(_name, "F", ALL, _body, f"{_name}(x), float math (rule F): integers and bool compute in float32.",
          fast32=_fast)
for _name, _body in [("floor", m.floor), ("ceil", m.ceil), ("trunc", m.trunc), ("round", m.rint)]:
    unary(_name, "S", NUMERIC, _float_or_identity(_body),
          f"{_name}(x); identity on integers." + (" Half to even." if _name == "round" else ""))
unary("isfinite", "B", ALL, _isfinite, "True where x is neither inf nor NaN; integers are finite.")
unary("isinf", "B", ALL, _isinf, "True where x is +inf or -inf; never for integers.")
unary("isnan", "B", ALL, _isnan, "True where x is NaN; never for integers.")


# ---------------------------------------------------------------- copies and casts
def _same_typing(operands, params):
    d = operands[0].dtype
    return Typing(d, d, (compute_dtype(d),))


def _to_typing(operands, params):
    src, dst = operands[0].dtype, D.as_dtype(params["dtype"], op="to")
    # float64 sources stay float64 so float64 -> bfloat16 rounds once (math.to_bfloat16)
    return Typing(src, dst, (compute_dtype(src),))


unary("copy", _same_typing, ALL, _identity, "A copy with the input's dtype (keeps a dense input's layout).")
unary("to", _to_typing, ALL, _identity,
      "Cast to `dtype`. Between floats: round to nearest even (float64 -> bfloat16 rounds once). Float to "
      "integer: truncate toward zero; out of range saturates and NaN gives 0 (nbx's definition; ATen leaves "
      "it undefined). Integer to narrower integer wraps. Anything to bool: x != 0 (NaN -> True).",
      params=(Param("dtype", None, kind="dtype"),))
