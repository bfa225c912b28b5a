"""Host memory for Triton's interpreter (TRITON_INTERPRET=1).

Triton's interpreter copies kernel arguments through a small torch-like protocol (triton 3.6,
runtime/interpreter.py `GridExecutor._init_args_hst`): `arg.untyped_storage()` (with `.data_ptr()`
and `.cpu()`), `arg.storage_offset()`, `arg.size()`, `arg.stride()`, `arg.new_empty(0, device=...)`,
`.set_(storage, offset, size, stride)` and, after the run, `arg_dev.copy_(arg_hst)`. Our storage
already is host memory, so `.cpu()` is the storage itself and the copy back is a no-op: the
kernel reads and writes the numpy buffer in place through `data_ptr()`.

Size limit: the interpreter runs every kernel on the CPU in Python and numpy, at some millions of
elements per second, so an op refuses (nbx.SizeLimitError, naming the op and the limit) a result
of more than `max_elements()` elements: NBX_INTERPRETER_MAX_ELEMENTS, default 2**26 (67,108,864;
more than the harness's largest chunk, 2**24). `nbx.isnan(x.expand(2**31))` would otherwise
allocate 2 GiB and run for many minutes. Set the variable higher to allow larger results.
"""
from __future__ import annotations

import ctypes
import os
import weakref

import numpy as np

from ..errors import BackendError, DeviceOOMError

MAX_ELEMENTS_ENV = "NBX_INTERPRETER_MAX_ELEMENTS"
DEFAULT_MAX_ELEMENTS = 1 << 26


def max_elements() -> int:
    """The most elements an op's result may have on this backend (read from the environment on
    every call, so a process may change it)."""
    text = os.environ.get(MAX_ELEMENTS_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_ELEMENTS
    try:
        n = int(text, 0)
    except ValueError:
        n = -1
    if n < 0:
        raise BackendError(f"{MAX_ELEMENTS_ENV}={text!r} is not a number of elements >= 0")
    return n


class HostStorage:
    __slots__ = ("buf", "nbytes", "__weakref__")
    device = "cpu"

    def __init__(self, nbytes: int):
        try:
            # 16 spare bytes so an allocation of 0 still has an address and reads of a scalar are safe
            self.buf = np.empty(max(int(nbytes), 1) + 16, dtype=np.uint8)
        except (MemoryError, ValueError):
            # numpy raises ValueError ("Maximum allowed dimension exceeded") past its size type
            raise DeviceOOMError(nbytes, "host (interpreter)") from None
        self.nbytes = int(nbytes)

    # --- the protocol Triton's interpreter uses ---
    def data_ptr(self) -> int:
        return self.buf.ctypes.data

    def cpu(self):
        return self

    def copy_(self, other) -> None:
        if other is not self:   # the interpreter ran on this very buffer: nothing to copy back
            self.buf[: self.nbytes] = other.buf[: self.nbytes]

    # --- what nbx's Tensor uses ---
    def read(self, offset: int, nbytes: int) -> np.ndarray:
        return self.buf[offset:offset + nbytes].copy()

    def write(self, offset: int, data: np.ndarray) -> None:
        data = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        self.buf[offset:offset + data.size] = data

    def host_view(self) -> np.ndarray:
        """The bytes themselves, no copy (the interpreter's storage is host memory)."""
        return self.buf[: self.nbytes]


class ExternalHostStorage(HostStorage):
    """Host memory nbx did not allocate (`nbx.from_dlpack`): `buf` views it in place. `release` (the
    producer's DLPack deleter) runs once nothing refers to the memory any more: not this storage,
    not a numpy view of `buf` (every such view holds the ctypes array `buf` is made from)."""
    __slots__ = ()

    def __init__(self, ptr: int, nbytes: int, release):
        if nbytes <= 0 or not ptr:
            raise ValueError(f"ExternalHostStorage: needs memory, got {nbytes} bytes at {ptr:#x}")
        anchor = (ctypes.c_uint8 * nbytes).from_address(ptr)
        weakref.finalize(anchor, release).atexit = False   # at exit the producer may be gone already
        self.buf = np.frombuffer(anchor, dtype=np.uint8)
        self.nbytes = int(nbytes)


def allocate(nbytes: int) -> HostStorage:
    return HostStorage(nbytes)


def wrap_external(ptr: int, nbytes: int, release) -> ExternalHostStorage:
    """A storage over `nbytes` of someone else's host memory at `ptr`; `release()` when unused."""
    return ExternalHostStorage(ptr, nbytes, release)


def dlpack_device() -> tuple[int, int]:
    """(DLPack device type, id) of this backend's memory: kDLCPU, 0."""
    return 1, 0


def dlpack_wait(stream) -> None:
    """Host memory has no streams: nothing to order."""


def synchronize() -> None:
    pass


def device_name() -> str:
    return "cpu (Triton interpreter)"


def extra_info() -> dict:
    return {}


def install_libdevice() -> None:
    """libdevice answered by numpy, and the interpreter's per-launch costs that change no result
    skipped (interpreter_launch.py)."""
    from . import interpreter_launch, interpreter_libdevice
    interpreter_libdevice.install()
    interpreter_launch.install()
