"""The op set: every family registers its OpSpecs in OPS; the public functions are made from them."""
from . import activations, arithmetic, binary_more, bitwise, compare, convert, ternary, unary, unary_more  # noqa: F401  (registration)
from .registry import OPS, OpSpec, Param, make_function

FUNCTIONS = {name: make_function(spec) for name, spec in OPS.items()}
globals().update(FUNCTIONS)


def contiguous(x):
    """A C-contiguous copy (or x itself when it already is)."""
    from ..tensor import empty
    if x.is_contiguous():
        return x
    return FUNCTIONS["copy"](x, out=empty(x.shape, dtype=x.dtype))


__all__ = ["OPS", "OpSpec", "Param", "FUNCTIONS", "contiguous", *FUNCTIONS]
