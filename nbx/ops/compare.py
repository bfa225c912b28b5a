"""Comparisons: eq, ne, lt, le, gt, ge, computed in the promoted dtype, bool out."""
import triton
import triton.language as tl  # noqa: F401  (the interpreter needs tl visible in every jit module)

from ..dtype import ALL
from .registry import op
from .verify import CR16, Verify


@triton.jit
def _eq(a, b):
    return a == b


@triton.jit
def _ne(a, b):
    return a != b


@triton.jit
def _lt(a, b):
    return a < b


@triton.jit
def _le(a, b):
    return a <= b


@triton.jit
def _gt(a, b):
    return a > b


@triton.jit
def _ge(a, b):
    return a >= b


def compare(name, body, doc, **kw):
    return op(name, 2, "B", ALL, body, doc=doc, scalar_operands=(0, 1), **kw)


_TAIL = (" other, compared in the promoted dtype (an int64 tensor against an int scalar keeps every bit); "
         "NaN compares unequal to everything.")
# A comparison of two 16-bit floats widened exactly is exact: every float16 and bfloat16 operand
# pair of each, 0 wrong (2^32 a dtype; the H200's exhaustive profile at 547c92e,
# reports/h200/exhaustive-20261206.md).
compare("eq", _eq, "input ==" + _TAIL,
        verify=Verify(ci_rank8="binary with a bool result (rule B)", correctly_rounded=CR16))
compare("ne", _ne, "input !=" + _TAIL, verify=Verify(correctly_rounded=CR16))
compare("lt", _lt, "input <" + _TAIL, verify=Verify(correctly_rounded=CR16))
compare("le", _le, "input <=" + _TAIL, verify=Verify(correctly_rounded=CR16))
compare("gt", _gt, "input >" + _TAIL, verify=Verify(correctly_rounded=CR16))
compare("ge", _ge, "input >=" + _TAIL, verify=Verify(correctly_rounded=CR16))
