"""The op set: every family registers its OpSpecs in OPS; the public functions are made from them.

Importing this package also installs the Tensor's operators and op-running methods (methods.py).
"""
import sys

from ..tensor import empty
from . import activations, arithmetic, binary_math, bitwise, compare, convert, logical, ternary, unary  # noqa: F401  (registration)
from . import methods
from .registry import COMPOSED, OPS, OpSpec, Param, make_function

FUNCTIONS = {name: make_function(spec) for name, spec in OPS.items()}
globals().update(FUNCTIONS)


def contiguous(x):
    """A C-contiguous copy (or x itself when it already is)."""
    if x.is_contiguous():
        return x
    return FUNCTIONS["copy"](x, out=empty(x.shape, dtype=x.dtype))


# Last, once every name the methods look up (FUNCTIONS, contiguous) is bound on this module.
methods.install(sys.modules[__name__])

__all__ = ["COMPOSED", "OPS", "OpSpec", "Param", "FUNCTIONS", "contiguous", *FUNCTIONS]
