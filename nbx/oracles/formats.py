"""The four binary floating-point formats nbx measures, as data.

Each format is IEEE 754 binary interchange (bfloat16 is the IEEE layout with float32's exponent
field and 8 bits of precision): a sign bit, an exponent field of ``bits - precision`` bits biased by
``emax``, and ``precision - 1`` stored significand bits. The helpers return exact Python floats
(every extreme of all four formats is a float64 value) and move between values and bit patterns
without any rounding (``view``, never ``astype``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

__all__ = [
    "FloatFormat",
    "FORMATS",
    "get_format",
    "max_finite",
    "min_subnormal",
    "min_normal",
    "inf_bits",
    "quiet_nan_bits",
    "to_bits",
    "from_bits",
]


@dataclass(frozen=True)
class FloatFormat:
    """A binary format: precision p (significand bits, hidden bit included), normal exponents
    emin..emax, total width in bits, and the numpy dtypes that hold its values and bit patterns."""

    name: str
    precision: int
    emin: int
    emax: int
    bits: int
    np_dtype: np.dtype
    uint_dtype: np.dtype

    @property
    def mantissa_bits(self) -> int:
        """Stored significand bits (the hidden bit is implicit)."""
        return self.precision - 1

    @property
    def exponent_bits(self) -> int:
        return self.bits - self.precision

    @property
    def bias(self) -> int:
        # IEEE bias is emax; emin = 1 - bias.
        return self.emax


FORMATS: dict[str, FloatFormat] = {
    f.name: f
    for f in (
        FloatFormat("float16", 11, -14, 15, 16, np.dtype(np.float16), np.dtype(np.uint16)),
        FloatFormat("bfloat16", 8, -126, 127, 16, np.dtype(ml_dtypes.bfloat16), np.dtype(np.uint16)),
        FloatFormat("float32", 24, -126, 127, 32, np.dtype(np.float32), np.dtype(np.uint32)),
        FloatFormat("float64", 53, -1022, 1023, 64, np.dtype(np.float64), np.dtype(np.uint64)),
    )
}


def get_format(fmt: FloatFormat | str, *, argument: str = "fmt") -> FloatFormat:
    """Return the FloatFormat for a FloatFormat or one of the names in FORMATS."""
    if isinstance(fmt, FloatFormat):
        return fmt
    if isinstance(fmt, str) and fmt in FORMATS:
        return FORMATS[fmt]
    raise ValueError(f"{argument}={fmt!r} is not a float format; allowed: {sorted(FORMATS)}")


def max_finite(fmt: FloatFormat | str) -> float:
    """(2 - 2^(1-p)) * 2^emax, exactly."""
    f = get_format(fmt)
    return math.ldexp(float(2**f.precision - 1), f.emax - f.precision + 1)


def min_normal(fmt: FloatFormat | str) -> float:
    """2^emin."""
    return math.ldexp(1.0, get_format(fmt).emin)


def min_subnormal(fmt: FloatFormat | str) -> float:
    """2^(emin - p + 1): one unit in the last place of the subnormal range."""
    f = get_format(fmt)
    return math.ldexp(1.0, f.emin - f.precision + 1)


def inf_bits(fmt: FloatFormat | str) -> int:
    """Bit pattern of +inf: exponent field all ones, significand zero."""
    f = get_format(fmt)
    return ((1 << f.exponent_bits) - 1) << f.mantissa_bits


def quiet_nan_bits(fmt: FloatFormat | str) -> int:
    """The canonical quiet NaN: +inf's pattern with the top stored significand bit set."""
    f = get_format(fmt)
    return inf_bits(f) | (1 << (f.mantissa_bits - 1))


def to_bits(array, fmt: FloatFormat | str) -> np.ndarray:
    """Bit patterns of an array whose dtype is fmt's, as fmt.uint_dtype.

    The dtype must already be fmt's: converting here would round, and the caller must choose how
    (nbx.harness.scoring.rule.round_to_format rounds float64 -> bfloat16 once)."""
    f = get_format(fmt)
    a = np.asarray(array)
    if a.dtype != f.np_dtype:
        raise TypeError(f"to_bits: array has dtype {a.dtype}, expected {f.np_dtype} for fmt={f.name!r}")
    return np.asarray(a, order="C").view(f.uint_dtype)


def from_bits(bits, fmt: FloatFormat | str) -> np.ndarray:
    """Values of fmt from bit patterns (an unsigned array of fmt's width, or Python ints)."""
    f = get_format(fmt)
    # Python ints go through object arrays: np.asarray([2**63, 1]) would silently make float64.
    b = bits if isinstance(bits, (np.ndarray, np.generic)) else np.array(bits, dtype=object)
    b = np.asarray(b)
    if b.dtype == object or (b.dtype.kind in "iu" and b.dtype != f.uint_dtype):
        # Python ints (or another integer dtype): range-check before narrowing.
        if b.size and (int(b.min()) < 0 or int(b.max()) >> f.bits):
            raise ValueError(f"from_bits: bits out of range for the {f.bits}-bit format {f.name!r}")
        b = b.astype(f.uint_dtype)
    elif b.dtype != f.uint_dtype:
        raise TypeError(f"from_bits: bits has dtype {b.dtype}, expected {f.uint_dtype} for fmt={f.name!r}")
    return np.asarray(b, order="C").view(f.np_dtype)
