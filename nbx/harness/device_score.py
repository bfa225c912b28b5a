"""Scoring on the device: a device oracle's float64 value and bound decide the correctly rounded
result of each element, and the figures of a measurement are reduced there.

For each element x with result `got` (float32, float16 or bfloat16), the oracle (nbx/oracles/device)
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

from nbx.oracles.formats import get_format

from .. import dtype as D
from ..kernels import launch
from ..kernels.math import load_as
from ..tensor import Tensor, empty
from .measurement import HIST_EDGES
from .scoring.rule import classify, exponent, options as oracle_options, pow2

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


def score(oracle, operands: list[Tensor], got: Tensor, params=(0.0, 0.0), *, zero_sign: bool = True,
          cap: int = 1 << 20, listed: int = 2) -> DeviceScore:
    """Score `got` = op(*operands) (one, two or three operands, contiguous, of one size and one dtype
    of FORMATS) against a device oracle of that arity. The result shares the operands' dtype, or,
    for an exact oracle (k = 0), is any float format of FORMATS (rounded once from the oracle's
    value), float64, bool or an integer dtype (compared exactly: DeviceScore.exact). At most `cap`
    positions are listed: the undecided ones and, by `listed`, every failing one (2), the special
    mismatches (1) or none (0); the figures count every element either way."""
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
    programs = max(1, triton.cdiv(n, BLOCK * TILES))
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
                                  CT=D.float32.tl, RESULT=result, BLOCK=BLOCK, TILES=TILES,
                                  LIST=listed, **oracle_options())
    s = stats.numpy()
    f = fstats.numpy()
    k = int(counter.numpy()[0])
    # only the listed positions come back, not the whole list's buffer
    listed = np.sort(index.narrow(0, 0, min(k, cap)).numpy()) if k else np.zeros(0, np.int64)
    best = int(np.argmax(f[:, 1]))
    return DeviceScore(n=n, decided=int(s[:, 0].sum()), misrounded=int(s[:, 1].sum()), specials=int(s[:, 2].sum()),
                       undecided=int(s[:, 3].sum()), err_count=int(s[:, 4].sum()), err_sum=float(f[:, 0].sum()),
                       err_max=float(f[best, 1]), argmax=int(s[best, 5]) if f[best, 1] > 0 else -1,
                       hist=hist.numpy()[:, :N_BINS.value].sum(axis=0), undecided_at=listed[listed % 2 == 1] // 4,
                       failing_at=listed[listed % 2 == 0] // 4, special_at=listed[listed % 4 == 2] // 4,
                       index_overflow=max(0, k - cap),
                       exact=exact_result)


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
    from ..tensor import from_numpy
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


# ---------------------------------------------------------------------- stratified float32 tuples
# Operand tuples of a float32 binary or ternary op, made on the device from a 64-bit index and the
# run's key (a counter-based generator: splitmix64 of key + (3 i + k) 0x9E3779B97F4A7C15, k = 1, 2,
# 3), so tuple i is the same on every backend and `tuples_host` regenerates it on the host. The
# index space is cut in rounds of ROUND[arity] tuples; position j in a round picks the class:
#   grid      j < 2^18: operand a's sign and exponent field (9 bits: all 512 of them, subnormals,
#             and the inf/NaN field) are j's high 9 bits, b's its low 9 (every binade pair, both
#             signs, in every round); a ternary c takes (a + b + round) mod 512, so within a round
#             every pair of operands meets every binade pair, and 512 rounds meet every triple;
#   near      2^18 <= j < 2^18 + 2^17: near-equal operands (cancellation): a related operand is the
#             base times (1 +- 2^-k), k in 0..24, rounded to float32 once, or 1..4 float32 values
#             away along their order (across zero), its sign flipped at random; relations
#             b ~ +-a, a ~ +-(b m) (m an integer 1..1024: near multiples), b ~ +-1 (binary); b ~ +-a,
#             c ~ +-a, c ~ +-b, a ~ +-(b c), a ~ +-(b / c), c ~ +-1, b ~ +-1, b ~ c ~ +-a (ternary);
#             the base walks all 512 signs and exponents;
#   specials  the rest: SPECIALS32 crossed: every pair (triple) of them, and each at each position
#             with each other operand walking all 512 signs and exponents (ternary: one special
#             with one other operand walking, the third drawn; two specials with the third walking).
# Mantissas are drawn (hash bits); a quarter of them have their low t bits cleared (short
# significands: exact sums and products, rounding ties) and a quarter set. Ops see every class in
# every round, so a test-sized count (one round) covers every binade pair and every crossing.
SPECIALS32 = (0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,   # 0, -0, inf, -inf, NaN
              0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x80000001)                # +-largest, +-smallest
NS = len(SPECIALS32)
GRID = 1 << 18
NEAR = 1 << 17
ROUND = {2: GRID + NEAR + (1 << 17), 3: GRID + NEAR + (1 << 18)}
ENUM = {2: NS * NS + 2 * NS * 512, 3: NS ** 3 + 6 * NS * 512 + 3 * NS * NS * 512}
_SP_SE = tl.constexpr(tuple(b >> 23 for b in SPECIALS32))
_SP_M = tl.constexpr(tuple(b & 0x7FFFFF for b in SPECIALS32))
_NS = tl.constexpr(NS)
_GRID = tl.constexpr(GRID)
_NEAR = tl.constexpr(NEAR)
_GOLDEN = tl.constexpr(0x9E3779B97F4A7C15)
_M1 = tl.constexpr(0xBF58476D1CE4E5B9)
_M2 = tl.constexpr(0x94D049BB133111EB)
GOLDEN, M1, M2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


@triton.jit
def _mix64(z):
    """splitmix64's finalizer, uint64 in and out (wrapping products)."""
    z = (z ^ (z >> 30)) * _M1
    z = (z ^ (z >> 27)) * _M2
    return z ^ (z >> 31)


@triton.jit
def _word(key, idx, k: tl.constexpr):
    """Hash word k of tuple idx (key: uint64, idx: int64 >= 0)."""
    return _mix64(key + (idx * 3 + k).to(tl.uint64) * _GOLDEN)


@triton.jit
def _field(h, lo: tl.constexpr, width: tl.constexpr):
    return ((h >> lo) & ((1 << width) - 1)).to(tl.int64)


@triton.jit
def _mantissa(m, sel, t):
    """sel 0: the low t bits of m cleared, 1: set, else m (t in 0..31, at most 23 used)."""
    low = (tl.full(m.shape, 1, tl.int64) << tl.minimum(t, 23)) - 1
    return tl.where(sel == 0, m & ~low, tl.where(sel == 1, m | low, m))


@triton.jit
def _special(s):
    """The bit pattern of SPECIALS32[s] (int64)."""
    se = tl.zeros_like(s)
    m = tl.zeros_like(s)
    for k in tl.static_range(_NS):
        se = tl.where(s == k, _SP_SE[k], se)
        m = tl.where(s == k, _SP_M[k], m)
    return (se << 23) | m


@triton.jit
def _f64(bits):
    return bits.to(tl.uint32).to(tl.float32, bitcast=True).to(tl.float64)


@triton.jit
def _bits32(v):
    """float64 -> float32 (one rounding) -> its bit pattern as int64; a NaN as 0x7FC00000 (a GPU's
    NaN payloads are not the host's)."""
    b = v.to(tl.float32).to(tl.uint32, bitcast=True).to(tl.int64)
    return tl.where(v != v, 0x7FC00000, b)


@triton.jit
def _perturb(x, h):
    """x (bits) moved a little, from 12 random bits h: x (1 +- 2^-k) rounded once (k in 0..24), or
    1..4 float32 values along their order (across zero); inf and NaN stay."""
    k = tl.minimum(h >> 1 & 31, 24)
    neg = h >> 6 & 1
    f = 1.0 + (1 - 2 * neg).to(tl.float64) * pow2(-k)
    rel = _bits32(_f64(x) * f)
    d = (h >> 7 & 3) + 1
    d = tl.where(neg == 1, -d, d)
    mag = x & 0x7FFFFFFF
    o = tl.where(x >> 31 == 1, -mag, mag) + d
    m2 = tl.minimum(tl.abs(o), 0x7F800000)
    ulps = tl.where(o < 0, m2 | 0x80000000, m2)
    return tl.where(mag >= 0x7F800000, x, tl.where((h & 1) == 0, rel, ulps))


@triton.jit
def _spec3(o: tl.constexpr, e, m, rnd):
    """Operand o of a ternary tuple of the specials class (enumeration index e; m: its mantissa,
    rnd: a drawn sign and exponent)."""
    all3 = e < _NS * _NS * _NS
    e2 = tl.maximum(e - _NS * _NS * _NS, 0)
    single = e2 < 6 * _NS * 512
    p = e2 // (2 * _NS * 512)
    rest = e2 % (2 * _NS * 512)
    q = rest // (_NS * 512)
    s = (rest % (_NS * 512)) // 512
    w = rest % 512
    rank = tl.where(p < o, o - 1, o)
    walk = tl.where((p != o) & (rank == q), w, rnd)
    one = tl.where(p == o, _special(s), (walk << 23) | m)
    e3 = tl.maximum(e2 - 6 * _NS * 512, 0)
    f = e3 // (_NS * _NS * 512)
    rest3 = e3 % (_NS * _NS * 512)
    s12 = tl.where(tl.where(f < o, o - 1, o) == 0, rest3 // (_NS * 512), (rest3 // 512) % _NS)
    two = tl.where(f == o, ((rest3 % 512) << 23) | m, _special(s12))
    if o == 0:
        s3 = e // (_NS * _NS)
    elif o == 1:
        s3 = (e // _NS) % _NS
    else:
        s3 = e % _NS
    return tl.where(all3, _special(s3), tl.where(single, one, two))


@triton.jit
def tuple_bits(idx, key, N_IN: tl.constexpr, R: tl.constexpr, ENUM_N: tl.constexpr):
    """Tuple idx (int64 >= 0) of the stratified sample of `key` (uint64): three float32 bit patterns
    as int64 (c unused for binary)."""
    h1 = _word(key, idx, 1)
    h2 = _word(key, idx, 2)
    h3 = _word(key, idx, 3)
    r = idx // R
    j = idx - r * R
    ma = _mantissa(_field(h1, 0, 23), _field(h1, 46, 2), _field(h1, 52, 5))
    mb = _mantissa(_field(h1, 23, 23), _field(h1, 48, 2), _field(h1, 57, 5))
    mc = _mantissa(_field(h2, 0, 23), _field(h1, 50, 2), _field(h2, 23, 5))
    ra = _field(h2, 28, 9)
    rb = _field(h2, 37, 9)
    rc = _field(h2, 46, 9)
    rel = _field(h2, 55, 3)
    flip = _field(h2, 58, 1) << 31
    flip2 = _field(h2, 59, 1) << 31
    p1 = _field(h3, 0, 12)
    p2 = _field(h3, 16, 12)
    # grid
    u = j >> 9
    v = j & 511
    ga = (u << 23) | ma
    gb = (v << 23) | mb
    gc = (((u + v + r) & 511) << 23) | mc
    # near-equal
    w = tl.maximum(j - _GRID, 0) & 511
    aw = (w << 23) | ma
    bw = (w << 23) | mb
    a_r = (ra << 23) | ma
    b_r = (rb << 23) | mb
    c_r = (rc << 23) | mc
    one = tl.full(aw.shape, 0x3F800000, tl.int64)
    if N_IN == 2:
        rel = rel & 3
        mult = _bits32(_f64(bw) * (1 + _field(h3, 32, 10)).to(tl.float64))
        na = tl.where(rel == 2, _perturb(mult, p1) ^ flip, aw)
        nb = tl.where(rel == 2, bw, tl.where(rel == 3, _perturb(one, p1), _perturb(aw, p1)) ^ flip)
        nc = c_r
    else:
        # b times a c near 1 (2^-16 .. 2^15): their product and quotient are in range
        cn = (((rc >> 8) << 8 | (111 + _field(h3, 42, 5))) << 23) | mc
        prod = _bits32(_f64(bw) * _f64(cn))
        quot = _bits32(_f64(bw) / _f64(cn))
        pa = _perturb(aw, p1) ^ flip
        na = tl.where((rel == 2), a_r, tl.where(rel == 3, _perturb(prod, p1) ^ flip,
                                                 tl.where(rel == 4, _perturb(quot, p1) ^ flip, aw)))
        nb = tl.where((rel == 0) | (rel == 7), pa, tl.where((rel == 2) | (rel == 3) | (rel == 4), bw,
                                                          tl.where(rel == 6, _perturb(one, p1) ^ flip, b_r)))
        nc = tl.where(rel == 1, pa, tl.where(rel == 2, _perturb(bw, p1) ^ flip,
                                             tl.where((rel == 3) | (rel == 4), cn,
                                                      tl.where(rel == 5, _perturb(one, p1) ^ flip,
                                                               tl.where(rel == 7, _perturb(aw, p2) ^ flip2,
                                                                        c_r)))))
    # specials
    e = tl.maximum(j - _GRID - _NEAR, 0) % ENUM_N
    if N_IN == 2:
        both = e < _NS * _NS
        e2 = tl.maximum(e - _NS * _NS, 0)
        p = e2 // (_NS * 512)
        s = (e2 % (_NS * 512)) // 512
        wv = e2 % 512
        sa = tl.where(both, _special(e // _NS), tl.where(p == 0, _special(s), (wv << 23) | ma))
        sb = tl.where(both, _special(e % _NS), tl.where(p == 1, _special(s), (wv << 23) | mb))
        sc = c_r
    else:
        sa = _spec3(0, e, ma, ra)
        sb = _spec3(1, e, mb, rb)
        sc = _spec3(2, e, mc, rc)
    in_grid = j < _GRID
    in_near = j < _GRID + _NEAR
    a = tl.where(in_grid, ga, tl.where(in_near, na, sa))
    b = tl.where(in_grid, gb, tl.where(in_near, nb, sb))
    c = tl.where(in_grid, gc, tl.where(in_near, nc, sc))
    return a, b, c


@triton.jit
def _tuples_kernel(a_ptr, b_ptr, c_ptr, start, n, key, N_IN: tl.constexpr, R: tl.constexpr,
                   ENUM_N: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    idx = tl.cast(start, tl.int64) + i
    a, b, c = tuple_bits(idx, tl.cast(key, tl.int64).to(tl.uint64, bitcast=True), N_IN, R, ENUM_N)
    tl.store(a_ptr + i, a.to(tl.uint32).to(tl.float32, bitcast=True), mask=m)
    tl.store(b_ptr + i, b.to(tl.uint32).to(tl.float32, bitcast=True), mask=m)
    if N_IN == 3:
        tl.store(c_ptr + i, c.to(tl.uint32).to(tl.float32, bitcast=True), mask=m)


def _key64(key: int) -> int:
    """The key as the int64 a kernel takes (its uint64 bits)."""
    key &= (1 << 64) - 1
    return key - (1 << 64) if key >> 63 else key


def stratified_tuples(arity: int, key: int, start: int, n: int, out=None) -> list[Tensor]:
    """Tuples start .. start + n - 1 of the stratified float32 sample of `key` (made on the
    device): `arity` float32 tensors of n elements (into `out`, contiguous tensors, when given)."""
    if arity not in ROUND:
        raise ValueError(f"stratified_tuples: arity {arity} is not 2 or 3")
    if start < 0 or start + n > 1 << 62:
        raise ValueError(f"stratified_tuples: indices {start} .. {start + n} out of [0, 2^62)")
    xs = list(out) if out is not None else [empty(n, dtype="float32") for _ in range(arity)]
    args = xs + [xs[0]] * (3 - arity)
    with np.errstate(all="ignore"):         # the interpreter's numpy: inf and NaN bases times (1 + e)
        _tuples_kernel[(max(1, triton.cdiv(n, BLOCK)),)](*args, start, n, _key64(key), N_IN=arity, R=ROUND[arity],
                                                         ENUM_N=ENUM[arity], BLOCK=BLOCK, **launch.kernel_options())
    return xs


def _mix64_np(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * np.uint64(M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(M2)
    return z ^ (z >> np.uint64(31))


def _special_np(s: np.ndarray) -> np.ndarray:
    return np.asarray(SPECIALS32, dtype=np.int64)[np.clip(s, 0, NS - 1)]     # (lanes not taken: any)


def _f64_np(bits: np.ndarray) -> np.ndarray:
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def _bits32_np(v: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(v), 0x7FC00000, v.astype(np.float32).view(np.uint32).astype(np.int64))


def _perturb_np(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    k = np.minimum(h >> 1 & 31, 24)
    neg = h >> 6 & 1
    rel = _bits32_np(_f64_np(x) * (1.0 + (1 - 2 * neg) * np.ldexp(1.0, -k)))
    d = (h >> 7 & 3) + 1
    d = np.where(neg == 1, -d, d)
    mag = x & 0x7FFFFFFF
    o = np.where(x >> 31 == 1, -mag, mag) + d
    m2 = np.minimum(np.abs(o), 0x7F800000)
    ulps = np.where(o < 0, m2 | 0x80000000, m2)
    return np.where(mag >= 0x7F800000, x, np.where((h & 1) == 0, rel, ulps))


def _spec3_np(o: int, e, m, rnd):
    all3 = e < NS ** 3
    e2 = np.maximum(e - NS ** 3, 0)
    single = e2 < 6 * NS * 512
    p = e2 // (2 * NS * 512)
    rest = e2 % (2 * NS * 512)
    q = rest // (NS * 512)
    s = (rest % (NS * 512)) // 512
    w = rest % 512
    rank = np.where(p < o, o - 1, o)
    walk = np.where((p != o) & (rank == q), w, rnd)
    one = np.where(p == o, _special_np(s), (walk << 23) | m)
    e3 = np.maximum(e2 - 6 * NS * 512, 0)
    f = e3 // (NS * NS * 512)
    rest3 = e3 % (NS * NS * 512)
    s12 = np.where(np.where(f < o, o - 1, o) == 0, rest3 // (NS * 512), (rest3 // 512) % NS)
    two = np.where(f == o, ((rest3 % 512) << 23) | m, _special_np(s12))
    s3 = (e // NS ** (2 - o)) % NS
    return np.where(all3, _special_np(s3), np.where(single, one, two))


def tuples_host(arity: int, key: int, indices) -> list[np.ndarray]:
    """The tuples of `indices` of the stratified float32 sample of `key`, regenerated on the host
    (tuple_bits in numpy, bit for bit): `arity` float32 arrays."""
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    R, n_enum = ROUND[arity], ENUM[arity]
    ku = np.uint64(key & ((1 << 64) - 1))
    with np.errstate(all="ignore"):
        h1, h2, h3 = (_mix64_np(ku + (idx * 3 + k).astype(np.uint64) * np.uint64(GOLDEN)) for k in (1, 2, 3))

        def field(h, lo, width):
            return ((h >> np.uint64(lo)) & np.uint64((1 << width) - 1)).astype(np.int64)

        def mantissa(m, sel, t):
            low = (np.int64(1) << np.minimum(t, 23)) - 1
            return np.where(sel == 0, m & ~low, np.where(sel == 1, m | low, m))

        r = idx // R
        j = idx - r * R
        ma = mantissa(field(h1, 0, 23), field(h1, 46, 2), field(h1, 52, 5))
        mb = mantissa(field(h1, 23, 23), field(h1, 48, 2), field(h1, 57, 5))
        mc = mantissa(field(h2, 0, 23), field(h1, 50, 2), field(h2, 23, 5))
        ra, rb, rc = field(h2, 28, 9), field(h2, 37, 9), field(h2, 46, 9)
        rel = field(h2, 55, 3)
        flip, flip2 = field(h2, 58, 1) << 31, field(h2, 59, 1) << 31
        p1, p2 = field(h3, 0, 12), field(h3, 16, 12)
        u, v = j >> 9, j & 511
        ga, gb, gc = (u << 23) | ma, (v << 23) | mb, (((u + v + r) & 511) << 23) | mc
        w = np.maximum(j - GRID, 0) & 511
        aw, bw = (w << 23) | ma, (w << 23) | mb
        a_r, b_r, c_r = (ra << 23) | ma, (rb << 23) | mb, (rc << 23) | mc
        one = np.full(idx.shape, 0x3F800000, np.int64)
        P = _perturb_np
        if arity == 2:
            rel = rel & 3
            mult = _bits32_np(_f64_np(bw) * (1 + field(h3, 32, 10)).astype(np.float64))
            na = np.where(rel == 2, P(mult, p1) ^ flip, aw)
            nb = np.where(rel == 2, bw, np.where(rel == 3, P(one, p1), P(aw, p1)) ^ flip)
            nc = c_r
        else:
            cn = ((((rc >> 8) << 8) | (111 + field(h3, 42, 5))) << 23) | mc
            prod = _bits32_np(_f64_np(bw) * _f64_np(cn))
            quot = _bits32_np(_f64_np(bw) / _f64_np(cn))
            pa = P(aw, p1) ^ flip
            na = np.where(rel == 2, a_r, np.where(rel == 3, P(prod, p1) ^ flip, np.where(rel == 4, P(quot, p1) ^ flip, aw)))
            nb = np.where((rel == 0) | (rel == 7), pa, np.where((rel >= 2) & (rel <= 4), bw,
                                                                np.where(rel == 6, P(one, p1) ^ flip, b_r)))
            nc = np.where(rel == 1, pa, np.where(rel == 2, P(bw, p1) ^ flip,
                                                 np.where((rel == 3) | (rel == 4), cn,
                                                          np.where(rel == 5, P(one, p1) ^ flip,
                                                                   np.where(rel == 7, P(aw, p2) ^ flip2, c_r)))))
        e = np.maximum(j - GRID - NEAR, 0) % n_enum
        if arity == 2:
            both = e < NS * NS
            e2 = np.maximum(e - NS * NS, 0)
            p, s, wv = e2 // (NS * 512), (e2 % (NS * 512)) // 512, e2 % 512
            sa = np.where(both, _special_np(e // NS), np.where(p == 0, _special_np(s), (wv << 23) | ma))
            sb = np.where(both, _special_np(e % NS), np.where(p == 1, _special_np(s), (wv << 23) | mb))
            sc = c_r
        else:
            sa, sb, sc = _spec3_np(0, e, ma, ra), _spec3_np(1, e, mb, rb), _spec3_np(2, e, mc, rc)
        in_grid, in_near = j < GRID, j < GRID + NEAR
        out = [np.where(in_grid, g, np.where(in_near, nr, sp)) for g, nr, sp in ((ga, na, sa), (gb, nb, sb), (gc, nc, sc))]
    return [o.astype(np.uint32).view(np.float32) for o in out[:arity]]


def tuple_class(arity: int, indices) -> np.ndarray:
    """The class of each tuple index: 'grid', 'near' or 'special' (for notes and tests)."""
    j = np.asarray(indices, dtype=np.int64) % ROUND[arity]
    return np.where(j < GRID, "grid", np.where(j < GRID + NEAR, "near", "special"))


@triton.jit
def _take_kernel(x_ptr, at_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    k = tl.load(at_ptr + i, mask=m, other=0)
    tl.store(out_ptr + i, tl.load(x_ptr + k, mask=m), mask=m)


def take(x: Tensor, at) -> np.ndarray:
    """x's elements at positions `at` (a contiguous 1-D tensor), gathered on the device: only those
    come back to the host."""
    from ..tensor import from_numpy
    at = np.ascontiguousarray(at, dtype=np.int64).reshape(-1)
    if not at.size:
        return np.zeros(0, dtype=x.dtype.np)
    out = empty(at.size, dtype=x.dtype)
    _take_kernel[(triton.cdiv(at.size, BLOCK),)](x, from_numpy(at), out, at.size, BLOCK=BLOCK,
                                                 **launch.kernel_options())
    return out.numpy()


@triton.jit
def _pack_kernel(a_ptr, b_ptr, out_ptr, n, INTERLEAVE: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a = tl.load(a_ptr + i, mask=m)
    b = tl.load(b_ptr + i, mask=m)
    if INTERLEAVE:
        tl.store(out_ptr + 2 * i, a, mask=m)
        tl.store(out_ptr + 2 * i + 1, b, mask=m)
    else:
        tl.store(out_ptr + i, a, mask=m)
        tl.store(out_ptr + n + i, b, mask=m)


def pack(a: Tensor, b: Tensor, interleave: bool) -> Tensor:
    """The two halves of a split op's operand, on the device: (n, 2) with a and b along the last dim
    (interleave), else (2, n) with a and b as rows."""
    n = a.numel()
    out = empty((n, 2) if interleave else (2, n), dtype=a.dtype)
    _pack_kernel[(max(1, triton.cdiv(n, BLOCK)),)](a, b, out, n, INTERLEAVE=interleave, BLOCK=BLOCK,
                                                   **launch.kernel_options())
    return out
