"""Every float32 input through the float32 fast paths (OpSpec.fast32), against the ops' exact bodies.

Per unary fast path (all 2^32 bit patterns by default): the evaluation's worst relative error against
its bound E, inputs called hard, tiles falling back, and WRONG (must be 0); then every binary fast
path on random pairs. nbx/harness/fastpath.py says what each figure means.
Usage: PYTHONPATH=$PWD python3 bench/fast32_exhaustive.py [--fns log,sin,erf] [--log2n 32]
       [--stride 1] [--pairs-log2 26] [--json FILE]. On the CPU: --log2n 20 --stride 4093 --pairs-log2 18.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

import nbx
from nbx.harness.suites import fastpath
def _log2(err: float) -> str:
    return f"2^{math.log2(err):.2f}" if err else "0 (the same as the reference)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    unary = {p.label: p for p in fastpath.fast_paths(arity=1)}
    ap.add_argument("--fns", default=",".join(unary), help=f"unary fast paths, of: {', '.join(unary)}")
    ap.add_argument("--log2n", type=int, default=32)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--chunk-log2", type=int, default=30)
    ap.add_argument("--pairs-log2", type=int, default=26)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    print(f"backend {nbx.backend_id()} ({nbx.backend_info()['device']})")
    rows = []
    for name in filter(None, a.fns.split(",")):
        if name not in unary:
            ap.error(f"--fns: no unary fast path {name!r}; choose from {', '.join(unary)}")
        row = fastpath.probe_unary(unary[name], a.log2n, a.start, a.stride, min(a.chunk_log2, a.log2n))
        rows.append(row)
        print(f"{name:5s} inputs 2^{a.log2n} (stride {a.stride}): E {_log2(row['bound'])}, max rel err {_log2(row['max_rel_err'])}  "
              f"hard {row['hard']} ({row['hard'] / row['inputs']:.2e})  tiles falling back "
              f"{row['tiles_hard']}/{row['tiles']}  WRONG {row['wrong']} {' '.join(row['wrong_inputs'])}  "
              f"{row['seconds']} s", flush=True)
    if a.pairs_log2:
        x, y = fastpath.random_pairs(1 << a.pairs_log2)
        for probe in fastpath.fast_paths(arity=2):
            row = fastpath.probe_binary(probe, x, y)
            rows.append(row)
            print(f"{row['fn']:24s} pairs 2^{a.pairs_log2}: hard {row['hard']}  tiles falling "
                  f"back {row['tiles_hard']}/{row['tiles']}  WRONG {row['wrong']}  {row['seconds']} s", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"backend": nbx.backend_id(), "rows": rows}, f, indent=1)
    return 1 if any(r["wrong"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
