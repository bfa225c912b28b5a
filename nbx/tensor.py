"""The torch-free tensor: storage + shape + strides (in elements) + storage offset + dtype.

Views are metadata only. A Tensor is passed straight to Triton kernels: it has `data_ptr()` and a
`dtype` whose str() is the Triton name, and (for the interpreter) the storage protocol Triton's
interpreter copies arguments through (see backend/interpreter.py).

This module imports nothing above the backend (the layers are checked by tests/test_imports.py):
the operators and the methods that run ops (`+`, `==`, `-t`, `.to()`, `.contiguous()`, `.clone()`,
`.copy_()`) are installed onto `Tensor` by `nbx.ops` at its import (nbx/ops/methods.py), and
`import nbx` always imports nbx.ops.
"""
from __future__ import annotations

import math
import sys
import types
from typing import Sequence

import numpy as np

from . import backend as _backend
from .dtype import DType, as_dtype, float32, from_numpy_dtype
from .backend import dlpack as _dl
from .promotion import scalar_dtype, scalar_to_numpy


def _contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _as_shape(shape, op: str) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    out = []
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"{op}: shape entries must be ints, got {s!r}")
        out.append(int(s))
    return tuple(out)


def _norm_dim(dim: int, ndim: int, op: str, arg: str = "dim") -> int:
    n = max(ndim, 1)
    if not isinstance(dim, (int, np.integer)) or not -n <= dim < n:
        raise IndexError(f"{op}: {arg}={dim!r} out of range for a tensor of {ndim} dims "
                         f"(allowed {-n}..{n - 1})")
    return int(dim) % n


def _view_strides(old_shape, old_strides, new_shape):
    """Strides of `new_shape` over the same memory, or None when no view exists (ATen computeStride)."""
    if math.prod(old_shape) == 0 or not old_shape:
        return _contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = old_strides[d - 1]
                tensor_numel = view_numel = 1
    return tuple(new_strides) if view_d == -1 else None


class Tensor:
    __slots__ = ("_storage", "_shape", "_strides", "_offset", "dtype", "__weakref__")

    def __init__(self, storage, shape, strides, offset: int, dtype: DType):
        self._storage = storage
        self._shape = tuple(int(s) for s in shape)
        self._strides = tuple(int(s) for s in strides)
        self._offset = int(offset)
        self.dtype = dtype

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    def size(self, dim: int | None = None):
        return self._shape if dim is None else self._shape[_norm_dim(dim, self.ndim, "size")]

    def stride(self, dim: int | None = None):
        return self._strides if dim is None else self._strides[_norm_dim(dim, self.ndim, "stride")]

    def numel(self) -> int:
        return math.prod(self._shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def device(self) -> str:
        return self._storage.device

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-dim tensor")
        return self._shape[0]

    def is_contiguous(self) -> bool:
        expected = 1
        for size, st in zip(reversed(self._shape), reversed(self._strides)):
            if size != 1 and st != expected:
                return False
            expected *= size
        return True

    def is_non_overlapping_and_dense(self) -> bool:
        """Covers numel consecutive elements with no element twice, in some order of its dims."""
        dims = sorted((st, size) for size, st in zip(self._shape, self._strides) if size != 1)
        expected = 1
        for st, size in dims:
            if st != expected:
                return False
            expected *= size
        return True

    def span(self) -> tuple[int, int]:
        """(lowest, highest+1) element index of storage this view touches (strides are >= 0)."""
        if self.numel() == 0:
            return self._offset, self._offset
        hi = self._offset + sum((s - 1) * st for s, st in zip(self._shape, self._strides))
        return self._offset, hi + 1

    # ------------------------------------------------------------------ what Triton reads
    def data_ptr(self) -> int:
        return self._storage.data_ptr() + self._offset * self.dtype.itemsize

    def untyped_storage(self):
        return self._storage

    def storage_offset(self) -> int:
        return self._offset

    def new_empty(self, size, device=None):
        size = _as_shape((size,) if isinstance(size, int) else tuple(size), "new_empty")
        st = _backend.active.allocate(math.prod(size) * self.dtype.itemsize)
        return Tensor(st, size, _contiguous_strides(size), 0, self.dtype)

    def set_(self, storage, offset, size, stride):
        self._storage, self._offset = storage, int(offset)
        self._shape, self._strides = tuple(size), tuple(stride)
        return self

    # ------------------------------------------------------------------ host transfer
    def numpy(self) -> np.ndarray:
        """A host copy (numpy; bfloat16 as ml_dtypes.bfloat16) with this tensor's shape."""
        npd = self.dtype.np
        if self.numel() == 0:
            return np.empty(self._shape, dtype=npd)
        lo, hi = self.span()
        raw = self._storage.read(lo * self.itemsize, (hi - lo) * self.itemsize).view(npd)
        view = np.lib.stride_tricks.as_strided(
            raw, self._shape, tuple(st * self.itemsize for st in self._strides), writeable=False)
        return np.array(view, copy=True)

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        if self.numel() != 1:
            raise ValueError(f"item: tensor has {self.numel()} elements, not 1")
        return self.numpy().reshape(()).item()

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), threshold=20) if self.numel() <= 1000 else "..."
        return f"nbx.Tensor({body}, dtype={self.dtype.name}, shape={self._shape}, device={self.device})"

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    # ------------------------------------------------------------------ DLPack
    def __dlpack_device__(self) -> tuple[_dl.DLDeviceType, int]:
        """(kDLCPU, 0) on the interpreter backend, (kDLCUDA, current device) on the cuda backend."""
        kind, index = _backend.active.dlpack_device()
        return _dl.DLDeviceType(kind), index

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """This tensor as a DLPack capsule, for `from_dlpack` of numpy, torch, CuPy, JAX (or nbx).

        Zero copy: the capsule describes this view of nbx's storage (data points at the view's first
        element, byte_offset 0, shape, strides in elements, dtype) and keeps the storage alive until
        the consumer calls its deleter. `max_version` >= (1, 0) gives a versioned capsule
        ("dltensor_versioned", DLPack 1.1 at most), else a legacy one ("dltensor").
        `stream` (cuda backend): the consumer's stream; nbx's work is queued on the legacy default
        stream, so for None, 1 (legacy default) and -1 (no synchronization) nothing is done, 2 (per-
        thread default) or a cudaStream_t makes that stream wait for nbx's queued work; 0 is refused.
        On the interpreter only None is allowed. `copy=True` exports a copy; `dl_device=(kDLCPU, 0)`
        on the cuda backend exports a host copy (refused with copy=False).
        """
        return _export_dlpack(self, stream, max_version, dl_device, copy)

    # ------------------------------------------------------------------ views
    def as_strided(self, size, stride, storage_offset: int | None = None) -> "Tensor":
        size, stride = _as_shape(tuple(size), "as_strided"), _as_shape(tuple(stride), "as_strided")
        if len(size) != len(stride):
            raise ValueError(f"as_strided: size has {len(size)} dims but stride has {len(stride)}")
        if any(s < 0 for s in size) or any(st < 0 for st in stride):
            raise ValueError(f"as_strided: sizes and strides must be >= 0, got {size}, {stride}")
        off = self._offset if storage_offset is None else int(storage_offset)
        t = Tensor(self._storage, size, stride, off, self.dtype)
        lo, hi = t.span()
        cap = self._storage.nbytes // self.itemsize
        if off < 0 or hi > cap:
            raise ValueError(f"as_strided: size {size}, stride {stride}, offset {off} reaches element "
                             f"{hi - 1} but the storage holds {cap} elements")
        return t

    def _view(self, shape, strides, offset=None) -> "Tensor":
        return Tensor(self._storage, shape, strides, self._offset if offset is None else offset, self.dtype)

    def expand(self, *sizes) -> "Tensor":
        sizes = _as_shape(sizes, "expand")
        if len(sizes) < self.ndim:
            raise ValueError(f"expand: target {sizes} has fewer dims than the tensor's shape {self._shape}")
        lead = len(sizes) - self.ndim
        shape, strides = [], []
        for i, want in enumerate(sizes):
            if i < lead:
                if want < 0:
                    raise ValueError(f"expand: size -1 not allowed in a new leading dim ({sizes})")
                shape.append(want); strides.append(0)
                continue
            have, st = self._shape[i - lead], self._strides[i - lead]
            if want == -1 or want == have:
                shape.append(have); strides.append(st)
            elif have == 1:
                shape.append(want); strides.append(0)
            else:
                raise ValueError(f"expand: the tensor's shape {self._shape} cannot be expanded to {sizes} "
                                 f"(dim {i}: {have} -> {want}; only size-1 dims expand)")
        return self._view(shape, strides)

    def broadcast_to(self, shape) -> "Tensor":
        return self.expand(*_as_shape((shape,), "broadcast_to"))

    def permute(self, *dims) -> "Tensor":
        dims = _as_shape(dims, "permute")
        nd = [_norm_dim(d, self.ndim, "permute", "dims") for d in dims]
        if sorted(nd) != list(range(self.ndim)):
            raise ValueError(f"permute: dims {dims} are not a permutation of {self.ndim} dims")
        return self._view([self._shape[d] for d in nd], [self._strides[d] for d in nd])

    def transpose(self, dim0: int, dim1: int) -> "Tensor":
        if self.ndim == 0:
            return self
        perm = list(range(self.ndim))
        a, b = _norm_dim(dim0, self.ndim, "transpose", "dim0"), _norm_dim(dim1, self.ndim, "transpose", "dim1")
        perm[a], perm[b] = perm[b], perm[a]
        return self.permute(*perm)

    @property
    def T(self) -> "Tensor":
        return self.permute(*reversed(range(self.ndim)))

    def narrow(self, dim: int, start: int, length: int) -> "Tensor":
        d = _norm_dim(dim, self.ndim, "narrow")
        size = self._shape[d]
        if start < 0:
            start += size
        if not (0 <= start <= size and 0 <= length and start + length <= size):
            raise IndexError(f"narrow: start {start} and length {length} out of range for dim {d} of size {size}")
        shape = list(self._shape); shape[d] = length
        return self._view(shape, self._strides, self._offset + start * self._strides[d])

    def select(self, dim: int, index: int) -> "Tensor":
        d = _norm_dim(dim, self.ndim, "select")
        size = self._shape[d]
        if not -size <= index < size:
            raise IndexError(f"select: index {index} out of range for dim {d} of size {size}")
        index %= size
        return self._view(self._shape[:d] + self._shape[d + 1:], self._strides[:d] + self._strides[d + 1:],
                          self._offset + index * self._strides[d])

    def unsqueeze(self, dim: int) -> "Tensor":
        d = _norm_dim(dim, self.ndim + 1, "unsqueeze")
        st = self._strides[d] * self._shape[d] if d < self.ndim else 1
        return self._view(self._shape[:d] + (1,) + self._shape[d:], self._strides[:d] + (st,) + self._strides[d:])

    def squeeze(self, dim: int | None = None) -> "Tensor":
        if dim is None:
            keep = [i for i, s in enumerate(self._shape) if s != 1]
        else:
            d = _norm_dim(dim, self.ndim, "squeeze") if self.ndim else None
            keep = [i for i in range(self.ndim) if i != d or self._shape[i] != 1]
        return self._view([self._shape[i] for i in keep], [self._strides[i] for i in keep])

    def _infer_shape(self, shape, op):
        shape = list(_as_shape(shape, op))
        if shape.count(-1) > 1:
            raise ValueError(f"{op}: only one dim may be -1, got {tuple(shape)}")
        known = math.prod(s for s in shape if s != -1)
        if -1 in shape:
            if known == 0 or self.numel() % known:
                raise ValueError(f"{op}: shape {tuple(shape)} is invalid for {self.numel()} elements")
            shape[shape.index(-1)] = self.numel() // known
        if math.prod(shape) != self.numel() or any(s < 0 for s in shape):
            raise ValueError(f"{op}: shape {tuple(shape)} is invalid for {self.numel()} elements")
        return tuple(shape)

    def view(self, *shape) -> "Tensor":
        shape = self._infer_shape(shape, "view")
        strides = _view_strides(self._shape, self._strides, shape)
        if strides is None:
            raise ValueError(f"view: shape {shape} is not a view of shape {self._shape} with strides "
                             f"{self._strides}; use reshape (which copies)")
        return self._view(shape, strides)

    def reshape(self, *shape) -> "Tensor":
        shape = self._infer_shape(shape, "reshape")
        strides = _view_strides(self._shape, self._strides, shape)
        if strides is not None:
            return self._view(shape, strides)
        return self.contiguous().view(shape)

    def flatten(self) -> "Tensor":
        return self.reshape(-1)

    def __getitem__(self, index) -> "Tensor":
        if not isinstance(index, tuple):
            index = (index,)
        n_ell = sum(1 for i in index if i is Ellipsis)
        if n_ell > 1:
            raise IndexError("an index may hold only one Ellipsis")
        consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
        if consumed > self.ndim:
            raise IndexError(f"too many indices ({consumed}) for a tensor of {self.ndim} dims")
        if n_ell:
            at = index.index(Ellipsis)
            index = index[:at] + (slice(None),) * (self.ndim - consumed) + index[at + 1:]
        shape, strides, off, d = [], [], self._offset, 0
        for i in index:
            if i is None:
                shape.append(1); strides.append(0)
            elif isinstance(i, slice):
                start, stop, step = i.indices(self._shape[d])
                if step <= 0:
                    raise ValueError(f"slice step must be positive, got {step}")
                n = max(0, (stop - start + step - 1) // step)
                shape.append(n); strides.append(self._strides[d] * step)
                off += start * self._strides[d] if n else 0
                d += 1
            elif isinstance(i, (int, np.integer)) and not isinstance(i, bool):
                size = self._shape[d]
                if not -size <= i < size:
                    raise IndexError(f"index {i} out of range for dim {d} of size {size}")
                off += (int(i) % size) * self._strides[d]
                d += 1
            else:
                raise TypeError(f"unsupported index {i!r}: ints, slices with positive steps, None and "
                                "Ellipsis are allowed")
        shape += self._shape[d:]
        strides += self._strides[d:]
        return self._view(shape, strides, off)


# ---------------------------------------------------------------------- factories
def empty(*shape, dtype=float32) -> Tensor:
    shape = _as_shape(shape, "empty")
    if any(s < 0 for s in shape):
        raise ValueError(f"empty: sizes must be >= 0, got {shape}")
    dt = as_dtype(dtype, op="empty")
    st = _backend.active.allocate(math.prod(shape) * dt.itemsize)
    return Tensor(st, shape, _contiguous_strides(shape), 0, dt)


def from_numpy(array) -> Tensor:
    """A new tensor holding a copy of `array` (any numpy dtype nbx supports, bfloat16 via ml_dtypes)."""
    if isinstance(array, np.generic):
        array = np.asarray(array)
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy ndarray, got {type(array).__name__}")
    dt = from_numpy_dtype(array.dtype)
    t = empty(array.shape, dtype=dt)
    if array.size:
        t._storage.write(0, np.ascontiguousarray(array))
    return t


# ---------------------------------------------------------------------- DLPack
_EXPORT = "nbx.Tensor.__dlpack__"
_IMPORT = "nbx.from_dlpack"


def _copy_bytes(src, offset: int, nbytes: int):
    """A new storage of this backend holding `nbytes` of `src` from byte `offset`."""
    dst = _backend.active.allocate(nbytes)
    if nbytes:
        if _backend.IS_CUDA:
            dst.copy_from(0, src, offset, nbytes)
        else:
            dst.write(0, src.host_view()[offset:offset + nbytes])
    return dst


def _check_copy(copy, op: str) -> None:
    if copy is not None and not isinstance(copy, bool):
        raise TypeError(f"{op}: copy={copy!r} must be None, True or False")


def _export_dlpack(t: Tensor, stream, max_version, dl_device, copy):
    _check_copy(copy, _EXPORT)
    own = _backend.active.dlpack_device()
    if max_version is None:
        versioned, version = False, None
    else:
        try:
            major, minor = (int(v) for v in max_version)
        except (TypeError, ValueError):
            raise TypeError(f"{_EXPORT}: max_version={max_version!r} must be None or a tuple "
                            "(major, minor) of ints") from None
        versioned = major >= 1
        version = _dl.VERSION if (major, minor) >= _dl.VERSION else (1, minor)
    target = own
    if dl_device is not None:
        try:
            kind, index = dl_device
            target = (int(kind), int(index))
        except (TypeError, ValueError):
            raise TypeError(f"{_EXPORT}: dl_device={dl_device!r} must be None or a tuple (device type, "
                            "device id) as __dlpack_device__() returns") from None
    to_host = target != own
    if to_host:
        if not (_backend.IS_CUDA and target == (int(_dl.kDLCPU), 0)):
            raise BufferError(f"{_EXPORT}: dl_device={dl_device!r} ({_dl.describe_device(target)}) is not "
                              f"available; the tensor is on {_dl.describe_device(own)} and exports there"
                              + (", or to (kDLCPU, 0) as a host copy" if _backend.IS_CUDA else ""))
        if copy is False:
            raise BufferError(f"{_EXPORT}: dl_device=(kDLCPU, 0) needs a copy from the device to the host, "
                              "but copy=False; pass copy=None or True")
    if target[0] == _dl.kDLCPU:
        if stream is not None:
            raise ValueError(f"{_EXPORT}: stream={stream!r}: CPU memory has no streams, only stream=None "
                             "is allowed" + (" with dl_device=(kDLCPU, 0)" if to_host else
                                             " (nbx runs the interpreter backend)"))
    elif stream is not None:
        if isinstance(stream, bool) or not isinstance(stream, (int, np.integer)):
            raise TypeError(f"{_EXPORT}: stream={stream!r} must be None or an int (a cudaStream_t, 1 the "
                            "legacy default stream, 2 the per-thread default stream, -1 no synchronization)")
        if stream == 0:
            raise ValueError(f"{_EXPORT}: stream=0 is ambiguous and the array API standard disallows it "
                             "for CUDA; pass 1 (legacy default stream), 2 (per-thread default stream), "
                             "a cudaStream_t, -1 (no synchronization) or None")
        if stream < -1:
            raise ValueError(f"{_EXPORT}: stream={stream!r} must be >= -1")
    isz = t.itemsize
    if to_host:
        host = np.ascontiguousarray(t.numpy())      # synchronous: after nbx's queued work
        return _dl.export(host.ctypes.data, t.shape, _contiguous_strides(t.shape), t.dtype,
                          (int(_dl.kDLCPU), 0), host, versioned=versioned,
                          version=version or _dl.VERSION, flags=_dl.FLAG_IS_COPIED)
    storage, offset, flags = t._storage, t._offset, 0
    if copy:
        lo, hi = t.span()
        storage = _copy_bytes(storage, lo * isz, (hi - lo) * isz)
        offset, flags = offset - lo, _dl.FLAG_IS_COPIED
    if _backend.IS_CUDA and stream not in (None, -1, 1):
        _backend.active.dlpack_wait(int(stream))
    return _dl.export(storage.data_ptr() + offset * isz, t.shape, t.stride(), t.dtype, own, storage,
                      versioned=versioned, version=version or _dl.VERSION, flags=flags)


def _device_message(what: str, device: tuple[int, int]) -> str:
    own = _backend.active.dlpack_device()
    where = _dl.describe_device(device)
    if _backend.IS_CUDA:
        if device[0] == _dl.kDLCUDA:
            return (f"{_IMPORT}: argument 'x' ({what}) is on cuda:{device[1]} but nbx runs on cuda:{own[1]}; "
                    f"move it there first (torch: x.to('cuda:{own[1]}')) or select that device before "
                    "importing nbx")
        return (f"{_IMPORT}: argument 'x' ({what}) is on {where}, but nbx runs the cuda backend and views "
                f"CUDA device memory (kDLCUDA) of cuda:{own[1]} only; move it to the GPU first (torch: "
                "x.cuda(); CuPy: cupy.asarray(x); JAX: jax.device_put(x, jax.devices('gpu')[0])), or copy "
                "a numpy array with nbx.from_numpy(x)")
    return (f"{_IMPORT}: argument 'x' ({what}) is on {where}, but nbx runs the interpreter backend "
            "(Triton's CPU interpreter) and views host memory (kDLCPU) only; move it to the CPU first "
            "(torch: x.cpu(); CuPy: x.get(); JAX: jax.device_put(x, jax.devices('cpu')[0])), or run nbx "
            "on its cuda backend (NBX_BACKEND=cuda on a machine with a GPU)")


def from_dlpack(x, *, copy: bool | None = None) -> Tensor:
    """A Tensor viewing the memory of `x`, with no copy: any object with `__dlpack__` and
    `__dlpack_device__` (numpy arrays, torch, CuPy and JAX arrays, nbx Tensors) or a DLPack capsule.

    The memory must be on nbx's backend: host memory (kDLCPU) on the interpreter, device memory of
    the current CUDA device (kDLCUDA) on the cuda backend. The producer's deleter runs when the last
    nbx tensor or numpy view of the memory is gone (on CUDA after nbx's queued work has finished),
    so the producer may be deleted first. On CUDA, nbx asks the producer for its data on the legacy
    default stream (stream=1), where nbx launches its kernels.

    `copy`: None views the memory, copying only what the producer marks read-only (nbx tensors are
    writable); True always copies into new nbx memory; False never copies (a read-only producer
    raises BufferError). A capsule can be consumed once.
    """
    _check_copy(copy, _IMPORT)
    own = _backend.active.dlpack_device()

    def device_ok(device):
        return device[0] == own[0] and (device[0] == _dl.kDLCPU or device[1] == own[1])

    if _dl.is_capsule(x):
        capsule, what = x, "a DLPack capsule"
    else:
        if not hasattr(x, "__dlpack__"):
            raise TypeError(f"{_IMPORT}: argument 'x' must have __dlpack__ (a numpy array, a torch, CuPy or "
                            f"JAX array, an nbx Tensor) or be a DLPack capsule, got {type(x).__name__}")
        what = f"{type(x).__module__}.{type(x).__qualname__}"
        if hasattr(x, "__dlpack_device__"):
            dev = x.__dlpack_device__()
            dev = (int(dev[0]), int(dev[1]))
            if not device_ok(dev):
                raise BufferError(_device_message(what, dev))
        stream = 1 if _backend.IS_CUDA else None
        try:
            try:
                capsule = x.__dlpack__(stream=stream, max_version=_dl.VERSION)
            except TypeError:      # a producer older than DLPack 1.0's max_version
                capsule = x.__dlpack__(stream=stream)
        except BufferError as e:
            raise BufferError(f"{_IMPORT}: argument 'x' ({what}) cannot be exported through DLPack: {e}") from e
    try:
        imp = _dl.consume(capsule, device_ok)
    except _dl.ConsumeError as e:
        if e.kind == "device":
            raise BufferError(_device_message(what, e.device)) from None
        if e.kind in ("used", "capsule"):
            raise ValueError(f"{_IMPORT}: argument 'x' ({what}): {e}") from None
        hint = {"strides": "; pass a copy with non-negative strides (numpy: np.ascontiguousarray(x), "
                           "torch: x.contiguous())",
                "align": "; pass an aligned copy"}.get(e.kind, "")
        raise BufferError(f"{_IMPORT}: argument 'x' ({what}): {e}{hint}") from None
    try:
        if imp.read_only and copy is False:
            raise BufferError(f"{_IMPORT}: argument 'x' ({what}) is read-only (its producer set DLPack's "
                              "READ_ONLY flag) and an nbx tensor is writable, so it needs a copy, but "
                              "copy=False; pass copy=None or True")
        nbytes = imp.nbytes
        if nbytes == 0:
            imp.release()
            storage = _backend.active.allocate(0)
        else:
            storage = _backend.active.wrap_external(imp.data, nbytes, imp.release)
            if copy or imp.read_only:
                storage = _copy_bytes(storage, 0, nbytes)
    except BaseException:
        imp.release()
        raise
    return Tensor(storage, imp.shape, imp.strides, 0, imp.dtype)


def full(shape, value, dtype=None) -> Tensor:
    shape = _as_shape((shape,) if isinstance(shape, int) else tuple(shape), "full")
    if dtype is None:
        dtype = scalar_dtype(value)
    dt = as_dtype(dtype, op="full")
    host = np.full(shape, scalar_to_numpy(value, dt, op="full", arg="value"), dtype=dt.np)
    return from_numpy(host)


def zeros(*shape, dtype=float32) -> Tensor:
    return full(_as_shape(shape, "zeros"), 0, dtype)


def ones(*shape, dtype=float32) -> Tensor:
    return full(_as_shape(shape, "ones"), 1, dtype)


def tensor(data, dtype=None) -> Tensor:
    """From nested Python lists/scalars or an array, like torch.tensor (float data -> float32)."""
    if dtype is not None:
        dt = as_dtype(dtype, op="tensor")
        return from_numpy(np.asarray(data, dtype=dt.np))
    arr = np.asarray(data)
    if arr.dtype == np.float64 and not isinstance(data, np.ndarray):
        arr = arr.astype(np.float32)
    elif arr.dtype.kind == "i" and not isinstance(data, np.ndarray):
        arr = arr.astype(np.int64)
    return from_numpy(arr)


class _TensorModule(types.ModuleType):
    """`nbx.tensor` names both this module and the factory `tensor` above: importing the module
    binds its name on the package, and until nbx binds its public names (on first use of one) the
    package attribute is this module. Calling it calls the factory, so `nbx.tensor([...])` works in
    any import order."""

    def __call__(self, *args, **kwargs):
        return tensor(*args, **kwargs)


sys.modules[__name__].__class__ = _TensorModule
