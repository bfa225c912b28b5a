"""A row of the precision table measured with any callable on arrays: `CallableTarget`.

The operands reach the callable as arrays of its own library through DLPack (`arrays`: "numpy",
"torch", "cupy", "jax", "nbx", or a function of an nbx Tensor) and the target's parameters by
name; its result comes back through DLPack and must have the op's result dtype and shape. It is
scored exactly as nbx's op is: the same inputs, oracles and rule. An op nbx does not have (a user
op, nbx.harness.verify) brings its own OpSpec (`op_spec`); its oracle is registered for the
duration of the measurement (nbx/harness/verify/userop.py).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from nbx import backend
from nbx.ops import OPS
from nbx.tensor import Tensor, from_dlpack, from_numpy
from nbx.harness.targets.target import Target

ARRAYS = ("numpy", "torch", "cupy", "jax", "nbx")


def _numpy(t: Tensor):
    """numpy views host memory only: on the cuda backend the operand is copied to the host (and the
    result back, CallableTarget.invoke)."""
    return t.numpy() if backend.IS_CUDA else np.from_dlpack(t)


def converter(arrays) -> Callable[[Tensor], Any]:
    """The function that hands an nbx Tensor to a callable as its library's array (DLPack, no copy;
    numpy on the cuda backend: a copy to the host)."""
    if callable(arrays):
        return arrays
    if arrays == "numpy":
        return _numpy
    if arrays == "nbx":
        return lambda t: t
    if arrays == "torch":
        import torch
        return torch.from_dlpack
    if arrays == "cupy":
        import cupy
        return cupy.from_dlpack
    if arrays == "jax":
        import jax.numpy as jnp
        return jnp.from_dlpack
    raise ValueError(f"arrays={arrays!r}: allowed {', '.join(ARRAYS)} or a function of an nbx Tensor")


@dataclass(frozen=True)
class CallableTarget(Target):
    """A row of the precision table measured with a callable instead of nbx's op: the same label,
    dtype, operands, oracle and scoring. `name` labels its measurements (their `target`); `op_spec`
    is the OpSpec of an op nbx does not have (None: OPS[op])."""
    fn: Any = None
    convert: Any = None
    name: str = "user"
    op_spec: Any = None

    @property
    def spec(self):
        return self.op_spec if self.op_spec is not None else OPS[self.op]

    def invoke(self, tensors: list, kw: dict):
        try:
            args = [self.convert(t) for t in tensors]
        except BufferError as e:
            raise TypeError(f"{self.name}: its operands for {self.label} {self.dtype.name} cannot be handed over as "
                            f"its arrays ({e}); choose arrays= a library that holds nbx's memory "
                            f"({'the GPU: torch, cupy, jax or nbx' if backend.IS_CUDA else 'the host'})") from None
        y = self.fn(*args, **kw, **self.params)
        try:
            got = from_numpy(y) if backend.IS_CUDA and isinstance(y, np.ndarray) else from_dlpack(y)
        except BufferError as e:
            raise TypeError(f"{self.name}: its result for {self.label} {self.dtype.name} is in memory nbx cannot "
                            f"read ({e})") from None
        except TypeError as e:
            raise TypeError(f"{self.name}: its result for {self.label} {self.dtype.name} cannot be read through "
                            f"DLPack ({type(y).__name__}: {e}); return an array of a library that speaks DLPack, "
                            f"on nbx's backend") from None
        want = tensors[0].shape if self.verify.split is None else None
        if want is not None and tuple(got.shape) != tuple(want):
            raise ValueError(f"{self.name}: returned shape {tuple(got.shape)} for {self.label} {self.dtype.name}; "
                             f"the operands have shape {tuple(want)} (an element-wise op keeps it)")
        if got.dtype is not self.out_dtype:
            raise TypeError(f"{self.name}: returned {got.dtype.name} for {self.label} on {self.dtype.name}; the op's "
                            f"result dtype is {self.out_dtype.name} (its oracle and bank are of that dtype)")
        return got

    @property
    def describe(self) -> str:
        return f"{self.name} on arrays through DLPack"


def callable_of(t: Target, template: CallableTarget) -> CallableTarget:
    """template's callable on target t's row (its op, parameters and dtype)."""
    return replace(template, op=t.op, params=dict(t.params), dtype=t.dtype)
