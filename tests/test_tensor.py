"""The Tensor: views are metadata only and match numpy exactly; host round trips; factories; Triton."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import triton
import triton.language as tl

import nbx
from nbx.dtype import ALL
from nbx.testing import assert_bits_equal, bits, specials


def base(shape=(2, 3, 4), d=np.float32):
    a = np.arange(int(np.prod(shape)), dtype=d).reshape(shape)
    return a, nbx.from_numpy(a)


A, T = base()

VIEWS = [
    ("expand", lambda t: t[:, :1, :].expand(2, 5, 4), lambda a: np.broadcast_to(a[:, :1, :], (2, 5, 4))),
    ("expand-lead", lambda t: t.expand(3, 2, 3, 4), lambda a: np.broadcast_to(a, (3, 2, 3, 4))),
    ("expand-minus1", lambda t: t[:1].expand(4, -1, -1), lambda a: np.broadcast_to(a[:1], (4, 3, 4))),
    ("broadcast_to", lambda t: t[:, :, :1].broadcast_to((2, 3, 6)), lambda a: np.broadcast_to(a[:, :, :1], (2, 3, 6))),
    ("permute", lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("permute-neg", lambda t: t.permute(-1, -3, -2), lambda a: a.transpose(2, 0, 1)),
    ("transpose", lambda t: t.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("T", lambda t: t.T, lambda a: a.T),
    ("narrow", lambda t: t.narrow(2, 1, 2), lambda a: a[:, :, 1:3]),
    ("narrow-neg-start", lambda t: t.narrow(1, -2, 2), lambda a: a[:, 1:3]),
    ("int", lambda t: t[1], lambda a: a[1]),
    ("int-neg", lambda t: t[-1, -2], lambda a: a[-1, -2]),
    ("slice", lambda t: t[:, 1:], lambda a: a[:, 1:]),
    ("slice-step", lambda t: t[:, ::2, 1::2], lambda a: a[:, ::2, 1::2]),
    ("slice-step3", lambda t: t[..., ::3], lambda a: a[..., ::3]),
    ("slice-empty", lambda t: t[:, 2:1], lambda a: a[:, 2:1]),
    ("slice-neg-bounds", lambda t: t[:, -2:, :-1], lambda a: a[:, -2:, :-1]),
    ("none", lambda t: t[None, :, None], lambda a: a[None, :, None]),
    ("ellipsis", lambda t: t[..., 1], lambda a: a[..., 1]),
    ("ellipsis-mid", lambda t: t[1, ..., 2], lambda a: a[1, ..., 2]),
    ("ellipsis-none", lambda t: t[None, ..., None], lambda a: a[None, ..., None]),
    ("mixed", lambda t: t[1, None, ::2, 1:3], lambda a: a[1, None, ::2, 1:3]),
    ("select", lambda t: t.select(1, 2), lambda a: a[:, 2]),
    ("select-neg", lambda t: t.select(-1, -1), lambda a: a[..., -1]),
    ("unsqueeze0", lambda t: t.unsqueeze(0), lambda a: a[None]),
    ("unsqueeze-mid", lambda t: t.unsqueeze(2), lambda a: a[:, :, None]),
    ("unsqueeze-end", lambda t: t.unsqueeze(-1), lambda a: a[..., None]),
    ("squeeze", lambda t: t[:, :1, None].squeeze(), lambda a: a[:, :1, None].squeeze()),
    ("squeeze-dim", lambda t: t[:, :1].squeeze(1), lambda a: a[:, :1].squeeze(1)),
    ("squeeze-dim-not-1", lambda t: t.squeeze(1), lambda a: a),
    ("view", lambda t: t.view(6, 4), lambda a: a.reshape(6, 4)),
    ("view-minus1", lambda t: t.view(-1), lambda a: a.reshape(-1)),
    ("view-split", lambda t: t.view(2, 3, 2, 2), lambda a: a.reshape(2, 3, 2, 2)),
    ("view-of-sliced", lambda t: t[:, 1:].view(2, 8), lambda a: a[:, 1:].reshape(2, 8)),
    ("view-of-expanded", lambda t: t[:, :1].expand(2, 3, 4).view(2, 3, 2, 2),
     lambda a: np.broadcast_to(a[:, :1], (2, 3, 4)).reshape(2, 3, 2, 2)),
    ("view-transposed-merge-ok", lambda t: t.transpose(0, 1).view(3, 2, 2, 2),
     lambda a: a.swapaxes(0, 1).reshape(3, 2, 2, 2)),
    ("reshape-view", lambda t: t.reshape(4, 6), lambda a: a.reshape(4, 6)),
    ("as_strided", lambda t: t.as_strided((3, 3), (1, 4), 2),
     lambda a: np.lib.stride_tricks.as_strided(a.reshape(-1)[2:], (3, 3), (4, 16))),
    ("as_strided-overlap", lambda t: t.as_strided((4, 3), (2, 1)),
     lambda a: np.lib.stride_tricks.as_strided(a.reshape(-1), (4, 3), (8, 4))),
]


@pytest.mark.parametrize("make,ref", [v[1:] for v in VIEWS], ids=[v[0] for v in VIEWS])
def test_view_matches_numpy(make, ref):
    v = make(T)
    expected = ref(A)
    assert v.untyped_storage() is T.untyped_storage(), "a view must not copy"
    assert v.shape == expected.shape and v.ndim == expected.ndim and v.numel() == expected.size
    assert np.array_equal(v.numpy(), expected)
    for size, st, nst in zip(v.shape, v.stride(), expected.strides):
        if size > 1:
            assert st * v.itemsize == nst, (v.stride(), expected.strides)
    if expected.size:
        # A is arange: the first element's value is its storage index, so the offset must be it
        assert v.storage_offset() == int(expected.flat[0])
        assert v.data_ptr() == T.data_ptr() + int(expected.flat[0]) * T.itemsize


def test_views_see_writes_to_the_base():
    a, t = base((4, 5))
    v = t[1:, ::2].transpose(0, 1)
    nbx.copy(nbx.from_numpy(-a), out=t)
    assert np.array_equal(v.numpy(), (-a)[1:, ::2].T)


def test_view_of_transposed_fails_clearly_and_reshape_copies():
    t = T.transpose(0, 2)                     # (4, 3, 2), strides (1, 4, 12)
    with pytest.raises(ValueError, match=r"view: shape \(24,\) is not a view .*use reshape"):
        t.view(24)
    r = t.reshape(24)
    assert r.untyped_storage() is not T.untyped_storage()
    assert np.array_equal(r.numpy(), A.transpose(2, 1, 0).reshape(24))
    assert r.is_contiguous()


@pytest.mark.parametrize("bad", [(5, 5), (-1, -1), (7, -1)], ids=str)
def test_view_bad_shape(bad):
    with pytest.raises(ValueError, match="view"):
        T.view(*bad)


def test_as_strided_bounds_error():
    with pytest.raises(ValueError, match=r"as_strided: .*reaches element 24 but the storage holds 24"):
        T.as_strided((5, 5), (5, 1))
    with pytest.raises(ValueError, match="as_strided"):
        T.as_strided((2,), (1,), 23)
    with pytest.raises(ValueError, match="as_strided: size has 2 dims but stride has 1"):
        T.as_strided((2, 2), (1,))
    assert T.as_strided((1,), (1,), 23).numpy().tolist() == [23.0]


@pytest.mark.parametrize("call,match", [
    (lambda: T.expand(2, 5, 4), "expand"),
    (lambda: T.permute(0, 1), "permute"),
    (lambda: T.permute(0, 0, 1), "permute"),
    (lambda: T.select(1, 3), "select"),
    (lambda: T.narrow(2, 3, 2), "narrow"),
    (lambda: T[0, 0, 0, 0], "too many indices"),
    (lambda: T[..., ...], "Ellipsis"),
    (lambda: T[::-1], "step"),
    (lambda: T[5], "out of range"),
    (lambda: T.unsqueeze(4), "unsqueeze"),
    (lambda: T[[0, 1]], "unsupported index"),
], ids=["expand", "permute-short", "permute-dup", "select", "narrow", "too-many", "two-ellipsis",
        "neg-step", "index-range", "unsqueeze", "list-index"])
def test_view_errors(call, match):
    with pytest.raises((ValueError, IndexError, TypeError), match=match):
        call()


def test_metadata():
    assert T.shape == (2, 3, 4) and T.stride() == (12, 4, 1) and T.stride(1) == 4 and T.stride(-1) == 1
    assert T.dtype is nbx.float32 and T.numel() == 24 and T.ndim == 3 and T.dim() == 3
    assert T.size() == (2, 3, 4) and T.size(-1) == 4 and len(T) == 2 and T.itemsize == 4
    assert T.is_contiguous() and not T.transpose(0, 1).is_contiguous()
    assert not T[:, ::2].is_contiguous() and T[:1].is_contiguous() and T[1].is_contiguous()
    assert T[:, :1].expand(2, 3, 4).is_contiguous() is False
    assert T.as_strided((2, 1, 4), (4, 99, 1)).is_contiguous()   # size-1 dims' strides do not matter
    assert str(T.dtype) == "float32" and str(nbx.bfloat16) == "bfloat16" and str(nbx.bool) == "bool"
    s = nbx.from_numpy(np.array(3.5))
    assert s.shape == () and s.ndim == 0 and s.numel() == 1 and s.stride() == () and s.item() == 3.5
    e = nbx.empty(0, 3)
    assert e.numel() == 0 and e.numpy().shape == (0, 3)


@pytest.mark.parametrize("d", ALL, ids=lambda d: d.name)
def test_numpy_round_trip_every_dtype(d):
    a = specials(d)
    if a.size > 1:
        a = np.stack([a, a[::-1]])
    t = nbx.from_numpy(a)
    assert t.dtype is d and t.shape == a.shape and t.is_contiguous()
    back = t.numpy()
    assert back.dtype == a.dtype
    assert_bits_equal(back, a, context=d.name)
    # a non-contiguous numpy array is copied in its logical order
    at = a.T
    assert_bits_equal(nbx.from_numpy(at).numpy(), np.ascontiguousarray(at), context=d.name)
    # a view's numpy() is the view's elements only
    assert_bits_equal(t.T.numpy(), at, context=d.name)


def test_bfloat16_host_dtype_is_ml_dtypes():
    t = nbx.from_numpy(np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16))
    assert t.dtype is nbx.bfloat16 and t.numpy().dtype == ml_dtypes.bfloat16
    assert bits(t).tolist() == [0x3FC0, 0xC000]


def test_from_numpy_copies_and_rejects():
    a = np.arange(4, dtype=np.int32)
    t = nbx.from_numpy(a)
    a[0] = 99
    assert t.numpy()[0] == 0
    with pytest.raises(TypeError, match="from_numpy"):
        nbx.from_numpy(np.zeros(2, dtype=np.complex64))
    with pytest.raises(TypeError, match="from_numpy"):
        nbx.from_numpy([1, 2])


@pytest.mark.parametrize("d", ALL, ids=lambda d: d.name)
def test_factories(d):
    e = nbx.empty(2, 3, dtype=d)
    assert e.shape == (2, 3) and e.dtype is d and e.stride() == (3, 1)
    assert np.array_equal(nbx.zeros(2, 3, dtype=d).numpy(), np.zeros((2, 3), d.np))
    assert np.array_equal(nbx.ones((4,), dtype=d).numpy(), np.ones(4, d.np))
    f = nbx.full((2, 2), 1 if not d.is_bool else True, dtype=d)
    assert f.dtype is d and np.array_equal(f.numpy(), np.full((2, 2), 1, d.np))
    assert nbx.zeros((), dtype=d).shape == ()


def test_factory_defaults_and_errors():
    assert nbx.zeros(3).dtype is nbx.float32
    assert nbx.full((2,), 7).dtype is nbx.int64
    assert nbx.full((2,), 2.5).dtype is nbx.float32
    assert nbx.full((2,), True).dtype is nbx.bool
    assert nbx.full(3, -1, dtype="int8").numpy().tolist() == [-1, -1, -1]
    assert nbx.empty((2, 0)).numel() == 0
    with pytest.raises(ValueError, match="empty"):
        nbx.empty(-1)
    with pytest.raises(TypeError, match="empty"):
        nbx.empty(2, dtype="complex64")
    with pytest.raises(ValueError, match="full: value=300 does not fit in uint8"):
        nbx.full((2,), 300, dtype="uint8")
    with pytest.raises(TypeError, match="shape entries"):
        nbx.empty(2.0)


CASTS = [
    (np.array([1.7, -1.7, 2.5, -0.0, np.nan, 1e10, -1e10], np.float32), nbx.int32,
     np.array([1, -1, 2, 0, 0, 2**31 - 1, -(2**31)], np.int32)),
    (np.array([300, -1, 255], np.int32), nbx.uint8, np.array([44, 255, 255], np.uint8)),
    (np.array([0, 2, -3], np.int64), nbx.bool, np.array([False, True, True])),
    (np.array([np.nan, 0.0, -0.0, 0.5], np.float64), nbx.bool, np.array([True, False, False, True])),
    (np.array([True, False]), nbx.float16, np.array([1, 0], np.float16)),
    (np.array([1 + 2**-11, 65520.0, 1e-8], np.float64), nbx.float16, np.array([1, np.inf, 0], np.float16)),
    (np.array([1 + 2**-8 + 2**-30, 1 + 2**-8], np.float64), nbx.bfloat16,          # one rounding; ties to even
     np.array([1 + 2**-7, 1.0], np.float64).astype(ml_dtypes.bfloat16)),
]


@pytest.mark.parametrize("src,dst,want", CASTS, ids=[f"{s.dtype}-{d.name}" for s, d, _ in CASTS])
def test_to_dtype(src, dst, want):
    x = nbx.from_numpy(src)
    y = x.to(dst)
    assert y.dtype is dst and y.shape == src.shape
    assert_bits_equal(y, want, context=f"{src.dtype}->{dst.name}")
    assert x.to(dst.name).dtype is dst


def test_contiguous():
    t = T.permute(1, 2, 0)
    c = t.contiguous()
    assert c.is_contiguous() and c.stride() == (8, 2, 1)
    assert np.array_equal(c.numpy(), A.transpose(1, 2, 0))
    assert c.untyped_storage() is not T.untyped_storage()
    assert T.contiguous() is T
    s = T[:, :1].expand(2, 3, 4).contiguous()
    assert s.stride() == (12, 4, 1) and np.array_equal(s.numpy(), np.broadcast_to(A[:, :1], (2, 3, 4)))
    cl = T.clone()
    assert cl.untyped_storage() is not T.untyped_storage() and np.array_equal(cl.numpy(), A)


# ---------------------------------------------------------------------- a Tensor straight into Triton
@triton.jit
def _copy_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=mask), mask=mask)


@pytest.mark.parametrize("d", [nbx.float32, nbx.bfloat16, nbx.int64, nbx.uint8], ids=lambda d: d.name)
def test_tensor_passed_straight_to_a_triton_kernel(d):
    src = specials(d)[:37] if d.is_float else np.arange(37).astype(d.np)
    x = nbx.from_numpy(src)
    y = nbx.zeros(src.size, dtype=d)
    _copy_kernel[(triton.cdiv(src.size, 16),)](x, y, src.size, BLOCK=16)
    assert_bits_equal(y, src, context=d.name)
    # a view with a storage offset: the kernel sees data_ptr() at the offset
    y2 = nbx.zeros(src.size - 1, dtype=d)
    _copy_kernel[(3,)](x[1:], y2, src.size - 1, BLOCK=16)
    assert_bits_equal(y2, src[1:], context=d.name)
