"""Comparisons: eq, ne, lt, le, gt, ge, computed in the promoted dtype, bool out."""
import triton
import triton.language as tl  # noqa: F401  (the interpreter needs tl visible in every jit module)

from .. import dtype as D
from .registry import OpSpec, register
from .verify import F32, Verify


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


for _name, _body, _sym in [("eq", _eq, "=="), ("ne", _ne, "!="), ("lt", _lt, "<"), ("le", _le, "<="),
                           ("gt", _gt, ">"), ("ge", _ge, ">=")]:
    register(OpSpec(_name, 2, "B", D.ALL, _body, family="compare", scalar_operands=(0, 1),
                    doc=f"input {_sym} other, compared in the promoted dtype (an int64 tensor against an int "
                        "scalar keeps every bit); NaN compares unequal to everything.",
                    verify=Verify(ci_rank8="binary with a bool result (rule B)" if _name == "eq" else "",
                                  correctly_rounded=F32)))
