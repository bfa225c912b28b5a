"""The scoring rule, written once: how a float64 value rounds to a format, and the class and ulp
error of a result against its truth. Triton code, so one source runs on the GPU (the device
scorer, inside its tiles) and under the interpreter (the host scorer, over numpy arrays through
`classify_arrays`); docs/PRECISION.md ("Ulp error", "Classes of a result") states it in prose.

The truth of an element is v + lo (float64 v; lo = 0 but for float64 results, whose truth the host
holds as a double-double) known to within w = E |v|. The element is

- undecided when [v + lo - w, v + lo + w] rounds two ways in the format: the float64 truth cannot
  say which neighbour is correct, and the host's mpmath decides it (`nbx.harness.scoring.host`);
- a special mismatch when, decided, exactly one of got and the truth is NaN, or got is not the
  infinity the truth rounds to, or got is infinite where a finite value is due, or (where the op
  decides zero signs) got and the rounded truth are zeros of opposite sign; at the overflow edge
  (a truth in [max, 2^(emax+1)) of a format narrower than float64) inf and max are the two
  neighbours IEEE rounds to, so either is a rounding, measured with inf taken as 2^(emax+1);
- misrounded when, decided and not special, got is not the rounded truth (NaNs equal, and zeros
  of either sign equal: a zero sign is a special mismatch or does not matter);
- correctly rounded otherwise; exact when its error is 0.

err = |got - truth| / ulp(truth), ulp(y) = 2^(max(floor(log2|y|), emin) - p + 1) (the least
subnormal at 0), in float64: 0 where both are NaN or got is the infinity due, at most 0.5 where got
is the rounded truth (the figure's excess would be the truth's error), inf for a NaN or inf
mismatch, saturated at the largest float64 (a float64 result against a subnormal truth) so that
inf stays reserved for mismatches. Every step is an IEEE operation that rounds once or is exact:
the kernels that run it are compiled without contraction (`options()`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from nbx.oracles.formats import get_format

from nbx.kernels import launch
from nbx.tensor import empty, from_numpy

# The classes of a result, as `classify_arrays` returns them per element.
CORRECT, MISROUNDED, SPECIAL, UNDECIDED = 0, 1, 2, 3
CLASS_NAMES = ("correctly rounded", "misrounded", "special mismatch", "undecided")
# Why a decided element is what it is, as bits: which special mismatch, and the overflow edge.
WHY_NAN, WHY_INF, WHY_ZERO_SIGN, WHY_EDGE = 1, 2, 4, 8
_WHY = tl.constexpr((WHY_NAN, WHY_INF, WHY_ZERO_SIGN, WHY_EDGE))     # the same, as Triton code reads them

# The host's float64 oracles (numpy) state no bound of their own; their truth is taken as good to
# 2^-(p+19) relative, between 2^-20 and 2^-19 ulp of the format (1e-6 ulp: 2^-19.93), and an
# element within that of a rounding boundary is decided by mpmath. For float64 results the host's
# truth is mpmath's at 113 bits, held as a double-double (2^-106).
HOST_GUARD_BITS = 19
BLOCK = 1024 if launch.backend.IS_CUDA else 1 << 16


def host_bound(fmt) -> float:
    """E of the host's float64 truth for results of fmt: 2^-(p + 19)."""
    return 2.0 ** -(get_format(fmt).precision + HOST_GUARD_BITS)


def options() -> dict:
    """Launch options of every kernel that runs the rule or a float64 oracle: nbx's, and no
    contraction on CUDA (the interpreter's numpy never contracts). A contracted a*b + c is not the
    two roundings the rule and the oracles' bounds assume."""
    return {**launch.kernel_options(), "enable_fp_fusion": False} if launch.backend.IS_CUDA else {}


@triton.jit
def pow2(q):
    """2^q as float64 for integer q in [-1074, 1023], from its bits (below 2^-1022 as a normal
    power times 2^-200, exact)."""
    q = q.to(tl.int64)
    normal = ((tl.maximum(q, -1022) + 1023) << 52).to(tl.float64, bitcast=True)
    tiny = ((tl.maximum(q + 200, -1022) + 1023) << 52).to(tl.float64, bitcast=True) * 6.223015277861142e-61
    return tl.where(q < -1022, tiny, normal)


@triton.jit
def exponent(a, EMIN: tl.constexpr, EMAX: tl.constexpr):
    """max(floor(log2 a), EMIN), at most EMAX + 1, for a >= 0 (float64), from its bits."""
    e = (a.to(tl.int64, bitcast=True) >> 52) - 1023
    return tl.minimum(tl.maximum(e, EMIN), EMAX + 1)


@triton.jit
def round_to(v, P: tl.constexpr, EMIN: tl.constexpr, EMAX: tl.constexpr):
    """v (float64) rounded to nearest even in the format (P, EMIN, EMAX), as a float64: subnormals,
    overflow to inf and signed zeros included; NaN stays NaN. v / ulp is exact (a power of two) and
    rint rounds it to an integer once. P = 53 is float64 itself."""
    if P == 53:
        r = v
    else:
        a = tl.abs(v)
        q = exponent(a, EMIN, EMAX) - (P - 1)
        m = libdevice.rint(a * pow2(-q))
        r = m * pow2(q)
        r = tl.where(r >= 2.0 ** (EMAX + 1), float("inf"), r)
        r = tl.where(a == float("inf"), a, r)
        r = tl.where(v < 0, r * -1.0, tl.where(v == 0, v, r))
        r = tl.where(v != v, v, r)
    return r


@triton.jit
def ulp_at(v, lo, P: tl.constexpr, EMIN: tl.constexpr, EMAX: tl.constexpr):
    """ulp(v + lo) in the format: ulp(v), halved where v is a power of two (above 2^EMIN) and lo
    pulls the sum below it (1 - 2^-60 has ulp 2^-53, not 2^-52); ulp(lo) where v is 0."""
    a = tl.abs(v)
    q = exponent(a, EMIN, EMAX) - (P - 1)
    u = pow2(q)
    bits = a.to(tl.int64, bitcast=True)
    power = (bits & 0xFFFFFFFFFFFFF) == 0
    below = power & (lo != 0) & ((lo < 0) != (v < 0)) & (a > 2.0 ** EMIN)
    u = tl.where(below, u * 0.5, u)
    return tl.where((v == 0) & (lo != 0), pow2(exponent(tl.abs(lo), EMIN, EMAX) - (P - 1)), u)


@triton.jit
def classify(got, v, lo, w, exact, P: tl.constexpr, EMIN: tl.constexpr, EMAX: tl.constexpr,
             ZERO_SIGN: tl.constexpr):
    """Per element: (due, decided, special, misrounded, err, why) of a result got (float64) against
    the truth v + lo known to within w (>= 0), as the module docstring states. exact: elements whose
    truth is known exactly (decided whatever w says; a tie there is a tie). why: the bits of WHY
    (which special mismatch, and the overflow edge)."""
    if P == 53:
        # hi + lo rounds once in IEEE addition: the truth rounded to float64 (lo == 0 keeps a -0)
        due = tl.where(lo == 0, v, v + lo)
        decided = ((v + (lo - w)) == (v + (lo + w))) | exact
    else:
        due = round_to(v, P, EMIN, EMAX)
        decided = (round_to(v - w, P, EMIN, EMAX) == round_to(v + w, P, EMIN, EMAX)) | exact
    decided = decided | (v != v) | (tl.abs(v) == float("inf"))
    g_nan = got != got
    v_nan = v != v
    nan_mismatch = g_nan != v_nan
    inf_due = tl.abs(due) == float("inf")
    g_inf = tl.abs(got) == float("inf")
    a = tl.abs(v)
    if EMAX < 1023:
        # the overflow edge: for v in [max, 2^(EMAX+1)) inf and max are the neighbours IEEE rounds
        # to; either is a rounding, measured with inf as 2^(EMAX+1)
        top = 2.0 ** (EMAX + 1)
        maxf = top - 2.0 ** (EMAX + 1 - P)
        edge = (a >= maxf) & (a < top) & ((got < 0) == (v < 0)) & (g_inf | (tl.abs(got) == maxf))
        gv = tl.where(edge & g_inf, tl.where(got < 0, -top, top), got)
    else:
        edge = got < float("-inf")
        gv = got
    inf_mismatch = ~g_nan & ~v_nan & ((inf_due & (got != due)) | (~inf_due & g_inf)) & ~edge
    if ZERO_SIGN:
        gs = got.to(tl.int64, bitcast=True) < 0
        ds = due.to(tl.int64, bitcast=True) < 0
        zero_sign = (got == 0) & (due == 0) & (gs != ds)
    else:
        zero_sign = got < float("-inf")
    special = (nan_mismatch | inf_mismatch | zero_sign) & decided
    misrounded = decided & ~special & (got != due) & ~(g_nan & v_nan)
    both_finite = ~g_nan & (tl.abs(gv) < float("inf")) & ~v_nan & (a < float("inf"))
    gs0 = tl.where(both_finite, gv, 0.0)
    vs0 = tl.where(both_finite, v, 0.0)
    ls0 = tl.where(both_finite, lo, 0.0)
    # (g - v) is exact where g and v are within a factor 2 (Sterbenz); subtracting lo rounds once.
    # Only a float64 result can overflow the difference: then it is taken on halves, exact there.
    diff = tl.abs((gs0 - vs0) - ls0)
    halves = tl.abs((gs0 * 0.5 - vs0 * 0.5) - ls0 * 0.5)
    u = ulp_at(vs0, ls0, P, EMIN, EMAX)
    err = tl.where(diff == float("inf"), (halves / u) * 2.0, diff / u)
    err = tl.minimum(err, 1.7976931348623157e308)
    err = tl.where(both_finite, err, 0.0)
    # a decided result equal to the rounded truth is within half an ulp of the exact value: what the
    # float64 figure shows above 0.5 is the truth's own error (up to w/ulp: 2^-29 ulp for a device
    # oracle with k = 1 at a float32 tie, ~2^-19 for gelu's k = 1024), not the result's
    err = tl.where(decided & ~special & (got == due), tl.minimum(err, 0.5), err)
    err = tl.where((nan_mismatch | inf_mismatch) & decided, float("inf"), err)
    why = (nan_mismatch.to(tl.int8) * _WHY[0] + inf_mismatch.to(tl.int8) * _WHY[1] +
           zero_sign.to(tl.int8) * _WHY[2] + edge.to(tl.int8) * _WHY[3]) * decided.to(tl.int8)
    return due, decided, special, misrounded, err, why


@triton.jit
def _classify_kernel(got_ptr, v_ptr, lo_ptr, exact_ptr, n, E, due_ptr, err_ptr, cls_ptr, why_ptr,
                     P: tl.constexpr, EMIN: tl.constexpr, EMAX: tl.constexpr, ZERO_SIGN: tl.constexpr,
                     BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    got = tl.load(got_ptr + i, mask=m, other=0.0)
    v = tl.load(v_ptr + i, mask=m, other=0.0)
    lo = tl.load(lo_ptr + i, mask=m, other=0.0)
    exact = tl.load(exact_ptr + i, mask=m, other=0) != 0
    w = tl.abs(v + lo) * E
    due, decided, special, misrounded, err, why = classify(got, v, lo, w, exact, P, EMIN, EMAX, ZERO_SIGN)
    cls = tl.where(~decided, 3, tl.where(special, 2, tl.where(misrounded, 1, 0)))
    tl.store(why_ptr + i, why, mask=m)
    tl.store(due_ptr + i, due, mask=m)
    tl.store(err_ptr + i, err, mask=m)
    tl.store(cls_ptr + i, cls.to(tl.int8), mask=m)


class Scored(NamedTuple):
    """Per element of a batch: the class (CORRECT, MISROUNDED, SPECIAL, UNDECIDED), the ulp error,
    the truth rounded to the format (as float64) and why (WHY_* bits)."""
    cls: np.ndarray
    err: np.ndarray
    due: np.ndarray
    why: np.ndarray

    @property
    def special(self) -> np.ndarray:
        return self.cls == SPECIAL

    @property
    def undecided(self) -> np.ndarray:
        return self.cls == UNDECIDED


def _float64(a, argument: str) -> np.ndarray:
    """Values of any float format widened to float64 (exact)."""
    arr = np.asarray(a)
    if arr.dtype.kind != "f" and arr.dtype.name != "bfloat16":
        raise TypeError(f"{argument} must be a float array, got dtype {arr.dtype}")
    with np.errstate(invalid="ignore"):     # ml_dtypes flags NaN in a bfloat16 -> float64 cast
        return np.asarray(arr, dtype=np.float64)


def classify_arrays(got, truth, fmt, *, bound: float | None = None, zero_sign: bool = True,
                    exact=None) -> Scored:
    """The rule over arrays: got (values of fmt, or float64) against truth, a float64 array or,
    for fmt float64, a double-double (hi, lo); bound E (default: host_bound(fmt)); exact: where the
    truth is known exactly. One launch of the rule's kernel on nbx's backend (the GPU on cuda)."""
    f = get_format(fmt)
    if isinstance(truth, tuple):
        if f.name != "float64" or len(truth) != 2:
            raise ValueError("classify_arrays: truth as a tuple must be a double-double (hi, lo) pair, and only "
                             f"for fmt float64 (got fmt {f.name!r}); the narrower formats take a float64 truth")
        hi, lo = _float64(truth[0], "truth[0] (hi)"), _float64(truth[1], "truth[1] (lo)")
    else:
        hi = _float64(truth, "truth")
        lo = np.zeros_like(hi)
    g = _float64(got, "got")
    ex = np.zeros(1, np.int8) if exact is None else np.asarray(exact, dtype=np.int8)
    shape = np.broadcast_shapes(g.shape, hi.shape, lo.shape)
    g, hi, lo, ex = (np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1) for a in (g, hi, lo, ex))
    lo = np.where(np.isfinite(hi), lo, 0.0)
    n = g.size
    if n == 0:
        return Scored(np.zeros(shape, np.int8), np.zeros(shape), np.zeros(shape), np.zeros(shape, np.int8))
    due, err = empty(n, dtype="float64"), empty(n, dtype="float64")
    cls, why = empty(n, dtype="int8"), empty(n, dtype="int8")
    E = host_bound(f) if bound is None else float(bound)
    with np.errstate(all="ignore"):
        _classify_kernel[(triton.cdiv(n, BLOCK),)](from_numpy(g), from_numpy(hi), from_numpy(lo), from_numpy(ex), n,
                                                   E, due, err, cls, why, P=f.precision, EMIN=f.emin, EMAX=f.emax,
                                                   ZERO_SIGN=zero_sign, BLOCK=BLOCK, **options())
    return Scored(*(a.numpy().reshape(shape) for a in (cls, err, due, why)))


@triton.jit
def _ulp_kernel(x_ptr, out_ptr, n, P: tl.constexpr, EMIN: tl.constexpr, EMAX: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    y = tl.load(x_ptr + i, mask=m, other=0.0)
    u = ulp_at(y, y * 0.0, P, EMIN, EMAX)
    tl.store(out_ptr + i, tl.where(tl.abs(y) < float("inf"), u, float("nan")), mask=m)


@triton.jit
def _round_kernel(x_ptr, out_ptr, n, P: tl.constexpr, EMIN: tl.constexpr, EMAX: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, round_to(tl.load(x_ptr + i, mask=m, other=0.0), P, EMIN, EMAX), mask=m)


def _elementwise(kernel, x, fmt, argument: str) -> np.ndarray:
    f = get_format(fmt)
    a = _float64(x, argument)
    flat = np.ascontiguousarray(a).reshape(-1)
    if flat.size == 0:
        return a.copy()
    out = empty(flat.size, dtype="float64")
    with np.errstate(all="ignore"):
        kernel[(triton.cdiv(flat.size, BLOCK),)](from_numpy(flat), out, flat.size, P=f.precision, EMIN=f.emin,
                                                 EMAX=f.emax, BLOCK=BLOCK, **options())
    return out.numpy().reshape(a.shape)


def round_array(x, fmt) -> np.ndarray:
    """round_to over a float64 array (as float64), on nbx's backend."""
    return _elementwise(_round_kernel, x, fmt, "x")


def ulp_array(y, fmt) -> np.ndarray:
    """ulp(y) in fmt per element (y taken exactly as float64; NaN where y is not finite)."""
    return _elementwise(_ulp_kernel, y, fmt, "y")


def round_to_format(x, fmt) -> np.ndarray:
    """x (float64) rounded once to fmt, as an array of fmt's numpy dtype."""
    f = get_format(fmt)
    with np.errstate(all="ignore"):
        return round_array(x, f).astype(f.np_dtype)
