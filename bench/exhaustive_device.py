"""Every input of a unary op, and stratified samples of binary and ternary float32 ops, decided on
the device: the op's results against its device oracle (nbx/oracles/device), undecided inputs decided
by mpmath on the host (measure.score).

Unary (--suite unary): every unary target with a device oracle (exact-result ones too: casts,
predicates), as the exhaustive profile runs it (exhaustive.sweep): inputs covered, misrounded, wrong
(bool and integer results), special mismatches, max ulp, undecided inputs sent to mpmath and their
fraction, seconds (after a first small range that compiles the kernels). Inputs are the bit
patterns LO..HI-1 of the dtype (default: all of them), made on the device in chunks.
Pairs (--suite pairs): every float32 binary and ternary target with a device oracle (split ops
included), on tuples LO..HI-1 of its stratified sample (harness/exhaustive.sample, the exhaustive
profile's pairs suite: default all 2^32 on CUDA, 2^20 elsewhere): tuples, misrounded, special
mismatches, max ulp, undecided tuples sent to mpmath and left out (beyond --max-host), the first
failing tuples as indices of the sample, seconds; and the generator's own speed.
--phases: the unary targets' device seconds by phase, no host scoring (the figure "kernel + oracle
+ scoring per op"; 0.19-0.24 s per 2^32 inputs alone on an H200, reports/h200/exhaustive-20261204.md).
Usage: PYTHONPATH=$PWD python3 bench/exhaustive_device.py [--suite unary|pairs|all] [--ops sigmoid,gelu]
       [--dtype float32] [--bits LO:HI] [--tuples LO:HI] [--seed 0] [--chunk-log2 28] [--json FILE].
On the CPU: --bits 0x3f000000:0x3f400000 --tuples 0:0x100000.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import nbx
from nbx.oracles import device
from nbx.harness.scoring.device import FORMATS, score
from nbx.harness.inputs import patterns
from nbx.harness.inputs import stratified
from nbx.harness.suites import exhaustive
from nbx.harness.scoring import host as measure
from nbx.harness.targets.target import Target, targets
from nbx.oracles import ORACLES

CUDA = nbx.backend_info()["backend"] == "cuda"


def _bits(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition(":")
    return int(lo, 0), int(hi, 0)


def sweep(t: Target, lo: int, hi: int, chunk: int) -> dict:
    """One unary target over bit patterns lo .. hi - 1 (exhaustive.sweep, as the runner's exhaustive
    profile runs it): the op, its device oracle and the scoring, undecided inputs decided by mpmath."""
    acc = measure.Accumulator(t, "sweep", nbx.backend_id())
    exhaustive.sweep(t, lo, lo + min(chunk, hi - lo, 1 << 16), measure.Accumulator(t, "sweep", nbx.backend_id()), chunk)
    nbx.synchronize()                                         # the kernels compiled: not in the seconds
    t0 = time.perf_counter()
    exhaustive.sweep(t, lo, hi, acc, chunk)
    nbx.synchronize()
    secs = time.perf_counter() - t0
    m = acc.measurement(secs)
    first = [w.inputs[0] for w in m.worst if w.got != w.expected][:8]
    return {"op": t.label, "dtype": t.dtype.name, "bits": [hex(lo), hex(hi)], "inputs": m.cases,
            "misrounded": m.not_correctly_rounded, "wrong": m.wrong, "specials": m.special_mismatches,
            "max_ulp": m.max_ulp, "undecided_to_mpmath": m.undecided,
            "undecided_fraction": m.undecided / max(1, hi - lo), "first_failing": first,
            "seconds": round(secs, 3)}


def phases(t: Target, lo: int, hi: int, chunk: int) -> dict:
    """Device seconds of one unary target over lo .. hi - 1, by phase (each synchronized): making the
    bit patterns, the op, the device's scoring (decisions and figures, their copy to the host).
    No host scoring: the issue's figure of kernel + oracle + scoring per op."""
    d = exhaustive.device_oracle(t)
    secs = {"inputs": 0.0, "op": 0.0, "score": 0.0}
    listed = 0
    for first in (True, False):                     # the first pass over a small range compiles
        for start in range(lo, lo + min(chunk, hi - lo) if first else hi, chunk):
            n = min(chunk, hi - start)
            t0 = time.perf_counter()
            x = patterns.bit_patterns(t.dtype.name, start, n)
            nbx.synchronize()
            t1 = time.perf_counter()
            got = t.run_device([x])
            nbx.synchronize()
            t2 = time.perf_counter()
            s = score(d, [x], got, exhaustive._params(t, d), zero_sign=ORACLES[t.op].zero_sign_matters)
            t3 = time.perf_counter()
            if not first:
                secs["inputs"] += t1 - t0
                secs["op"] += t2 - t1
                secs["score"] += t3 - t2
                listed += s.undecided + s.misrounded + s.specials
    return {"op": t.label, "dtype": t.dtype.name, "bits": [hex(lo), hex(hi)], "listed": listed,
            **{k: round(v, 4) for k, v in secs.items()}, "seconds": round(sum(secs.values()), 4)}


def pairs(t: Target, lo: int, hi: int, chunk: int, max_host: int, seed: int) -> dict:
    """One float32 binary or ternary target over tuples lo .. hi - 1 of its stratified sample."""
    acc = measure.Accumulator(t, "pairs", nbx.backend_id())
    t0 = time.perf_counter()
    left_out = exhaustive.sample(t, lo, hi, acc, seed, chunk=chunk, max_host=max_host)
    nbx.synchronize()
    secs = time.perf_counter() - t0
    m = acc.measurement(secs)
    first = [w.note.split("stratified tuple ")[1].split()[0] for w in m.worst
             if "stratified tuple" in w.note and (w.got != w.expected)]
    return {"op": t.label, "dtype": "float32", "arity": t.oracle_arity, "tuples": [hex(lo), hex(hi)],
            "scored": m.cases, "misrounded": m.not_correctly_rounded, "specials": m.special_mismatches,
            "max_ulp": m.max_ulp, "undecided_to_mpmath": m.undecided, "left_out": left_out,
            "first_failing_tuples": first[:8], "seed": seed, "seconds": round(secs, 2)}


def generator_speed(arity: int, n: int) -> float:
    """Seconds to make n tuples on the device (one launch, after a warm-up)."""
    stratified.stratified_tuples(arity, 1, 0, min(n, 1 << 16))
    bufs = [nbx.empty(n, dtype="float32") for _ in range(arity)]
    nbx.synchronize()
    t0 = time.perf_counter()
    stratified.stratified_tuples(arity, 1, 0, n, out=bufs)
    nbx.synchronize()
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", choices=("unary", "pairs", "all"), default="all")
    ap.add_argument("--ops", default="", help="labels, comma-separated (default: every one with a device oracle)")
    ap.add_argument("--dtype", default="float32", choices=sorted(FORMATS), help="of the unary sweeps")
    ap.add_argument("--bits", type=_bits, default=None, help="LO:HI bit patterns of the unary sweeps (default: all)")
    ap.add_argument("--tuples", type=_bits, default=None,
                    help="LO:HI tuple indices of the pairs samples (default: 0:2^32 on CUDA, 0:2^20 elsewhere)")
    ap.add_argument("--seed", type=int, default=0, help="the run seed the pairs samples derive from")
    ap.add_argument("--chunk-log2", type=int, default=28 if CUDA else 20)
    ap.add_argument("--max-host", type=int, default=100_000,
                    help="undecided tuples mpmath decides per pairs job at most (the rest left out of the sample)")
    ap.add_argument("--phases", action="store_true",
                    help="unary: device seconds by phase (inputs, op, scoring), no host scoring")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    wanted = set(filter(None, a.ops.split(",")))
    rows = []
    print(f"backend {nbx.backend_id()} ({nbx.backend_info()['device']})")
    if a.suite in ("unary", "all"):
        lo, hi = a.bits or (0, 1 << (8 * nbx.DTYPES[a.dtype].itemsize))
        print(f"unary: {a.dtype} bits {lo:#x}:{hi:#x}")
        total = 0.0
        for t in targets(dtypes=[a.dtype]):
            if t.oracle_arity != 1 or exhaustive.device_oracle(t) is None or wanted and t.label not in wanted and \
                    t.op not in wanted:
                continue
            if a.phases:
                r = phases(t, lo, hi, 1 << a.chunk_log2)
                rows.append(r)
                total += r["seconds"]
                print(f"{t.label:24s} {r['seconds']:.3f} s: inputs {r['inputs']:.3f}  op {r['op']:.3f}  "
                      f"score {r['score']:.3f}  (undecided or failing listed: {r['listed']:,})", flush=True)
                continue
            r = sweep(t, lo, hi, 1 << a.chunk_log2)
            rows.append(r)
            total += r["seconds"]
            print(f"{t.label:24s} inputs {r['inputs']:>11,}  misrounded {r['misrounded']:>8,}  wrong {r['wrong']:>6,}  "
                  f"specials {r['specials']:>6,}  max {r['max_ulp']:.4g} ulp  undecided->mpmath "
                  f"{r['undecided_to_mpmath']:>6,} ({r['undecided_fraction']:.2e})  "
                  f"{' '.join(r['first_failing'])}  {r['seconds']} s", flush=True)
        print(f"unary: {total:.1f} s in all", flush=True)
    if a.suite in ("pairs", "all"):
        lo, hi = a.tuples or (0, 1 << 32 if CUDA else 1 << 20)
        chunk = 1 << a.chunk_log2
        for arity in (2, 3):
            n = min(chunk, hi - lo)
            print(f"generator: {n:,} {arity}-tuples in {generator_speed(arity, n):.3f} s", flush=True)
        print(f"pairs: float32 tuples {lo:#x}:{hi:#x} of seed {a.seed}")
        for t in targets(dtypes=["float32"]):
            if not exhaustive.sampled(t) or wanted and t.label not in wanted and t.op not in wanted:
                continue
            r = pairs(t, lo, hi, chunk, a.max_host, a.seed)
            rows.append(r)
            print(f"{t.label:24s} tuples {r['scored']:>13,}  misrounded {r['misrounded']:>9,}  "
                  f"specials {r['specials']:>7,}  max {r['max_ulp']:.4g} ulp  undecided->mpmath "
                  f"{r['undecided_to_mpmath']:>7,}  left out {r['left_out']:,}  "
                  f"{' '.join(r['first_failing_tuples'])}  {r['seconds']} s", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"backend": nbx.backend_id(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
