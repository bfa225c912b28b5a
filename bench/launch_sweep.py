"""Launch parameters against compute-bound bodies: the flat tile (BLOCK) and num_warps, per op.

float32 transcendentals evaluated in float64 are bound by the H200's float64 rate, not memory
(issue 2). This sweep asks whether occupancy or per-thread work changes that: it re-runs
bench/elementwise.py's contiguous cases with the launcher's flat tile and num_warps overridden.
Usage: PYTHONPATH=$PWD python3 bench/launch_sweep.py [--ops gelu,sigmoid] [--log2n 28]
"""
from __future__ import annotations

import argparse
import sys

from nbx.kernels import launch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import elementwise  # noqa: E402

SLOW = "gelu,mish,acosh,erfc,pow,asinh,silu,softplus,floor_divide,erf,sigmoid,sinh,log,sin,tan"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", default=SLOW)
    ap.add_argument("--log2n", type=int, default=28)
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args(argv)
    ops = a.ops.split(",")
    results = {}
    for block in (512, 1024, 2048):
        for warps in (2, 4, 8):
            launch._MAX_C = launch._TILE = block
            launch.LAUNCH_OPTIONS = {"num_warps": warps}
            print(f"--- BLOCK {block}, num_warps {warps}")
            res = elementwise.bench_ops(1 << a.log2n, ops, a.reps)
            for r in res["rows"]:
                results.setdefault(r["case"], {})[(block, warps)] = r["ratio"]
    launch.LAUNCH_OPTIONS = {}
    print("\nratio to copy; columns BLOCK/num_warps")
    keys = sorted({k for v in results.values() for k in v})
    print(f"{'case':>30} " + " ".join(f"{b}/{w:<5}" for b, w in keys))
    for case, v in results.items():
        print(f"{case:>30} " + " ".join(f"{v.get(k, float('nan')):8.2f}" for k in keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
