"""Value suites decided on the device (issue: prove it on every input).

Three kinds of job run here, each for a target with a device oracle (nbx/oracles/device):
- `sweep`, unary float32, float16 or bfloat16: a range of bit patterns, all 2^32 float32 inputs in
  the exhaustive profile, or the range `nbx run --bits LO:HI` names;
- `sweep`, binary float16 and bfloat16 (split ops too: glu, silu_and_mul on their two halves): the
  operand pairs of a range of 32-bit indices, all 2^32 pairs in the exhaustive profile;
- `sample`, binary and ternary float32 (split ops too): a stratified sample of operand tuples made
  on the device by a counter-based generator (inputs/stratified.py, stratified_tuples: every binade pair,
  both signs, subnormals, the specials crossed with everything, near-equal operands), tuples
  0 .. 2^32 - 1 in the exhaustive profile on CUDA (cases.PROFILES), or the index range --bits names.
  Tuple i is a pure function of (i, the run's seed, the target): its numpy twin
  stratified.tuples_host regenerates it on the host.
Inputs are made on the device chunk by chunk, the op runs through nbx as Target.run calls it, and
scoring/device.py decides and scores each element. Undecided inputs are scored on the host
(scoring/host.py, score: the float64 oracle, mpmath where it is close); the worst decided inputs are
rescored there for the report's worst entries. Only those elements leave the device (gathered
there, inputs/patterns.py, take). float64 targets stay on the host: deciding a float64 result on the
device would need an oracle more precise than float64 (double-double).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from nbx.oracles import device
from nbx.oracles import ORACLES

from nbx import backend
from nbx.errors import DeviceOOMError
from nbx.harness.inputs import cases
from nbx.harness.scoring import device as device_scoring
from nbx.harness.inputs import patterns
from nbx.harness.inputs import stratified
from nbx.harness.scoring import regions
from nbx.harness.scoring.host import Accumulator, hexes, score
from nbx.harness.targets.target import Target

# 2^26 elements a chunk on CUDA: 0.25-0.5 GiB an operand, so 16 shards with their results and a
# peer library's cache fit the GPU together (at 2^28, 45 jobs of the H200's sharded exhaustive run
# of 2026-12-04 found no memory); a chunk is ~3 ms of device work
CHUNK = 1 << 26 if backend.IS_CUDA else 1 << 20
MIN_CHUNK = 1 << 20
LIST_CAP = 1 << 20      # undecided and failing positions one score launch lists (more: in parts)


def device_oracle(t: Target):
    """The device oracle of a target, or None: its label (`gelu:approximate=tanh`), else its op
    when every parameter of the variant is one the device oracle takes. Binary targets: 16-bit
    dtypes (their pairs are the 2^32 indices) and float32 (a stratified sample), operands that are
    plain values of the dtype (a split op's two halves count as two); ternary targets: float32."""
    if t.dtype.name not in device_scoring.FORMATS or t.oracle_arity > 3:
        return None
    if t.oracle_arity >= 2:
        # operand roles other than values (a mask, another format's bits) are no float tuples; a
        # divisor's or exponent's role concerns integer dtypes only
        if any(r.kind in ("mask", "bits") for r in t.verify.roles.values()) or t.verify.param_operands:
            return None
        if t.dtype.itemsize == 2 and t.oracle_arity != 2:
            return None
    d = device.DEVICE_ORACLES.get(t.label) or device.DEVICE_ORACLES.get(t.op)
    if d is not None and d.arity != t.oracle_arity:
        d = device.DEVICE_ORACLES.get(f"{t.op}/{t.oracle_arity}")        # clamp by scalars: clamp/1
    if d is None or d.arity != t.oracle_arity or d.name != t.label and not set(t.params) <= set(d.params):
        return None
    if d.args is not None and d.args(t) is None:
        return None
    return d


def sampled(t: Target) -> bool:
    """Whether t's pairs suite can take the stratified float32 sample (`sample`)."""
    return t.dtype.name == "float32" and t.oracle_arity in (2, 3) and device_oracle(t) is not None


def _params(t: Target, d) -> list:
    """p0, p1 of t's device oracle: from the target (d.args), else the op's parameters by name."""
    if d.args is not None:
        return list(d.args(t))
    oracle = ORACLES[t.op]
    return [t.params.get(p, oracle.params.get(p, 0.0)) for p in d.params]


def _score(t: Target, d, xs_dev, got, cap: int, depth: int = 0, tiles: int | None = None) -> device_scoring.DeviceScore:
    """scoring/device.py's score of one chunk. Where more inputs are undecided or failing than the device's
    list holds (a peer that misrounds half its results), the chunk is scored again listing the
    undecided ones (the host needs every one) and the special mismatches, or the undecided alone
    where that still overflows; its first failing positions then come from its sixteenths in order,
    up to the first 8 (the worst entries' share), so the report names the inputs a list without limit
    would, at ~1.1 scorings instead of 16 parts per level. Where even the undecided overflow, the
    chunk is scored in 16 parts (views), each with its own list."""
    zero_sign, params = ORACLES[t.op].zero_sign_matters, _params(t, d)
    s = device_scoring.score(d, xs_dev, got, params, zero_sign=zero_sign, cap=cap, tiles=tiles)
    n = got.numel()
    if not s.index_overflow or depth >= 3 or n < 16:
        return s
    step = -(-n // 16)
    parts = [(off, min(step, n - off)) for off in range(0, n, step)]
    for listed in (1, 0):
        u = device_scoring.score(d, xs_dev, got, params, zero_sign=zero_sign, cap=cap, listed=listed, tiles=tiles)
        if not u.index_overflow:
            failing, special = [], []
            for off, m in parts:
                if sum(len(f) for f in failing) >= 8:
                    break
                p = _score(t, d, [x.narrow(0, off, m) for x in xs_dev], got.narrow(0, off, m), cap, depth + 1, tiles)
                failing.append(p.failing_at + off)
                special.append(p.special_at + off)
            # for the worst entries only: the figures and the undecided positions are u's own
            u.failing_at = np.concatenate(failing)
            if listed == 0:
                u.special_at = np.concatenate(special)
            return u
    total = device_scoring.DeviceScore()
    for off, m in parts:
        total.merge(_score(t, d, [x.narrow(0, off, m) for x in xs_dev], got.narrow(0, off, m), cap, depth + 1, tiles),
                    off)
    return total


def _score_chunk(t: Target, d, xs_dev, got, where: str, tiles: int | None = None):
    s = _score(t, d, xs_dev, got, LIST_CAP, tiles=tiles)
    if s.index_overflow:
        raise RuntimeError(f"{t.label} {t.dtype.name}: {s.index_overflow} undecided or failing inputs in "
                           f"{where} beyond the device's list; use a smaller chunk")
    return s


def _is_oom(e: BaseException) -> bool:
    """A device allocation that failed: nbx's DeviceOOMError or a peer library's (torch's
    OutOfMemoryError, which its CUDA caching allocator raises)."""
    return isinstance(e, DeviceOOMError) or type(e).__name__ == "OutOfMemoryError"


def release(t: Target) -> None:
    """Give cached device memory back (nbx's allocator, and the target's library's: a peer's), so
    the processes that share the GPU in a sharded run find it free."""
    if backend.IS_CUDA:
        backend.active.empty_cache()
    getattr(t, "release", lambda: None)()


@dataclasses.dataclass
class HostQuota:
    """The most undecided inputs of one job that mpmath decides on the host (limit; None: all),
    shared over its chunks so that the left-out ones, where some must be, spread over the job:
    a chunk may take its share of the limit plus what the chunks before it left unused, and the
    undecided inputs past that are set aside (at most `limit` of them, evenly chosen, with their
    operands and results) for `finish`, which decides as many as the limit still allows once every
    chunk is in. A job whose undecided inputs crowd into a few chunks (a 16-bit binary op's rows of
    ties) thus has all of them decided when their count is within the limit."""
    limit: int | None
    total: int
    used: int = 0
    seen: int = 0
    aside: list = dataclasses.field(default_factory=list)     # (positions in the job, operands, results)

    def take(self, acc: Accumulator, und: np.ndarray, n: int, start: int, operands_at, got) -> np.ndarray:
        """The undecided positions of a chunk of n inputs (its first at job position `start`) to
        decide now; the others are counted left out, and kept aside where there is room."""
        if self.limit is None:
            return und
        self.seen += n
        share = max(0, -(-self.limit * self.seen // self.total) - self.used)
        if len(und) > share:
            now = und[patterns.evenly(len(und), share)]
            rest = np.setdiff1d(und, now)
            keep = rest[patterns.evenly(len(rest), self.limit - sum(len(a) for a, _, _ in self.aside))]
            if len(keep):
                self.aside.append((start + keep, operands_at(keep), patterns.take(got, keep)))
            acc.undecided -= len(und) - len(now)
            acc.left_out += len(und) - len(now)
            und = now
        self.used += len(und)
        return und

    def finish(self, t: Target, acc: Accumulator) -> tuple[np.ndarray, list]:
        """Decide on the host as many of the inputs set aside as the limit still allows, evenly
        chosen; returns their job positions and operands."""
        spare = (self.limit or 0) - self.used
        if not self.aside or spare <= 0:
            return np.zeros(0, np.int64), []
        at = np.concatenate([a for a, _, _ in self.aside])
        arrays = [np.concatenate([ops[k] for _, ops, _ in self.aside]) for k in range(len(self.aside[0][1]))]
        got = np.concatenate([g for _, _, g in self.aside])
        pick = patterns.evenly(len(at), spare)
        at, arrays, got = at[pick], [a[pick] for a in arrays], got[pick]
        b = score(t, arrays, got)
        acc.add(arrays, got, b)
        if acc.bins is not None:
            acc.bins.add_points(at, b)
        acc.undecided += len(at)
        acc.left_out -= len(at)
        self.used += len(at)
        self.aside = []
        return at, arrays


def _chunks(t: Target, lo: int, hi: int, chunk: int, on_device, consume) -> None:
    """Chunks covering lo .. hi - 1: on_device(start, n) makes the inputs, runs the op and scores
    them on the device; consume(start, n, result) takes its figures. Where the device's memory is
    taken (other shards share the GPU), the caches are given back and the chunk halved, down to
    MIN_CHUNK, before the error stands; on_device changes no figure, so a retried chunk counts once."""
    start = lo
    try:
        while start < hi:
            n = min(chunk, hi - start)
            try:
                r = on_device(start, n)
            except Exception as e:  # noqa: BLE001 (only a device OOM is retried)
                if not _is_oom(e) or chunk <= MIN_CHUNK:
                    raise
                release(t)
                chunk = max(MIN_CHUNK, chunk // 2)
                continue
            consume(start, n, r)
            start += n
    finally:
        release(t)


def _to_host(t: Target, acc: Accumulator, got, s, operands_at, quota: HostQuota, start: int = 0) -> np.ndarray:
    """Undecided elements scored on the host (those quota.take gives now: the others are left out
    of the figures, counted in acc.left_out, until quota.finish decides some of them), failing and
    worst ones rescored for the worst entries; operands_at(positions) -> the operand arrays there;
    start: the chunk's first index in the job, where acc.bins places the host's elements. Returns
    the positions that came back."""
    und = quota.take(acc, s.undecided_at, s.n, start, operands_at, got)
    if len(und):
        arrays, gs = operands_at(und), patterns.take(got, und)
        b = score(t, arrays, gs)
        acc.add(arrays, gs, b)
        if acc.bins is not None:
            acc.bins.add_points(start + und, b)
    # the first special mismatches, then the first misrounded results, and the largest error
    show = np.union1d(s.special_at[:8], s.failing_at[:8])
    if s.argmax >= 0:
        show = np.union1d(show, [s.argmax])
    if len(show):
        arrays = operands_at(show)
        b = _push_worst(t, acc, arrays, patterns.take(got, show))
        _agree(t, arrays, show, np.isin(show, s.failing_at), b)
    return np.union1d(und, show).astype(np.int64)


def _agree(t: Target, arrays, at: np.ndarray, failing: np.ndarray, b) -> None:
    """The host's rescoring of elements the device decided must agree on the failing ones: an
    element the device scored misrounded (or a special mismatch, or a wrong exact result) that
    mpmath finds correct means the device oracle is off by more than its stated bound, and every
    figure of the job is then in doubt: it raises, naming the input (the gate fails on a raised job)."""
    doubt = np.flatnonzero(failing & ~(np.asarray(b.not_cr, bool) | np.asarray(b.special, bool)))
    if doubt.size:
        i = int(doubt[0])
        raise RuntimeError(f"{t.label} {t.dtype.name}: the device scorer counts input "
                           f"{' '.join(hexes(arrays, i))} (element {int(at[i])} of its chunk) as failing, the host's "
                           f"mpmath finds it correct: the device oracle's bound k is too small there")


def sweep(t: Target, lo: int, hi: int, acc: Accumulator, chunk: int = CHUNK, max_host: int | None = None) -> int:
    """Bit patterns lo .. hi - 1 of t.dtype (for a binary target: the operand pairs of the 32-bit
    indices lo .. hi - 1, pair_patterns) through t's op, into acc. max_host: the most undecided
    inputs mpmath decides on the host, spread evenly over the chunks (~130 us each: a form whose
    float64 value lands on float32 midpoints, leaky_relu's subnormal products, leaves 10^5 .. 10^7);
    the others are left out of the figures. Returns how many were left out. A unary sweep also
    keeps where over lo .. hi - 1 its errors lie (acc.bins: regions.RangeBins)."""
    d = device_oracle(t)
    if d is None or t.oracle_arity > 2 or t.oracle_arity == 2 and t.dtype.itemsize != 2:
        raise ValueError(f"exhaustive.sweep: {t.label} {t.dtype.name} has no device oracle over bit patterns")
    before = acc.left_out
    # rows short enough for regions.LIMIT bins over the range (2^16 inputs: 64 rows of 1,024 on CUDA)
    tiles = regions.tiles_for(hi - lo, device_scoring.BLOCK, device_scoring.TILES)
    if d.arity == 1 and acc.bins is None:
        acc.bins = regions.RangeBins(lo, hi, device_scoring.BLOCK * tiles)

    def on_device(start, n):
        xs_dev = [patterns.bit_patterns(t.dtype.name, start, n)] if d.arity == 1 else \
            list(patterns.pair_patterns(t.dtype.name, start, n))
        got = t.run_device(xs_dev)
        return xs_dev, got, _score_chunk(t, d, xs_dev, got, f"[{start:#x}, {start + n:#x})", tiles)

    quota = HostQuota(max_host, hi - lo)

    def consume(start, n, r):
        xs_dev, got, s = r
        acc.add_device(s)
        if d.arity == 1:
            acc.bins.add_rows(start, s.rows)
        _to_host(t, acc, got, s, lambda at: [patterns.take(x, at) for x in xs_dev], quota, start)

    _chunks(t, lo, hi, chunk, on_device, consume)
    quota.finish(t, acc)
    return acc.left_out - before


def tuple_key(t: Target, seed: int) -> int:
    """The generator key of t's stratified sample: a pure function of (seed, target), as
    cases.rng_for keys every other job."""
    return int(cases.rng_for(seed, t.label, t.dtype.name, "pairs32").integers(0, 1 << 63, dtype=np.int64))


def tuples(t: Target, seed: int, indices) -> list[np.ndarray]:
    """Tuples `indices` of t's stratified sample for `seed`, regenerated on the host (float32 arrays)."""
    return stratified.tuples_host(t.oracle_arity, tuple_key(t, seed), indices)


def sample(t: Target, lo: int, hi: int, acc: Accumulator, seed: int = 0, chunk: int = CHUNK,
           max_host: int | None = None) -> int:
    """Tuples lo .. hi - 1 of the stratified float32 sample of (t, seed) through t's op, into acc.
    The tuples of the elements that come back are regenerated on the host (and checked against the
    device's); the worst entries name their tuple index. max_host: the most undecided tuples mpmath
    decides on the host, spread evenly over the chunks (the sample aims at rounding ties: some ops
    leave 1e-3 .. 1e-2 of it undecided, which at 2^32 tuples mpmath would take hours over); the
    others are left out of the figures (acc.cases falls short of hi - lo by as many). Returns how
    many were left out."""
    if not sampled(t):
        raise ValueError(f"exhaustive.sample: {t.label} {t.dtype.name} is no float32 binary or ternary "
                         f"target with a device oracle")
    d = device_oracle(t)
    arity, key = t.oracle_arity, tuple_key(t, seed)
    index: dict = {}
    before = acc.left_out

    def on_device(start, n):
        xs_dev = stratified.stratified_tuples(arity, key, start, n)
        got = t.run_device(xs_dev)
        return xs_dev, got, _score_chunk(t, d, xs_dev, got, f"tuples [{start:#x}, {start + n:#x})")

    def consume(start, n, r):
        xs_dev, got, s = r
        acc.add_device(s)

        def operands_at(at):
            arrays = stratified.tuples_host(arity, key, start + np.asarray(at, np.int64))
            for k, (x, h) in enumerate(zip(xs_dev, arrays)):
                dev = patterns.take(x, at)
                if not np.array_equal(dev.view(np.uint32), h.view(np.uint32)):
                    i = int(np.flatnonzero(dev.view(np.uint32) != h.view(np.uint32))[0])
                    raise RuntimeError(f"{t.label}: operand {k} of tuple {start + int(at[i]):#x} is "
                                       f"{int(dev.view(np.uint32)[i]):#x} on the device, "
                                       f"{int(h.view(np.uint32)[i]):#x} regenerated on the host")
            return arrays

        back = _to_host(t, acc, got, s, operands_at, quota, start)
        if len(back):
            arrays = operands_at(back)
            for k, i in enumerate(back):
                index[tuple(hexes(arrays, k))] = start + int(i)

    quota = HostQuota(max_host, hi - lo)
    _chunks(t, lo, hi, chunk, on_device, consume)
    at, arrays = quota.finish(t, acc)
    for k, i in enumerate(at):
        index[tuple(hexes(arrays, k))] = int(i)
    # name each worst entry's tuple, so `exhaustive.tuples(t, seed, [i])` regenerates it
    acc.worst = [(k, q, dataclasses.replace(w, note=f"{w.note}; stratified tuple {index[tuple(w.inputs)]:#x} "
                                                  f"of seed {seed}".lstrip("; "))
                  if tuple(w.inputs) in index else w) for k, q, w in acc.worst]
    return acc.left_out - before


def _push_worst(t: Target, acc: Accumulator, arrays, got):
    """Worst entries for decided elements, rescored on the host (their counts are already in acc).
    Returns the host's batch."""
    scratch = Accumulator(t, acc.suite, acc.backend)
    b = score(t, arrays, got)
    scratch.add(arrays, got, b)
    for key, _, w in scratch.worst:
        acc.push_worst(w, key)
    return b
