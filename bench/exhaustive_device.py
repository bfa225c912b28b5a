"""Every input of a unary op, decided on the device: the op's results against its device oracle
(oracles/device), undecided inputs decided by mpmath on the host (measure.score).

Per op: inputs covered, misrounded, special mismatches, max ulp, undecided inputs sent to mpmath,
seconds. Inputs are the bit patterns LO..HI-1 of the dtype (default: all of them), made on the
device in chunks.
Usage: PYTHONPATH=$PWD python3 bench/exhaustive_device.py [--ops sigmoid,gelu] [--dtype float32]
       [--bits LO:HI] [--chunk-log2 28] [--json FILE]. On the CPU: --bits 0x3f000000:0x3f400000.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import nbx
import oracles.device as OD
from nbx.harness import device_score as S
from nbx.harness import measure
from nbx.harness.targets import Target
from oracles import ORACLES


def _bits(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition(":")
    return int(lo, 0), int(hi, 0)


def sweep(label: str, dtype: str, lo: int, hi: int, chunk: int, max_host: int) -> dict:
    op, _, choice = label.partition(":")
    params = dict(kv.split("=") for kv in choice.split(",")) if choice else {}
    oracle = OD.DEVICE_ORACLES[label]
    fn = nbx.FUNCTIONS[op]
    t0 = time.perf_counter()
    total = S.DeviceScore()
    host_not_cr = host_special = 0
    host_err_max = 0.0
    host_failing = []
    host_done = 0
    for start in range(lo, hi, chunk):
        n = min(chunk, hi - start)
        x = S.bit_patterns(dtype, start, n)
        got = fn(x, **params)
        s = S.score_unary(oracle, x, got, [ORACLES[op].params.get(p, 0.0) for p in oracle.params],
                          zero_sign=ORACLES[op].zero_sign_matters)
        total.merge(s, offset=start)
        # mpmath decides at most max_host undecided inputs per op; the rest are reported unverified
        take = s.undecided_at[:max(0, max_host - host_done)]
        host_done += len(take)
        if len(take):
            xs = x.numpy()[take]
            gs = got.numpy()[take]
            b = measure.score(Target(op, params, nbx.DTYPES[dtype]), [xs], gs)
            host_not_cr += int((b.not_cr & ~b.special).sum())
            host_special += int(b.special.sum())
            host_failing += (take[b.not_cr | b.special] + start).tolist()
            ok = ~b.special & np.isfinite(b.err)
            if ok.any():
                host_err_max = max(host_err_max, float(b.err[ok].max()))
    worst = max(total.err_max, host_err_max)
    return {"op": label, "dtype": dtype, "bits": [hex(lo), hex(hi)], "inputs": total.n,
            "misrounded": total.misrounded + host_not_cr, "specials": total.specials + host_special,
            "max_ulp": worst, "undecided_to_mpmath": host_done, "unverified": total.undecided - host_done + total.index_overflow,
            "first_misrounded": [hex(int(v)) for v in sorted(total.failing_at.tolist() + host_failing)[:8]],
            "seconds": round(time.perf_counter() - t0, 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", default=",".join(OD.DEVICE_ORACLES), help="device-oracle labels, comma-separated")
    ap.add_argument("--dtype", default="float32", choices=sorted(S.FORMATS))
    ap.add_argument("--bits", type=_bits, default=None, help="LO:HI bit patterns (default: all)")
    ap.add_argument("--chunk-log2", type=int, default=28 if nbx.backend_info()["backend"] == "cuda" else 20)
    ap.add_argument("--max-host", type=int, default=100_000,
                    help="undecided inputs mpmath decides per op at most (the rest: unverified)")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    lo, hi = a.bits or (0, 1 << (8 * nbx.DTYPES[a.dtype].itemsize))
    print(f"backend {nbx.backend_id()} ({nbx.backend_info()['device']}), {a.dtype} bits {lo:#x}:{hi:#x}")
    rows = []
    for label in filter(None, a.ops.split(",")):
        if label not in OD.DEVICE_ORACLES:
            ap.error(f"--ops: no device oracle {label!r}")
        r = sweep(label, a.dtype, lo, hi, 1 << a.chunk_log2, a.max_host)
        rows.append(r)
        print(f"{label:24s} inputs {r['inputs']:>11,}  misrounded {r['misrounded']:>8,}  specials {r['specials']:>6,}  "
              f"max {r['max_ulp']:.4g} ulp  undecided->mpmath {r['undecided_to_mpmath']:>6,}  "
              f"unverified {r['unverified']:,}  "
              f"{' '.join(r['first_misrounded'])}  {r['seconds']} s", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"backend": nbx.backend_id(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
