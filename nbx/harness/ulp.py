"""Ulp error and special-value mismatches, as docs/PRECISION.md ("Ulp error") defines them.

    ulp(y) = 2^(max(floor(log2|y|), emin) - p + 1)   (y != 0);   ulp(0) = the smallest subnormal
    err(r, y) = |r - y| / ulp(y)

Arithmetic is float64. For float16/bfloat16/float32 results that is exact enough: |r - y| rounds
once (relative 2^-53) and dividing by a power of two is exact, so err is off by < 2^-52 relative.
For float64 results a float64 truth is itself rounded (err known only to +-0.5), so pass the truth
as a double-double (hi, lo) pair, or use ulp_error_exact with mpmath values for the few cases near
a decision.

Special values are kept out of the ulp figures: classify_specials counts them, ulp_error gives them
err = inf, and ulp_summary leaves non-finite errors out. At the overflow threshold inf is a number:
for a truth in [max, 2^(emax+1)) of a format narrower than float64, a result of inf or max is a
rounding to one of the two neighbours (overflow_edge), measured with inf taken as 2^(emax+1).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from oracles.formats import FORMATS, FloatFormat, from_bits, get_format, max_finite, min_normal, min_subnormal
from oracles.rounding import round_float64_array_to, round_mpf

__all__ = [
    "ulp_of",
    "ulp_error",
    "ulp_error_exact",
    "overflow_edge",
    "classify_specials",
    "correctly_rounded",
    "ulp_summary",
    "int_wrong",
]

_FLOAT64_MAX = float(np.finfo(np.float64).max)


def _as_float64(a, argument: str) -> np.ndarray:
    """Widen float values (of any of the four formats) to float64, which is exact."""
    arr = np.asarray(a)
    if arr.dtype.kind != "f" and arr.dtype.name != "bfloat16":
        raise TypeError(f"{argument} must be a float array, got dtype {arr.dtype}")
    with np.errstate(invalid="ignore"):  # ml_dtypes flags NaN in a bfloat16 -> float64 cast
        return arr.astype(np.float64)


def _floor_log2(y: np.ndarray) -> np.ndarray:
    """floor(log2|y|) for finite nonzero y, exactly: frexp gives |y| = m * 2^e with m in
    [0.5, 1), so the answer is e - 1. np.log2 is not used: it rounds log2 of values just below a
    power of two up to the integer (log2(1 - 2^-53) is 1 - 1.6e-16 -> 1.0 in float64)."""
    return np.frexp(y)[1].astype(np.int64) - 1


def ulp_of(y, fmt: FloatFormat | str) -> np.ndarray:
    """ulp(y) in fmt for every element of y (any float array, taken exactly as float64).

    y == 0 gives the smallest subnormal; non-finite y gives NaN (no ulp is defined there)."""
    f = get_format(fmt)
    y = _as_float64(y, "ulp_of: y")
    finite = np.isfinite(y)
    exponent = np.maximum(_floor_log2(np.where(finite, y, 1.0)), f.emin) - f.precision + 1
    out = np.ldexp(1.0, exponent)
    out = np.where(y == 0, min_subnormal(f), out)
    return np.where(finite, out, np.nan)


def _truth(expected, f: FloatFormat):
    """(hi, lo, due): the truth as hi + lo (lo = 0 for a plain float64 truth), and due, the
    truth correctly rounded to fmt (as float64), which decides where inf and zero signs are due."""
    if isinstance(expected, tuple):
        if f.name != "float64" or len(expected) != 2:
            raise ValueError(
                "expected as a tuple must be a double-double (hi, lo) pair and is only for fmt=float64; "
                "a float64 truth is precise enough for the narrower formats"
            )
        hi = _as_float64(expected[0], "expected[0] (hi)")
        lo = _as_float64(expected[1], "expected[1] (lo)")
        hi, lo = np.broadcast_arrays(hi, lo)
        lo = np.where(np.isfinite(hi), lo, 0.0)
        with np.errstate(over="ignore"):
            # IEEE addition rounds the exact hi + lo once: this is the truth rounded to float64,
            # inf included when hi + lo reaches max + half an ulp. (lo == 0 keeps hi as is: -0 + 0
            # would be +0.)
            due = np.where(lo == 0, hi, hi + lo)
        return hi, lo, due
    hi = _as_float64(expected, "expected")
    return hi, np.zeros_like(hi), round_float64_array_to(f, hi).astype(np.float64)


def overflow_edge(got, truth, fmt: FloatFormat | str) -> np.ndarray:
    """Per element: the truth (float64, finite) lies in [max, 2^(emax+1)) in magnitude and got is
    max or inf of its sign. IEEE rounds such a value to one of those two neighbours (inf from max +
    half an ulp on, as if inf were 2^(emax+1)), so either result is a rounding, right or wrong, and
    its error is measured with inf taken as 2^(emax+1): at most one ulp, never a special mismatch.
    All False for float64, whose truth is not held beyond float64's range."""
    f = get_format(fmt)
    g = _as_float64(got, "got")
    y = _as_float64(truth, "truth")
    g, y = np.broadcast_arrays(g, y)
    if f.name == "float64":
        return np.zeros(g.shape, dtype=bool)
    top, maxf = math.ldexp(1.0, f.emax + 1), max_finite(f)
    a = np.abs(y)
    return (a >= maxf) & (a < top) & (np.signbit(g) == np.signbit(y)) & ((np.abs(g) == maxf) | np.isinf(g))


def _edge_value(g: np.ndarray, edge: np.ndarray, f: FloatFormat) -> np.ndarray:
    """g with each inf at an overflow edge replaced by +-2^(emax+1)."""
    if f.name == "float64":
        return g
    return np.where(edge & np.isinf(g), np.copysign(math.ldexp(1.0, f.emax + 1), g), g)


def classify_specials(got, expected, fmt: FloatFormat | str, *, zero_sign_matters: bool = True) -> dict:
    """Boolean arrays of special-value mismatches between got (values of fmt, or float64) and
    the truth expected (float64, or a (hi, lo) pair for float64).

    - nan_mismatch: exactly one of got and expected is NaN.
    - inf_mismatch: the truth rounds to an infinity in fmt (it may be a finite float64 beyond fmt's
      range) and got is not that infinity, or got is infinite where a finite value was due; but
      not at an overflow edge (overflow_edge: inf or max for a truth in [max, 2^(emax+1)), a
      rounding error of at most one ulp).
    - zero_sign_mismatch: got and the rounded truth are both zero with different signs (all False
      unless zero_sign_matters).
    - special: any of the above.
    - overflow_edge: the elements measured as roundings at the overflow edge (not special).
    """
    f = get_format(fmt)
    g = _as_float64(got, "got")
    hi, _, due = _truth(expected, f)
    g, hi, due = np.broadcast_arrays(g, hi, due)
    g_nan, y_nan = np.isnan(g), np.isnan(hi)
    nan_mismatch = g_nan != y_nan
    neither_nan = ~g_nan & ~y_nan
    inf_due = np.isinf(due)
    edge = overflow_edge(g, np.where(np.isfinite(hi), hi, 0.0), f)
    inf_mismatch = neither_nan & ((inf_due & (g != due)) | (~inf_due & np.isinf(g))) & ~edge
    if zero_sign_matters:
        zero_sign_mismatch = (g == 0) & (due == 0) & (np.signbit(g) != np.signbit(due))
    else:
        zero_sign_mismatch = np.zeros(g.shape, dtype=bool)
    return {
        "nan_mismatch": nan_mismatch,
        "inf_mismatch": inf_mismatch,
        "overflow_edge": edge,
        "zero_sign_mismatch": zero_sign_mismatch,
        "special": nan_mismatch | inf_mismatch | zero_sign_mismatch,
    }


def _ulp_of_sum(hi: np.ndarray, lo: np.ndarray, f: FloatFormat) -> np.ndarray:
    """ulp(hi + lo) for a double-double: ulp(hi), except when hi is a power of two and lo pulls
    the sum below it, where floor(log2) drops by one (e.g. 1 - 2^-60 has ulp 2^-53, not 2^-52)."""
    ulp = ulp_of(hi, f)
    mantissa = np.frexp(hi)[0]
    below = (np.abs(mantissa) == 0.5) & (lo != 0) & (np.signbit(lo) != np.signbit(hi))
    # At or below 2^emin the ulp is the subnormal quantum on both sides of hi: no drop.
    ulp = np.where(below & (np.abs(hi) > min_normal(f)), ulp / 2, ulp)
    # hi == 0 means the truth is lo alone (a valid, if unusual, pair).
    return np.where((hi == 0) & (lo != 0), ulp_of(lo, f), ulp)


def ulp_error(got, expected, fmt: FloatFormat | str) -> np.ndarray:
    """err(got, truth) per element, as float64.

    got: values of fmt (or float64). expected: the truth as float64, or for fmt=float64 a
    double-double pair (hi, lo) with truth = hi + lo exactly and |lo| <= ulp(hi) / 2.
    - Both NaN, or got equal to the infinity the truth rounds to: 0; but at an overflow edge
      (overflow_edge) inf is measured as 2^(emax+1).
    - A NaN or inf mismatch (see classify_specials): inf. A zero of the wrong sign: 0 here (it is
      counted by classify_specials only).
    - Opposite-sign extremes do not overflow: float64 holds |got - y| for the narrow formats, and for
      float64 results the difference is taken on halves (exact at that size).
    - An error beyond float64's range (possible only for float64 results, e.g. got = 1 against a
      truth of 0, whose ulp is 2^-1074) saturates at the largest float64 so that inf stays reserved
      for special mismatches.
    """
    f = get_format(fmt)
    g = _as_float64(got, "got")
    hi, lo, due = _truth(expected, f)
    g, hi, lo, due = np.broadcast_arrays(g, hi, lo, due)
    flags = classify_specials(g, (hi, lo) if f.name == "float64" else hi, f, zero_sign_matters=False)

    g = _edge_value(g, flags["overflow_edge"], f)
    finite = np.isfinite(g) & np.isfinite(hi)
    gs, hs, ls = (np.where(finite, a, 0.0) for a in (g, hi, lo))
    with np.errstate(over="ignore", invalid="ignore"):
        # (g - hi) is exact when g and hi are within a factor 2 (Sterbenz); subtracting lo then
        # rounds once, relative 2^-53 of the error itself.
        diff = np.abs((gs - hs) - ls)
        halves = np.abs((gs * 0.5 - hs * 0.5) - ls * 0.5)
    diff_over = ~np.isfinite(diff)
    ulp = _ulp_of_sum(hs, ls, f)
    with np.errstate(over="ignore"):
        err = np.where(diff_over, (halves / ulp) * 2.0, diff / ulp)
    err = np.minimum(err, _FLOAT64_MAX)

    err = np.where(finite, err, 0.0)  # both-NaN and matching infinities
    return np.where(flags["nan_mismatch"] | flags["inf_mismatch"], np.inf, err)


def ulp_error_exact(got, expected_mpf, fmt: FloatFormat | str = "float64") -> np.ndarray:
    """err(got, y) with each y given exactly as an mpmath mpf, in exact rational arithmetic
    rounded once to float64: for the few float64 cases whose float64-based err lies near a
    decision. Specials follow ulp_error: 0 for both NaN or got equal to the infinity that y rounds
    to, inf for a NaN or inf mismatch, inf measured as 2^(emax+1) at an overflow edge."""
    f = get_format(fmt)
    g = _as_float64(got, "got")
    ys = list(expected_mpf)
    if len(ys) != g.size:
        raise ValueError(f"ulp_error_exact: got has {g.size} elements, expected_mpf has {len(ys)}")
    out = np.empty(g.size, dtype=np.float64)
    for i, (r, y) in enumerate(zip(g.ravel().tolist(), ys)):
        y = y if isinstance(y, mpmath.mpf) else mpmath.mpf(y)
        due = float(from_bits(round_mpf(y, f), f))
        if f.name != "float64" and mpmath.isfinite(y) and overflow_edge(r, float(y), f):
            # inf as 2^(emax+1), and either neighbour measured below as a number
            r = math.copysign(math.ldexp(1.0, f.emax + 1), r) if math.isinf(r) else r
            due = r
        if mpmath.isnan(y) or np.isnan(r):
            out[i] = 0.0 if (mpmath.isnan(y) and np.isnan(r)) else np.inf
        elif np.isinf(due) or np.isinf(r):
            out[i] = 0.0 if r == due else np.inf
        else:
            sign, man, exp, bc = y._mpf_
            if man == 0:
                exact, ulp = Fraction(0), Fraction(min_subnormal(f))
            else:
                exact = Fraction(-man if sign else man) * Fraction(2) ** exp
                ulp = Fraction(2) ** (max(exp + bc - 1, f.emin) - f.precision + 1)  # exp+bc-1 = floor(log2|y|)
            err = abs(Fraction(r) - exact) / ulp
            out[i] = _FLOAT64_MAX if err >= _FLOAT64_MAX else float(err)
    return out.reshape(g.shape)


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
            raise ValueError(f"correctly_rounded: fmt is needed for got_bits of dtype {g.dtype} (allowed without fmt: uint32, uint64, float arrays)")
    f = get_format(fmt)
    g, e = (a.view(f.uint_dtype) if a.dtype == f.np_dtype else a for a in (g, e))
    for name, a in (("got_bits", g), ("expected_bits", e)):
        if a.dtype != f.uint_dtype:
            raise TypeError(f"correctly_rounded: {name} has dtype {a.dtype}, expected {f.uint_dtype} or {f.np_dtype} for fmt={f.name!r}")
    return (g == e) | (_nan_mask_from_bits(g, f) & _nan_mask_from_bits(e, f))


def ulp_summary(err, *, special=None) -> dict:
    """max, mean, 99.9th percentile (np.quantile, method="higher") and count of the ulp errors.

    Entries that are NaN or inf are left out: ulp_error makes exactly the NaN/inf mismatches inf,
    and classify_specials counts those separately. Pass special (a boolean array, e.g.
    classify_specials(...)["special"]) to also leave out the flagged entries with finite err (zero
    sign mismatches). "excluded" is how many were left out. With no entries left, max/mean/p999
    are NaN, never 0, so that a gate reading them cannot pass an empty measurement."""
    e = np.asarray(err, dtype=np.float64).ravel()
    keep = np.isfinite(e)
    if special is not None:
        s = np.asarray(special, dtype=bool).ravel()
        if s.shape != e.shape:
            raise ValueError(f"ulp_summary: special has {s.size} elements, err has {e.size}")
        keep &= ~s
    vals = e[keep]
    if vals.size == 0:
        return {"max": float("nan"), "mean": float("nan"), "p999": float("nan"), "count": 0, "excluded": int(e.size)}
    return {
        "max": float(vals.max()),
        "mean": float(vals.mean()),
        "p999": float(np.quantile(vals, 0.999, method="higher")),
        "count": int(vals.size),
        "excluded": int(e.size - vals.size),
    }


def int_wrong(got, expected) -> int:
    """How many integer results differ from the exact expected integers. Mixed dtypes (int64 vs
    uint64, or Python ints beyond 64 bits) compare as Python ints, so no value is wrapped or
    widened through float64."""
    g, e = np.asarray(got), np.asarray(expected)
    for name, a in (("got", g), ("expected", e)):
        if a.dtype.kind not in "iub" and a.dtype != object:
            raise TypeError(f"int_wrong: {name} must be an integer array, got dtype {a.dtype}")
    if g.shape != e.shape:
        raise ValueError(f"int_wrong: got has shape {g.shape}, expected has shape {e.shape}")
    if g.dtype != e.dtype or g.dtype == object:
        g, e = g.astype(object), e.astype(object)
    return int(np.count_nonzero(g != e))
