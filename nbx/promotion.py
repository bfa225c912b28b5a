"""PyTorch's type promotion, as data.

Two parts, as in ATen (c10/core/ScalarType.h `promoteTypes`, ATen/native/TypeProperties.cpp):
1. `PROMOTE`: the lattice of pairwise promotion, written out as ATen's lookup table.
2. The category rule of `result_type`: operands fall in three priority groups (dimensioned tensors,
   0-dim tensors, Python scalars); a lower group changes the result only when it is of a higher
   category (bool < integer < float). So `int32 tensor + 2**40` stays int32, `int64 tensor + 2.5`
   becomes the default float, and a 0-dim float64 tensor added to a float16 tensor gives float16.

Beside them, `scalar_to_numpy`: a Python scalar's value in an op's dtype, or an error naming the op
and argument where it does not fit.
"""
from __future__ import annotations

import numpy as np

from .dtype import DEFAULT_FLOAT, DEFAULT_INT, DTYPES, DType, bool_

_ORDER = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
_ABBREV = {"b1": "bool", "u1": "uint8", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
           "f2": "float16", "bf": "bfloat16", "f4": "float32", "f8": "float64"}
# Rows and columns in _ORDER. uint8 with int8 needs int16 (neither holds the other's range);
# float16 with bfloat16 needs float32 (neither holds the other's precision and range).
_TABLE = """
b1 u1 i1 i2 i4 i8 f2 bf f4 f8
u1 u1 i2 i2 i4 i8 f2 bf f4 f8
i1 i2 i1 i2 i4 i8 f2 bf f4 f8
i2 i2 i2 i2 i4 i8 f2 bf f4 f8
i4 i4 i4 i4 i4 i8 f2 bf f4 f8
i8 i8 i8 i8 i8 i8 f2 bf f4 f8
f2 f2 f2 f2 f2 f2 f2 f4 f4 f8
bf bf bf bf bf bf f4 bf f4 f8
f4 f4 f4 f4 f4 f4 f4 f4 f4 f8
f8 f8 f8 f8 f8 f8 f8 f8 f8 f8
"""
PROMOTE: dict[tuple[str, str], str] = {
    (_ORDER[i], _ORDER[j]): _ABBREV[cell]
    for i, row in enumerate(_TABLE.split("\n")[1:-1])
    for j, cell in enumerate(row.split())
}


def promote_types(a: DType, b: DType) -> DType:
    return DTYPES[PROMOTE[a.name, b.name]]


def category(d: DType) -> int:
    return 0 if d.is_bool else (1 if d.is_int else 2)


def scalar_dtype(x) -> DType:
    """The dtype a Python scalar stands for in promotion (ATen's wrapped numbers)."""
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return DEFAULT_INT
    if isinstance(x, float):
        return DEFAULT_FLOAT
    raise TypeError(f"not a Python scalar: {type(x).__name__}")


def is_scalar(x) -> bool:
    return isinstance(x, (bool, int, float))


def scalar_to_numpy(value, dt: DType, *, op: str, arg: str):
    """A Python scalar as a numpy scalar of `dt`; an integer that does not fit is an error."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"nbx.{op}: {arg} must be a Python bool, int or float, got {type(value).__name__}")
    if dt.is_bool:
        return np.bool_(bool(value))
    if dt.is_int:
        if isinstance(value, float):
            if not value.is_integer():
                raise TypeError(f"nbx.{op}: {arg}={value!r} is a float but the op computes in {dt.name}")
            value = int(value)
        if not dt.min <= int(value) <= dt.max:
            raise ValueError(f"nbx.{op}: {arg}={value} does not fit in {dt.name} "
                             f"(allowed {dt.min}..{dt.max})")
        return dt.np.type(int(value))
    try:
        f = float(value)
    except OverflowError:
        # a Python int beyond float64's range (|x| >= 2**1024): ATen refuses it too
        # ("Overflow when unpacking long"); inf would be a silently different value
        raise OverflowError(f"nbx.{op}: {arg} is an int of {abs(value).bit_length()} bits, too large "
                            f"for {dt.name}; allowed: |{arg}| < 2**1024 (it is converted through "
                            "float64)") from None
    return np.array(f, dtype=np.float64).astype(dt.np)   # RNE, overflow to inf


def _combine(higher, lower):
    # ATen's combine_categories: `higher` is the group of higher priority (may be None).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_float:
        return higher
    if higher.is_bool or lower.is_float:
        return promote_types(higher, lower)
    return higher if category(higher) >= category(lower) else lower


def _group(dtypes):
    out = None
    for d in dtypes:
        out = d if out is None else promote_types(out, d)
    return out


def result_type(*operands) -> DType:
    """The dtype PyTorch's `torch.result_type` gives for these operands.

    Operands are nbx Tensors (anything with an nbx `.dtype` and `.ndim`) or Python bool/int/float.
    """
    dims, zeros, scalars = [], [], []
    for x in operands:
        if is_scalar(x):
            scalars.append(scalar_dtype(x))
        elif isinstance(getattr(x, "dtype", None), DType) and hasattr(x, "ndim"):
            # a DType, not any `.dtype`: numpy arrays and scalars would otherwise pass as tensors
            (dims if x.ndim > 0 else zeros).append(x.dtype)
        else:
            raise TypeError(f"result_type: operand of type {type(x).__name__} is neither an nbx Tensor "
                            "nor a Python bool/int/float")
    if not (dims or zeros or scalars):
        raise TypeError("result_type: needs at least one operand")
    return _combine(_group(dims), _combine(_group(zeros), _group(scalars)))
