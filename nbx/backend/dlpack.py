"""DLPack at the level of memory: the C structs, capsules out (export) and capsules in (consume).

The Python array API's DLPack protocol hands a `PyCapsule` from producer to consumer. The capsule
holds a pointer to a `DLManagedTensor` (legacy, capsule name "dltensor") or a
`DLManagedTensorVersioned` (DLPack >= 1.0, name "dltensor_versioned"); the consumer renames it
"used_dltensor[_versioned]" when it takes ownership and calls the struct's `deleter` once it is done
with the memory. A capsule that dies unconsumed must free what it holds: nbx's capsules are freed
lazily instead (see `_sweep`), because a destructor written in Python cannot run safely there.

Everything here is ctypes over the C ABI of dlpack.h (no compiled code, no torch):
- `export()` fills a managed struct whose shape and strides arrays, and a reference to the owner of
  the memory (nbx's storage), stay in `_EXPORTS` until the deleter runs (or the capsule is found
  abandoned, unconsumed);
- `consume()` reads a capsule, checks it against what nbx can view, renames it and returns an
  `Imported` record whose `release` calls the producer's deleter (once).
Tensor-level policy (which device, copies, stream arguments, error wording for the user) is in
nbx/tensor.py; this module knows nbx's dtypes but no Tensor.
"""
from __future__ import annotations

import ctypes
import enum
import math
import sys
import threading
from dataclasses import dataclass
from typing import Callable

from ..dtype import DTYPES, DType

# The newest DLPack nbx writes and reads: any 1.x reads the same (minor versions only add enum
# values and flags).
VERSION = (1, 1)

FLAG_READ_ONLY = 1 << 0      # DLPACK_FLAG_BITMASK_READ_ONLY
FLAG_IS_COPIED = 1 << 1      # DLPACK_FLAG_BITMASK_IS_COPIED


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


kDLCPU, kDLCUDA = DLDeviceType.kDLCPU, DLDeviceType.kDLCUDA

# DLDataTypeCode
kDLInt, kDLUInt, kDLFloat, kDLOpaqueHandle, kDLBfloat, kDLComplex, kDLBool = 0, 1, 2, 3, 4, 5, 6
_CODE_NAMES = {0: "kDLInt", 1: "kDLUInt", 2: "kDLFloat", 3: "kDLOpaqueHandle", 4: "kDLBfloat",
               5: "kDLComplex", 6: "kDLBool", 7: "kDLFloat8_e3m4", 8: "kDLFloat8_e4m3",
               9: "kDLFloat8_e4m3b11fnuz", 10: "kDLFloat8_e4m3fn", 11: "kDLFloat8_e4m3fnuz",
               12: "kDLFloat8_e5m2", 13: "kDLFloat8_e5m2fnuz", 14: "kDLFloat8_e8m0fnu",
               15: "kDLFloat6_e2m3fn", 16: "kDLFloat6_e3m2fn", 17: "kDLFloat4_e2m1fn"}

# nbx dtype <-> (DLDataTypeCode, bits); lanes are always 1
_CODES: dict[str, tuple[int, int]] = {
    "bool": (kDLBool, 8), "uint8": (kDLUInt, 8), "int8": (kDLInt, 8), "int16": (kDLInt, 16),
    "int32": (kDLInt, 32), "int64": (kDLInt, 64), "float16": (kDLFloat, 16),
    "bfloat16": (kDLBfloat, 16), "float32": (kDLFloat, 32), "float64": (kDLFloat, 64),
}
_BY_CODE = {v: DTYPES[k] for k, v in _CODES.items()}


def dl_dtype(dt: DType) -> tuple[int, int, int]:
    """(code, bits, lanes) of an nbx dtype."""
    code, bits = _CODES[dt.name]
    return code, bits, 1


def describe_dtype(code: int, bits: int, lanes: int) -> str:
    name = _CODE_NAMES.get(code, f"code {code}")
    return f"{name} {bits} bits" + (f" x {lanes} lanes" if lanes != 1 else "")


def describe_device(device: tuple[int, int]) -> str:
    t, i = int(device[0]), int(device[1])
    try:
        return f"{DLDeviceType(t).name} (device type {t}) id {i}"
    except ValueError:
        return f"DLPack device type {t} id {i}"


# ---------------------------------------------------------------------- dlpack.h, as ctypes
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


# ---------------------------------------------------------------------- the capsule C API
def _capi(name: str, restype, *argtypes):
    """A private prototype of a Python C API function: `ctypes.pythonapi.<name>` is one object
    shared by every module of the process, and anyone setting its argtypes (a test did:
    c_char_p for PyCapsule_New's name) would change how nbx calls it."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_PyCapsule_New = _capi("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_PyCapsule_IsValid = _capi("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
_PyCapsule_GetPointer = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_PyCapsule_GetName = _capi("PyCapsule_GetName", ctypes.c_char_p, ctypes.py_object)
_PyCapsule_SetName = _capi("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
_Py_IncRef = _capi("Py_IncRef", None, ctypes.py_object)


def _immortal_cstring(text: bytes) -> int:
    """The address of a C string that is never freed: a capsule keeps a pointer to its name, and a
    capsule may outlive this module (at interpreter exit)."""
    buf = ctypes.create_string_buffer(text)
    _Py_IncRef(buf)
    return ctypes.addressof(buf)


NAME_LEGACY, NAME_VERSIONED = b"dltensor", b"dltensor_versioned"
USED_LEGACY, USED_VERSIONED = b"used_dltensor", b"used_dltensor_versioned"
_CNAME = {n: _immortal_cstring(n) for n in (NAME_LEGACY, NAME_VERSIONED, USED_LEGACY, USED_VERSIONED)}


def is_capsule(x) -> bool:
    return type(x).__name__ == "PyCapsule" and type(x).__module__ == "builtins"


# ---------------------------------------------------------------------- export
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# address of a managed struct we exported -> what must live until its deleter runs
_EXPORTS: dict[int, tuple] = {}


def _release_export(addr) -> None:
    # dict.pop is atomic; what it drops is dropped outside any lock, because dropping an owner can
    # run another deleter (an nbx tensor that views memory exported by nbx)
    item = _EXPORTS.pop(addr, None)
    del item


@_DELETER
def _deleter(managed, _pop=_EXPORTS.pop):
    """The `deleter` of every struct nbx exports: drops the struct and the owner of the memory.
    (`_pop` is bound here so that a consumer freeing at interpreter exit finds it.)"""
    if managed:
        item = _pop(managed, None)
        del item


_DELETER_ADDR = ctypes.cast(_deleter, ctypes.c_void_p).value

# Capsules nbx exported and nobody consumed yet (see _sweep): a strong reference each.
_PENDING: list = []
_PENDING_LOCK = threading.Lock()


def _refs(items: list, i: int) -> int:
    return sys.getrefcount(items[i])


# what _refs reads for an object only a list refers to (2 on CPython 3.11: the list's reference and
# getrefcount's argument; measured, because newer interpreters may borrow the argument)
_ALONE = _refs([object()], 0)


def _sweep() -> None:
    """Free what unconsumed capsules held once nothing but this list refers to them.

    Capsules get no destructor: a destructor written in Python (a ctypes callback) breaks the
    exception in flight when a C consumer drops the capsule on its error path (numpy refusing a
    bfloat16 capsule: PyErr_Set..., then Py_DECREF(capsule)) - ctypes runs the callback through a
    call that turns any pending exception into a SystemError. So nbx keeps every capsule it hands
    out and looks at them on each DLPack call: one renamed "used_dltensor[_versioned]" belongs to
    its consumer (who calls the deleter); one still unconsumed that only this list refers to was
    abandoned, and its export is freed here. Memory of an abandoned capsule thus lives until the next
    DLPack call of this process (or `live_exports()`)."""
    dropped = []
    with _PENDING_LOCK:
        keep = []
        for i in range(len(_PENDING)):
            cap_addr = id(_PENDING[i])
            for name in (NAME_VERSIONED, NAME_LEGACY):
                if _PyCapsule_IsValid(cap_addr, _CNAME[name]):
                    if _refs(_PENDING, i) <= _ALONE:
                        dropped.append(_PyCapsule_GetPointer(cap_addr, _CNAME[name]))
                    else:
                        keep.append(_PENDING[i])
                    break
        _PENDING[:] = keep
    for managed in dropped:
        _release_export(managed)


def live_exports() -> int:
    """How many exported structs still wait for their deleter (tests check the lifetime with it)."""
    _sweep()
    return len(_EXPORTS)


def export(data: int, shape, strides, dt: DType | tuple[int, int, int], device: tuple[int, int],
           owner, *, versioned: bool, version: tuple[int, int] = VERSION, flags: int = 0,
           byte_offset: int = 0):
    """A new capsule describing memory at `data` (+ `byte_offset`) as `shape` x `strides` (in
    elements) of `dt` on `device`. `owner` is kept alive until the consumer calls the deleter (or the
    capsule dies unconsumed). `dt` may be a raw (code, bits, lanes) triple (tests use it to build
    capsules nbx refuses)."""
    code, bits, lanes = dl_dtype(dt) if isinstance(dt, DType) else dt
    n = len(shape)
    shape_arr = (ctypes.c_int64 * max(n, 1))(*shape)
    strides_arr = (ctypes.c_int64 * max(n, 1))(*strides) if strides is not None else None
    if versioned:
        m = DLManagedTensorVersioned()
        m.version = DLPackVersion(*version)
        m.flags = flags
    else:
        m = DLManagedTensor()
    t = m.dl_tensor
    t.data = data or None
    t.device = DLDevice(int(device[0]), int(device[1]))
    t.ndim = n
    t.dtype = DLDataType(code, bits, lanes)
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = (ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64)) if strides_arr is not None
                 else ctypes.POINTER(ctypes.c_int64)())
    t.byte_offset = byte_offset
    m.manager_ctx = None
    m.deleter = _DELETER_ADDR
    addr = ctypes.addressof(m)
    _sweep()
    _EXPORTS[addr] = (m, shape_arr, strides_arr, owner)
    try:
        capsule = _PyCapsule_New(addr, _CNAME[NAME_VERSIONED if versioned else NAME_LEGACY], None)
    except BaseException:
        _release_export(addr)
        raise
    with _PENDING_LOCK:
        _PENDING.append(capsule)
    return capsule


# ---------------------------------------------------------------------- consume
class ConsumeError(Exception):
    """A capsule nbx cannot view; `kind` says which check failed ("capsule", "used", "version",
    "dtype", "lanes", "strides", "align", "device"). Raised before the capsule is renamed: the producer still
    owns it and its destructor frees it."""

    def __init__(self, kind: str, msg: str, device: tuple[int, int] | None = None):
        super().__init__(msg)
        self.kind, self.device = kind, device


@dataclass
class Imported:
    data: int                      # address of element 0: DLTensor.data + byte_offset
    shape: tuple[int, ...]
    strides: tuple[int, ...]       # in elements, >= 0
    dtype: DType
    device: tuple[int, int]
    flags: int
    version: tuple[int, int] | None     # None: a legacy capsule
    release: Callable[[], None]    # calls the producer's deleter, once; idempotent

    @property
    def nbytes(self) -> int:
        """Bytes from element 0 to the end of the last element (0 when there are no elements)."""
        if math.prod(self.shape) == 0:
            return 0
        return (sum((s - 1) * st for s, st in zip(self.shape, self.strides)) + 1) * self.dtype.itemsize

    @property
    def read_only(self) -> bool:
        return bool(self.flags & FLAG_READ_ONLY)


_CALL_DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


class _Release:
    """Calls a producer's deleter once (the consumer's half of the contract)."""
    __slots__ = ("_fn", "_managed", "_lock")

    def __init__(self, deleter: int | None, managed: int):
        self._fn = _CALL_DELETER(deleter) if deleter else None
        self._managed = managed
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            fn, self._fn = self._fn, None
        if fn is not None:
            fn(self._managed)


def capsule_name(capsule) -> str:
    try:
        name = _PyCapsule_GetName(capsule)
    except Exception:   # noqa: BLE001 (an invalid capsule)
        return "?"
    return "NULL" if name is None else name.decode(errors="replace")


def consume(capsule, device_ok: Callable[[tuple[int, int]], bool]) -> Imported:
    """Take ownership of a DLPack capsule and describe its memory. Raises ConsumeError (leaving the
    capsule unconsumed) when nbx cannot view it: among other checks, `device_ok(device)` must hold
    for its (device type, device id)."""
    _sweep()
    cap_addr = id(capsule)
    if _PyCapsule_IsValid(cap_addr, _CNAME[NAME_VERSIONED]):
        versioned = True
    elif _PyCapsule_IsValid(cap_addr, _CNAME[NAME_LEGACY]):
        versioned = False
    else:
        name = capsule_name(capsule)
        if name in (USED_LEGACY.decode(), USED_VERSIONED.decode()):
            raise ConsumeError("used", f"the DLPack capsule was already consumed (its name is {name!r}); "
                                       "a capsule can be consumed once: call __dlpack__() again for a new one")
        raise ConsumeError("capsule", f"a capsule named {name!r} is not a DLPack capsule "
                                      "('dltensor' or 'dltensor_versioned')")
    name = NAME_VERSIONED if versioned else NAME_LEGACY
    managed = _PyCapsule_GetPointer(cap_addr, _CNAME[name])
    if versioned:
        m = DLManagedTensorVersioned.from_address(managed)
        version = (int(m.version.major), int(m.version.minor))
        if version[0] != 1:
            raise ConsumeError("version", f"the capsule is DLPack {version[0]}.{version[1]}; nbx reads "
                                          f"DLPack 1.x (and legacy capsules)")
        flags = int(m.flags)
    else:
        m = DLManagedTensor.from_address(managed)
        version, flags = None, 0
    t = m.dl_tensor
    ndim = int(t.ndim)
    device = (int(t.device.device_type), int(t.device.device_id))
    if not device_ok(device):
        raise ConsumeError("device", f"its memory is on {describe_device(device)}", device)
    code, bits, lanes = int(t.dtype.code), int(t.dtype.bits), int(t.dtype.lanes)
    if lanes != 1:
        raise ConsumeError("lanes", f"its dtype ({describe_dtype(code, bits, lanes)}) has {lanes} lanes; "
                                    "nbx views only lanes == 1")
    dt = _BY_CODE.get((code, bits))
    if dt is None:
        raise ConsumeError("dtype", f"its dtype ({describe_dtype(code, bits, lanes)}) is not one nbx "
                                    f"supports; allowed: {', '.join(DTYPES)}")
    if ndim < 0:
        raise ConsumeError("capsule", f"its ndim is {ndim}")
    shape = tuple(int(t.shape[i]) for i in range(ndim))
    if any(s < 0 for s in shape):
        raise ConsumeError("capsule", f"its shape {shape} has a negative size")
    if ndim and t.strides:
        strides = tuple(int(t.strides[i]) for i in range(ndim))
    else:   # NULL strides: compact row-major
        strides, acc = [], 1
        for s in reversed(shape):
            strides.append(acc)
            acc *= max(s, 1)
        strides = tuple(reversed(strides))
    if math.prod(shape) and any(st < 0 for s, st in zip(shape, strides) if s > 1):
        raise ConsumeError("strides", f"its strides {strides} (in elements) have a negative entry; nbx "
                                      "views need strides >= 0")
    # a size-1 (or size-0) dim's stride does not address anything: make it harmless
    strides = tuple(st if s > 1 else max(st, 0) for s, st in zip(shape, strides))
    data = (t.data or 0) + int(t.byte_offset)
    if math.prod(shape) and data % dt.itemsize:
        raise ConsumeError("align", f"its data address {data:#x} is not a multiple of its itemsize "
                                    f"({dt.itemsize} bytes)")
    deleter = m.deleter
    if _PyCapsule_SetName(capsule, _CNAME[USED_VERSIONED if versioned else USED_LEGACY]) != 0:
        raise ConsumeError("capsule", "the capsule could not be renamed")
    return Imported(data, shape, strides, dt, device, flags, version, _Release(deleter, managed))
