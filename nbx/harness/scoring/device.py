"""Scoring on the device: a device oracle's float64 value and bound decide the correctly rounded
result of each element, and the figures of a measurement are reduced there.

For each element x with result `got` (float32, float16 or bfloat16), the oracle (nbx/oracles/device)
gives v with |v - f(x)| <= E |v|. [v - E|v|, v + E|v|] either rounds to one value of the format,
which is then the correctly rounded result, or holds a rounding boundary: the element is undecided
and goes back to the host, where mpmath decides it (host.score). Decided elements are scored on
the device as host.score scores them on the host: the special-value classes of ulp.py, the ulp
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

from nbx.oracles.formats import get_format

from nbx.dtype import float32
from nbx.kernels import launch
from nbx.kernels.math import load_as
from nbx.tensor import Tensor, empty, from_numpy
from nbx.harness.records.measurement import HIST_EDGES
from nbx.harness.scoring.rule import classify, exponent, options as oracle_options, pow2

# the formats decided here
FORMATS = {name: get_format(name) for name in ("float32", "float16", "bfloat16")}
N_BINS = tl.constexpr(len(HIST_EDGES) - 1)
HIST_LO = tl.constexpr(tuple(HIST_EDGES[:-1]))
HIST_HI = tl.constexpr(tuple(HIST_EDGES[1:]))
BLOCK = 1024 if launch.backend.IS_CUDA else 1 << 16
# tiles one score program scores before it stores its figures: 2^16 elements a program on CUDA,
# so a chunk of 2^28 stores 4,096 rows (per tile, the rows' copy to the host and their sum took
# 0.78 s of the 1.0 s that all 2^32 float32 inputs of one op took on the H200)
TILES = 64 if launch.backend.IS_CUDA else 1
HIST_PAD = tl.constexpr(triton.next_power_of_2(len(HIST_EDGES) - 1))
ROW_FIELDS = 5      # DeviceScore.rows' columns


@triton.jit
def _decide_by_residual(v, lo, exact, P: tl.constexpr, EMIN: tl.constexpr, EMAX: tl.constexpr):
    """(v', exact'): where the oracle's residual lo is known (the exact value is v + lo), v is exact
    enough to decide: if v is no rounding boundary of the format, the exact value rounds as v does
    (a boundary is a float64, so it lies at least half a float64 ulp from v, farther than lo); if v
    is a midpoint and lo != 0, v moves one float64 ulp toward lo, off the midpoint and onto the exact
    value's side; a midpoint with lo == 0 is an exact tie."""
    known = lo == lo
    a = tl.abs(v)
    m = a * pow2(-(exponent(a, EMIN, EMAX) - (P - 1)))
    mid = (m - libdevice.floor(m) == 0.5) & (a < float("inf"))
    bits = v.to(tl.int64, bitcast=True)
    away = (lo > 0) == (v > 0)
    nudged = (bits + tl.where(away, 1, -1).to(tl.int64)).to(tl.float64, bitcast=True)
    return tl.where(known & mid & (lo != 0), nudged, v), exact | known


@triton.jit
def _append(keep, decided, special, base, index, n_index, cap):
    """Undecided and failing elements (keep) as 4 position + (2 if a special mismatch) + (1 if
    undecided), appended to index after one atomic add per tile."""
    k = tl.sum(keep.to(tl.int32))
    if k > 0:
        start = tl.atomic_add(n_index, k)
        slot = start + tl.cumsum(keep.to(tl.int32), axis=0) - 1
        tl.store(index + slot, base * 4 + special.to(tl.int64) * 2 + (~decided).to(tl.int64), mask=keep & (slot < cap))


@triton.jit
def _exact_tile(v, got, valid, base, index, n_index, cap, INT_RESULT: tl.constexpr, HIST_PAD: tl.constexpr,
                LIST: tl.constexpr):
    """_score_tile's figures for an exact result that is no format of FORMATS: bool and integer
    results (equal to v; an int64 result saturates at 2^63 - 1, which v states as 2^63) and float64
    ones (the same value, the same zero sign, or both NaN). A result that differs counts as
    misrounded (the host's `wrong`); there are no ulp figures."""
    if INT_RESULT:
        top = v >= 9223372036854775807.0
        due = tl.where(top, 9223372036854775807, tl.where(top | (v != v), 0.0, v).to(tl.int64))
        wrong = valid & (got.to(tl.int64) != due)
    else:
        g = got.to(tl.float64)
        same = ((g == v) & ((g.to(tl.int64, bitcast=True) < 0) == (v.to(tl.int64, bitcast=True) < 0))) | \
            ((g != g) & (v != v))
        wrong = valid & ~same
    if LIST == 2:
        _append(wrong, valid, valid & False, base, index, n_index, cap)
    zero = tl.sum(tl.zeros_like(base))
    return (tl.sum(valid.to(tl.int64)), tl.sum(wrong.to(tl.int64)), zero, zero, zero, zero.to(tl.float64),
            zero.to(tl.float64), zero + 2 ** 62, tl.zeros([HIST_PAD], tl.int64))


@triton.jit
def _score_tile(v, exact, got, valid, base, index, n_index, cap,
                E: tl.constexpr, EXACT: tl.constexpr, P: tl.constexpr,
                EMIN: tl.constexpr, EMAX: tl.constexpr, ZERO_SIGN: tl.constexpr, LIST: tl.constexpr):
    """One tile's figures: counts (decided, misrounded, special, undecided, finite: int64 scalars),
    the sum and the maximum of the ulp errors, the first position of that maximum, the histogram
    over HIST_EDGES (int64[HIST_PAD]); undecided and failing elements are appended to `index`."""
    # the rule (scoring/rule.py); an exact oracle (k = 0) decides every element
    w = tl.where(exact, 0.0, tl.abs(v) * E)
    due, decided, special, misrounded, err, why = classify(got, v, v * 0.0, w, exact | EXACT, P, EMIN, EMAX,
                                                         ZERO_SIGN)
    decided = decided & valid
    special = special & valid
    misrounded = misrounded & valid
    finite = decided & ~special
    err = tl.where(finite, err, 0.0)
    best = tl.max(err)
    where = tl.min(tl.where(err == best, base, 2 ** 62))
    bins = tl.arange(0, HIST_PAD)
    hist = tl.zeros([HIST_PAD], tl.int64)
    for b in tl.static_range(N_BINS):
        lo = HIST_LO[b]
        hi = HIST_HI[b]
        hist += tl.where(bins == b, tl.sum((finite & (err >= lo) & (err < hi)).to(tl.int64)), 0)
    # LIST: which positions go to the list besides the undecided: 2 every failing one, 1 the special
    # mismatches, 0 none
    if LIST == 2:
        _append(valid & (~decided | misrounded | special), decided, special, base, index, n_index, cap)
    elif LIST == 1:
        _append(valid & (~decided | special), decided, special, base, index, n_index, cap)
    else:
        _append(valid & ~decided, decided, special, base, index, n_index, cap)
    return (tl.sum(decided.to(tl.int64)), tl.sum(misrounded.to(tl.int64)), tl.sum(special.to(tl.int64)),
            tl.sum((valid & ~decided).to(tl.int64)), tl.sum(finite.to(tl.int64)), tl.sum(err), best, where, hist)


@triton.jit
def _param(p):
    """A float64 parameter from its int64 bit pattern (Triton passes a Python float as a float32)."""
    return tl.cast(p, tl.int64).to(tl.float64, bitcast=True)


@triton.jit
def _oracle_at(a_ptr, b_ptr, c_ptr, base, valid, p0, p1, ORACLE: tl.constexpr,
               EXACT_AT: tl.constexpr, RESIDUAL: tl.constexpr, N_IN: tl.constexpr, P: tl.constexpr,
               EMIN: tl.constexpr, EMAX: tl.constexpr, CT: tl.constexpr):
    """(v, exact) at positions base: the oracle's value and where it is known exact."""
    a = load_as(tl.load(a_ptr + base, mask=valid, other=0), CT).to(tl.float64)
    exact = valid & False
    if N_IN == 1:
        v = ORACLE(a, _param(p0), _param(p1))
        if EXACT_AT is not None:
            exact = EXACT_AT(a, _param(p0), _param(p1))
        if RESIDUAL is not None:
            v, exact = _decide_by_residual(v, RESIDUAL(a, _param(p0), _param(p1)), exact, P, EMIN, EMAX)
    elif N_IN == 2:
        b = load_as(tl.load(b_ptr + base, mask=valid, other=0), CT).to(tl.float64)
        v = ORACLE(a, b, _param(p0), _param(p1))
        if EXACT_AT is not None:
            exact = EXACT_AT(a, b, _param(p0), _param(p1))
        if RESIDUAL is not None:
            v, exact = _decide_by_residual(v, RESIDUAL(a, b, _param(p0), _param(p1)), exact, P, EMIN, EMAX)
    else:
        b = load_as(tl.load(b_ptr + base, mask=valid, other=0), CT).to(tl.float64)
        c = load_as(tl.load(c_ptr + base, mask=valid, other=0), CT).to(tl.float64)
        v = ORACLE(a, b, c, _param(p0), _param(p1))
        if EXACT_AT is not None:
            exact = EXACT_AT(a, b, c, _param(p0), _param(p1))
        if RESIDUAL is not None:
            v, exact = _decide_by_residual(v, RESIDUAL(a, b, c, _param(p0), _param(p1)), exact, P, EMIN, EMAX)
    return v, exact


@triton.jit
def score_kernel(a_ptr, b_ptr, c_ptr, got_ptr, n, p0, p1, stats, fstats, hist, index, n_index, cap,
                 ORACLE: tl.constexpr, EXACT_AT: tl.constexpr, RESIDUAL: tl.constexpr, N_IN: tl.constexpr,
                 E: tl.constexpr,
                 EXACT: tl.constexpr, P: tl.constexpr, EMIN: tl.constexpr, EMAX: tl.constexpr,
                 ZERO_SIGN: tl.constexpr, CT: tl.constexpr, RESULT: tl.constexpr, BLOCK: tl.constexpr,
                 TILES: tl.constexpr, LIST: tl.constexpr):
    """Program i scores tiles i*TILES .. (i+1)*TILES - 1 of BLOCK elements and stores its figures
    once: stats[i] = (decided, misrounded, special, undecided, finite, where the maximum is),
    fstats[i] = (sum, maximum) of the ulp errors, hist[i] the histogram. RESULT: 0 a result in the
    format (P, EMIN, EMAX), loaded as CT; 1 an exact bool or integer result; 2 an exact float64 one."""
    pid = tl.program_id(0).to(tl.int64)
    zero = tl.sum(tl.zeros([BLOCK], tl.int64))
    n_dec, n_mis, n_spec, n_und, n_fin = zero, zero, zero, zero, zero
    e_sum = zero.to(tl.float64)
    e_max = zero.to(tl.float64)
    at = zero + 2 ** 62
    h = tl.zeros([HIST_PAD], tl.int64)
    for t in range(TILES):
        base = (pid * TILES + t) * BLOCK + tl.arange(0, BLOCK)
        valid = base < n
        v, exact = _oracle_at(a_ptr, b_ptr, c_ptr, base, valid, p0, p1, ORACLE, EXACT_AT, RESIDUAL,
                              N_IN, P, EMIN, EMAX, CT)
        raw = tl.load(got_ptr + base, mask=valid, other=0)
        if RESULT == 0:
            d, m, s, u, f, es, best, where, th = _score_tile(v, exact, load_as(raw, CT).to(tl.float64), valid, base,
                                                             index, n_index, cap, E, EXACT, P, EMIN, EMAX, ZERO_SIGN,
                                                             LIST)
        else:
            d, m, s, u, f, es, best, where, th = _exact_tile(v, raw, valid, base, index, n_index, cap, RESULT == 1,
                                                             HIST_PAD, LIST)
        n_dec += d
        n_mis += m
        n_spec += s
        n_und += u
        n_fin += f
        e_sum += es
        # the first position of the program's maximum: a later tile takes over only when larger
        at = tl.where(best > e_max, where, at)
        e_max = tl.maximum(e_max, best)
        h += th
    tl.store(stats + pid * 6 + 0, n_dec)
    tl.store(stats + pid * 6 + 1, n_mis)
    tl.store(stats + pid * 6 + 2, n_spec)
    tl.store(stats + pid * 6 + 3, n_und)
    tl.store(stats + pid * 6 + 4, n_fin)
    tl.store(stats + pid * 6 + 5, at)
    tl.store(fstats + pid * 2 + 0, e_sum)
    tl.store(fstats + pid * 2 + 1, e_max)
    tl.store(hist + pid * HIST_PAD + tl.arange(0, HIST_PAD), h)


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
    # (all of them, or where too many for the list, those of a prefix: exhaustive._score)
    special_at: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))   # the special mismatches of those
    index_overflow: int = 0                                                         # positions not listed
    exact: bool = False             # a bool, integer or float64 result compared exactly: misrounded means wrong
    # per score program, in element order: (first element, decided, misrounded, special mismatches,
    # largest ulp error), so a sweep can tell where over its range the errors lie (regions.py)
    rows: np.ndarray = field(default_factory=lambda: np.zeros((0, ROW_FIELDS), np.float64))

    def merge(self, other: "DeviceScore", offset: int = 0) -> None:
        if other.err_max > self.err_max or self.argmax < 0:
            self.err_max, self.argmax = other.err_max, other.argmax + offset
        for name in ("n", "decided", "misrounded", "specials", "undecided", "err_count", "index_overflow"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.err_sum += other.err_sum
        self.hist = self.hist + other.hist
        self.undecided_at = np.concatenate([self.undecided_at, other.undecided_at + offset])
        self.failing_at = np.concatenate([self.failing_at, other.failing_at + offset])
        self.special_at = np.concatenate([self.special_at, other.special_at + offset])
        shifted = np.array(other.rows, np.float64).reshape(-1, ROW_FIELDS)
        shifted[:, 0] += offset
        self.rows = np.concatenate([np.asarray(self.rows, np.float64).reshape(-1, ROW_FIELDS), shifted])


def score(oracle, operands: list[Tensor], got: Tensor, params=(0.0, 0.0), *, zero_sign: bool = True,
          cap: int = 1 << 20, listed: int = 2, tiles: int | None = None) -> DeviceScore:
    """Score `got` = op(*operands) (one, two or three operands, contiguous, of one size and one dtype
    of FORMATS) against a device oracle of that arity. The result shares the operands' dtype, or,
    for an exact oracle (k = 0), is any float format of FORMATS (rounded once from the oracle's
    value), float64, bool or an integer dtype (compared exactly: DeviceScore.exact). At most `cap`
    positions are listed: the undecided ones and, by `listed`, every failing one (2), the special
    mismatches (1) or none (0); the figures count every element either way. tiles: the tiles of
    BLOCK elements one program scores (TILES by default), so the elements one row of
    DeviceScore.rows covers; the figures are the same for any."""
    name, src = got.dtype.name, operands[0].dtype.name
    exact_result = oracle.k == 0 and (got.dtype.name == "float64" or not got.dtype.is_float)
    if src not in FORMATS or any(x.dtype is not operands[0].dtype for x in operands) or \
            not (name == src or oracle.k == 0 and (name in FORMATS or exact_result)):
        raise ValueError(f"device_score.score: {oracle.name}: operands must share a dtype of {', '.join(FORMATS)}, "
                         f"and the result that dtype (any dtype for an exact oracle); got "
                         f"{[x.dtype.name for x in operands]} and {name}")
    if not 1 <= len(operands) <= 3 or any(not x.is_contiguous() or x.numel() != got.numel() for x in operands) \
            or not got.is_contiguous():
        raise ValueError(f"device_score.score: {oracle.name}: one to three contiguous operands of the result's size")
    if len(operands) != oracle.arity:
        raise ValueError(f"device_score.score: {oracle.name} takes {oracle.arity} operands, got {len(operands)}")
    f = FORMATS.get(name, FORMATS["float32"])
    p, emin, emax = f.precision, f.emin, f.emax
    result = 0 if not exact_result else 2 if got.dtype.is_float else 1
    n = got.numel()
    tiles = TILES if tiles is None else max(1, int(tiles))
    programs = max(1, triton.cdiv(n, BLOCK * tiles))
    stats = empty((programs, 6), dtype="int64")
    fstats = empty((programs, 2), dtype="float64")
    hist = empty((programs, HIST_PAD.value), dtype="int64")
    index = empty(max(1, cap), dtype="int64")
    counter = empty(1, dtype="int32")
    counter._storage.write(0, np.zeros(1, np.int32))
    p0, p1 = (int(np.float64(v).view(np.int64)) for v in (list(params) + [0.0, 0.0])[:2])
    with np.errstate(all="ignore"):
        # the interval's ends are rounded to float64 too: one more float64 ulp of room
        score_kernel[(programs,)](operands[0], operands[min(1, len(operands) - 1)], operands[-1], got, n, p0, p1,
                                  stats, fstats, hist, index, counter, cap,
                                  ORACLE=oracle.fn, EXACT_AT=oracle.exact_at,
                                  RESIDUAL=getattr(oracle, "residual", None), N_IN=len(operands),
                                  E=oracle.bound + 2.0 ** -52,
                                  EXACT=oracle.k == 0, P=p, EMIN=emin, EMAX=emax, ZERO_SIGN=zero_sign,
                                  CT=float32.tl, RESULT=result, BLOCK=BLOCK, TILES=tiles,
                                  LIST=listed, **oracle_options())
    s = stats.numpy()
    f = fstats.numpy()
    k = int(counter.numpy()[0])
    # only the listed positions come back, not the whole list's buffer
    listed = np.sort(index.narrow(0, 0, min(k, cap)).numpy()) if k else np.zeros(0, np.int64)
    best = int(np.argmax(f[:, 1]))
    rows = np.stack([np.arange(programs, dtype=np.float64) * (BLOCK * tiles), s[:, 0], s[:, 1], s[:, 2], f[:, 1]],
                    axis=1).astype(np.float64)
    return DeviceScore(n=n, decided=int(s[:, 0].sum()), misrounded=int(s[:, 1].sum()), specials=int(s[:, 2].sum()),
                       undecided=int(s[:, 3].sum()), err_count=int(s[:, 4].sum()), err_sum=float(f[:, 0].sum()),
                       err_max=float(f[best, 1]), argmax=int(s[best, 5]) if f[best, 1] > 0 else -1,
                       hist=hist.numpy()[:, :N_BINS.value].sum(axis=0), undecided_at=listed[listed % 2 == 1] // 4,
                       failing_at=listed[listed % 2 == 0] // 4, special_at=listed[listed % 4 == 2] // 4,
                       index_overflow=max(0, k - cap),
                       exact=exact_result, rows=rows)


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
             z: np.ndarray | None = None) -> np.ndarray:
    """The oracle's float64 values (oracle.fn: a device or order oracle) at float64 inputs x, and y
    and z for a binary and a ternary one, compiled as score() compiles it (oracle_options)."""
    xs = [np.ascontiguousarray(a, dtype=np.float64) for a in (x, y, z) if a is not None]
    n = xs[0].size
    out = empty(max(1, n), dtype="float64")
    p0, p1 = (int(np.float64(v).view(np.int64)) for v in (list(params) + [0.0, 0.0])[:2])
    args = [from_numpy(a if a.size else np.zeros(1)) for a in xs]
    args += [args[0]] * (3 - len(args))
    with np.errstate(all="ignore"):
        _evaluate_kernel[(max(1, triton.cdiv(n, BLOCK)),)](*args, out, n, p0, p1, ORACLE=oracle.fn, N_IN=len(xs),
                                                           BLOCK=BLOCK, **oracle_options())
    return out.numpy()[:n]
