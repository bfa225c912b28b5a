"""Selection and ternary arithmetic: clamp, clamp_min, where, masked_fill, lerp, addcmul, addcdiv.

lerp, addcmul and addcdiv on float32 (and float16/bfloat16) evaluate in float64 from exact products
of float32 values, arranged so that no rounded term meets a cancelling one (lerp: s - w*s + w*e by
TwoSums; addcdiv: (x*t2 + value*t1)/t2), then round to the output: within ~2^-52 of the exact value
before the last rounding, so correct except within ~2^-29 ulp of a boundary. float64 inputs follow
their documented order (OpSpec.order).
"""
import math

import triton
import triton.language as tl

from ..dtype import ALL, FLOATS, NUMERIC, bool_, float64, int32
from ..kernels import math as m
from ..promotion import is_scalar, result_type
from ..tensor import Tensor
from .registry import OpSpec, Param, Typing, compute_dtype, op, run
from .verify import CR16, MASK, Order, Verify, in_operand_dtype



# ---------------------------------------------------------------- clamp
@triton.jit
def _clamp(x, lo, hi):
    # minimum(maximum(x, min), max): min > max gives max (ATen); a NaN x or bound gives NaN
    return m.minimum_nan(m.maximum_nan(x, lo), hi)


@triton.jit
def _clamp_min(x, lo):
    return m.maximum_nan(x, lo)


@triton.jit
def _clamp_max(x, hi):
    return m.minimum_nan(x, hi)


def _clamp_spec(names, body):
    return OpSpec("clamp", len(names), "P", NUMERIC, body, family="ternary", operand_names=names,
                  scalar_operands=tuple(range(1, len(names))))


_CLAMP = {(True, True): _clamp_spec(("input", "min", "max"), _clamp),
          (True, False): _clamp_spec(("input", "min"), _clamp_min),
          (False, True): _clamp_spec(("input", "max"), _clamp_max)}


def _clamp_compose(spec, operands, params, out):
    lo, hi = params["min"], params["max"]
    for name, v in (("min", lo), ("max", hi)):
        if v is not None and not isinstance(v, Tensor) and not is_scalar(v):
            raise TypeError(f"nbx.clamp: argument '{name}' must be None, a Python number or an nbx Tensor, "
                            f"got {type(v).__name__}")
    if lo is None and hi is None:
        raise ValueError("nbx.clamp: at least one of 'min' and 'max' must be given (both are None)")
    inner = _CLAMP[lo is not None, hi is not None]
    bounds = [v for v in (lo, hi) if v is not None]
    return run(inner, [operands[0], *bounds], {}, out=out)


op("clamp", 1, "P", NUMERIC, _clamp, compose=_clamp_compose,
   params=(Param("min", None, kind="bound", doc="None, a Python number or a Tensor"),
           Param("max", None, kind="bound", doc="None, a Python number or a Tensor")),
   doc="minimum(maximum(input, min), max); min and max are None, scalars or tensors (broadcast); "
       "min > max gives max; a NaN input or bound gives NaN; -0.0 < +0.0. The result dtype "
       "promotes over the input and the given bounds.",
   verify=Verify(variants=(in_operand_dtype(min=1, max=100), in_operand_dtype(min=100, max=1),
                           in_operand_dtype(min=-1.5, max=2.5), in_operand_dtype(min=-1.5),
                           in_operand_dtype(max=2.5)),
                 measure_default=False, param_operands=(("min", -math.inf), ("max", math.inf)),
                 correctly_rounded=CR16))
op("clamp_min", 2, "P", NUMERIC, _clamp_min, operand_names=("input", "min"),
   scalar_operands=(1,), doc="maximum(input, min); NaN propagates; -0.0 < +0.0.", verify=Verify(correctly_rounded=CR16))


# ---------------------------------------------------------------- where, masked_fill
@triton.jit
def _where(c, a, b):
    return tl.where(c != 0, a, b)


def _where_typing(operands, params):
    common = result_type(*operands[1:])
    cc = compute_dtype(common)
    return Typing(common, common, (int32, cc, cc))


def _check_condition(name, arg, t):
    if t.dtype is not bool_:
        raise TypeError(f"nbx.{name}: argument '{arg}' must be a bool tensor, got dtype {t.dtype.name} "
                        f"(compare first, e.g. ne(x, 0))")


op("where", 3, _where_typing, ALL, _where,
   operand_names=("condition", "input", "other"), scalar_operands=(1, 2),
   check=lambda s, ops, p, t: _check_condition("where", "condition", ops[0]),
   doc="input where condition else other; condition is bool; all three broadcast; input and "
       "other may be Python scalars and promote together.",
   verify=Verify(roles={0: MASK},
                 ci_rank8="ternary with a bool condition and per-operand compute dtypes",
                 # a selection, exact: 2^24 stratified float16 and bfloat16 triples, 0 wrong (the
                 # H200's exhaustive profile at 547c92e, reports/h200/exhaustive-20261206.md)
                 correctly_rounded=CR16))


@triton.jit
def _masked_fill(x, mask, value):
    return tl.where(mask != 0, value.to(x.dtype), x)


def _masked_fill_typing(operands, params):
    d = operands[0].dtype
    return Typing(d, d, (compute_dtype(d), int32))


def _masked_fill_check(spec, operands, params, t):
    _check_condition("masked_fill", "mask", operands[1])
    if params["value"] is None:
        raise TypeError("nbx.masked_fill: argument 'value' is required (a Python number)")


op("masked_fill", 2, _masked_fill_typing, ALL, _masked_fill,
   operand_names=("input", "mask"), params=(Param("value", None),),
   check=_masked_fill_check, kernel_params=lambda p, t: [(p["value"], t.common)],
   doc="value where mask else input; mask is bool and broadcasts with input; value is converted "
       "to the input's dtype (a float value for an integer input is an error).",
   verify=Verify(variants=(in_operand_dtype(value=1), in_operand_dtype(value=-2.5)), measure_default=False,
                 # a selection, exact: 2^24 stratified float16 and bfloat16 pairs of each value, 0
                 # wrong (the H200's exhaustive profile at 547c92e)
                 roles={1: MASK}, correctly_rounded=CR16))


# ---------------------------------------------------------------- lerp, addcmul, addcdiv
@triton.jit
def _lerp(s, e, w):
    # ATen's two branches: |w| < 0.5 ? s + w*(e-s) : e - (e-s)*(1-w); each is exact at its end
    # (w = 0 gives s, w = 1 gives e). float64: the documented order.
    ws = m.widen(s)
    we = m.widen(e)
    ww = m.widen(w)
    diff = we - ws
    r = tl.where(tl.abs(ww) < 0.5, ws + ww * diff, we - diff * (1.0 - ww))
    if s.dtype != tl.float64:
        # s - w*s + w*e: both products of two float32 significands are exact in float64, and two
        # TwoSums keep the sum exact to one final rounding; e - s rounds in float64 when the
        # exponents lie far apart, and a cancelling s + w*diff amplified it (float32: 1.678e7 ulp
        # on 2^32 stratified tuples on the H200). Non-finite operands or sums keep ATen's form.
        # The sum h2 + (l1 + l2) is rounded to odd (with_residual; l1 + l2 keeps the exact rest's
        # sign) and handed to the store, which rounds it once to float32, float16 or bfloat16:
        # rounded to nearest in float64 first, 298 of 2^18 stratified float32 tuples misrounded on
        # the interpreter.
        h1, l1 = m.two_sum(ws, -(ww * ws))
        h2, l2 = m.two_sum(h1, ww * we)
        exact = m.with_residual(h2, l1 + l2)
        ok = (tl.abs(ws) < float("inf")) & (tl.abs(we) < float("inf")) & (tl.abs(ww) < float("inf"))
        r = tl.where(ok & (tl.abs(h2) < float("inf")), exact, r)
        return r
    else:
        return r


# float64: the documented orders below, measured against nbx/oracles/order.py (0 ulp); their error
# against the exact value is reported beside (cancellation makes it unbounded in ulps).
LERP_ORDER = Order("|w| < 0.5 ? s + w*(e - s) : e - (e - s)*(1 - w), each operation rounded to float64 (ATen)",
                   "the exact s + w(e - s) needs an exact product and a three-term sum; ATen's two branches "
                   "are exact at w = 0 and w = 1 and monotone in w")
ADDCMUL_ORDER = Order("input + (value*tensor1)*tensor2: two products and a sum, each rounded to float64, none "
                      "fused (ATen's expression order)",
                      "the exact value needs the product exact and one rounding of a three-term sum. A "
                      "product that underflows to -0 added to input = +0 gives +0 (IEEE sum of zeros), "
                      "where the exact value, a negative tiny, rounds to -0")
ADDCDIV_ORDER = Order("input + (value*tensor1)/tensor2: a product, a quotient and a sum, each rounded to "
                      "float64 (ATen's expression order)",
                      "the exact value needs (input*tensor2 + value*tensor1)/tensor2 with an exact numerator; "
                      "near cancellation the order's error is unbounded in ulps")

op("lerp", 3, "P", FLOATS, _lerp, operand_names=("input", "end", "weight"),
   scalar_operands=(2,), order=LERP_ORDER,
   # s - w*s + w*e from exact parts rounded to odd in float64, rounded once by the store: 0 of 2^32
   # stratified float32 tuples and 0 of 2^24 per 16-bit dtype misrounded (H100, exhaustive profile)
   verify=Verify(correctly_rounded=CR16, ci_rank8="ternary on floats with a Python-scalar third operand"),
   doc="input + weight*(end - input) by ATen's two-branch formula (|weight| < 0.5 from input, "
       "else from end); weight is a scalar or a tensor; all broadcast.")


@triton.jit
def _addcmul(x, t1, t2, value):
    if x.dtype == tl.float64:
        return m.widen(x) + value * m.widen(t1) * m.widen(t2)        # the documented order
    elif x.dtype.is_floating():
        # x + (value t1) t2 as one rounding: value t1 = p + e1 and p t2 = q + e2 exactly (fma), e1 t2
        # rounded (2^-106 of q: 0 for value = 1 and for a value of few bits), x + q = s + l exactly
        # (TwoSum), and s + (l + e2 + e1 t2) rounded to odd, which the store rounds once to float32,
        # float16 or bfloat16. Rounded to nearest in float64 and again on the store, a tiny x moved
        # an exact midpoint t1 t2 to the wrong side (float32 0x92547705 + 3.5 0x5b83e44a; 2,104,788
        # of 2^32 stratified tuples on the H200). Non-finite terms keep the plain form.
        wx = m.widen(x)
        w2 = m.widen(t2)
        p = m.product_rn(value, m.widen(t1))
        e1 = m.fma(value, m.widen(t1), -p)
        q = m.product_rn(p, w2)
        e2 = m.fma(p, w2, -q)
        sx, lx = m.two_sum(wx, q)
        r = m.with_residual(sx, (lx + e2) + m.product_rn(e1, w2))
        # a zero sum takes IEEE's sign: -0 only for -0 plus a -0 product (product_rn's +0 addend
        # turns a -0 product into +0), +0 for an exact cancellation
        pz = (value * m.widen(t1)) * w2
        r = tl.where(r == 0, tl.where(wx == 0, wx + pz, 0.0), r)
        plain = wx + q
        ok = (tl.abs(plain) < float("inf")) & (tl.abs(q) < float("inf")) & (tl.abs(wx) < float("inf"))
        return tl.where(ok, r, plain)
    else:
        return x + value.to(x.dtype) * t1 * t2


@triton.jit
def _addcdiv(x, t1, t2, value):
    wx = m.widen(x)
    w1 = m.widen(t1)
    w2 = m.widen(t2)
    r = wx + value * w1 / w2                     # float64: the documented order
    if x.dtype != tl.float64:
        # (x*t2 + value*t1)/t2: x + t1/t2 rounds t1/t2 first and a cancelling x amplifies that: 39.6
        # ulp at x = -0.6826 (float32 x ~ -t1/t2; 31.9 ulp in the H200's stratified sample). x*t2
        # of two float32 significands is exact in float64, value*t1 = p + e exactly (fma); the
        # numerator is rounded to odd, then the quotient (its remainder n - q*t2 is exact): a
        # rounding boundary M of the result's format (at most 25 bits) makes M*t2 an even float64
        # of at most 49 bits, which lies between no value and its rounding to odd, so the float64
        # quotient returned rounds on the store (float32, float16, bfloat16) as the exact value
        # does. Non-finite operands or result, a zero t2 and an exact zero (its sign) take the
        # plain form.
        p = m.product_rn(value, w1)
        xt = wx * w2
        s = p + xt
        bb = s - p
        err = (p - (s - bb)) + (xt - bb) + m.fma(value, w1, -p)
        hi = s + err
        n = m.round_to_odd(hi, (s - hi) + err)
        q = n / w2
        rem = m.fma(q * -1.0, w2, n)
        q = m.round_to_odd(q, tl.where(w2 > 0, rem, rem * -1.0))
        ok = (tl.abs(q) < float("inf")) & (tl.abs(wx) < float("inf")) & (tl.abs(w2) < float("inf")) & (q != 0)
        r = tl.where(ok, q, r)
    return r


def _value_param(spec):
    def params(p, t):
        v = p["value"]
        if t.common.is_float:
            return [(v, float64)]
        if isinstance(v, float):
            raise TypeError(f"nbx.{spec}: value={v!r} is a float but the operands are {t.common.name}; for "
                            "integer inputs value must be an integer (ATen)")
        return [(v, t.compute[0])]
    return params


op("addcmul", 3, "P", NUMERIC, _addcmul, operand_names=("input", "tensor1", "tensor2"),
   params=(Param("value", 1),), kernel_params=_value_param("addcmul"), order=ADDCMUL_ORDER,
   # input + (value*t1)*t2 from exact parts rounded to odd in float64 (value*t1's error times t2
   # rounded: 2^-106 of the product): 0 of 2^32 stratified float32 tuples and 0 of 2^24 per 16-bit
   # dtype misrounded (H100, exhaustive profile)
   verify=Verify(correctly_rounded=CR16),
   doc="input + value*tensor1*tensor2; all broadcast (integers wrap).")
op("addcdiv", 3, "P", FLOATS, _addcdiv, operand_names=("input", "tensor1", "tensor2"),
   params=(Param("value", 1),), kernel_params=_value_param("addcdiv"), order=ADDCDIV_ORDER,
   # (input*t2 + value*t1)/t2, numerator and quotient rounded to odd in float64: 0 of 2^32
   # stratified float32 tuples and 0 of 2^24 per 16-bit dtype misrounded (H100, exhaustive profile)
   verify=Verify(correctly_rounded=CR16),
   doc="input + value*tensor1/tensor2; all broadcast; floating dtypes only (ATen refuses integer "
       "addcdiv).")
