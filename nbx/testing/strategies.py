"""Hypothesis strategies for nbx: dtypes, values and bit patterns of every nbx dtype (subnormals,
signed zeros, NaN and the infinities included, bfloat16 too), numpy arrays of them, broadcastable
shapes, nbx tensors and strided views with the same values as a contiguous numpy array.

    from hypothesis import given
    from nbx.testing import strategies as nst

    @given(nst.views(nbx.float32, (3, 4)))
    def test_exp_of_a_view(v):
        assert_bits_equal(nbx.exp(v.tensor), nbx.exp(nbx.from_numpy(v.array)))

Keyword-only options, validated eagerly: a bad argument raises at once, naming the strategy and
the argument. Needs hypothesis (the `test` extra).
"""
from __future__ import annotations

from typing import NamedTuple

import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from nbx.dtype import DType, FLOATS, INTS, as_dtype, bool_
from nbx.tensor import Tensor, from_numpy
from nbx.testing.values import specials

__all__ = ["dtypes", "bit_patterns", "values", "arrays", "broadcastable_shapes", "tensors", "views",
           "View", "VIEW_KINDS", "BroadcastableShapes"]

BroadcastableShapes = hnp.BroadcastableShapes
# How a view lays out its elements: contiguous, broadcast (a stride 0), every other element
# (strides of 2), permuted dims, one element in (unaligned), narrowed along the last dim.
VIEW_KINDS = ("contiguous", "expand", "step", "permute", "offset", "narrow")
KINDS = {"float": FLOATS, "int": INTS, "bool": (bool_,)}


class View(NamedTuple):
    """A Tensor laid out as `kind`, and the same values as a contiguous numpy array."""
    tensor: Tensor
    array: np.ndarray
    kind: str


def _dtype(dtype, where: str) -> DType:
    return as_dtype(dtype, op=f"strategies.{where}", arg="dtype")


def dtypes(*, kinds=("float", "int", "bool")) -> st.SearchStrategy[DType]:
    """nbx dtypes of the given kinds ("float", "int", "bool")."""
    bad = sorted(set(kinds) - set(KINDS))
    if bad or not kinds:
        raise ValueError(f"strategies.dtypes: kinds={kinds!r}; allowed: a non-empty subset of {sorted(KINDS)}")
    return st.sampled_from([d for k in kinds for d in KINDS[k]])


def bit_patterns(dtype) -> st.SearchStrategy[int]:
    """Bit patterns of dtype as ints in [0, 2^bits): every value of a 16-bit format is as likely as
    its bits; the special values' patterns are drawn one time in four."""
    d = _dtype(dtype, "bit_patterns")
    width = 1 if d.is_bool else d.bits
    sp = [int(b) for b in np.array(specials(d)).view(d.uint_np)]
    return st.one_of(st.sampled_from(sp), st.integers(0, (1 << width) - 1), st.integers(0, (1 << width) - 1),
                     st.integers(0, (1 << width) - 1))


def _from_bits(d: DType, b: int):
    return np.array([b], dtype=np.uint64).astype(d.uint_np).view(d.np)[0]


def values(dtype, *, allow_nan: bool = True, allow_infinity: bool = True, allow_subnormal: bool = True):
    """Scalars of dtype (numpy scalars; bfloat16 as ml_dtypes'): for floats every bit pattern, its
    special values (signed zeros, ties, subnormals, the extremes, NaN, the infinities) drawn often;
    for integers the whole range and its edges. allow_*: leave those floats out."""
    d = _dtype(dtype, "values")
    for name, flag in (("allow_nan", allow_nan), ("allow_infinity", allow_infinity),
                       ("allow_subnormal", allow_subnormal)):
        if not isinstance(flag, bool):
            raise TypeError(f"strategies.values: {name}={flag!r}; allowed: True or False")
    s = bit_patterns(d).map(lambda b: _from_bits(d, b))
    if not d.is_float:
        return s
    smallest_normal = float(ml_dtypes.finfo(d.np).smallest_normal)

    def keep(v) -> bool:
        f = float(v)
        if f != f:
            return allow_nan
        if f in (float("inf"), float("-inf")):
            return allow_infinity
        return allow_subnormal or f == 0 or abs(f) >= smallest_normal

    return s.filter(keep)


def arrays(dtype, shape, *, elements=None) -> st.SearchStrategy[np.ndarray]:
    """numpy arrays of dtype and shape (an int, a tuple, or a strategy of either); elements: a
    strategy of the values (default: every bit pattern, as bit_patterns(dtype) draws them, NaN
    payloads included)."""
    d = _dtype(dtype, "arrays")
    if elements is None:
        if d.is_bool:
            return hnp.arrays(np.bool_, shape)
        return hnp.arrays(d.uint_np, shape, elements=bit_patterns(d)).map(lambda a: a.view(d.np))
    return hnp.arrays(np.dtype(object), shape, elements=elements).map(lambda a: a.astype(d.np))


def broadcastable_shapes(num_shapes: int = 2, *, min_dims: int = 0, max_dims: int = 4, min_side: int = 0,
                         max_side: int = 5) -> st.SearchStrategy[BroadcastableShapes]:
    """num_shapes shapes that broadcast together: BroadcastableShapes(input_shapes, result_shape)."""
    if not isinstance(num_shapes, int) or num_shapes < 1:
        raise ValueError(f"strategies.broadcastable_shapes: num_shapes={num_shapes!r}; allowed: an int >= 1")
    return hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims,
                                             min_side=min_side, max_side=max_side)


def tensors(dtype, shape, *, elements=None) -> st.SearchStrategy[Tensor]:
    """Contiguous nbx tensors of dtype and shape (see `arrays`)."""
    return arrays(dtype, shape, elements=elements).map(from_numpy)


@st.composite
def _view(draw, d: DType, shape: tuple, kinds: tuple, elements) -> View:
    kind = draw(st.sampled_from(kinds))
    nd = len(shape)
    def base(s):
        return draw(arrays(d, tuple(s), elements=elements))

    if kind == "expand" and any(s > 1 for s in shape):
        keep = draw(st.lists(st.booleans(), min_size=nd, max_size=nd))
        small = tuple(s if k or s <= 1 else 1 for s, k in zip(shape, keep))
        if small == shape:
            small = tuple(1 if s > 1 else s for s in shape)
        a = base(small)
        return View(from_numpy(a).expand(*shape), np.ascontiguousarray(np.broadcast_to(a, shape)), kind)
    if kind == "step" and nd:
        a = base(tuple(2 * s + 1 for s in shape))
        idx = tuple(slice(1, None, 2) for _ in shape)
        return View(from_numpy(a)[idx], np.ascontiguousarray(a[idx]), kind)
    if kind == "permute" and nd > 1:
        perm = draw(st.permutations(range(nd)))
        inv = np.argsort(perm)
        a = base(tuple(shape[p] for p in perm))
        return View(from_numpy(a).permute(*inv.tolist()), np.ascontiguousarray(a.transpose(inv)), kind)
    if kind == "offset":
        n = int(np.prod(shape))
        flat = base((n + 1,))
        t = from_numpy(flat)[1:].view(*shape) if nd else from_numpy(flat)[1]
        return View(t, flat[1:].reshape(shape).copy(), kind)
    if kind == "narrow" and nd:
        a = base(shape[:-1] + (shape[-1] + 3,))
        return View(from_numpy(a).narrow(-1, 2, shape[-1]), np.ascontiguousarray(a[..., 2:2 + shape[-1]]), kind)
    a = base(shape)
    return View(from_numpy(a), a, "contiguous")


def views(dtype, shape, *, kinds=VIEW_KINDS, elements=None) -> st.SearchStrategy[View]:
    """View(tensor, array, kind): an nbx tensor of dtype and shape laid out as one of `kinds`
    (VIEW_KINDS: broadcast, strided, permuted, unaligned, narrowed, contiguous; a kind the shape
    cannot take falls back to contiguous), and its values as a contiguous numpy array."""
    d = _dtype(dtype, "views")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(not isinstance(s, int) or s < 0 for s in shape):
        raise ValueError(f"strategies.views: shape={shape!r}; allowed: a tuple of ints >= 0")
    bad = sorted(set(kinds) - set(VIEW_KINDS))
    if bad or not kinds:
        raise ValueError(f"strategies.views: kinds={kinds!r}; allowed: a non-empty subset of {VIEW_KINDS}")
    return _view(d, shape, tuple(kinds), elements)
