"""DLPack interchange: `Tensor.__dlpack__` / `__dlpack_device__` and `nbx.from_dlpack`.

Zero copy both ways, every dtype, views (strided, transposed, offset, 0-dim, 0-size), lifetimes,
versioned and legacy capsules, and the errors. numpy is the peer on the interpreter backend (host
memory); torch where it is importable (CPU here, CUDA on the GPU in the tests marked `cuda`).
Capsules nbx would refuse (float8, lanes, a CUDA device on the interpreter, misaligned data) are
built with `nbx.backend.dlpack.export`, the producer's own low level.
"""
from __future__ import annotations

import ctypes
import gc
import weakref

import ml_dtypes
import numpy as np
import pytest

import nbx
from nbx.dtype import ALL, DType, bfloat16, float32, int16, int64
from nbx.backend import IS_CUDA
from nbx.backend import dlpack as dl
from nbx.testing import bits

cpu_only = pytest.mark.skipif(IS_CUDA, reason="host memory: nbx's interpreter backend")

NUMPY_DTYPES = [d for d in ALL if d is not bfloat16]     # numpy's DLPack refuses ml_dtypes' bfloat16


def sample(d: DType, shape=(3, 4)) -> np.ndarray:
    n = int(np.prod(shape))
    if d.is_bool:
        return (np.arange(n) % 3 == 0).reshape(shape)
    if d.is_int:
        return (np.arange(n) * 37 - 50).astype(d.np).reshape(shape)   # wraps for uint8/int8: fine
    return (np.linspace(-3, 3, n) ** 3).astype(d.np).reshape(shape)


def collect():
    gc.collect()
    return dl.live_exports()


def capsule_info(cap):
    """(name, version or None, flags) of a capsule nbx or numpy made, read without consuming it."""
    name = dl.capsule_name(cap)
    ptr = dl._PyCapsule_GetPointer(id(cap), dl._CNAME[name.encode()])
    if name == "dltensor_versioned":
        m = dl.DLManagedTensorVersioned.from_address(ptr)
        return name, (m.version.major, m.version.minor), int(m.flags)
    return name, None, 0


# ---------------------------------------------------------------------- numpy -> nbx -> numpy
@cpu_only
@pytest.mark.parametrize("d", NUMPY_DTYPES, ids=str)
def test_numpy_to_nbx_to_numpy_every_dtype(d):
    a = sample(d)
    t = nbx.from_dlpack(a)
    assert t.dtype is d and t.shape == a.shape and t.stride() == (4, 1)
    assert t.data_ptr() == a.ctypes.data, "from_dlpack must not copy"
    np.testing.assert_array_equal(bits(t.numpy()), bits(a))
    b = np.from_dlpack(t)
    assert b.dtype == a.dtype and b.ctypes.data == a.ctypes.data and b.strides == a.strides
    np.testing.assert_array_equal(bits(b), bits(a))


@cpu_only
@pytest.mark.parametrize("d", NUMPY_DTYPES, ids=str)
def test_nbx_to_numpy_to_nbx_every_dtype(d):
    t = nbx.from_numpy(sample(d))
    a = np.from_dlpack(t)
    assert a.dtype == d.np and a.ctypes.data == t.data_ptr()
    u = nbx.from_dlpack(a)
    assert u.dtype is d and u.data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(bits(u.numpy()), bits(t.numpy()))


@cpu_only
def test_bfloat16_where_numpy_cannot():
    x = sample(bfloat16)
    t = nbx.from_numpy(x)
    base = collect()
    # numpy refuses to export ml_dtypes' bfloat16 (and to import kDLBfloat): nbx says so, naming itself
    with pytest.raises(BufferError, match=r"nbx\.from_dlpack: argument 'x' \(numpy\.ndarray\) cannot be exported"):
        nbx.from_dlpack(x)
    with pytest.raises(Exception):
        np.from_dlpack(t)
    assert collect() == base, "numpy's refusal left an export behind"
    # nbx -> nbx through a capsule, both kinds: the same memory, the same bits
    for cap in (t.__dlpack__(), t.__dlpack__(max_version=(1, 0))):
        u = nbx.from_dlpack(cap)
        assert u.dtype is nbx.bfloat16 and u.data_ptr() == t.data_ptr()
        np.testing.assert_array_equal(bits(u.numpy()), bits(x))
    # a kDLBfloat capsule over numpy's uint16 memory: viewed in place with the right bits
    raw = x.view(np.uint16).copy()
    cap = dl.export(raw.ctypes.data, raw.shape, (4, 1), bfloat16, (1, 0), raw, versioned=True)
    v = nbx.from_dlpack(cap)
    assert v.dtype is nbx.bfloat16 and v.data_ptr() == raw.ctypes.data
    np.testing.assert_array_equal(v.numpy().view(np.uint16), raw)
    raw[0, 0] = np.array(7.5, ml_dtypes.bfloat16).view(np.uint16)
    assert v.numpy()[0, 0] == 7.5


# ---------------------------------------------------------------------- zero copy
@cpu_only
def test_writes_through_numpy_are_seen_by_nbx_and_back():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = nbx.from_dlpack(a)
    a[1, 2] = -1.0
    assert t.numpy()[1, 2] == -1.0
    nbx.add(t, 100, out=t)                       # a kernel writes into the producer's memory
    want = np.arange(12, dtype=np.float32).reshape(3, 4) + 100
    want[1, 2] = 99.0
    np.testing.assert_array_equal(a, want)
    b = np.from_dlpack(t)
    b[0, 0] = 42.0
    assert a[0, 0] == 42.0 and t.numpy()[0, 0] == 42.0


@cpu_only
def test_ops_on_imported_views_match_numpy():
    a = np.linspace(-2, 2, 30, dtype=np.float32).reshape(5, 6)
    t = nbx.from_dlpack(a[1:, ::2].T)
    np.testing.assert_array_equal(nbx.neg(t).numpy(), -a[1:, ::2].T)
    out = nbx.from_dlpack(np.zeros((3, 4), np.float32))
    nbx.mul(t, 2, out=out)
    np.testing.assert_array_equal(out.numpy(), 2 * a[1:, ::2].T)


# ---------------------------------------------------------------------- views
NP_VIEWS = [
    ("strided", lambda a: a[::2, 1::3]),
    ("transposed", lambda a: a.T),
    ("offset", lambda a: a[1:, 2:]),
    ("row", lambda a: a[2]),
    ("0-dim", lambda a: a[1, 2, ...]),
    ("0-size", lambda a: a[:, 3:3]),
    ("0-size-rows", lambda a: a[4:]),
    ("broadcast", lambda a: np.broadcast_to(a[:1], (3, 6))),   # read-only: copied by default
    ("size-1-dims", lambda a: a[:1, None, 2:3]),
]


@cpu_only
@pytest.mark.parametrize("make", [v[1] for v in NP_VIEWS], ids=[v[0] for v in NP_VIEWS])
def test_numpy_views(make):
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    v = make(a)
    t = nbx.from_dlpack(v)
    assert t.shape == v.shape
    np.testing.assert_array_equal(t.numpy(), v)
    if v.size and v.flags.writeable:
        assert t.data_ptr() == v.ctypes.data
        for size, st, nst in zip(v.shape, t.stride(), v.strides):
            if size > 1:
                assert st * 4 == nst
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, v)


NBX_VIEWS = [
    ("strided", lambda t: t[::2, 1::3]),
    ("transposed", lambda t: t.T),
    ("offset", lambda t: t[1:, 2:]),
    ("narrow", lambda t: t.narrow(1, 3, 2)),
    ("0-dim", lambda t: t[1, 2]),
    ("0-size", lambda t: t[:, 3:3]),
    ("expand", lambda t: t[:1].expand(3, 6)),
    ("permute-3d", lambda t: t.view(2, 3, 4).permute(2, 0, 1)),
    ("as_strided", lambda t: t.as_strided((3, 3), (1, 5), 4)),
]


@cpu_only
@pytest.mark.parametrize("make", [v[1] for v in NBX_VIEWS], ids=[v[0] for v in NBX_VIEWS])
@pytest.mark.parametrize("max_version", [None, (1, 0)], ids=["legacy", "versioned"])
def test_nbx_views(make, max_version):
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    t = nbx.from_numpy(a)
    v = make(t)
    host = v.numpy()

    class Producer:                              # np.from_dlpack always asks for a versioned capsule
        def __dlpack__(self, **kw):
            return v.__dlpack__(max_version=max_version)

        def __dlpack_device__(self):
            return v.__dlpack_device__()

    b = np.from_dlpack(Producer())
    assert b.shape == v.shape
    np.testing.assert_array_equal(b, host)
    if v.numel():
        assert b.ctypes.data == v.data_ptr()      # data points at the view's first element (byte_offset 0)
        assert all(nst == st * 8 for size, st, nst in zip(v.shape, v.stride(), b.strides) if size > 1)
    u = nbx.from_dlpack(v.__dlpack__(max_version=max_version))
    assert u.shape == v.shape and (not v.numel() or u.data_ptr() == v.data_ptr())
    np.testing.assert_array_equal(u.numpy(), host)


@cpu_only
def test_byte_offset_is_honoured():
    raw = np.arange(10, dtype=np.int16)
    for versioned in (False, True):
        cap = dl.export(raw.ctypes.data, (3,), (2,), int16, (1, 0), raw, versioned=versioned, byte_offset=6)
        t = nbx.from_dlpack(cap)
        assert t.numpy().tolist() == [3, 5, 7] and t.data_ptr() == raw.ctypes.data + 6


@cpu_only
def test_null_strides_mean_row_major():
    raw = np.arange(6, dtype=np.int64)
    t = nbx.from_dlpack(dl.export(raw.ctypes.data, (2, 3), None, int64, (1, 0), raw, versioned=False))
    assert t.stride() == (3, 1) and t.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]


# ---------------------------------------------------------------------- capsules and versions
@cpu_only
def test_capsule_versions_and_flags():
    t = nbx.tensor([1.0, 2.0, 3.0])
    base = collect()
    assert t.__dlpack_device__() == (dl.kDLCPU, 0)
    assert capsule_info(t.__dlpack__()) == ("dltensor", None, 0)
    assert capsule_info(t.__dlpack__(max_version=(0, 8))) == ("dltensor", None, 0)
    assert capsule_info(t.__dlpack__(max_version=(1, 0))) == ("dltensor_versioned", (1, 0), 0)
    assert capsule_info(t.__dlpack__(max_version=(1, 5))) == ("dltensor_versioned", (1, 1), 0)
    assert capsule_info(t.__dlpack__(max_version=(2, 0))) == ("dltensor_versioned", (1, 1), 0)
    assert capsule_info(t.__dlpack__(max_version=(1, 1), dl_device=(1, 0))) == \
        ("dltensor_versioned", (1, 1), 0)
    cap = t.__dlpack__(max_version=(1, 1), copy=True)
    assert capsule_info(cap) == ("dltensor_versioned", (1, 1), dl.FLAG_IS_COPIED)
    c = nbx.from_dlpack(cap)
    assert c.data_ptr() != t.data_ptr() and c.numpy().tolist() == [1.0, 2.0, 3.0]
    n = np.from_dlpack(t, copy=True)
    assert n.ctypes.data != t.data_ptr() and n.tolist() == [1.0, 2.0, 3.0]
    assert collect() == base + 2                 # the two copies hold their exports
    del c, n
    assert collect() == base


@cpu_only
def test_copy_argument_of_from_dlpack():
    a = np.arange(4, dtype=np.float32)
    c = nbx.from_dlpack(a, copy=True)
    assert c.data_ptr() != a.ctypes.data
    a[0] = 9
    assert c.numpy()[0] == 0
    assert nbx.from_dlpack(a, copy=False).data_ptr() == a.ctypes.data
    ro = np.arange(4, dtype=np.float32)
    ro.flags.writeable = False
    r = nbx.from_dlpack(ro)                      # read-only: nbx tensors are writable, so a copy
    assert r.data_ptr() != ro.ctypes.data and r.numpy().tolist() == [0, 1, 2, 3]
    with pytest.raises(BufferError, match=r"nbx\.from_dlpack: argument 'x' \(numpy\.ndarray\) is read-only"
                                          r".*copy=False"):
        nbx.from_dlpack(ro, copy=False)
    with pytest.raises(TypeError, match=r"nbx\.from_dlpack: copy='yes' must be None, True or False"):
        nbx.from_dlpack(a, copy="yes")


@cpu_only
def test_legacy_producer_without_max_version():
    a = np.arange(5, dtype=np.int8)

    class Old:
        def __dlpack__(self, stream=None):
            return a.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return (1, 0)

    t = nbx.from_dlpack(Old())
    assert t.data_ptr() == a.ctypes.data and t.numpy().tolist() == [0, 1, 2, 3, 4]


@cpu_only
def test_nbx_to_nbx():
    t = nbx.tensor([[1, 2], [3, 4]], dtype=nbx.int16)
    u = nbx.from_dlpack(t.T)
    assert u.data_ptr() == t.data_ptr() and u.stride() == (1, 2)
    nbx.add(u, 10, out=u)
    assert t.numpy().tolist() == [[11, 12], [13, 14]]


# ---------------------------------------------------------------------- lifetime
@cpu_only
def test_numpy_producer_deleted_first():
    a = np.arange(1000, dtype=np.float64)
    alive = weakref.ref(a)
    t = nbx.from_dlpack(a)[10:20]
    del a
    gc.collect()
    assert alive() is not None, "the producer must live while nbx views its memory"
    assert t.numpy().tolist() == list(map(float, range(10, 20)))
    h = t.untyped_storage().host_view()          # a numpy view of the storage keeps it alive too
    del t
    gc.collect()
    assert alive() is not None
    assert h[:8].view(np.float64)[0] == 0.0
    del h
    gc.collect()
    assert alive() is None, "the producer's deleter must run once nbx is done"


@cpu_only
def test_nbx_producer_deleted_first():
    t = nbx.from_numpy(np.arange(100, dtype=np.int32))
    storage = weakref.ref(t.untyped_storage())
    base = collect()
    b = np.from_dlpack(t[5:])
    assert collect() == base + 1
    del t
    gc.collect()
    assert storage() is not None and b[:3].tolist() == [5, 6, 7]
    c = b[::2]                                   # a numpy view of the import keeps it too
    del b
    gc.collect()
    assert storage() is not None and c[:2].tolist() == [5, 7]
    del c
    assert collect() == base and storage() is None


@cpu_only
def test_unconsumed_capsules_are_freed():
    t = nbx.tensor([1.0])
    base = collect()
    cap = t.__dlpack__()
    assert collect() == base + 1
    del cap
    assert collect() == base
    cap = t.__dlpack__(max_version=(1, 0))
    kept = [cap]
    del cap
    assert collect() == base + 1, "a capsule someone holds is not abandoned"
    del kept
    assert collect() == base


@cpu_only
def test_consumer_error_keeps_its_exception():
    # numpy refuses kDLBfloat after taking the capsule: its error must come through unchanged
    t = nbx.tensor([1.0]).to(nbx.bfloat16)
    base = collect()
    with pytest.raises(Exception) as info:
        np.from_dlpack(t)
    assert not isinstance(info.value, SystemError)
    assert collect() == base


# ---------------------------------------------------------------------- errors
def fake_cuda_capsule():
    raw = np.zeros(4, np.float32)
    return dl.export(raw.ctypes.data, (4,), (1,), float32, (2, 0), raw, versioned=True)


@cpu_only
@pytest.mark.parametrize("make,err,match", [
    (lambda: [1, 2], TypeError, r"must have __dlpack__ .* got list"),
    (lambda: np.zeros(3, np.complex64), BufferError, r"\(numpy\.ndarray\): its dtype \(kDLComplex "
                                                     r"64 bits\) is not one nbx supports; allowed: bool, "),
    (lambda: np.arange(6.0)[::-1], BufferError, r"strides \(-1,\) .* negative .*np\.ascontiguousarray"),
    (lambda: np.arange(6.0).reshape(2, 3)[::-1, ::2], BufferError, r"negative"),
    (lambda: np.zeros(3, np.dtype([("a", "f4")])), BufferError, r"cannot be exported through DLPack"),
    (lambda: np.frombuffer(b"\0" * 17, np.float32, 4, offset=1), BufferError, r"not a multiple of its itemsize"),
    (lambda: dl.export(np.zeros(2).ctypes.data, (2,), (1,), (10, 8, 1), (1, 0), None, versioned=True),
     BufferError, r"a DLPack capsule\): its dtype \(kDLFloat8_e4m3fn 8 bits\) is not one nbx supports"),
    (lambda: dl.export(np.zeros(2).ctypes.data, (2,), (1,), (2, 32, 4), (1, 0), None, versioned=False),
     BufferError, r"kDLFloat 32 bits x 4 lanes\) has 4 lanes; nbx views only lanes == 1"),
    (lambda: dl.export(np.zeros(2).ctypes.data, (2,), (1,), (2, 32, 1), (1, 0), None, versioned=True,
                       version=(2, 0)), BufferError, r"DLPack 2\.0; nbx reads DLPack 1\.x"),
    (fake_cuda_capsule, BufferError, r"a DLPack capsule\) is on kDLCUDA \(device type 2\) id 0, but nbx runs "
                                     r"the interpreter backend .* x\.cpu\(\)"),
], ids=["not-dlpack", "complex", "negative-stride", "negative-stride-2d", "structured", "misaligned",
        "float8", "lanes", "major-version", "cuda-capsule"])
def test_import_errors(make, err, match):
    base = collect()
    x = make()
    with pytest.raises(err, match=r"^nbx\.from_dlpack: argument 'x'.*" + match):
        nbx.from_dlpack(x)
    del x
    assert collect() == base, "a refused capsule must still be freed"


@cpu_only
def test_cuda_object_on_the_interpreter():
    called = []

    class CudaArray:
        def __dlpack_device__(self):
            return (2, 1)

        def __dlpack__(self, **kw):
            called.append(kw)
            raise AssertionError("not asked for a capsule it cannot use")

    with pytest.raises(BufferError, match=r"^nbx\.from_dlpack: argument 'x' \(.*CudaArray\) is on kDLCUDA "
                                          r"\(device type 2\) id 1, but nbx runs the interpreter backend .* "
                                          r"views host memory \(kDLCPU\) only; move it to the CPU first"):
        nbx.from_dlpack(CudaArray())
    assert called == []


@cpu_only
def test_consumed_capsule():
    cap = np.arange(3.0).__dlpack__(max_version=(1, 0))
    nbx.from_dlpack(cap)
    with pytest.raises(ValueError, match=r"^nbx\.from_dlpack: argument 'x' \(a DLPack capsule\): the DLPack "
                                         r"capsule was already consumed \(its name is 'used_dltensor_versioned'\)"):
        nbx.from_dlpack(cap)
    # the shared ctypes.pythonapi.PyCapsule_New with other argtypes: nbx keeps its own prototype
    other = ctypes.pythonapi.PyCapsule_New
    other.restype, other.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    name = b"something_else"
    bogus = other(1, name, None)
    with pytest.raises(ValueError, match=r"capsule named 'something_else' is not a DLPack capsule"):
        nbx.from_dlpack(bogus)


@cpu_only
@pytest.mark.parametrize("kw,err,match", [
    (dict(stream=1), ValueError, r"stream=1: CPU memory has no streams, only stream=None"),
    (dict(stream=-1), ValueError, r"stream=-1: CPU memory has no streams"),
    (dict(dl_device=(2, 0)), BufferError, r"dl_device=\(2, 0\) \(kDLCUDA \(device type 2\) id 0\) is not available"),
    (dict(dl_device="cpu"), TypeError, r"dl_device='cpu' must be None or a tuple"),
    (dict(copy=1), TypeError, r"copy=1 must be None, True or False"),
    (dict(max_version=1), TypeError, r"max_version=1 must be None or a tuple \(major, minor\)"),
], ids=["stream", "stream-minus-1", "dl_device", "dl_device-type", "copy", "max_version"])
def test_export_errors(kw, err, match):
    t = nbx.tensor([1.0])
    base = collect()
    with pytest.raises(err, match=r"^nbx\.Tensor\.__dlpack__: " + match):
        t.__dlpack__(**kw)
    assert collect() == base


# ---------------------------------------------------------------------- torch (optional), CPU
@cpu_only
@pytest.mark.parametrize("d", ALL, ids=str)
def test_torch_cpu_round_trips(d):
    torch = pytest.importorskip("torch")
    tt = torch.from_numpy(sample(float32 if d is bfloat16 else d)).to(getattr(torch, d.name))
    t = nbx.from_dlpack(tt)
    assert t.dtype is d and t.data_ptr() == tt.data_ptr() and t.stride() == tuple(tt.stride())
    back = torch.from_dlpack(t)
    assert back.dtype == tt.dtype and back.data_ptr() == tt.data_ptr() and torch.equal(back, tt)
    u = nbx.from_dlpack(torch.from_dlpack(nbx.from_dlpack(tt.T[1:])))
    assert u.data_ptr() == tt.T[1:].data_ptr() and u.stride() == tuple(tt.T[1:].stride())
    if d.is_float:
        tt[0, 0] = 5
        assert float(t.numpy()[0, 0]) == 5.0


@cpu_only
def test_torch_cpu_views_and_lifetime():
    torch = pytest.importorskip("torch")
    t = nbx.from_numpy(np.arange(24, dtype=np.float32).reshape(4, 6))
    for v in (t[1:, ::2], t.T, t[2, 3], t[:, 2:2], t[:1].expand(3, 6)):
        tv = torch.from_dlpack(v)
        assert tuple(tv.shape) == v.shape
        np.testing.assert_array_equal(tv.numpy(), v.numpy())
        if v.numel():
            assert tv.data_ptr() == v.data_ptr()
    tt = torch.arange(10.0)
    alive = weakref.ref(tt)
    n = nbx.from_dlpack(tt)
    del tt
    gc.collect()
    assert n.numpy().tolist() == [float(i) for i in range(10)]
    del n
    gc.collect()
    assert alive() is None


# ---------------------------------------------------------------------- CUDA (the GPU machine)
@pytest.mark.cuda
def test_cuda_device_and_torch_round_trip():
    torch = pytest.importorskip("torch")
    dev = torch.cuda.current_device()
    tt = torch.arange(24, dtype=torch.float32, device="cuda").reshape(4, 6)
    t = nbx.from_dlpack(tt)
    assert t.__dlpack_device__() == (dl.kDLCUDA, dev)
    assert t.data_ptr() == tt.data_ptr() and t.stride() == (6, 1)
    nbx.mul(t, 2, out=t)                          # nbx writes torch's memory
    torch.cuda.synchronize()
    assert torch.equal(tt, torch.arange(24, dtype=torch.float32, device="cuda").reshape(4, 6) * 2)
    back = torch.from_dlpack(t[1:, ::2].T)
    assert back.is_cuda and back.data_ptr() == t[1:, ::2].T.data_ptr()
    assert tuple(back.stride()) == t[1:, ::2].T.stride()
    assert torch.equal(back, tt[1:, ::2].T)
    tt[1, 0] = -7                                 # torch writes nbx's view of it
    torch.cuda.synchronize()
    assert t.numpy()[1, 0] == -7


@pytest.mark.cuda
@pytest.mark.parametrize("d", ALL, ids=str)
def test_cuda_every_dtype(d):
    torch = pytest.importorskip("torch")
    x = nbx.from_numpy(sample(d))
    tt = torch.from_dlpack(x)
    assert str(tt.dtype) == f"torch.{d.name}" and tt.data_ptr() == x.data_ptr()
    y = nbx.from_dlpack(tt)
    assert y.dtype is d and y.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(bits(y.numpy()), bits(x.numpy()))


@pytest.mark.cuda
def test_cuda_streams():
    torch = pytest.importorskip("torch")
    x = nbx.from_numpy(np.arange(1 << 20, dtype=np.float32))
    y = nbx.exp(nbx.mul(x, 1e-6))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):                    # torch passes its current stream: nbx makes it wait
        ty = torch.from_dlpack(y)
        z = ty * 2
    s.synchronize()
    np.testing.assert_array_equal(z.cpu().numpy(), 2 * y.numpy())
    for stream in (None, -1, 1, 2, s.cuda_stream):
        nbx.from_dlpack(y.__dlpack__(stream=stream, max_version=(1, 0)))
    with pytest.raises(ValueError, match=r"^nbx\.Tensor\.__dlpack__: stream=0 is ambiguous"):
        y.__dlpack__(stream=0)
    with pytest.raises(TypeError, match=r"stream='x' must be None or an int"):
        y.__dlpack__(stream="x")
    # a torch tensor written on a side stream: nbx asks for it on the legacy default stream (stream=1),
    # so torch makes that stream wait for its current one
    with torch.cuda.stream(s):
        src = torch.full((1 << 20,), 3.0, device="cuda")
        src.mul_(2)
        got = nbx.from_dlpack(src)
    assert float(nbx.add(got, 0).numpy()[-1]) == 6.0


@pytest.mark.cuda
def test_cuda_host_copy_and_device_errors():
    torch = pytest.importorskip("torch")
    t = nbx.tensor([1.0, 2.0, 3.0])
    h = np.from_dlpack(t, device="cpu")           # dl_device=(kDLCPU, 0): a host copy
    assert h.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(BufferError, match=r"needs a copy from the device to the host, but copy=False"):
        t.__dlpack__(dl_device=(1, 0), copy=False, max_version=(1, 0))
    with pytest.raises(BufferError, match=r"^nbx\.from_dlpack: argument 'x' \(numpy\.ndarray\) is on kDLCPU .* "
                                          r"nbx runs the cuda backend .*nbx\.from_numpy"):
        nbx.from_dlpack(np.zeros(3))
    with pytest.raises(BufferError, match=r"^nbx\.from_dlpack: argument 'x' \(torch\.Tensor\) is on kDLCPU"):
        nbx.from_dlpack(torch.zeros(3))
    tt = torch.arange(4.0, device="cuda")
    alive = weakref.ref(tt)
    n = nbx.from_dlpack(tt)
    del tt
    gc.collect()
    assert n.numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    del n
    gc.collect()
    assert alive() is None


def test_from_dlpack_is_public():
    import sys
    assert "from_dlpack" in dir(nbx) and nbx.from_dlpack is sys.modules["nbx.tensor"].from_dlpack
    assert callable(nbx.Tensor.__dlpack__) and callable(nbx.Tensor.__dlpack_device__)
