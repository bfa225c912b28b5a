"""The persistent pipelined flat kernel (flat.deferred_flat_persistent_kernel) against the one-tile-
per-program flat kernel, for the deferred float32 bodies: bandwidth as a fraction of a device copy
timed right before each item (interleaved, so drift in the machine's clocks over the run touches both),
over several passes, plus a bit-for-bit check of the two kernels' results on random bit patterns.
Each config: body@stages,programs_per_sm[,block=B][,warps=W]; stages 0 = the one-tile kernel.
Usage: PYTHONPATH=$PWD python3 bench/persist_sweep.py [--passes 3] [--reps 10] [--log2n 28]
           [--check 24] [--configs erf@0,0 erf@3,2 ...]
"""
from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

import nbx
from nbx.kernels import launch as L

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from elementwise import device_copy_ms, make_input, time_ms  # noqa: E402

DEFAULT = ["erf@0,0", "erf@2,2", "erf@3,2", "erf@3,3", "erf@4,2", "erf@3,1", "erf@3,4", "erf@3,2,block=1024",
           "erf@3,4,block=1024", "erf@3,2,warps=8", "sin@0,0", "sin@3,3,block=1024", "cos@0,0",
           "cos@3,3,block=1024", "tan@0,0", "tan@3,3,block=1024", "log@0,0", "neg@0,0"]


def parse(cfg: str):
    op, _, rest = cfg.partition("@")
    parts = rest.split(",")
    persist = (int(parts[0]), int(parts[1]))
    opts = dict(p.split("=") for p in parts[2:])
    return op, persist, int(opts.get("block", 0)), int(opts.get("warps", 0))


def configure(persist, block, warps):
    L.PERSIST = persist
    L.FLAT_BLOCK = block
    L.LAUNCH_OPTIONS = {"num_warps": warps} if warps else {}


def check(ops, log2n: int) -> None:
    """Every op's persistent result against the one-tile kernel's, bit for bit, on random float32
    bit patterns (half of them uniform in [-8, 8]), and with out= aliasing the input."""
    rng = np.random.default_rng(7)
    n = 1 << log2n
    x = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x[: n // 2] = rng.uniform(-8, 8, n // 2).astype(np.float32)
    t = nbx.from_numpy(x)
    for op in ops:
        configure((0, 0), 0, 0)
        ref = getattr(nbx, op)(t).numpy().view(np.uint32)
        for persist in [(3, 2), (2, 1), (4, 3)]:
            configure(persist, 0, 0)
            got = getattr(nbx, op)(t).numpy().view(np.uint32)
            al = nbx.from_numpy(x.copy())
            getattr(nbx, op)(al, out=al)
            print(f"check {op} persist={persist}: {int((got != ref).sum())} differ, aliased "
                  f"{int((al.numpy().view(np.uint32) != ref).sum())} differ, of {n}", flush=True)
    configure((0, 0), 0, 0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--log2n", type=int, default=28)
    ap.add_argument("--check", type=int, default=24)
    ap.add_argument("--configs", nargs="*", default=DEFAULT)
    a = ap.parse_args(argv)
    n = 1 << a.log2n
    print(nbx.backend_info(), flush=True)
    if a.check:
        check(sorted({parse(c)[0] for c in a.configs if parse(c)[0] in ("erf", "sin", "cos", "tan", "log", "rsqrt")}), a.check)
    x = make_input(n)
    for cfg in a.configs:            # compile every config before timing
        op, persist, block, warps = parse(cfg)
        configure(persist, block, warps)
        getattr(nbx, op)(x)
    ratios = {c: [] for c in a.configs}
    for p in range(a.passes):
        for cfg in a.configs:
            op, persist, block, warps = parse(cfg)
            configure(persist, block, warps)
            fn = getattr(nbx, op)
            copy_ms = device_copy_ms(4 * n, a.reps)
            ms = time_ms(lambda: fn(x), a.reps)
            ratios[cfg].append(copy_ms / ms)
            print(f"pass {p} {cfg:28s} {ms:7.3f} ms  copy {copy_ms:6.3f} ms  {copy_ms / ms:5.3f} of copy", flush=True)
    print("\nconfig                        median   passes")
    for cfg, r in ratios.items():
        print(f"{cfg:28s}  {statistics.median(r):5.3f}   " + " ".join(f"{v:.3f}" for v in r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
