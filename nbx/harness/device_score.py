"""Scoring on the device: a device oracle's float64 value and bound decide the correctly rounded
result of each element, and the figures of a measurement are reduced there.

For each element x with result `got` (float32, float16 or bfloat16), the oracle (oracles/device)
gives v with |v - f(x)| <= E |v|. [v - E|v|, v + E|v|] either rounds to one value of the format,
which is then the correctly rounded result, or holds a rounding boundary: the element is undecided
and goes back to the host, where mpmath decides it (measure.score). Decided elements are scored on
the device as measure.score scores them on the host: the special-value classes of ulp.py, the ulp
error |got - v| / ulp(v) (v's own error adds at most E 2^p ulp: 2^-24 for float32 at E = 2^-48),
misrounded where got is not the correctly rounded value. Per tile of BLOCK elements the kernel
stores its counts, sums, maximum and where the maximum is, and a histogram over measurement.HIST_EDGES;
undecided and failing elements are appended to an index list (one atomic add per tile). Nothing else
per element comes back.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from .. import dtype as D
from ..kernels import launch
from ..kernels.math import load_as
from ..tensor import Tensor, empty
from .measurement import HIST_EDGES

# (precision p, emin, emax) of the formats decided here
FORMATS = {"float32": (24, -126, 127), "float16": (11, -14, 15), "bfloat16": (8, -126, 127)}
N_BINS = tl.constexpr(len(HIST_EDGES) - 1)
HIST_LO = tl.constexpr(tuple(HIST_EDGES[:-1]))
HIST_HI = tl.constexpr(tuple(HIST_EDGES[1:]))
BLOCK = 1024 if launch.backend.IS_CUDA else 1 << 16


@triton.jit
def _pow2(q):
    """2^q as float64 for integer q in [-1022, 1023], from its bits."""
    return ((q + 1023).to(tl.int64) << 52).to(tl.float64, bitcast=True)


@triton.jit
def _exponent(a, EMIN: tl.constexpr, EMAX: tl.constexpr):
    """max(floor(log2 a), EMIN), at most EMAX + 1, for a >= 0 finite (float64), from its bits."""
    e = (a.to(tl.int64, bitcast=True) >> 52) - 1023
    return tl.minimum(tl.maximum(e, EMIN), EMAX + 1)


@triton.jit
def round_to(v, P: tl.constexpr, EMIN: tl.constexpr, EMAX: tl.constexpr):
    """v (float64) rounded to nearest even in the format (P, EMIN, EMAX), as a float64: subnormals,
    overflow to inf and signed zeros included; NaN stays NaN. v / ulp is exact (a power of two) and
    rint rounds it to an integer once."""
    a = tl.abs(v)
    q = _exponent(a, EMIN, EMAX) - (P - 1)
    m = libdevice.rint(a * _pow2(-q))
    r = m * _pow2(q)
    r = tl.where(r >= 2.0 ** (EMAX + 1), float("inf"), r)
    r = tl.where(a == float("inf"), a, r)
    r = tl.where(v < 0, r * -1.0, tl.where(v == 0, v, r))
    return tl.where(v != v, v, r)


@triton.jit
def _score_tile(v, exact, got, valid, base, stats, fstats, hist, index, n_index, cap,
                E: tl.constexpr, EXACT: tl.constexpr, P: tl.constexpr,
                EMIN: tl.constexpr, EMAX: tl.constexpr, ZERO_SIGN: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    due = round_to(v, P, EMIN, EMAX)
    if EXACT:
        decided = valid
    else:
        # exact: elements whose value the oracle knows to be exact (its EXACT_AT); a tie there is a tie
        w = tl.abs(v) * E
        decided = valid & ((round_to(v - w, P, EMIN, EMAX) == round_to(v + w, P, EMIN, EMAX)) |
                           (v != v) | (tl.abs(v) == float("inf")) | exact)
    g_nan = got != got
    v_nan = v != v
    nan_mismatch = g_nan != v_nan
    inf_due = tl.abs(due) == float("inf")
    g_inf = tl.abs(got) == float("inf")
    inf_mismatch = ~g_nan & ~v_nan & ((inf_due & (got != due)) | (~inf_due & g_inf))
    special = nan_mismatch | inf_mismatch
    if ZERO_SIGN:
        gs = got.to(tl.int64, bitcast=True) < 0
        ds = due.to(tl.int64, bitcast=True) < 0
        special = special | ((got == 0) & (due == 0) & (gs != ds))
    special = special & decided
    misrounded = decided & ~special & (got != due) & ~(g_nan & v_nan)
    a = tl.abs(v)
    ulp = _pow2(_exponent(a, EMIN, EMAX) - (P - 1))
    # as ulp.ulp_error: 0 where both are NaN or got is the infinity due; every decided element
    # without a special mismatch counts in the figures
    both_finite = ~g_nan & ~g_inf & ~v_nan & (a < float("inf"))
    finite = decided & ~special
    err = tl.where(finite & both_finite, tl.abs(got - v) / ulp, 0.0)
    tl.store(stats + pid * 6 + 0, tl.sum(decided.to(tl.int64)))
    tl.store(stats + pid * 6 + 1, tl.sum(misrounded.to(tl.int64)))
    tl.store(stats + pid * 6 + 2, tl.sum(special.to(tl.int64)))
    tl.store(stats + pid * 6 + 3, tl.sum((valid & ~decided).to(tl.int64)))
    tl.store(stats + pid * 6 + 4, tl.sum(finite.to(tl.int64)))
    best = tl.max(err)
    where = tl.min(tl.where(err == best, base, 2 ** 62))
    tl.store(stats + pid * 6 + 5, where)
    tl.store(fstats + pid * 2 + 0, tl.sum(err))
    tl.store(fstats + pid * 2 + 1, best)
    for b in tl.static_range(N_BINS):
        lo = HIST_LO[b]
        hi = HIST_HI[b]
        tl.store(hist + pid * N_BINS + b, tl.sum((finite & (err >= lo) & (err < hi)).to(tl.int64)))
    # undecided and failing elements: 2 position + (1 if undecided), appended after one atomic add
    # per tile
    keep = valid & (~decided | misrounded | special)
    k = tl.sum(keep.to(tl.int32))
    if k > 0:
        start = tl.atomic_add(n_index, k)
        slot = start + tl.cumsum(keep.to(tl.int32), axis=0) - 1
        tl.store(index + slot, base * 2 + (~decided).to(tl.int64), mask=keep & (slot < cap))


@triton.jit
def _param(p):
    """A float64 parameter from its int64 bit pattern (Triton passes a Python float as a float32)."""
    return tl.cast(p, tl.int64).to(tl.float64, bitcast=True)


@triton.jit
def score_kernel(a_ptr, b_ptr, c_ptr, got_ptr, n, p0, p1, stats, fstats, hist, index, n_index, cap,
                 ORACLE: tl.constexpr, EXACT_AT: tl.constexpr, N_IN: tl.constexpr, E: tl.constexpr,
                 EXACT: tl.constexpr, P: tl.constexpr, EMIN: tl.constexpr, EMAX: tl.constexpr,
                 ZERO_SIGN: tl.constexpr, CT: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    base = pid * BLOCK + tl.arange(0, BLOCK)
    valid = base < n
    a = load_as(tl.load(a_ptr + base, mask=valid, other=0), CT).to(tl.float64)
    got = load_as(tl.load(got_ptr + base, mask=valid, other=0), CT).to(tl.float64)
    exact = valid & False
    if N_IN == 1:
        v = ORACLE(a, _param(p0), _param(p1))
    elif N_IN == 2:
        b = load_as(tl.load(b_ptr + base, mask=valid, other=0), CT).to(tl.float64)
        v = ORACLE(a, b, _param(p0), _param(p1))
        if EXACT_AT is not None:
            exact = EXACT_AT(a, b, _param(p0), _param(p1))
    else:
        b = load_as(tl.load(b_ptr + base, mask=valid, other=0), CT).to(tl.float64)
        c = load_as(tl.load(c_ptr + base, mask=valid, other=0), CT).to(tl.float64)
        v = ORACLE(a, b, c, _param(p0), _param(p1))
        if EXACT_AT is not None:
            exact = EXACT_AT(a, b, c, _param(p0), _param(p1))
    _score_tile(v, exact, got, valid, base, stats, fstats, hist, index, n_index, cap, E, EXACT, P, EMIN, EMAX,
                ZERO_SIGN, BLOCK)


@dataclass
class DeviceScore:
    """The figures of the decided elements, and the positions the host must look at."""
    n: int = 0
    decided: int = 0
    misrounded: int = 0
    specials: int = 0
    undecided: int = 0
    err_count: int = 0
    err_sum: float = 0.0
    err_max: float = 0.0
    argmax: int = -1
    hist: np.ndarray = field(default_factory=lambda: np.zeros(N_BINS.value, np.int64))
    undecided_at: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    failing_at: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))   # decided, misrounded or special
    index_overflow: int = 0                                                         # positions not listed

    def merge(self, other: "DeviceScore", offset: int = 0) -> None:
        if other.err_max > self.err_max or self.argmax < 0:
            self.err_max, self.argmax = other.err_max, other.argmax + offset
        for name in ("n", "decided", "misrounded", "specials", "undecided", "err_count", "index_overflow"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.err_sum += other.err_sum
        self.hist = self.hist + other.hist
        self.undecided_at = np.concatenate([self.undecided_at, other.undecided_at + offset])
        self.failing_at = np.concatenate([self.failing_at, other.failing_at + offset])


def score(oracle, operands: list[Tensor], got: Tensor, params=(0.0, 0.0), *, zero_sign: bool = True,
          cap: int = 1 << 20) -> DeviceScore:
    """Score `got` = op(*operands) (one, two or three operands, contiguous, of one size and one dtype
    of FORMATS) against a device oracle of that arity."""
    name = got.dtype.name
    if name not in FORMATS or any(x.dtype is not got.dtype for x in operands):
        raise ValueError(f"device_score.score: {oracle.name}: operands and result must share a dtype of "
                         f"{', '.join(FORMATS)}; got {[x.dtype.name for x in operands]} and {name}")
    if not 1 <= len(operands) <= 3 or any(not x.is_contiguous() or x.numel() != got.numel() for x in operands) \
            or not got.is_contiguous():
        raise ValueError(f"device_score.score: {oracle.name}: one to three contiguous operands of the result's size")
    if len(operands) != oracle.arity:
        raise ValueError(f"device_score.score: {oracle.name} takes {oracle.arity} operands, got {len(operands)}")
    p, emin, emax = FORMATS[name]
    n = got.numel()
    tiles = max(1, triton.cdiv(n, BLOCK))
    stats = empty((tiles, 6), dtype="int64")
    fstats = empty((tiles, 2), dtype="float64")
    hist = empty((tiles, N_BINS.value), dtype="int64")
    index = empty(max(1, cap), dtype="int64")
    counter = empty(1, dtype="int32")
    counter._storage.write(0, np.zeros(1, np.int32))
    p0, p1 = (int(np.float64(v).view(np.int64)) for v in (list(params) + [0.0, 0.0])[:2])
    with np.errstate(all="ignore"):
        # the interval's ends are rounded to float64 too: one more float64 ulp of room
        score_kernel[(tiles,)](operands[0], operands[min(1, len(operands) - 1)], operands[-1], got, n, p0, p1, stats, fstats, hist, index, counter, cap,
                               ORACLE=oracle.fn, EXACT_AT=oracle.exact_at, N_IN=len(operands),
                               E=oracle.bound + 2.0 ** -52,
                               EXACT=oracle.k == 0, P=p, EMIN=emin, EMAX=emax, ZERO_SIGN=zero_sign,
                               CT=D.float32.tl, BLOCK=BLOCK, **launch.kernel_options())
    s = stats.numpy()
    f = fstats.numpy()
    k = int(counter.numpy()[0])
    listed = np.sort(index.numpy()[:min(k, cap)])
    best = int(np.argmax(f[:, 1]))
    return DeviceScore(n=n, decided=int(s[:, 0].sum()), misrounded=int(s[:, 1].sum()), specials=int(s[:, 2].sum()),
                       undecided=int(s[:, 3].sum()), err_count=int(s[:, 4].sum()), err_sum=float(f[:, 0].sum()),
                       err_max=float(f[best, 1]), argmax=int(s[best, 5]) if f[best, 1] > 0 else -1,
                       hist=hist.numpy().sum(axis=0), undecided_at=listed[listed % 2 == 1] // 2,
                       failing_at=listed[listed % 2 == 0] // 2, index_overflow=max(0, k - cap))


def score_unary(oracle, x: Tensor, got: Tensor, params=(0.0, 0.0), *, zero_sign: bool = True,
                cap: int = 1 << 20) -> DeviceScore:
    """score() of a unary op."""
    return score(oracle, [x], got, params, zero_sign=zero_sign, cap=cap)


@triton.jit
def _evaluate_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, p0, p1, ORACLE: tl.constexpr, N_IN: tl.constexpr,
                     BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=0.0)
    if N_IN == 1:
        v = ORACLE(x, _param(p0), _param(p1))
    elif N_IN == 2:
        v = ORACLE(x, tl.load(y_ptr + i, mask=m, other=0.0), _param(p0), _param(p1))
    else:
        v = ORACLE(x, tl.load(y_ptr + i, mask=m, other=0.0), tl.load(z_ptr + i, mask=m, other=0.0),
                   _param(p0), _param(p1))
    tl.store(out_ptr + i, v, mask=m)


def evaluate(oracle, x: np.ndarray, params=(0.0, 0.0), y: np.ndarray | None = None,
             z: np.ndarray | None = None, *, fusion: bool = True) -> np.ndarray:
    """The oracle's float64 values (oracle.fn: a device or order oracle) at float64 inputs x, and y
    and z for a binary and a ternary one. fusion=False compiles without contraction (CUDA)."""
    from ..tensor import from_numpy
    xs = [np.ascontiguousarray(a, dtype=np.float64) for a in (x, y, z) if a is not None]
    n = xs[0].size
    out = empty(max(1, n), dtype="float64")
    p0, p1 = (int(np.float64(v).view(np.int64)) for v in (list(params) + [0.0, 0.0])[:2])
    args = [from_numpy(a if a.size else np.zeros(1)) for a in xs]
    args += [args[0]] * (3 - len(args))
    options = launch.kernel_options()
    if not fusion and options:
        options["enable_fp_fusion"] = False
    with np.errstate(all="ignore"):
        _evaluate_kernel[(max(1, triton.cdiv(n, BLOCK)),)](*args, out, n, p0, p1, ORACLE=oracle.fn, N_IN=len(xs),
                                                           BLOCK=BLOCK, **options)
    return out.numpy()[:n]


@triton.jit
def _round_kernel(x_ptr, out_ptr, n, P: tl.constexpr, EMIN: tl.constexpr, EMAX: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, round_to(tl.load(x_ptr + i, mask=m, other=0.0), P, EMIN, EMAX), mask=m)


def round_array(x: np.ndarray, dtype: str) -> np.ndarray:
    """round_to over a float64 array on the device, as float64 (for the tests)."""
    from ..tensor import from_numpy
    p, emin, emax = FORMATS[dtype]
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = empty(x.size, dtype="float64")
    with np.errstate(all="ignore"):
        _round_kernel[(triton.cdiv(x.size, BLOCK),)](from_numpy(x), out, x.size, P=p, EMIN=emin, EMAX=emax,
                                                      BLOCK=BLOCK, **launch.kernel_options())
    return out.numpy()


@triton.jit
def _bit_patterns_kernel(out_ptr, start, n, UT: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    bits = (start + i).to(UT)
    tl.store(out_ptr + i, bits.to(out_ptr.dtype.element_ty, bitcast=True), mask=m)


def bit_patterns(dtype: str, start: int, n: int) -> Tensor:
    """The n values of `dtype` whose bit patterns are start, start + 1, ... (made on the device)."""
    d = D.DTYPES[dtype]
    out = empty(n, dtype=dtype)
    ut = {2: tl.uint16, 4: tl.uint32}[d.itemsize]
    _bit_patterns_kernel[(max(1, triton.cdiv(n, BLOCK)),)](out, start, n, UT=ut, BLOCK=BLOCK,
                                                           **launch.kernel_options())
    return out


@triton.jit
def _pair_patterns_kernel(a_ptr, b_ptr, start, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    k = start + i
    tl.store(a_ptr + i, (k >> 16).to(tl.uint16).to(a_ptr.dtype.element_ty, bitcast=True), mask=m)
    tl.store(b_ptr + i, (k & 0xFFFF).to(tl.uint16).to(b_ptr.dtype.element_ty, bitcast=True), mask=m)


def pair_patterns(dtype: str, start: int, n: int) -> tuple[Tensor, Tensor]:
    """Operand pairs of a 16-bit dtype for the 32-bit indices start .. start + n - 1: the first
    operand's bits are the index's high 16, the second's its low 16 (every pair over 0 .. 2^32)."""
    if D.DTYPES[dtype].itemsize != 2:
        raise ValueError(f"pair_patterns: {dtype} is not a 16-bit dtype")
    a, b = empty(n, dtype=dtype), empty(n, dtype=dtype)
    _pair_patterns_kernel[(max(1, triton.cdiv(n, BLOCK)),)](a, b, start, n, BLOCK=BLOCK, **launch.kernel_options())
    return a, b
