"""Scoring one batch of cases against the oracles, and the streaming accumulator of a Measurement.

Float results are classified by the scoring rule (scoring/rule.py, the same code the device runs):
the float64 oracle gives the truth for float16/bfloat16/float32 results, good to 2^-(p+19)
relative (rule.host_bound); float64 results take the mpmath truth for every case, as a
double-double. Elements the rule leaves undecided (the truth within its bound of a rounding
boundary) are decided by mpmath with a Ziv loop (`close_calls`). Integer and bool results are exact
or wrong.
"""
from __future__ import annotations

import heapq
import inspect
import math
from dataclasses import dataclass, field

import mpmath
import numpy as np

from nbx.oracles import ORACLES, evaluate_mp
from nbx.oracles.formats import FORMATS, to_bits
from nbx.oracles.rounding import RoundResult, round_correctly, round_mpf, round_split_correctly

from nbx import dtype as D
from nbx.harness.scoring import ulp
from nbx.harness.records.measurement import HIST_EDGES, Measurement, Worst
from nbx.harness.scoring.order import order_error
from nbx.harness.scoring import rule
from nbx.harness.targets.target import Target

SUBNORMAL64 = 2.0 ** -1022          # the least normal float64; below it the grid is subnormal
FAILING_RANK = 1e200                # added to a failing case's ulp when ranking the worst inputs


def oracle_params(target: Target, out: D.DType) -> dict:
    """The op's parameters plus what the oracle asks to be told about the output format
    (Oracle.output_format) and, for exact integer functions that take them, its width and sign."""
    oracle = ORACLES[target.op]
    p = {**oracle.params, **target.oracle_kwargs()}
    if "int_range" in oracle.output_format:
        if out.is_bool:
            p["to_bool"] = True
        elif out.is_int:
            p["int_min"], p["int_max"] = out.min, out.max
    if "float_max" in oracle.output_format and out.is_float:
        p["fmt_max"] = out.max
    if not out.is_float and _takes(oracle.exact_int, "bits"):
        p["bits"], p["signed"] = (1, False) if out.is_bool else (out.bits, out.kind == "i")
    return p


def _takes(fn, name: str) -> bool:
    try:
        return fn is not None and name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _hex(bits) -> str:
    return hex(int(bits))


def bits_of(a: np.ndarray) -> np.ndarray:
    """The bit patterns of an array of an nbx dtype, as its same-width unsigned integers."""
    d = D.from_numpy_dtype(a.dtype)
    return a.view(d.uint_np) if d.itemsize > 1 or d.is_bool else a.view(np.uint8)


def flat_bits(a: np.ndarray) -> np.ndarray:
    """The bit patterns of any array, flattened (bool as uint8): for bit-for-bit comparisons."""
    a = np.ascontiguousarray(a).reshape(-1)
    return a.view(np.uint8) if a.dtype == np.bool_ else a.view(f"u{a.dtype.itemsize}")


def hexes(arrs, i) -> list[str]:
    """Element i of each array, as hex bit patterns (the inputs of a Worst)."""
    return [hex(int(flat_bits(a)[i])) for a in arrs]


@dataclass
class Batch:
    """Per-element scores of one batch."""
    err: np.ndarray                # ulp error (inf for a special mismatch; 0 / 1 for exact results)
    special: np.ndarray            # bool
    not_cr: np.ndarray             # bool: not correctly rounded (or wrong, for exact results)
    expected_bits: np.ndarray
    exact: bool                    # integer/bool result: `not_cr` means wrong
    close_calls: int = 0
    unresolved: int = 0
    order: tuple | None = None      # (ulp distance from the documented order, its bits) where the op has one


def _wrap(v: int, d: D.DType) -> int:
    if d.is_bool:
        return int(bool(v))
    span = 1 << d.bits
    v = (int(v) - d.min) % span + d.min
    return v


def exact_expected(target, arrays, out: D.DType, params) -> np.ndarray:
    """The exact integer or bool results: the oracle's `exact_int` on Python ints for integer
    operands, else its float64 function, wrapped to the output dtype; or clamped to it, where the
    oracle was told the integer range (a cast saturates: only float64's rounding of the int64 bounds,
    2^63, can step outside it, and wrapping that would give INT64_MIN)."""
    oracle = ORACLES[target.op]
    if oracle.exact_int is not None and not any(D.from_numpy_dtype(a.dtype).is_float for a in arrays):
        pyvals = [a.astype(object) if a.dtype != np.bool_ else a.astype(int).astype(object) for a in arrays]
        pyvals += [np.full(len(arrays[0]), target.params[k], dtype=object)
                   for k, _ in target.verify.param_operands if target.params.get(k) is not None]
        res = [oracle.exact_int(*(int(v) for v in row), **params) for row in zip(*pyvals)]
        return np.array([_wrap(v, out) for v in res], dtype=object).astype(out.np)
    vals = target.oracle_values(arrays)
    y = oracle.f64(*vals, **params)
    if out.is_bool:
        return np.asarray(y).astype(bool)
    saturates = "int_range" in oracle.output_format
    fix = (lambda v: min(max(v, out.min), out.max)) if saturates else (lambda v: _wrap(v, out))
    return np.array([fix(int(v)) for v in np.asarray(y, dtype=np.float64)], dtype=object).astype(out.np)


def _mp_truth(oracle, vals, params, prec: int):
    """Double-double (hi, lo) of the mpmath value at `prec` bits, per case, and {case: mpf} for the
    values in the subnormal grid (|y| <= 2^-1022), where lo cannot carry the fraction of an ulp
    (it would be a subnormal itself): their error is taken from the mpf (tiny_errors)."""
    hi = np.empty(len(vals[0]))
    lo = np.zeros(len(vals[0]))
    tiny = {}
    with mpmath.workprec(prec):
        for i, row in enumerate(zip(*vals)):
            y = evaluate_mp(oracle, tuple(float(v) for v in row), params)
            if isinstance(y, (bool, int, float)) or not isinstance(y, mpmath.mpf):
                hi[i] = float(y)
                continue
            h = float(y) if abs(y) < mpmath.mpf(2) ** 1024 else math.copysign(math.inf, y)
            if h != 0 and abs(h) <= SUBNORMAL64:
                # float(mpf) rounds to 53 bits, then into the subnormal grid: twice. A value just
                # below a subnormal midpoint became the tie and went to even (div of 0xfffffffffffff
                # by 1 - 2^-53 gave 0x10000000000000 as "correct"); round once, from the mpf.
                h = float(np.uint64(round_mpf(y, "float64")).view(np.float64))
                tiny[i] = y
            hi[i] = h
            if math.isfinite(h):
                lo[i] = float(y - h)
    return hi, lo, tiny


def tiny_errors(err: np.ndarray, got: np.ndarray, tiny: dict, prec: int) -> None:
    """err[i] = |got - y| / 2^-1074 exactly, for the subnormal-grid truths y of _mp_truth."""
    with mpmath.workprec(prec):
        for i, y in tiny.items():
            g = float(got[i])
            if math.isfinite(g):
                err[i] = float(abs(y - mpmath.mpf(g)) * mpmath.mpf(2) ** 1074)


def round_exact_or_ziv(oracle, row: tuple, params: dict, fmt):
    """Correct rounding of the op at `row`: Ziv's loop; where it cannot decide, the oracle's splits
    (value = exact main + a rest evaluated on its own, oracles/base.py), which decide a value within
    2^-1016 of a midpoint by the rest; and only where no split applies, the exact-value rule: if
    evaluations at p+32 and 2(p+32) bits give the identical mpf, the value is exact (a sum, product or
    quotient of floats computed exactly, or a dyadic constant), and an exact tie goes to even. A value
    that is not exact and not within 2^-(p+32) of its main part by a split's rest has p+32 zero bits
    after its p-th with probability ~2^-(p+32). Where a split applies with a nonzero rest and cannot
    decide either, the case stays unresolved."""
    fn = lambda *_: evaluate_mp(oracle, row, params)  # noqa: E731  (the float row keeps -0.0; mpf has no -0)
    rr = round_correctly(fn, row, fmt)
    if rr.resolved:
        return rr
    merged = {**oracle.params, **params}
    inexact = False
    if all(math.isfinite(v) for v in row):
        for split in oracle.splits:
            sr = round_split_correctly(lambda *xs: split(*xs, **merged), row, fmt)  # noqa: B023
            if sr is not None and sr.resolved:
                return sr
            inexact |= sr is not None
    if inexact:
        return rr
    p = fmt.precision + 32
    with mpmath.workprec(p):
        y1 = fn(*row)
    with mpmath.workprec(2 * p):
        y2 = fn(*row)
    if isinstance(y1, mpmath.mpf) and isinstance(y2, mpmath.mpf) and y1 == y2:
        bits = round_mpf(y2, fmt)
        return RoundResult(bits, rr.value, True, 2 * p)
    return rr


def misrounded(got: np.ndarray, expected_bits: np.ndarray, fmt, zero_sign_matters: bool) -> np.ndarray:
    """Per result: not the correctly rounded value (expected_bits). A zero whose sign the op does
    not decide (zero_sign_matters False) is correctly rounded as +0 or -0."""
    got_bits = to_bits(got, fmt)
    bad = ~ulp.correctly_rounded(got_bits, expected_bits, fmt)
    if not zero_sign_matters:
        magnitude = np.uint64((1 << (fmt.bits - 1)) - 1)
        gz = (got_bits.astype(np.uint64) & magnitude) == 0
        bad &= ~(gz & ((np.asarray(expected_bits).astype(np.uint64) & magnitude) == 0))
    return bad


def score(target: Target, arrays: list[np.ndarray], got: np.ndarray) -> Batch:
    out = D.from_numpy_dtype(got.dtype)
    oracle = ORACLES[target.op]
    params = oracle_params(target, out)
    if not out.is_float:
        expected = exact_expected(target, arrays, out, params)
        wrong = got != expected
        return Batch(wrong.astype(np.float64), np.zeros(len(got), bool), wrong, bits_of(expected), True)
    fmt = FORMATS[out.name]
    vals = target.oracle_values(arrays, out)
    if out is D.float64:
        hi, lo, tiny = _mp_truth(oracle, vals, params, 53 + 60)
        truth = (hi, lo)
    else:
        truth = np.asarray(oracle.f64(*vals, **params), dtype=np.float64)
    s = rule.classify_arrays(got, truth, fmt, zero_sign=oracle.zero_sign_matters)
    err = s.err.copy()
    if out is D.float64:
        tiny_errors(err, got, tiny, 53 + 60)
    special = s.cls == rule.SPECIAL
    not_cr = s.cls == rule.MISROUNDED
    with np.errstate(all="ignore"):
        exp_bits = to_bits(s.due.astype(fmt.np_dtype), fmt).copy()
    got_bits = to_bits(got, fmt)
    close = np.flatnonzero(s.cls == rule.UNDECIDED)
    unresolved = 0
    for i in close:
        row = tuple(float(v[i]) for v in vals)
        rr = round_exact_or_ziv(oracle, row, params, fmt)
        exp_bits[i] = rr.bits
        not_cr[i] = int(got_bits[i]) != rr.bits
        if not not_cr[i]:
            # as rule.classify does for the elements it decides: a correctly rounded result is within
            # half an ulp; above it the float64 truth's own error shows (sigmoid float32 0xb6d60000,
            # a float32 tie to 2^-29 ulp: 0.5000000019)
            err[i] = min(err[i], 0.5)
        unresolved += 0 if rr.resolved else 1
    return Batch(np.where(special, np.inf, err), special, not_cr, exp_bits, False, len(close), unresolved,
                 order_error(target, vals, params, got))


@dataclass
class Accumulator:
    """Streams batches into the figures of one Measurement without keeping the cases."""
    target: Target
    suite: str
    backend: str
    total_hint: int = 0
    cases: int = 0
    err_sum: float = 0.0
    err_count: int = 0
    err_max: float = 0.0
    not_cr: int = 0
    specials: int = 0
    wrong: int = 0
    close_calls: int = 0
    unresolved: int = 0
    layouts: int = 0
    top: list = field(default_factory=list)          # the largest errors, for the 99.9th percentile
    worst: list = field(default_factory=list)        # heap of (err, seq, Worst)
    plot_x: list = field(default_factory=list)
    plot_y: list = field(default_factory=list)
    hist: np.ndarray = field(default_factory=lambda: np.zeros(len(HIST_EDGES) - 1, dtype=np.int64))
    order_cases: int = 0                             # cases compared with the documented order (order.py)
    order_max: float = 0.0
    order_differ: int = 0
    device_cases: int = 0                            # cases scored on the device (add_device)
    undecided: int = 0                               # cases the device left to the host
    left_out: int = 0                                # undecided cases beyond the host's quota: unscored
    bins: object = None                              # regions.RangeBins of a sweep over bit patterns
    _seq: int = 0

    def add(self, arrays: list[np.ndarray], got: np.ndarray, b: Batch) -> None:
        n = len(got)
        self.cases += n
        self.close_calls += b.close_calls
        self.unresolved += b.unresolved
        if b.exact:
            self.wrong += int(b.not_cr.sum())
        else:
            self.not_cr += int(b.not_cr.sum())
            self.specials += int(b.special.sum())
            ok = ~b.special & np.isfinite(b.err)
            e = b.err[ok]
            if e.size:
                self.err_sum += float(e.sum())
                self.err_count += int(e.size)
                self.err_max = max(self.err_max, float(e.max()))
                keep = max(1, math.ceil(max(self.total_hint, self.cases) / 1000) + 1)
                self.top = list(np.sort(np.concatenate([np.asarray(self.top), e]))[-keep:])
                self.hist += np.histogram(e, bins=HIST_EDGES)[0]
                step = max(1, e.size // 64)
                with np.errstate(all="ignore"):
                    x = arrays[0].astype(np.float64)[ok] if arrays[0].dtype != np.bool_ else np.zeros(e.size)
                self.plot_x += x[::step].tolist()
                self.plot_y += e[::step].tolist()
        if b.order is not None:
            self._add_order(arrays, got, *b.order)
        # the worst inputs: every failing case of the batch, and its largest errors even when they are
        # correctly rounded (a max-ulp regression must show its inputs)
        bad = np.flatnonzero(b.not_cr | b.special)
        if not b.exact and b.err.size:
            finite = np.where(np.isfinite(b.err), b.err, -1.0)
            bad = np.union1d(bad, np.argsort(-finite, kind="stable")[:8])
        if bad.size:
            # failing cases first (a tie broken the wrong way is 0.5 ulp, as far off as the correct
            # ties beside it), then by error
            failing = (b.not_cr[bad] | b.special[bad]).astype(bool)
            order = bad[np.lexsort((-np.where(np.isinf(b.err[bad]), 1e300, b.err[bad]), ~failing))][:8]
            gbits = bits_of(got)
            for i in order:
                w = Worst([_hex(bits_of(a)[i]) for a in arrays], _hex(gbits[i]), _hex(b.expected_bits[i]),
                          float(b.err[i]), "special mismatch" if b.special[i] else ("wrong" if b.exact else ""))
                # a failing case outranks every correct one: a misrounded result 0.5000001 ulp off
                # lists before a correctly rounded 0.4999999 and is never pushed out by one
                failing = bool(b.not_cr[i] or b.special[i])
                self.push_worst(w, 1e300 if not math.isfinite(w.ulp) else w.ulp + (FAILING_RANK if failing else 0.0))

    def _add_order(self, arrays, got, err: np.ndarray, bits: np.ndarray) -> None:
        """The figure against the documented order: cases, max distance, cases that differ; those
        cases lead the worst inputs (the gate holds this figure, not the exact one)."""
        self.order_cases += len(got)
        self.order_max = max(self.order_max, float(err.max(initial=0.0)))
        differ = np.flatnonzero(err != 0)
        self.order_differ += int(differ.size)
        gbits = bits_of(got)
        for i in differ[np.argsort(-err[differ], kind="stable")][:8]:
            w = Worst([_hex(bits_of(a)[i]) for a in arrays], _hex(gbits[i]), _hex(bits[i]), float(err[i]),
                      "differs from the documented evaluation order")
            self.push_worst(w, 2e300)

    def add_device(self, s) -> None:
        """The figures of elements decided and scored on the device (device.DeviceScore):
        counts, sums, maximum and histogram (an exact result's: cases and wrong ones). Its 99.9th
        percentile comes from the histogram."""
        self.cases += s.decided
        if s.exact:
            self.wrong += s.misrounded
        else:
            self.not_cr += s.misrounded
        self.specials += s.specials
        self.err_sum += s.err_sum
        self.err_count += s.err_count
        self.err_max = max(self.err_max, s.err_max)
        self.hist += np.asarray(s.hist, dtype=np.int64)
        self.device_cases += s.decided
        self.undecided += s.undecided

    def push_worst(self, w: Worst, key: float = 1e300) -> None:
        """Keep w among the 8 worst entries by key (later entries win ties); the default key ranks
        a structural failure (no ulp figure) with the infinite errors."""
        self._seq += 1
        item = (key, self._seq, w)
        if len(self.worst) < 8:
            heapq.heappush(self.worst, item)
        else:
            heapq.heappushpop(self.worst, item)

    def measurement(self, wall_s: float, error: str = "") -> Measurement:
        n = max(self.total_hint, self.cases)
        p999 = 0.0
        if self.err_count and self.device_cases:
            # device-scored cases keep no values: the upper edge of the histogram bin that holds
            # the k-th largest error (at most the maximum)
            k = math.ceil(self.err_count / 1000)
            above = np.cumsum(self.hist[::-1])
            b = len(self.hist) - 1 - int(np.searchsorted(above, k))
            p999 = min(float(HIST_EDGES[b + 1]), self.err_max)
        elif self.err_count:
            k = math.ceil(n / 1000)                     # the 99.9th percentile is the k-th largest
            top = sorted(self.top)
            p999 = float(top[-k]) if k <= len(top) else float(top[0])
        plot = None
        if self.plot_x:
            idx = np.linspace(0, len(self.plot_x) - 1, min(400, len(self.plot_x))).astype(int)
            plot = {"x": [self.plot_x[i] for i in idx], "ulp": [self.plot_y[i] for i in idx]}
        hist = {"edges": HIST_EDGES, "counts": self.hist.tolist()} if self.err_count else None
        return Measurement(
            op=self.target.label, dtype=self.target.dtype.name, suite=self.suite, backend=self.backend,
            cases=self.cases, max_ulp=self.err_max, mean_ulp=self.err_sum / self.err_count if self.err_count else 0.0,
            p999_ulp=p999, not_correctly_rounded=self.not_cr, special_mismatches=self.specials, wrong=self.wrong,
            close_calls=self.close_calls, unresolved=self.unresolved, layouts=self.layouts,
            decided_on_device=self.device_cases, undecided=self.undecided, left_out=self.left_out,
            order_cases=self.order_cases,
            order_max_ulp=self.order_max, order_differ=self.order_differ, wall_s=wall_s,
            worst=[w for _, _, w in sorted(self.worst, key=lambda t: -t[0])], plot=plot, hist=hist, error=error,
            bins=self.bins.to_dict() if self.bins is not None else None)
