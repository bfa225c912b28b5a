"""Host memory for Triton's interpreter (TRITON_INTERPRET=1).

Triton's interpreter copies kernel arguments through a small torch-like protocol (triton 3.6,
runtime/interpreter.py `GridExecutor._init_args_hst`): `arg.untyped_storage()` (with `.data_ptr()`
and `.cpu()`), `arg.storage_offset()`, `arg.size()`, `arg.stride()`, `arg.new_empty(0, device=...)`,
`.set_(storage, offset, size, stride)` and, after the run, `arg_dev.copy_(arg_hst)`. Our storage
already is host memory, so `.cpu()` is the storage itself and the copy back is a no-op: the
kernel reads and writes the numpy buffer in place through `data_ptr()`.
"""
from __future__ import annotations

import numpy as np

from ..errors import DeviceOOMError


class HostStorage:
    __slots__ = ("buf", "nbytes", "__weakref__")
    device = "cpu"

    def __init__(self, nbytes: int):
        try:
            # 16 spare bytes so an allocation of 0 still has an address and reads of a scalar are safe
            self.buf = np.empty(max(int(nbytes), 1) + 16, dtype=np.uint8)
        except MemoryError:
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


def allocate(nbytes: int) -> HostStorage:
    return HostStorage(nbytes)


def synchronize() -> None:
    pass


def device_name() -> str:
    return "cpu (Triton interpreter)"


def extra_info() -> dict:
    return {}


def install_libdevice() -> None:
    from .interpreter_libdevice import install
    install()
