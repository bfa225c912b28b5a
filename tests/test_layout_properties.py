"""Layout: any broadcast and any strided view of the operands gives, bit for bit, the result of the same
op on contiguous copies (hypothesis over shapes and views); out= aliasing; the output keeps a dense
input's layout; scalars and 0-dim operands; rank 8; the broadcast cases the seed got wrong."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import nbx
from nbx.dtype import bfloat16, bool_, float16, float32, float64, int16, int32, int64, int8, uint8
from nbx.testing import assert_bits_equal, randoms

# a representative subset: unary S and F rules, binary P rule with and without faults, a B rule
SUBJECTS = {
    "neg": (1, [float32, float16, bfloat16, int8, int64]),
    "exp": (1, [float32, bfloat16, float16, float64, int32]),
    "add": (2, [float32, int64, uint8, bfloat16, bool_]),
    "mul": (2, [float16, int16, float64, int32]),
    "floor_divide": (2, [int8, int32, int64, uint8]),
    "maximum": (2, [float32, bfloat16, int32, float64]),
    "lt": (2, [float32, int64, float16, uint8]),
}
KINDS = ("contiguous", "expand", "step", "permute", "offset", "narrow")
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _values(d, shape, rng, nonzero):
    v = randoms(d, shape, rng)
    if nonzero:
        v = np.where(v == 0, np.ones_like(v), v)
    return v


def make_operand(shape, d, kind, rng, nonzero=False):
    """(a Tensor of `shape` laid out as `kind`, the same values as a numpy array)."""
    shape = tuple(shape)
    nd = len(shape)
    if kind == "expand" and any(s > 1 for s in shape):
        small = tuple(1 if (s > 1 and i % 2 == rng.integers(0, 2)) else s for i, s in enumerate(shape))
        if small == shape:
            small = tuple(1 if s > 1 else s for s in shape)
        base = _values(d, small, rng, nonzero)
        return nbx.from_numpy(base).expand(*shape), np.broadcast_to(base, shape)
    if kind == "step" and nd:
        base = _values(d, tuple(2 * s + 1 for s in shape), rng, nonzero)
        idx = tuple(slice(1, None, 2) for _ in shape)
        return nbx.from_numpy(base)[idx], base[idx]
    if kind == "permute" and nd > 1:
        perm = rng.permutation(nd)
        inv = np.argsort(perm)
        base = _values(d, tuple(shape[p] for p in perm), rng, nonzero)
        return nbx.from_numpy(base).permute(*inv.tolist()), base.transpose(inv)
    if kind == "offset":
        # one element in: the data pointer is not 16-byte aligned (itemsize < 16)
        n = int(np.prod(shape))
        flat = _values(d, (n + 1,), rng, nonzero)
        t = nbx.from_numpy(flat)[1:].view(*shape) if nd else nbx.from_numpy(flat)[1]
        return t, flat[1:].reshape(shape)
    if kind == "narrow" and nd:
        base = _values(d, shape[:-1] + (shape[-1] + 3,), rng, nonzero)
        return nbx.from_numpy(base).narrow(-1, 2, shape[-1]), base[..., 2:2 + shape[-1]]
    base = _values(d, shape, rng, nonzero)
    return nbx.from_numpy(base), base


@st.composite
def cases(draw, op):
    arity, dtypes = SUBJECTS[op]
    d = draw(st.sampled_from(dtypes))
    shapes = draw(mutually_broadcastable_shapes(num_shapes=arity, min_dims=0, max_dims=5, min_side=0, max_side=5))
    kinds = [draw(st.sampled_from(KINDS)) for _ in range(arity)]
    seed = draw(st.integers(0, 2**32 - 1))
    return d, shapes.input_shapes, shapes.result_shape, kinds, seed


def run_case(op, d, shapes, result_shape, kinds, seed):
    rng = np.random.default_rng(seed)
    fn = getattr(nbx, op)
    pairs = [make_operand(s, d, k, rng, nonzero=(op == "floor_divide" and i == 1))
             for i, (s, k) in enumerate(zip(shapes, kinds))]
    got = fn(*[t for t, _ in pairs])
    want = fn(*[nbx.from_numpy(np.array(a, order="C")) for _, a in pairs])
    assert got.shape == tuple(result_shape)
    assert_bits_equal(got, want, context=f"{op} {d.name} {shapes} {kinds}")


@pytest.mark.parametrize("op", list(SUBJECTS))
@SETTINGS
@given(data=st.data())
def test_views_and_broadcasts_match_contiguous(op, data):
    run_case(op, *data.draw(cases(op)))


# ---------------------------------------------------------------------- out= aliasing an input
ALIAS = [("add", float32), ("mul", int32), ("floor_divide", int64), ("maximum", bfloat16),
         ("neg", float16), ("exp", float64), ("sub", int8)]


@pytest.mark.parametrize("op,d", ALIAS, ids=[f"{o}-{d.name}" for o, d in ALIAS])
@pytest.mark.parametrize("layout", ["contiguous", "step", "permute"])
def test_out_aliasing_an_input(op, d, layout):
    rng = np.random.default_rng(7)
    fn = getattr(nbx, op)
    arity = 1 if op in ("neg", "exp") else 2
    buf = _values(d, (6, 10), rng, nonzero=False)
    whole = nbx.from_numpy(buf)
    x = {"contiguous": whole, "step": whole[1::2, ::3], "permute": whole.T}[layout]
    x_host = x.numpy()
    y = nbx.from_numpy(_values(d, x.shape[-1:], rng, nonzero=True))      # broadcast along x's rows
    args = [x] if arity == 1 else [x, y]
    want = fn(*[nbx.from_numpy(np.array(a.numpy(), order="C")) for a in args])
    r = fn(*args, out=x)
    assert r is x
    assert_bits_equal(x, want, context=f"{op} out=x {layout}")
    # the rest of the buffer is untouched
    mask = np.ones(buf.shape, bool)
    view_np = {"contiguous": buf, "step": buf[1::2, ::3], "permute": buf.T}[layout]
    mask_view = {"contiguous": mask, "step": mask[1::2, ::3], "permute": mask.T}[layout]
    mask_view[...] = False
    after = whole.numpy()
    assert np.array_equal(after[mask].view(np.uint8), buf[mask].view(np.uint8))
    assert view_np.shape == x_host.shape


def test_out_aliasing_second_operand():
    a = nbx.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    b = nbx.from_numpy(np.full((3, 4), 2.0, np.float32))
    want = (np.arange(12, dtype=np.float32).reshape(3, 4) - 2.0)
    assert nbx.sub(a, b, out=b) is b
    assert np.array_equal(b.numpy(), want)


# ---------------------------------------------------------------------- layout kept
@pytest.mark.parametrize("perm", [(2, 0, 1), (1, 2, 0), (2, 1, 0)], ids=str)
def test_dense_permuted_input_keeps_its_layout(perm):
    base = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = nbx.from_numpy(base).permute(*perm)
    for r in (nbx.neg(x), nbx.exp(x), nbx.add(x, 1.0), nbx.add(x, nbx.from_numpy(np.array(x.numpy(), order="C"))),
              nbx.lt(x, 3.0), nbx.add(x, nbx.from_numpy(np.ones(x.shape[-1], np.float32)))):
        assert r.stride() == x.stride(), (perm, r.stride(), x.stride())
    assert np.array_equal(nbx.neg(x).numpy(), -base.transpose(perm))


def test_non_dense_input_gives_c_order():
    x = nbx.from_numpy(np.arange(40, dtype=np.float32).reshape(4, 10))[:, ::2]
    r = nbx.neg(x)
    assert r.is_contiguous() and np.array_equal(r.numpy(), -np.arange(40, dtype=np.float32).reshape(4, 10)[:, ::2])


# ---------------------------------------------------------------------- scalars and 0-dim operands
SCALARS = {float32: [2.5, -0.0, float("inf"), float("nan"), 3], float16: [0.5, -2], bfloat16: [-1.5, 8],
           int32: [7, -3, True], int64: [2**40, -1], uint8: [3, 200], bool_: [True, False]}
SC = [(op, d, s) for op in ("add", "mul", "maximum", "lt", "sub") for d, ss in SCALARS.items() for s in ss
      if not (op == "sub" and d is bool_)]


@pytest.mark.parametrize("op,d,s", SC, ids=[f"{o}-{d.name}-{s!r}" for o, d, s in SC])
def test_scalar_and_0dim_operands(op, d, s):
    """A Python scalar (either side) and a 0-dim tensor of the same dtype act as the full tensor."""
    rng = np.random.default_rng(3)
    fn = getattr(nbx, op)
    x = nbx.from_numpy(_values(d, (3, 5), rng, False))
    full = nbx.full((3, 5), s, dtype=d)
    zero_dim = nbx.full((), s, dtype=d)
    for got, want in [(fn(x, s), fn(x, full)), (fn(s, x), fn(full, x)),
                      (fn(x, zero_dim), fn(x, full)), (fn(zero_dim, x), fn(full, x))]:
        assert_bits_equal(got, want, context=f"{op} {d.name} {s!r}")
    assert fn(zero_dim, zero_dim).shape == ()


def test_0dim_with_0dim_and_scalar():
    z = nbx.from_numpy(np.array(2.5, np.float32))
    r = nbx.mul(z, 2)
    assert r.shape == () and r.item() == 5.0
    assert nbx.neg(z).shape == () and nbx.neg(z).item() == -2.5


# ---------------------------------------------------------------------- rank 8 and big shapes of one
def test_rank_8_strided():
    base = np.arange(4**8, dtype=np.int32).reshape((4,) * 8)
    idx = tuple(slice(None, None, 2) if i % 2 else slice(1, 3) for i in range(8))
    x = nbx.from_numpy(base)[idx].permute(7, 0, 6, 1, 5, 2, 4, 3)      # no dims coalesce
    xn = base[idx].transpose(7, 0, 6, 1, 5, 2, 4, 3)
    y = nbx.from_numpy(np.arange(2, dtype=np.int32).reshape(2, 1, 1, 1, 1, 1, 1, 1))
    got = nbx.add(x, y)
    assert got.shape == (2,) * 8 and got.ndim == 8
    assert np.array_equal(got.numpy(), xn + np.arange(2, dtype=np.int32).reshape(2, 1, 1, 1, 1, 1, 1, 1))
    assert np.array_equal(nbx.neg(x).numpy(), -xn)


def test_rank_9_is_a_clear_error():
    x = nbx.zeros(*(1,) * 9)
    with pytest.raises(ValueError, match=r"nbx.neg: rank 9 exceeds the supported 8"):
        nbx.neg(x)


# ---------------------------------------------------------------------- cases the seed got wrong
def test_broadcast_operand_not_read_flat_past_its_end():
    # the seed read a (4, 1) operand flat as 32 elements against a (4, 8) one
    a = np.arange(4, dtype=np.float32).reshape(4, 1) * 10
    b = np.arange(32, dtype=np.float32).reshape(4, 8)
    for x, y in [(a, b), (b, a)]:
        got = nbx.add(nbx.from_numpy(x), nbx.from_numpy(y))
        assert got.shape == (4, 8) and np.array_equal(got.numpy(), x + y)
    got = nbx.mul(nbx.from_numpy(a), nbx.from_numpy(np.arange(8, dtype=np.float32)))
    assert np.array_equal(got.numpy(), a * np.arange(8, dtype=np.float32))


def test_0dim_operand_not_read_as_numel_elements():
    z = np.array(3.0, np.float32)
    v = np.arange(7, dtype=np.float32)
    for x, y in [(z, v), (v, z)]:
        got = nbx.sub(nbx.from_numpy(x), nbx.from_numpy(y))
        assert got.shape == (7,) and np.array_equal(got.numpy(), x - y)


def test_size_zero_shapes():
    e = nbx.zeros(0, 3)
    assert nbx.add(e, nbx.ones(3)).shape == (0, 3)
    assert nbx.add(e, nbx.ones(1, 1)).shape == (0, 3)
    assert nbx.exp(nbx.zeros(2, 0, 4)).shape == (2, 0, 4)
    with pytest.raises(ValueError, match="broadcast"):
        nbx.add(e, nbx.ones(2))
