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
    """numpy views host memory only, and has no bfloat16 in DLPack: on the cuda backend, or for a
    bfloat16 operand (an ml_dtypes array), the operand is copied (and a numpy result copied back,
    CallableTarget.invoke)."""
    return t.numpy() if backend.IS_CUDA or t.dtype.name == "bfloat16" else np.from_dlpack(t)


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
    is the OpSpec of an op nbx does not have (None: OPS[op]); `arrays` names the library its
    operands are arrays of, for the report."""
    fn: Any = None
    convert: Any = None
    name: str = "user"
    op_spec: Any = None
    arrays: str = ""

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
            got = from_numpy(np.ascontiguousarray(y)) if isinstance(y, np.ndarray) else from_dlpack(y)
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
        return f"{self.name} on {self.arrays + ' ' if self.arrays else ''}arrays through DLPack"


def callable_of(t: Target, template: CallableTarget) -> CallableTarget:
    """template's callable on target t's row (its op, parameters and dtype)."""
    return replace(template, op=t.op, params=dict(t.params), dtype=t.dtype)


# ---------------------------------------------------------------------- a callable named by its import path
# `nbx run --target pkg.module:function --as exp --target-arrays torch` names the callable as
# "pkg.module:function=exp@torch" among the run's targets: plain data that a worker process turns
# back into the target by importing the function (load).
def is_callable_name(name: str) -> bool:
    """Whether a target name of `nbx run` names a callable ("pkg.module:function..."), not a peer."""
    return ":" in str(name)


def callable_name(path: str, op: str, arrays: str = "numpy") -> str:
    return f"{path}={op}" + ("" if arrays == "numpy" else f"@{arrays}")


@dataclass(frozen=True)
class Loaded:
    """A callable target name, imported: its template target (op, fn, arrays; dtype and parameters
    are the row's) and what the report says of it."""
    template: CallableTarget
    path: str
    arrays: str

    @property
    def describe(self) -> str:
        return f"{self.path} as {self.template.op} on {self.arrays} arrays through DLPack"


_LOADED: dict = {}


def load(name: str) -> Loaded:
    """Import the function a callable target name names (once per process). A name that does not
    parse, a module that does not import, a missing or non-callable attribute, an op nbx does not
    have or an unknown array library: ValueError naming it."""
    if name in _LOADED:
        return _LOADED[name]
    import importlib
    rest, _, arrays = str(name).partition("@")
    path, _, op = rest.partition("=")
    module, _, attr = path.partition(":")
    arrays = arrays or "numpy"
    if not module or not attr or not all(p.isidentifier() for p in module.split(".") + attr.split(".")):
        raise ValueError(f"--target {path}: expected package.module:function (a dotted module path, a colon, "
                         f"the function's name)")
    try:
        obj = importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 (whatever the module raises on import is the user's to see)
        raise ValueError(f"--target {path}: cannot import module {module!r} ({type(e).__name__}: {e}); "
                         f"is it on PYTHONPATH?") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"--target {path}: module {module!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"--target {path}: {attr!r} is a {type(obj).__name__}, not a callable")
    op = op or attr.rpartition(".")[2]
    if op not in OPS:
        raise ValueError(f"--target {path}: {op!r} is not an op of nbx; name the op it implements with --as OP "
                         f"(`nbx ops` lists them)")
    if arrays not in ARRAYS:
        raise ValueError(f"--target {path}: --target-arrays {arrays!r}; allowed: {', '.join(ARRAYS)}")
    spec = OPS[op]
    template = CallableTarget(op, {}, spec.dtypes[0], fn=obj, convert=converter(arrays), name=path, arrays=arrays)
    loaded = Loaded(template, path, arrays)
    _LOADED[name] = loaded
    return loaded
