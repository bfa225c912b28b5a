"""The runner: op x dtype x suite -> Measurement records, written as a report.

Suites: `bank` (the committed reference cases), `exhaustive16` (every input of a 16-bit or smaller
dtype, unary ops), `sweep` (stratified float32/float64 or integer samples, unary ops), `pairs`
(sampled operand tuples, binary and ternary ops), and the structural suites of suites.py.
Every job is a pure function of (target, suite, profile, seed): `--shard i/n` runs every n-th job,
and `nbx report merge` joins the shards.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from oracles import ORACLES

from .. import dtype as D
from ..backend import backend_id
from . import cases as C
from .measure import Accumulator, score
from .targets import Target, targets

# Case counts per profile. float64 results take the mpmath truth for every case, hence fewer.
PROFILES = {
    "ci": {"sweep": 1 << 13, "sweep64": 256, "pairs": 1 << 12, "pairs64": 192, "int": 1 << 11},
    "nightly": {"sweep": 1 << 17, "sweep64": 2048, "pairs": 1 << 16, "pairs64": 1024, "int": 1 << 14},
    "exhaustive": {"sweep": 1 << 32, "sweep64": 1 << 14, "pairs": 1 << 24, "pairs64": 1 << 12, "int": 1 << 20},
}
BATCH = 1 << 16
VALUE_SUITES = ("bank", "exhaustive16", "sweep", "pairs")
FAULT_OPS = {"floor_divide", "remainder", "fmod", "div"}
SHIFT_OPS = {"bitwise_left_shift", "bitwise_right_shift"}


def suites_for(t: Target, wanted=None) -> list[str]:
    out = ["bank"]
    if t.oracle_arity == 1:
        out.append("exhaustive16" if (t.dtype.itemsize <= 2 and t.op != "to") or t.dtype.is_bool else "sweep")
    else:
        out.append("pairs")
    from . import suites as S
    out += S.structural_suites(t)
    return [s for s in out if not wanted or s in wanted]


def _int_operand(t: Target, i: int, n: int, rng, d: D.DType) -> np.ndarray:
    if t.op in SHIFT_OPS and i == 1:
        return rng.integers(-2, d.bits + 3, n).astype(d.np)        # in range, and just outside it
    if t.op == "pow" and i == 1:
        return rng.integers(0, 70, n).astype(d.np)                  # negative integer exponents raise
    return C.integers(d, n, rng, nonzero=(i == 1 and t.op in FAULT_OPS))


def _float_operands(t: Target, n: int, rng, dts) -> list[np.ndarray]:
    oracle = ORACLES[t.op]
    arrs = []
    for i, d in enumerate(dts):
        if d.is_bool:
            arrs.append(rng.integers(0, 2, n).astype(bool))
        else:
            arrs.append(C.stratified(d, n, rng, oracle.domain[i]))
    if len(arrs) >= 2 and not dts[1].is_bool and n >= 8:
        k = n // 4                                                   # a quarter near each other
        arrs[1][:k] = C.close_to(arrs[0][:k], rng, dts[1])
    # the specials: a cross product for binary ops, one operand at a time for ternary
    sp = [C.special_values(d) for d in dts]
    if len(dts) == 2:
        grid = np.meshgrid(sp[0], sp[1], indexing="ij")
        rows = [g.reshape(-1) for g in grid]
    else:
        rows = [np.resize(sp[i], 0) for i in range(len(dts))]
        for j in range(len(dts)):
            m = len(sp[j])
            rows = [np.concatenate([rows[i], sp[i] if i == j else arrs[i][:m]]) for i in range(len(dts))]
    m = min(len(rows[0]), n // 2)
    for i in range(len(dts)):
        arrs[i][n - m:] = rows[i][:m]
    return arrs


def batches(t: Target, suite: str, profile: str, seed: int):
    """Operand arrays for one job, in batches of at most BATCH cases."""
    sizes = PROFILES[profile]
    dts = t.operand_dtypes()
    rng = C.rng_for(seed, t.label, t.dtype.name, suite)
    if suite == "exhaustive16":
        x = C.exhaustive16(t.dtype)
        if t.op in FAULT_OPS:
            x = x[x != 0]
        for lo in range(0, len(x), BATCH):
            yield [x[lo:lo + BATCH]]
        return
    if suite == "sweep" and t.dtype is D.float32 and sizes["sweep"] >= 1 << 32:
        for chunk in C.exhaustive32_chunks(BATCH * 64):
            yield [chunk]
        return
    if t.dtype.is_float:
        key = "sweep" if suite == "sweep" else "pairs"
        n = sizes[key + "64"] if t.dtype is D.float64 else sizes[key]
    else:
        n = sizes["int"]
    done = 0
    while done < n:
        k = min(BATCH, n - done)
        if t.dtype.is_float:
            arrs = _float_operands(t, k, rng, dts) if done == 0 else \
                [C.stratified(d, k, rng, ORACLES[t.op].domain[i]) if not d.is_bool
                 else rng.integers(0, 2, k).astype(bool) for i, d in enumerate(dts)]
        else:
            arrs = [_int_operand(t, i, k, rng, d) if not d.is_bool or t.dtype.is_bool else
                    rng.integers(0, 2, k).astype(bool) for i, d in enumerate(dts)]
            if done == 0 and suite == "sweep":
                sp = C.special_values(t.dtype)
                arrs[0][: len(sp)] = sp[: k]
        done += k
        yield arrs


def measure(t: Target, suite: str, profile: str, seed: int, backend: str):
    """One Measurement; an exception becomes the measurement's `error` (the gate fails it)."""
    start = time.perf_counter()
    acc = Accumulator(t, suite, backend)
    error = ""
    try:
        if suite == "bank":
            from . import bank
            bank.measure_bank(t, acc)
        elif suite in VALUE_SUITES:
            for arrays in batches(t, suite, profile, seed):
                got = t.run(arrays)
                acc.add(arrays, got, score(t, arrays, got))
        else:
            from . import suites as S
            S.run_structural(t, suite, profile, seed, acc)
    except Exception as e:  # noqa: BLE001 (a failure is a result here; the gate reads it)
        error = f"{type(e).__name__}: {e}"
    return acc.measurement(time.perf_counter() - start, error)


@dataclass
class Job:
    target: Target
    suite: str


def jobs(ops=None, dtypes=None, wanted_suites=None) -> list[Job]:
    out = []
    for t in targets(ops, dtypes):
        out += [Job(t, s) for s in suites_for(t, wanted_suites)]
    return out


class Progress:
    """A one-line progress bar on a terminal; a line every 10% otherwise (CI logs stay short)."""

    def __init__(self, total: int, label: str, stream=sys.stderr):
        self.total, self.label, self.stream, self.n = max(total, 1), label, stream, 0
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.start = time.perf_counter()
        self.last_decile = -1

    def step(self, what: str = "") -> None:
        self.n += 1
        frac = self.n / self.total
        el = time.perf_counter() - self.start
        if self.tty:
            bar = "#" * int(30 * frac)
            self.stream.write(f"\r{self.label} [{bar:<30}] {self.n}/{self.total} {el:6.1f}s {what[:40]:<40}")
            if self.n == self.total:
                self.stream.write("\n")
            self.stream.flush()
        elif int(frac * 10) > self.last_decile:
            self.last_decile = int(frac * 10)
            self.stream.write(f"{self.label}: {self.n}/{self.total} ({100 * frac:.0f}%) {el:.1f}s\n")
            self.stream.flush()


def run(ops=None, dtypes=None, suites=None, profile="ci", seed=0, shard=(0, 1), progress=True):
    if profile not in PROFILES:
        raise ValueError(f"profile {profile!r} is not one of {', '.join(PROFILES)}")
    all_jobs = jobs(ops, dtypes, suites)
    i, n = shard
    mine = all_jobs[i::n]
    bid = backend_id()
    bar = Progress(len(mine), f"nbx run {profile}") if progress else None
    out = []
    try:
        for job in mine:
            out.append(measure(job.target, job.suite, profile, seed, bid))
            if bar:
                bar.step(f"{job.target.label} {job.target.dtype.name} {job.suite}")
    except KeyboardInterrupt:       # SIGINT, or SIGTERM from a time limit (cli): keep what was measured
        print(f"nbx run: interrupted after {len(out)} of {len(mine)} jobs", file=sys.stderr)
        INTERRUPTED.append((len(out), len(mine)))
    return out


INTERRUPTED: list = []
