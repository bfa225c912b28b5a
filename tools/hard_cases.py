"""List the hard cases of float32 unary ops over every input, for the kernels' exact fallback.

Usage: NBX_BACKEND=cuda python3 tools/hard_cases.py [--op NAME ...] [--bits LO:HI] [--out DIR] [--jobs N]

For each unary op without parameters that has a device oracle (default: all of them), every float32
bit pattern in LO..HI (default all 2^32) goes through the device oracle, whose value v is within k
float64 ulps of f(x); the scorer (harness/scoring/device.py) lists as undecided every x whose
interval v +- (k + 2 (K + 1) + 2) ulps holds a float32 rounding midpoint, K = kernels/hard32.py's
HARD32_K. That covers every x with |f(x) - midpoint| <= K + 1 ulps of f(x). Each candidate is then
decided by mpmath (the op's oracle, Ziv's loop): its correctly rounded float32 value and its
distance to the nearest midpoint in float64 ulps; those within K + 1 ulps are the table.
Writes <out>/<op>.json atomically (default: nbx/kernels/hard32_cases/), with the candidates' count
and the range covered. A table is only complete over all 2^32 inputs: the tests read `inputs`.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import mpmath
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbx  # noqa: E402  (chooses the backend before any kernel module)
from nbx import backend  # noqa: E402
from nbx.harness.inputs import patterns  # noqa: E402
from nbx.harness.records.files import atomic_write_text  # noqa: E402
from nbx.harness.scoring import device as device_scoring  # noqa: E402
from nbx.harness.scoring.host import round_exact_or_ziv  # noqa: E402
from nbx.dtype import float32  # noqa: E402
from nbx.kernels.hard32 import CASES_DIR, HARD32_K, table_name  # noqa: E402
from nbx.oracles import ORACLES, evaluate_mp  # noqa: E402
from nbx.oracles.device import DEVICE_ORACLES  # noqa: E402
from nbx.oracles.formats import get_format  # noqa: E402
from nbx.ops import OPS  # noqa: E402

F32 = get_format("float32")
CHUNK = 1 << 26 if backend.IS_CUDA else 1 << 20


def table_ops() -> list[str]:
    """Unary float ops with number or choice parameters and a device oracle of their own name,
    whose float32 body is a float64 evaluation (not exact: Verify.exact32)."""
    return sorted(name for name, spec in OPS.items()
                  if spec.arity == 1 and all(p.kind in ("number", "choice") for p in spec.params) and spec.rule == "F"
                  and name in DEVICE_ORACLES and DEVICE_ORACLES[name].arity == 1 and DEVICE_ORACLES[name].k > 0
                  and not spec.verify.exact32)


def device_oracle(op: str, params: dict):
    """The device oracle of the op at these values: the variant's own (`gelu:approximate=tanh`),
    else the op's, which takes its number parameters as arguments."""
    defaults = {p.name: p.default for p in OPS[op].params}
    label = ",".join(f"{k}={v}" for k, v in sorted(params.items()) if v != defaults.get(k))
    return DEVICE_ORACLES.get(f"{op}:{label}") or DEVICE_ORACLES[op]


def variants(op: str) -> list[tuple[str, dict]]:
    """(table name, parameter values) of the op at its defaults and at each variant its spec
    measures on float32 (verify.Variant)."""
    spec = OPS[op]
    defaults = {p.name: p.default for p in spec.params}
    out = [{**defaults}] + [{**defaults, **v.params} for v in spec.verify.variants if v.applies(float32)]
    return [(table_name(op, params, defaults), params) for params in out]


def window(k_oracle: float) -> float:
    """The scorer's k that makes every x with |f(x) - midpoint| <= K + 1 ulps undecided: v is within
    k_oracle 2^-53 |v| of f(x), and K + 1 ulps of f(x) are at most 2 (K + 1) 2^-53 |v| (+2 for the
    binade edge and v's own rounding)."""
    return k_oracle + 2 * (HARD32_K + 1) + 2


def candidates(op: str, params: dict, lo: int, hi: int) -> tuple[np.ndarray, int]:
    """(bit patterns of the undecided inputs in lo..hi-1, inputs scanned)."""
    d = device_oracle(op, params)
    wide = dataclasses.replace(d, k=window(d.k))
    p = [float(params.get(name, ORACLES[op].params.get(name, 0.0))) for name in d.params] + [0.0, 0.0]
    found = []
    for start in range(lo, hi, CHUNK):
        n = min(CHUNK, hi - start)
        xs = patterns.bit_patterns("float32", start, n)
        s = device_scoring.score(wide, [xs], xs, tuple(p[:2]), zero_sign=True, cap=1 << 22, listed=0)
        if s.index_overflow:
            raise RuntimeError(f"{op}: more than 2^22 candidates in [{start:#x}, {start + n:#x})")
        found.append(start + s.undecided_at.astype(np.int64))
    return (np.concatenate(found) if found else np.zeros(0, np.int64)), hi - lo


def decide(op: str, params: dict, bits: int) -> tuple[int, int, float]:
    """(x bits, correctly rounded float32 bits, |f(x) - nearest midpoint| in float64 ulps of f(x))."""
    x = float(np.uint32(bits).view(np.float32))
    oracle = ORACLES[op]
    rr = round_exact_or_ziv(oracle, (x,), params, F32)
    r = np.uint32(rr.bits).view(np.float32)
    with mpmath.workprec(200):
        y = evaluate_mp(oracle, (x,), params)
        if not isinstance(y, mpmath.mpf) or y == 0 or not mpmath.isfinite(y):
            return bits, int(rr.bits), float("inf")
        ulp = mpmath.mpf(2) ** (mpmath.floor(mpmath.log(abs(y), 2)) - 52)
        mids = [(mpmath.mpf(float(r)) + mpmath.mpf(float(np.nextafter(r, s * np.float32(np.inf))))) / 2
                for s in (-1, 1)]
        dist = min(abs(y - m) for m in mids if mpmath.isfinite(m)) / ulp
    return bits, int(rr.bits), float(dist)


def dumps(doc: dict) -> str:
    """JSON with one entry a line (a refreshed table diffs by entry)."""
    head = json.dumps({k: v for k, v in doc.items() if k != "entries"}, indent=1)[:-2]
    rows = ",\n".join("  " + json.dumps(e) for e in doc["entries"])
    return f'{head},\n "entries": [\n{rows}\n ]\n}}\n'


def _decide_all(op: str, params: dict, found: np.ndarray, jobs: int) -> list[tuple[int, int, float]]:
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(decide, [op] * len(found), [params] * len(found), [int(b) for b in found],
                             chunksize=16))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--op", action="append", help="an op (default: every unary float op with a device oracle); "
                                                  "its variants' tables too")
    ap.add_argument("--bits", default=None, help="LO:HI, a range of float32 bit patterns (default all 2^32)")
    ap.add_argument("--out", type=Path, default=CASES_DIR)
    ap.add_argument("--jobs", type=int, default=4)
    a = ap.parse_args(argv)
    lo, hi = (0, 1 << 32) if a.bits is None else (int(v, 0) for v in a.bits.split(":"))
    ops = a.op or table_ops()
    unknown = [o for o in ops if o not in table_ops()]
    if unknown:
        ap.error(f"--op {', '.join(unknown)}: not a unary float op with number or choice parameters and a device oracle; "
                 f"allowed: {', '.join(table_ops())}")
    a.out.mkdir(parents=True, exist_ok=True)
    for op, (name, params) in [(op, v) for op in ops for v in variants(op)]:
        t0 = time.time()
        found, scanned = candidates(op, params, lo, hi)
        t1 = time.time()
        decided = _decide_all(op, params, found, a.jobs)
        keep = sorted((b, r, d) for b, r, d in decided if d <= HARD32_K + 1)
        doc = {"op": name, "k": HARD32_K, "inputs": [f"{lo:#x}", f"{hi:#x}"], "scanned": scanned,
               "oracle_k": device_oracle(op, params).k, "candidates": len(found),
               "rule": f"every float32 x in inputs with |f(x) - midpoint| <= {HARD32_K + 1} float64 ulps of f(x)",
               "entries": [[f"{b:#010x}", f"{r:#010x}", round(d, 3)] for b, r, d in keep]}
        atomic_write_text(a.out / f"{name}.json", dumps(doc))
        print(f"{name:<12} scanned {scanned}  candidates {len(found):6d}  kept {len(keep):5d}  "
              f"device {t1 - t0:6.1f}s  mpmath {time.time() - t1:6.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
