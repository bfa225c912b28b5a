"""TensorIterator in miniature: from operands to the fewest dims that describe the access.

broadcast -> output shape -> output layout (a dense input's layout is kept, as ATen does) ->
drop size-1 dims -> order dims by the output's strides -> coalesce dims contiguous with each other
-> (C, outer dims). All-contiguous operands collapse to one flat dim with unit strides.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ..dtype import DType
# scalar_to_numpy is defined in promotion (a dtype fact) and stays importable from here: callers
# name it as iterate.scalar_to_numpy.
from ..promotion import scalar_to_numpy
from ..tensor import Tensor, empty

MAX_RANK = 8
INT32_LIMIT = 2**31 - 1


def broadcast_shapes(shapes, *, op: str, names=None) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for k, s in enumerate(shapes):
        for i, size in enumerate(s):
            j = ndim - len(s) + i
            if size == out[j] or size == 1:
                continue
            if out[j] == 1:
                out[j] = size
            else:
                desc = ", ".join(f"{n}{tuple(x)}" for n, x in zip(names or [f"#{i}" for i in range(len(shapes))],
                                                                  shapes))
                raise ValueError(f"nbx.{op}: shapes do not broadcast: {desc} (dim {j - ndim}: {out[j]} vs {size})")
    return tuple(out)


_SCALAR_CACHE: "OrderedDict[tuple, Tensor]" = OrderedDict()


def scalar_tensor(value, dt: DType, *, op: str, arg: str) -> Tensor:
    """A 0-dim tensor holding `value` in `dt`, cached (scalars are read-only in kernels)."""
    npv = scalar_to_numpy(value, dt, op=op, arg=arg)
    key = (dt.name, np.asarray(npv, dtype=dt.np).tobytes())
    t = _SCALAR_CACHE.get(key)
    if t is None:
        t = empty((), dtype=dt)
        t._storage.write(0, np.asarray(npv, dtype=dt.np).reshape(1))
        _SCALAR_CACHE[key] = t
        if len(_SCALAR_CACHE) > 512:
            _SCALAR_CACHE.popitem(last=False)
    else:
        _SCALAR_CACHE.move_to_end(key)
    return t


def _dense_strides_in_order(shape, order):
    """Dense strides for `shape` with dims laid out innermost-last in `order` (outermost first)."""
    strides = [0] * len(shape)
    acc = 1
    for d in reversed(order):
        strides[d] = acc
        acc *= max(shape[d], 1)
    return strides


def output_layout(shape, inputs) -> list[int]:
    """Strides for a new output: the layout of the first dense input of the full shape, else C order."""
    for t in inputs:
        if t.shape == tuple(shape) and t.ndim > 1 and t.is_non_overlapping_and_dense() and not t.is_contiguous():
            # outermost first: larger stride first; stable, so equal strides keep dim order
            order = sorted(range(len(shape)), key=lambda d: -t.stride()[d])
            return _dense_strides_in_order(shape, order)
    return _dense_strides_in_order(shape, list(range(len(shape))))


def make_output(shape, dt: DType, inputs) -> Tensor:
    t = empty(shape, dtype=dt)
    strides = output_layout(shape, inputs)
    return t.as_strided(shape, strides, 0)


@dataclass
class Plan:
    numel: int
    C: int                       # size of the innermost dim
    outer: list[int]             # outer dim sizes, innermost-outer first
    strides: list[list[int]]     # per tensor (out first): [col stride, outer strides...]
    index64: bool

    @property
    def rows(self) -> int:
        return math.prod(self.outer)


def plan(out: Tensor, inputs: list[Tensor], *, op: str) -> Plan:
    shape = out.shape
    if len(shape) > MAX_RANK:
        raise ValueError(f"nbx.{op}: rank {len(shape)} exceeds the supported {MAX_RANK}")
    tensors = [out] + [t.expand(*shape) if t.shape != shape else t for t in inputs]
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    # order outermost first by the output's strides (ties: the inputs' strides), as ATen's reorder
    dims.sort(key=lambda d: tuple(-t.stride()[d] for t in tensors))
    sizes = [shape[d] for d in dims]
    strides = [[t.stride()[d] for d in dims] for t in tensors]
    # coalesce neighbours i (outer), i+1 (inner) when every tensor steps over them as one dim
    i = len(sizes) - 2
    while i >= 0:
        if all(st[i] == st[i + 1] * sizes[i + 1] for st in strides):
            sizes[i] *= sizes[i + 1]
            del sizes[i + 1]
            for st in strides:
                st[i] = st[i + 1]
                del st[i + 1]
        i -= 1
    if not sizes:
        sizes, strides = [1], [[1] for _ in tensors]
    C = sizes[-1]
    outer = list(reversed(sizes[:-1]))
    per = [[st[-1]] + list(reversed(st[:-1])) for st in strides]
    numel = math.prod(sizes)
    span = max(sum((s - 1) * x for s, x in zip(sizes, st)) for st in strides)
    index64 = numel > INT32_LIMIT or span > INT32_LIMIT
    return Plan(numel, C, outer, per, index64)
