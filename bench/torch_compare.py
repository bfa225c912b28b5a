"""nbx against torch's CUDA kernels, float32, on the SAME inputs, scored by the same oracles.

For every op with a torch counterpart: the nightly-profile cases of its value suite (sweep for
unary, pairs for binary/ternary), run through nbx and through torch on the GPU, each scored with
nbx.harness.scoring.host.score (float64 oracle, mpmath for close calls). torch is a peer to compare with,
never a dependency of nbx: this script is the only place it is imported.
Usage: PYTHONPATH=$PWD python3 bench/torch_compare.py [--profile nightly] [--json FILE] [--ops a,b]
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

import nbx
from nbx.harness import api
from nbx.harness.suites import values
from nbx.harness.scoring.host import Accumulator, score
from nbx.harness.targets.target import Target, targets


def torch_fn(op: str, params: dict):
    import torch
    import torch.nn.functional as F
    special = {
        "log_sigmoid": lambda x: F.logsigmoid(x),
        "swiglu": lambda g, u: F.silu(g) * u,
        "silu_and_mul": lambda g, u: F.silu(g) * u,
        "glu": lambda a, b: F.glu(torch.cat([a, b]), dim=0),
        "threshold": lambda x: F.threshold(x, params["threshold"], params["value"]),
        "dropout": lambda x: F.dropout(x, training=False),
        "copy": lambda x: x.clone(),
        "masked_fill": lambda x, m: x.masked_fill(m, params["value"]),
        "clamp": lambda x: torch.clamp(x, params.get("min"), params.get("max")),
        "to": lambda x: x.to(getattr(torch, params["dtype"])),
        "hardsigmoid": F.hardsigmoid, "hardswish": F.hardswish, "silu": F.silu, "gelu": None,
        "mish": F.mish, "softplus": F.softplus, "elu": F.elu, "celu": F.celu, "selu": F.selu,
        "leaky_relu": F.leaky_relu, "relu": F.relu,
    }
    if op in special and special[op] is not None:
        fn = special[op]
    elif op == "gelu":
        fn = F.gelu
    else:
        fn = getattr(torch, op, None)
    if fn is None:
        return None
    kw = {k: v for k, v in params.items() if op not in ("threshold", "masked_fill", "clamp", "to")}
    return lambda *a: fn(*a, **kw)


def measure_torch(t: Target, suite: str, profile: str, seed: int):
    import torch
    fn = torch_fn(t.op, t.params)
    if fn is None:
        return None
    acc = Accumulator(t, suite, "torch-" + torch.__version__)
    for arrays in values.batches(t, suite, profile, seed):
        ins = [torch.from_numpy(np.ascontiguousarray(a)).cuda() for a in arrays]
        got = fn(*ins).cpu().numpy()
        acc.add(arrays, got, score(t, arrays, got))
    return acc.measurement(0.0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="nightly")
    ap.add_argument("--json", default="")
    ap.add_argument("--ops", default="")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    import torch
    rows = []
    wanted = [o for o in a.ops.split(",") if o] or None
    for t in targets(wanted, ["float32"]):
        suite = "sweep" if t.oracle_arity == 1 else "pairs"
        if t.split:
            suite = "pairs"
        mine = api.measure(t, suite, profile=a.profile, seed=a.seed)
        try:
            theirs = measure_torch(t, suite, a.profile, a.seed)
        except Exception as e:  # noqa: BLE001 (an op torch does not take this way: say so)
            theirs, err = None, f"{type(e).__name__}: {str(e)[:80]}"
        else:
            err = ""
        row = {"op": t.label, "suite": suite, "cases": mine.cases, "nbx_max_ulp": mine.max_ulp,
               "nbx_not_cr": mine.not_correctly_rounded, "nbx_specials": mine.special_mismatches,
               "nbx_error": mine.error}
        if theirs is not None:
            row.update(torch_max_ulp=theirs.max_ulp, torch_not_cr=theirs.not_correctly_rounded,
                       torch_specials=theirs.special_mismatches, torch_wrong=theirs.wrong)
        else:
            row["torch"] = err or "no torch counterpart"
        rows.append(row)
        tm = f"{row['torch_max_ulp']:10.3g} {row['torch_specials']:5d}" if "torch_max_ulp" in row else row["torch"][:40]
        print(f"{t.label:<28} {mine.cases:8d} nbx {mine.max_ulp:10.3g} {mine.special_mismatches:5d}   torch {tm}",
              flush=True)
    out = {"backend": nbx.backend_info(), "torch": torch.__version__, "profile": a.profile, "rows": rows}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
