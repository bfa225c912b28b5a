"""The Tensor operators and methods that run ops, installed onto `Tensor` by `nbx.ops` at its import.

tensor.py sits below kernels and ops in nbx's import layers (tests/test_imports.py), so it cannot
import the ops these run; `install` adds them from this layer. `import nbx` always imports nbx.ops,
so every Tensor a user holds has them. Each looks its op up on the ops module when called, so the
function bound to `nbx.ops.<name>` at that moment is the one that runs.
"""
from __future__ import annotations

from types import ModuleType

from ..dtype import as_dtype
from ..tensor import Tensor

# (dunder stem, op): `a + b` runs ops.add(a, b); the reflected `2 + a` runs ops.add(2, a).
BINARY = (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
          ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "pow"),
          ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
          ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift"))
# Comparisons have no reflected form: Python reflects `2 < a` to `a > 2` itself.
COMPARE = (("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"), ("ge", "ge"))
UNARY = (("neg", "neg"), ("abs", "abs"), ("invert", "bitwise_not"))


def _binary_dunder(ops: ModuleType, stem: str, name: str, reverse: bool = False):
    def f(self, other):
        fn = getattr(ops, name)
        return fn(other, self) if reverse else fn(self, other)
    f.__name__ = f"__{'r' if reverse else ''}{stem}__"
    return f


def _unary_dunder(ops: ModuleType, stem: str, name: str):
    def f(self):
        return getattr(ops, name)(self)
    f.__name__ = f"__{stem}__"
    return f


def install(ops: ModuleType) -> None:
    """Put the operators and op-running methods on `Tensor`; `ops` is the nbx.ops module."""

    def contiguous(self) -> Tensor:
        if self.is_contiguous():
            return self
        return ops.contiguous(self)

    def clone(self) -> Tensor:
        return ops.copy(self)

    def to(self, dtype) -> Tensor:
        return ops.to(self, as_dtype(dtype, op="to"))

    def copy_(self, src) -> Tensor:
        """Interpreter protocol when src is our own host copy; otherwise an element-wise copy into self."""
        ops.copy(src, out=self)
        return self

    methods = [contiguous, clone, to, copy_]
    for stem, op in BINARY:
        methods += [_binary_dunder(ops, stem, op), _binary_dunder(ops, stem, op, reverse=True)]
    methods += [_binary_dunder(ops, stem, op) for stem, op in COMPARE]
    methods += [_unary_dunder(ops, stem, op) for stem, op in UNARY]
    for method in methods:
        method.__qualname__ = f"Tensor.{method.__name__}"
        setattr(Tensor, method.__name__, method)
    # `==` returns a Tensor, not a bool; a Tensor hashes by identity (dict keys, weak references).
    Tensor.__hash__ = object.__hash__
