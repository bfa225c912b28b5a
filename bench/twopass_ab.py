"""One-pass against two-pass deferred launches (launch.TWOPASS), A/B in one run, 2^28 float32.

one: deferred_flat_kernel (fast values, the tile's key reduction, the exact pieces under a branch);
two: deferred_fast_kernel + deferred_fixup_kernel, with the fast kernel's launch options as given
(two@32: maxnreg=32). Each variant's output is compared bit for bit with one's, on inputs in [1, 2)
and on hard inputs; the hard cases are timed too (sin on [0, 1e6]: half the elements outside the fast
domain; log with a NaN every 1000 elements; erf all NaN).
Usage: PYTHONPATH=$PWD python3 bench/twopass_ab.py [--ops log,tan,erf] [--variants one,two,two@32] [--reps 10]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

import nbx                                   # first: it sets TRITON_INTERPRET where there is no GPU
from nbx.kernels import launch as L, math as m
from nbx.ops import arithmetic

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from elementwise import device_copy_ms, make_input, time_ms  # noqa: E402
from fast32_variants import print_registers  # noqa: E402

BODIES = {"log": m.log, "sin": m.sin, "cos": m.cos, "tan": m.tan, "rsqrt": m.rsqrt, "erf": m.erf,
          "floor_divide": arithmetic._float_floor_divide}
ORIGINAL = dict(m.DEFERRED)


def _set(variant: str, body):
    name, _, spec = variant.partition("@")
    L.TWOPASS = name == "two"
    opts = (("maxnreg", int(spec)),) if spec else ()
    m.DEFERRED[body] = ORIGINAL[body]._replace(options=opts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=28)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--ops", default="log,tan,erf,sin,cos,rsqrt,floor_divide")
    ap.add_argument("--variants", default="one,two,two@32,two@40")
    ap.add_argument("--passes", type=int, default=2)
    a = ap.parse_args(argv)
    n = 1 << a.log2n
    copy_ms = device_copy_ms(4 * n, a.reps)
    print(f"backend {nbx.backend_id()}; n = 2^{a.log2n} float32; copy {copy_ms:.3f} ms", flush=True)
    x = make_input(n)
    y = make_input(n, 1.5, 2.5)
    rng = np.random.default_rng(0)
    hard = {"sin": (rng.uniform(0, 1e6, n)).astype(np.float32),
            "log": make_input(n).numpy(), "erf": np.full(n, np.nan, np.float32)}
    hard["log"][::1000] = np.nan
    hard = {k: nbx.from_numpy(v) for k, v in hard.items()}
    out = nbx.empty(n, dtype="float32")
    variants = a.variants.split(",")

    def run(op, inp):
        body = BODIES[op]
        ins = [inp, y] if op == "floor_divide" else [inp]
        return lambda: L.launch(body, out, ins, [], compute=[nbx.float32] * len(ins), op=op)

    wrong = {}
    for op in a.ops.split(","):
        for inp_name, inp in [("[1,2)", x)] + ([("hard", hard[op])] if op in hard else []):
            ref = None
            for v in variants:
                _set(v, BODIES[op])
                run(op, inp)()
                bits = out.numpy().view(np.uint32).copy()
                if ref is None:
                    ref = bits
                else:
                    wrong[(op, inp_name, v)] = int((bits != ref).sum())
            m.DEFERRED[BODIES[op]] = ORIGINAL[BODIES[op]]
    print("bits differing from the first variant:", wrong, flush=True)
    for p in range(a.passes):
        for op in a.ops.split(","):
            for v in variants:
                _set(v, BODIES[op])
                ms = time_ms(run(op, x), a.reps)
                frac = copy_ms / ms * (1.5 if op == "floor_divide" else 1.0)
                print(f"pass {p} {op:>12} {v:>8}: {ms:7.3f} ms  {frac:5.2f} of copy", flush=True)
            m.DEFERRED[BODIES[op]] = ORIGINAL[BODIES[op]]
    for op, inp in hard.items():
        if op not in a.ops.split(","):
            continue
        for v in variants:
            _set(v, BODIES[op])
            ms = time_ms(run(op, inp), max(2, a.reps // 3))
            print(f"hard {op:>12} {v:>8}: {ms:7.3f} ms  {copy_ms / ms:5.2f} of copy", flush=True)
        m.DEFERRED[BODIES[op]] = ORIGINAL[BODIES[op]]
    L.TWOPASS = True
    print_registers()
    return 0


if __name__ == "__main__":
    sys.exit(main())
