"""The scoring rule's figures for a truth known exactly (a bank value, a documented evaluation
order), as numpy arrays: thin views of scoring/rule.py, which defines them (docs/PRECISION.md,
"Ulp error"). Nothing here decides a class or an ulp itself.
"""
from __future__ import annotations

import numpy as np

from nbx.oracles.formats import FORMATS, FloatFormat, get_format

from nbx.harness.scoring import rule

__all__ = ["ulp_of", "ulp_error", "overflow_edge", "classify_specials", "correctly_rounded"]


def ulp_of(y, fmt: FloatFormat | str) -> np.ndarray:
    """ulp(y) in fmt for every element of y (any float array, taken exactly as float64); y == 0
    gives the smallest subnormal, non-finite y NaN."""
    return rule.ulp_array(y, fmt)


def _exact(got, expected, fmt, zero_sign: bool) -> rule.Scored:
    return rule.classify_arrays(got, expected, fmt, zero_sign=zero_sign, exact=True)


def ulp_error(got, expected, fmt: FloatFormat | str) -> np.ndarray:
    """err(got, truth) per element (rule.py): expected is the truth as float64, or for fmt float64
    a double-double (hi, lo). inf for a NaN or inf mismatch; 0 for a zero of the wrong sign."""
    return _exact(got, expected, fmt, False).err


def overflow_edge(got, truth, fmt: FloatFormat | str) -> np.ndarray:
    """Per element: a truth in [max, 2^(emax+1)) and got max or inf of its sign (rule.py)."""
    return (_exact(got, truth, fmt, False).why & rule.WHY_EDGE) != 0


def classify_specials(got, expected, fmt: FloatFormat | str, *, zero_sign_matters: bool = True) -> dict:
    """Boolean arrays of the special-value mismatches of rule.py: nan_mismatch, inf_mismatch,
    zero_sign_mismatch, special (any of them), and overflow_edge (a rounding, not special)."""
    why = _exact(got, expected, fmt, zero_sign_matters).why
    flags = {name: (why & bit) != 0 for name, bit in (("nan_mismatch", rule.WHY_NAN), ("inf_mismatch", rule.WHY_INF),
                                                       ("zero_sign_mismatch", rule.WHY_ZERO_SIGN),
                                                       ("overflow_edge", rule.WHY_EDGE))}
    flags["special"] = flags["nan_mismatch"] | flags["inf_mismatch"] | flags["zero_sign_mismatch"]
    return flags


def _nan_mask_from_bits(b: np.ndarray, f: FloatFormat) -> np.ndarray:
    """NaN patterns: exponent field all ones and a nonzero significand, i.e. |bits| > inf's bits."""
    magnitude = b & f.uint_dtype.type((1 << (f.bits - 1)) - 1)
    return magnitude > f.uint_dtype.type(((1 << f.exponent_bits) - 1) << f.mantissa_bits)


_FORMAT_OF_UINT = {np.dtype(np.uint32): "float32", np.dtype(np.uint64): "float64"}


def correctly_rounded(got_bits, expected_bits, fmt: FloatFormat | str | None = None) -> np.ndarray:
    """Bit-for-bit equality per element, every NaN pattern equal to every other.

    got_bits / expected_bits: unsigned arrays of the format's width, or float arrays of the format
    (compared through their bits). fmt is needed only for uint16 bits (float16 or bfloat16?); for
    uint32/uint64 it defaults to float32/float64."""
    g, e = np.asarray(got_bits), np.asarray(expected_bits)
    if fmt is None:
        if g.dtype.kind == "f" or g.dtype.name == "bfloat16":
            fmt = g.dtype.name if g.dtype.name in FORMATS else None
        else:
            fmt = _FORMAT_OF_UINT.get(g.dtype)
        if fmt is None:
            raise ValueError(f"correctly_rounded: fmt is needed for got_bits of dtype {g.dtype} (allowed without fmt: "
                             "uint32, uint64, float arrays)")
    f = get_format(fmt)
    g, e = (a.view(f.uint_dtype) if a.dtype == f.np_dtype else a for a in (g, e))
    for name, a in (("got_bits", g), ("expected_bits", e)):
        if a.dtype != f.uint_dtype:
            raise TypeError(f"correctly_rounded: {name} has dtype {a.dtype}, expected {f.uint_dtype} or {f.np_dtype} "
                            f"for fmt={f.name!r}")
    return (g == e) | (_nan_mask_from_bits(g, f) & _nan_mask_from_bits(e, f))
