"""Copies, casts and value-preserving conversions: copy, to, nan_to_num, angle, bf16_to_fp16."""
import math

import triton
import triton.language as tl

from ..dtype import ALL, DTYPES, as_dtype, bfloat16, float16, float32, int16, int32, uint8
from .registry import Param, Select, Typing, compute_dtype, op
from .verify import CR16, BigCase, Variant, Verify, bits_of

PI = tl.constexpr(math.pi)


@triton.jit
def _identity(x):
    return x


@triton.jit
def _nan_to_num(x, nan, posinf, neginf):
    # the replacements arrive already rounded to the OUTPUT dtype (float16's max is 65504)
    r = tl.where(x == float("inf"), posinf.to(x.dtype), x)
    r = tl.where(x == -float("inf"), neginf.to(x.dtype), r)
    return tl.where(x != x, nan.to(x.dtype), r)


@triton.jit
def _angle(x):
    # real input: pi for x < 0, +0 for x >= 0 (angle(-0.0) = +0.0: -0.0 < 0 is false), NaN stays
    zero = tl.zeros_like(x)
    return tl.where(x != x, x, tl.where(x < 0, zero + PI, zero))


@triton.jit
def _bf16_bits_to_f32(x):
    # a bfloat16 is the top half of a float32: shift the 16 bits up (int16 loads sign-extended to
    # int32; the shift drops the extension) and reinterpret. The store rounds float32 -> float16 to
    # nearest even: overflow gives inf, float16 subnormals are kept.
    return (x << 16).to(tl.float32, bitcast=True)


def _same_typing(operands, params):
    d = operands[0].dtype
    return Typing(d, d, (compute_dtype(d),))


def _to_typing(operands, params):
    src = operands[0].dtype
    try:
        dst = as_dtype(params["dtype"], op="nbx.to")
    except (TypeError, ValueError):
        # numpy's own ValueError for objects it cannot read as a dtype (a Tensor) names neither
        # the op nor the argument
        v = params["dtype"]
        shown = repr(v) if v is None or isinstance(v, (str, int, float)) else f"<{type(v).__name__}>"
        raise TypeError(f"nbx.to: dtype={shown} is not a dtype nbx supports; allowed: "
                        f"{', '.join(DTYPES)} (a name, an nbx dtype or a numpy dtype)") from None
    # float64 sources stay float64 so float64 -> bfloat16 rounds once (math.to_bfloat16)
    return Typing(src, dst, (compute_dtype(src),))


op("copy", 1, _same_typing, ALL, _identity,
   doc="A copy with the input's dtype (keeps a dense input's layout).",
   verify=Verify(ci_rank8="unary identity: the copy and contiguous() path",
                 big=BigCase(uint8, lambda a: a.copy()), correctly_rounded=CR16))
op("to", 1, _to_typing, ALL, _identity,
   params=(Param("dtype", None, kind="dtype"),),
   doc="Cast to `dtype`. Between floats: round to nearest even (float64 -> bfloat16 rounds once). "
       "Float to integer: truncate toward zero; out of range saturates and NaN gives 0 (nbx's "
       "definition; ATen leaves it undefined). Integer to narrower integer wraps. Anything to "
       "bool: x != 0 (NaN -> True).",
   # every target dtype from every source: a sweep each rather than all 2^16 inputs. A cast from a
   # 16-bit float is exact or one rounding: the exhaustive profile's sweep of a 16-bit source is
   # every input, and each of the 20 casts from float16 and bfloat16 misrounds 0 of 65,536 (max
   # 0.5 ulp; interpreter, `nbx run --op to --dtype float16 --dtype bfloat16 --suite sweep
   # --profile exhaustive`)
   verify=Verify(variants=tuple(Variant({"dtype": d.name}) for d in ALL), measure_default=False,
                 exhaustive16=False, ci_rank8="unary whose result dtype is a parameter (casts)",
                 correctly_rounded=CR16))


def _nan_to_num_params(params, t):
    if not t.common.is_float:
        return []
    d = t.out
    pos = d.max if params["posinf"] is None else params["posinf"]
    neg = d.min if params["neginf"] is None else params["neginf"]
    return [(params["nan"], d), (pos, d), (neg, d)]


op("nan_to_num", 1, "S", ALL, Select(lambda p, t: _nan_to_num if t.common.is_float else _identity), kernel_params=_nan_to_num_params,
   params=(Param("nan", 0.0), Param("posinf", None), Param("neginf", None)),
   doc="NaN -> nan, +inf -> posinf, -inf -> neginf; None means the OUTPUT dtype's largest / "
       "most negative finite value (65504 for float16). Integers and bool: a copy.",
   verify=Verify(correctly_rounded=CR16))
op("angle", 1, "F", ALL, _angle,
   doc="Argument of a real number: 0 for x >= 0 (and -0.0), pi for x < 0, NaN for NaN.",
   verify=Verify(correctly_rounded=CR16))


def _bf16_typing(operands, params):
    src = operands[0].dtype
    if src is bfloat16:                      # a bfloat16 tensor: its own bits
        return Typing(src, float16, (float32,))
    return Typing(src, float16, (int32,))


def _bf16_body(params, t):
    return _identity if t.common is bfloat16 else _bf16_bits_to_f32


op("bf16_to_fp16", 1, _bf16_typing, (int16, bfloat16), Select(_bf16_body),
   doc="Raw bfloat16 bit patterns held in an int16 tensor (or a bfloat16 tensor) to float16 "
       "through float32: round to nearest even, overflow to inf, subnormals kept. out= may be a "
       "float16 view of the input's own storage (the conversion reads each element before "
       "writing it).", verify=Verify(roles={0: bits_of(bfloat16)}, correctly_rounded=CR16))
