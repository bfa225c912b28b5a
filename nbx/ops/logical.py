"""Logical ops: any dtype in, each operand tested against 0 (rule "L"), bool out."""
import triton
import triton.language as tl  # noqa: F401  (the interpreter needs tl visible in every jit module)

from ..dtype import ALL
from .registry import op
from .verify import CR16, Verify


@triton.jit
def _logical_and(a, b):
    return (a != 0) & (b != 0)


@triton.jit
def _logical_or(a, b):
    return (a != 0) | (b != 0)


@triton.jit
def _logical_xor(a, b):
    return (a != 0) != (b != 0)


@triton.jit
def _logical_not(x):
    return x == 0


def logical(name, arity, body, doc, **kw):
    return op(name, arity, "L", ALL, body, doc=doc,
              scalar_operands=(0, 1) if arity == 2 else (), **kw)


# Exact: every float16 and bfloat16 operand pair of each, 0 wrong (2^32 a dtype; the H200's
# exhaustive profile at 547c92e, reports/h200/exhaustive-20261206.md).
logical("logical_and", 2, _logical_and, "(input != 0) & (other != 0); any dtype in, bool out (NaN is true).",
        verify=Verify(correctly_rounded=CR16))
logical("logical_or", 2, _logical_or, "(input != 0) | (other != 0); any dtype in, bool out (NaN is true).",
        verify=Verify(correctly_rounded=CR16))
logical("logical_xor", 2, _logical_xor, "(input != 0) ^ (other != 0); any dtype in, bool out (NaN is true).",
        verify=Verify(correctly_rounded=CR16))
logical("logical_not", 1, _logical_not, "input == 0; any dtype in, bool out (NaN is true, so not NaN is False).",
        verify=Verify(correctly_rounded=CR16))
