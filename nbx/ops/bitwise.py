"""Bitwise ops: integer and bool only (rule "I").

Small integers compute in int32 (registry.compute_dtype) and wrap back on the store, which is exact
for and/or/xor/not and for shifts by counts inside the storage width. The width that decides an
out-of-range shift count is the STORAGE dtype's (8 for int8), sent to the kernel as a parameter:
in int32, int8(1) << 10 would be 1024 -> 0 on the store by luck, but int8(-1) >> 10 must give the
sign fill and uint8 << 8..31 must give 0 by rule, not by truncation.
"""
import dataclasses

import triton
import triton.language as tl

from ..dtype import INTEGRAL, INTS, bool_, int32
from ..promotion import is_scalar
from ..tensor import Tensor
from .registry import OpSpec, RULES, Select, op, rule_promote, run
from .verify import SHIFT, Verify



def rule_integral(operands, params=None):
    """Rule I: every operand integer or bool (tensors and Python scalars), then PyTorch promotion."""
    return rule_promote(operands, params)


def check_integral(spec, operands):
    for name, x in zip(spec.operand_names, operands):
        if isinstance(x, Tensor):
            ok, got = x.dtype in spec.dtypes, x.dtype.name
        else:
            ok, got = (is_scalar(x) and not isinstance(x, float) and
                       (not isinstance(x, bool) or bool_ in spec.dtypes)), type(x).__name__
        if not ok:
            raise TypeError(f"nbx.{spec.name}: argument '{name}' has dtype {got}; {spec.name} takes integer"
                            f"{' or bool' if bool_ in spec.dtypes else ''} dtypes only "
                            f"(allowed: {', '.join(spec.dtype_names)})")


RULES.setdefault("I", rule_integral)


_PLAIN: dict = {}


def plain_spec(spec: OpSpec, **changes) -> OpSpec:
    """The spec without its compose hook (and with `changes`), unregistered and cached: what a
    compose hook runs after its own validation or body choice."""
    key = (spec.name, tuple(sorted((k, id(v)) for k, v in changes.items())))
    outer, inner = _PLAIN.get(key, (None, None))
    if outer is not spec:             # another spec of the name (a variant built from the op's): its own
        inner = dataclasses.replace(spec, compose=None, **changes)
        _PLAIN[key] = (spec, inner)
    return inner


def _integral_compose(spec, operands, params, out):
    # runs before the promoted dtype is checked, so the error names the offending argument
    check_integral(spec, operands)
    return run(plain_spec(spec), operands, params, out=out)


# ---------------------------------------------------------------- bodies
@triton.jit
def _and(a, b):
    return a & b


@triton.jit
def _or(a, b):
    return a | b


@triton.jit
def _xor(a, b):
    return a ^ b


@triton.jit
def _not(x):
    return ~x


@triton.jit
def _bool_not(x):
    # bitwise_not on bool is logical not: ~1 = -2 would store as True (the seed's broken mask)
    return x == 0


@triton.jit
def _left_shift(a, b, width):
    # ATen: a count < 0 or >= the storage width gives 0 (C's << is undefined there)
    ok = (b >= 0) & (b < width)
    s = tl.where(ok, b, tl.zeros_like(b))
    return tl.where(ok, a << s, tl.zeros_like(a))


@triton.jit
def _right_shift(a, b, width):
    # ATen: a count < 0 or >= the storage width gives the sign fill (-1 for negative a, else 0)
    ok = (b >= 0) & (b < width)
    s = tl.where(ok, b, tl.zeros_like(b))
    fill = tl.where(a < 0, tl.full(a.shape, -1, a.dtype), tl.zeros_like(a))
    return tl.where(ok, a >> s, fill)


# ---------------------------------------------------------------- specs
def _width(params, t):
    return [(t.common.bits, int32)]


def bitwise(name, arity, dtypes, body, doc, **kw):
    return op(name, arity, "I", tuple(dtypes), body, doc=doc,
              compose=_integral_compose, scalar_operands=(0, 1) if arity == 2 else (), **kw)


bitwise("bitwise_and", 2, INTEGRAL, _and, "input & other (integer and bool); broadcasts.",
        verify=Verify(ci_rank8="binary compose op (rule I's operand check) on integer and bool operands"))
bitwise("bitwise_or", 2, INTEGRAL, _or, "input | other (integer and bool); broadcasts.")
bitwise("bitwise_xor", 2, INTEGRAL, _xor, "input ^ other (integer and bool); broadcasts.")
bitwise("bitwise_not", 1, INTEGRAL, Select(lambda p, t: _bool_not if t.common.is_bool else _not),
        "~input; on bool it is logical not.")
bitwise("bitwise_left_shift", 2, INTS, _left_shift,
        "input << other; a count < 0 or >= the bit width of the result dtype gives 0 (ATen).",
        kernel_params=_width, verify=Verify(roles={1: SHIFT}))
bitwise("bitwise_right_shift", 2, INTS, _right_shift,
        "input >> other (arithmetic); a count < 0 or >= the bit width of the result dtype gives the sign "
        "fill (ATen).", kernel_params=_width, verify=Verify(roles={1: SHIFT}))
