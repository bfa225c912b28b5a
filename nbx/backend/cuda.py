"""Device memory through NVIDIA's cuda-bindings (cudaMalloc / cudaMemcpy / cudaFree): no torch.

Triton 3.6's stock CUDA driver (backends/driver.py `GPUDriver.__init__`) imports torch for the
current device, stream and capability. nbx installs a driver that answers those from cudart
instead, so kernels launch on the legacy default stream with no torch in the process.
"""
from __future__ import annotations

import weakref

import numpy as np
from cuda.bindings import runtime as cudart

from ..errors import BackendError, DeviceOOMError

_H2D = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice
_D2H = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost
_D2D = cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice


def _check(result, what: str):
    err = result[0] if isinstance(result, tuple) else result
    if int(err) != 0:
        name = cudart.cudaGetErrorName(err)[1].decode()
        raise BackendError(f"{what} failed: {name}")
    if isinstance(result, tuple):
        return result[1] if len(result) == 2 else result[1:]
    return None


class _CachingAllocator:
    """Freed blocks are kept by rounded size and reused.

    cudaMalloc and cudaFree synchronize the device: measured on the H200, a fresh 1 GiB output per
    call made an element-wise op of 2^28 float32 take 1.7 ms where the kernel needs 0.5 ms. All work
    runs on the legacy default stream, so a block reused by a later launch is ordered after every
    earlier use of it.
    """

    def __init__(self):
        self.free: dict[int, list[int]] = {}
        self.cached_bytes = 0

    @staticmethod
    def round(nbytes: int) -> int:
        unit = 512 if nbytes < (1 << 20) else (2 << 20)
        return max(unit, -(-nbytes // unit) * unit)

    def malloc(self, nbytes: int) -> int:
        size = self.round(nbytes)
        if size >= 1 << 63:
            # past cudaMalloc's size_t (the binding raises a bare OverflowError) and any device
            raise DeviceOOMError(nbytes, f"cuda:{current_device()}", "more than any device holds")
        blocks = self.free.get(size)
        if blocks:
            self.cached_bytes -= size
            return blocks.pop()
        err, ptr = cudart.cudaMalloc(size)
        if int(err) == int(cudart.cudaError_t.cudaErrorMemoryAllocation):
            cudart.cudaGetLastError()          # clear the error so later calls work
            self.empty_cache()
            err, ptr = cudart.cudaMalloc(size)
        if int(err) == int(cudart.cudaError_t.cudaErrorMemoryAllocation):
            cudart.cudaGetLastError()
            free, total = _check(cudart.cudaMemGetInfo(), "cudaMemGetInfo")
            raise DeviceOOMError(nbytes, f"cuda:{current_device()}",
                                 f"{free / 2**30:.2f} GiB free of {total / 2**30:.2f} GiB")
        _check((err, ptr), f"cudaMalloc({nbytes})")
        return int(ptr)

    def release(self, ptr: int, nbytes: int) -> None:
        size = self.round(nbytes)
        self.free.setdefault(size, []).append(ptr)
        self.cached_bytes += size

    def empty_cache(self) -> None:
        cudart.cudaDeviceSynchronize()
        for blocks in self.free.values():
            for ptr in blocks:
                cudart.cudaFree(ptr)
        self.free.clear()
        self.cached_bytes = 0


ALLOCATOR = _CachingAllocator()


def empty_cache() -> None:
    ALLOCATOR.empty_cache()


class DeviceStorage:
    __slots__ = ("ptr", "nbytes", "_finalizer", "__weakref__")
    device = "cuda"

    def __init__(self, nbytes: int):
        self.nbytes = int(nbytes)
        self.ptr = ALLOCATOR.malloc(max(self.nbytes, 1))
        self._finalizer = weakref.finalize(self, ALLOCATOR.release, self.ptr, max(self.nbytes, 1))

    def data_ptr(self) -> int:
        return self.ptr

    def read(self, offset: int, nbytes: int) -> np.ndarray:
        out = np.empty(nbytes, dtype=np.uint8)
        if nbytes:
            _check(cudart.cudaMemcpy(out.ctypes.data, self.ptr + offset, nbytes, _D2H), "cudaMemcpy D2H")
        return out

    def write(self, offset: int, data: np.ndarray) -> None:
        data = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        if data.size:
            _check(cudart.cudaMemcpy(self.ptr + offset, data.ctypes.data, data.size, _H2D), "cudaMemcpy H2D")

    def copy_from(self, offset: int, src: "DeviceStorage", src_offset: int, nbytes: int) -> None:
        if nbytes:
            _check(cudart.cudaMemcpy(self.ptr + offset, src.ptr + src_offset, nbytes, _D2D), "cudaMemcpy D2D")

    def memset(self, value: int = 0) -> None:
        _check(cudart.cudaMemset(self.ptr, value, max(self.nbytes, 1)), "cudaMemset")


class ExternalDeviceStorage(DeviceStorage):
    """Device memory nbx did not allocate (`nbx.from_dlpack`). When the storage is collected,
    `release` (the producer's DLPack deleter) runs after the legacy default stream, where nbx's
    kernels run, has finished with it: the producer may reuse the memory at once (on another stream)."""
    __slots__ = ()

    def __init__(self, ptr: int, nbytes: int, release):
        self.nbytes = int(nbytes)
        self.ptr = int(ptr)
        self._finalizer = weakref.finalize(self, _release_external, release)
        self._finalizer.atexit = False


def _release_external(release) -> None:
    try:
        cudart.cudaStreamSynchronize(0)
    finally:
        release()


def wrap_external(ptr: int, nbytes: int, release) -> ExternalDeviceStorage:
    """A storage over `nbytes` of someone else's device memory at `ptr`; `release()` when unused."""
    return ExternalDeviceStorage(ptr, nbytes, release)


def dlpack_device() -> tuple[int, int]:
    """(DLPack device type, id) of this backend's memory: kDLCUDA, the current device."""
    return 2, current_device()


def dlpack_wait(stream: int) -> None:
    """Make the CUDA stream `stream` (a cudaStream_t as an int; 2 is the per-thread default stream)
    wait for the work nbx has queued on the legacy default stream: an event recorded there and
    waited for on `stream`. The host does not block."""
    flags = int(getattr(cudart, "cudaEventDisableTiming", 2))
    event = _check(cudart.cudaEventCreateWithFlags(flags), "cudaEventCreateWithFlags")
    try:
        _check(cudart.cudaEventRecord(event, 0), "cudaEventRecord")
        _check(cudart.cudaStreamWaitEvent(stream, event, 0), f"cudaStreamWaitEvent(stream={stream})")
    finally:
        cudart.cudaEventDestroy(event)


def max_elements() -> int | None:
    """No element limit on the device: the allocator's out-of-memory error is the limit."""
    return None


def allocate(nbytes: int) -> DeviceStorage:
    return DeviceStorage(nbytes)


def synchronize() -> None:
    _check(cudart.cudaDeviceSynchronize(), "cudaDeviceSynchronize")


def current_device() -> int:
    return int(_check(cudart.cudaGetDevice(), "cudaGetDevice"))


def _props():
    return _check(cudart.cudaGetDeviceProperties(current_device()), "cudaGetDeviceProperties")


def capability() -> tuple[int, int]:
    p = _props()
    return int(p.major), int(p.minor)


def capability_str() -> str:
    major, minor = capability()
    return f"{major}{minor}"


def device_name() -> str:
    name = _props().name
    return (name.decode() if isinstance(name, bytes) else str(name)).rstrip("\x00")


def extra_info() -> dict:
    p = _props()
    free, total = _check(cudart.cudaMemGetInfo(), "cudaMemGetInfo")
    drv = _check(cudart.cudaDriverGetVersion(), "cudaDriverGetVersion")
    rt = _check(cudart.cudaRuntimeGetVersion(), "cudaRuntimeGetVersion")
    return {"capability": f"{p.major}.{p.minor}", "multiprocessors": int(p.multiProcessorCount),
            "memory_total_gib": round(total / 2**30, 2), "memory_free_gib": round(free / 2**30, 2),
            "cuda_driver": int(drv), "cuda_runtime": int(rt)}


_driver_installed = False


def install_triton_driver() -> None:
    """Point Triton at cudart for device, stream and capability (no torch). Called by nbx.kernels on
    its first import, before any kernel launches, so that importing nbx's light modules (nbx.oracles,
    nbx.cli) imports no Triton; a second call does nothing."""
    global _driver_installed
    if _driver_installed:
        return
    from triton.backends.nvidia.driver import CudaDriver, CudaLauncher, CudaUtils
    from triton.runtime import driver

    class NbxCudaDriver(CudaDriver):
        def __init__(self):  # CudaDriver.__init__ would import torch through GPUDriver
            self.utils = CudaUtils()
            self.launcher_cls = CudaLauncher
            self.get_device_capability = lambda device=None: capability()
            self.get_current_stream = lambda device=None: 0   # the legacy default stream
            self.get_current_device = current_device
            self.set_current_device = lambda d: _check(cudart.cudaSetDevice(d), "cudaSetDevice")

        @staticmethod
        def is_active():
            return True

    _check(cudart.cudaFree(0), "cudaFree(0) (context creation)")  # makes the primary context current
    driver.set_active(NbxCudaDriver())
    _driver_installed = True
