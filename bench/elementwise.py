"""Bandwidth of every element-wise op against a device-to-device copy, measured in the same run.

Prints, per op at N float32 elements (default 2^28) contiguous, plus add with a broadcast operand and
with a transposed operand: time, GB/s (bytes read + written) and the ratio to cudaMemcpy D2D.
Targets (issue 2): contiguous >= 0.90 of copy; strided/broadcast >= 0.75.
Usage: PYTHONPATH=$PWD python3 bench/elementwise.py [--log2n 28] [--ops exp,add] [--reps 20] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

import nbx
from nbx import backend


def _events():
    from cuda.bindings import runtime as cudart
    _, start = cudart.cudaEventCreate()
    _, stop = cudart.cudaEventCreate()
    return cudart, start, stop


def time_ms(fn, reps: int) -> float:
    """Mean time per call of `reps` calls issued back to back (CUDA events on the default stream
    around the whole batch) after 3 warm-ups: the host's launch work for one call overlaps the
    GPU's execution of the previous one, as in a real stream of ops. Timing each call alone would
    count the host's ~0.1 ms of Python launch work as idle GPU time."""
    if not backend.IS_CUDA:
        import time
        fn()
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        return (time.perf_counter() - t) * 1e3 / reps
    cudart, start, stop = _events()
    for _ in range(3):
        fn()
    cudart.cudaDeviceSynchronize()
    cudart.cudaEventRecord(start, 0)
    for _ in range(reps):
        fn()
    cudart.cudaEventRecord(stop, 0)
    cudart.cudaEventSynchronize(stop)
    return float(cudart.cudaEventElapsedTime(start, stop)[1]) / reps


def device_copy_ms(nbytes: int, reps: int) -> float:
    src, dst = nbx.empty(nbytes, dtype="uint8"), nbx.empty(nbytes, dtype="uint8")
    if backend.IS_CUDA:
        return time_ms(lambda: dst._storage.copy_from(0, src._storage, 0, nbytes), reps)
    return time_ms(lambda: dst._storage.buf.__setitem__(slice(0, nbytes), src._storage.buf[:nbytes]), reps)


# positive inputs keep every op in its domain (log, sqrt, acosh (>=1) ...); integers for integral ops
def make_input(n: int, low=1.0, high=2.0, dtype="float32"):
    rng = np.random.default_rng(0)
    if dtype.startswith("int"):
        return nbx.from_numpy(rng.integers(1, 100, n).astype(dtype))
    return nbx.from_numpy(rng.uniform(low, high, n).astype(dtype))


def bench_ops(n: int, ops, reps: int):
    rows = []
    copy_ms = device_copy_ms(4 * n, reps)
    copy_gbs = 2 * 4 * n / copy_ms / 1e6
    print(f"backend {nbx.backend_id()} ({nbx.backend_info()['device']}); n = 2^{int(math.log2(n))} float32")
    print(f"device copy: {copy_ms:.3f} ms, {copy_gbs:.0f} GB/s (read + write)")
    x = make_input(n)
    y = make_input(n, 1.5, 2.5)
    w = make_input(n, 0.1, 0.9)
    xi = None
    for name in ops:
        spec = nbx.OPS[name]
        if nbx.float32 not in spec.dtypes:
            if nbx.int32 not in spec.dtypes:
                continue
            xi = xi if xi is not None else make_input(n, dtype="int32")
            args = [xi] * spec.arity
        else:
            args = [x, y, w][: spec.arity]
        fn = nbx.FUNCTIONS[name]
        kwargs = {}
        if name == "to":
            kwargs = {"dtype": "float16"}
        if name in ("glu", "silu_and_mul"):
            args = [x.view(n // 1024, 1024)]
        try:
            out = fn(*args, **kwargs)
        except Exception as e:  # an op that needs other arguments: say so, do not hide it
            print(f"{name:>16}: skipped ({type(e).__name__}: {e})")
            continue
        ms = time_ms(lambda: fn(*args, **kwargs), reps)
        nbytes = sum(a.numel() * a.itemsize for a in args if isinstance(a, nbx.Tensor)) + out.numel() * out.itemsize
        gbs = nbytes / ms / 1e6
        rows.append({"case": name, "ms": ms, "GB/s": gbs, "ratio": gbs / copy_gbs, "layout": "contiguous"})
        print(f"{name:>16}: {ms:8.3f} ms {gbs:8.0f} GB/s  {gbs / copy_gbs:5.2f} of copy")
    side = int(math.isqrt(n))
    a2 = x.view(side, n // side)
    cases = {
        "add broadcast (N,1)+(N,M)": (a2, make_input(side).view(side, 1)),
        "add broadcast (N,M)+(M,)": (a2, make_input(n // side)),
        "add transposed (M,N).T+(N,M)": (a2, y.view(n // side, side).T),
    }
    for label, (p, q) in cases.items():
        ms = time_ms(lambda: nbx.add(p, q), reps)
        nbytes = (p.numel() + q.numel() + p.numel()) * 4      # q's own elements, read once
        gbs = nbytes / ms / 1e6
        rows.append({"case": label, "ms": ms, "GB/s": gbs, "ratio": gbs / copy_gbs, "layout": "strided"})
        print(f"{label:>30}: {ms:8.3f} ms {gbs:8.0f} GB/s  {gbs / copy_gbs:5.2f} of copy")
    return {"backend": nbx.backend_info(), "n": n, "copy_ms": copy_ms, "copy_GB/s": copy_gbs, "rows": rows}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=28 if backend.IS_CUDA else 20)
    ap.add_argument("--ops", default="", help="comma-separated op names (default: all)")
    ap.add_argument("--reps", type=int, default=20 if backend.IS_CUDA else 2)
    ap.add_argument("--json", default="")
    a = ap.parse_args(argv)
    ops = [o for o in a.ops.split(",") if o] or list(nbx.OPS)
    res = bench_ops(1 << a.log2n, ops, a.reps)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
