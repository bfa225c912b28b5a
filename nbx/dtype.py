"""The dtype table: every dtype nbx knows, as data.

A `DType` is what a Tensor carries and what a Triton kernel sees: `str(dtype)` is the name Triton
canonicalises ("float32" -> fp32, "bool" -> u1, "bfloat16" -> bf16), so a Tensor can be passed to a
kernel directly. Host arrays of bfloat16 use `ml_dtypes.bfloat16`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import triton.language as tl


@dataclass(frozen=True, eq=False)
class DType:
    name: str
    itemsize: int
    kind: str            # "b" bool, "u" unsigned, "i" signed, "f" float
    np: np.dtype
    tl: object           # triton.language dtype
    uint_np: np.dtype    # same-width unsigned numpy dtype (bit patterns)

    def __str__(self) -> str:       # Triton reads str(tensor.dtype)
        return self.name

    def __repr__(self) -> str:
        return f"nbx.{self.name}"

    def __reduce__(self):           # pickles (hypothesis, multiprocessing) as the table entry
        return (by_name, (self.name,))

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:       # integer, not bool
        return self.kind in "ui"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def bits(self) -> int:
        return 8 * self.itemsize

    @functools.cached_property           # read per element by the case generators and scorers
    def min(self):
        """Smallest finite value (Python int for integers, float for floats, False for bool)."""
        if self.is_bool:
            return False
        info = np.iinfo(self.np) if self.is_int else ml_dtypes.finfo(self.np)
        return int(info.min) if self.is_int else float(info.min)

    @functools.cached_property
    def max(self):
        if self.is_bool:
            return True
        info = np.iinfo(self.np) if self.is_int else ml_dtypes.finfo(self.np)
        return int(info.max) if self.is_int else float(info.max)


def _d(name, itemsize, kind, npd, tld, unp):
    return DType(name, itemsize, kind, np.dtype(npd), tld, np.dtype(unp))


bool_ = _d("bool", 1, "b", np.bool_, tl.int1, np.uint8)
uint8 = _d("uint8", 1, "u", np.uint8, tl.uint8, np.uint8)
int8 = _d("int8", 1, "i", np.int8, tl.int8, np.uint8)
int16 = _d("int16", 2, "i", np.int16, tl.int16, np.uint16)
int32 = _d("int32", 4, "i", np.int32, tl.int32, np.uint32)
int64 = _d("int64", 8, "i", np.int64, tl.int64, np.uint64)
float16 = _d("float16", 2, "f", np.float16, tl.float16, np.uint16)
bfloat16 = _d("bfloat16", 2, "f", ml_dtypes.bfloat16, tl.bfloat16, np.uint16)
float32 = _d("float32", 4, "f", np.float32, tl.float32, np.uint32)
float64 = _d("float64", 8, "f", np.float64, tl.float64, np.uint64)

DTYPES: dict[str, DType] = {d.name: d for d in
                            (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)}
ALL = tuple(DTYPES.values())
FLOATS = (float16, bfloat16, float32, float64)
INTS = (uint8, int8, int16, int32, int64)
INTEGRAL = (bool_,) + INTS           # integer and bool
NUMERIC = INTS + FLOATS
DEFAULT_FLOAT = float32
DEFAULT_INT = int64                   # what a Python int becomes on its own


def by_name(name: str) -> DType:
    return DTYPES[name]


def as_dtype(x, *, op: str = "nbx", arg: str = "dtype") -> DType:
    """Accept a DType, its name, or a numpy dtype; a clear TypeError otherwise."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str) and x in DTYPES:
        return DTYPES[x]
    try:
        npd = np.dtype(x)
    except TypeError:
        npd = None
    if npd is not None:
        for d in ALL:
            if d.np == npd:
                return d
    raise TypeError(f"{op}: {arg}={x!r} is not a dtype nbx supports; allowed: {', '.join(DTYPES)}")


def from_numpy_dtype(npd: np.dtype, *, op: str = "from_numpy") -> DType:
    return as_dtype(npd, op=op, arg="array.dtype")
