"""Every element-wise op, nbx and torch side by side, against a device-to-device copy in the same run.

Per op (its first measured variant, and each variant that picks another body: div's rounding modes,
gelu's tanh form), on the op's float32 dtype (int32 for the integer ops; int16 for bf16_to_fp16),
for each input distribution (uniform [1, 2]; realistic: randn * 4 in the op's domain; hard: the mix
that sends the most elements to the exact path) and layout (contiguous; strided: a padded slice,
a transposed operand, a broadcast row), bench/distributions.py says which: nbx's time and its
bandwidth as a fraction of the copy's, torch's (the op of nbx's peer table, on the same tensors
through DLPack; "-" where torch cannot be imported or has no such op), and for an op with a float32
fast path the fraction of elements that took the exact path. Bandwidth counts each operand's
elements once (a broadcast row once, a slice without its padding) and the result's. The copy is
cudaMemcpy D2D of 2^log2n float32, timed before the ops (and again after them, to show drift).

The exact-path fraction is counted, not modelled: the op runs once more through its own launcher
and fast path (registry.run, the same tiles and pieces) with its exact body replaced by one that
stores a marker NaN, on min(n, 2^22) elements of the same distribution and layout; the marked
elements are those the exact path wrote.

Every op (103 targets) x 3 distributions x 2 layouts at 2^28 (the usage below with its defaults and
NBX_BACKEND=cuda) took 86 s on an H100 from an empty Triton cache, torch 2.11 beside nbx (618 rows).
Targets (issue 31): every float32 op >= 0.95 of copy contiguous and >= torch's ratio - 0.02, on
each distribution; strided >= 0.90. On the interpreter the figures are the code path's, not times.
Usage: PYTHONPATH=$PWD python3 bench/elementwise.py [--log2n 28] [--ops exp,div:rounding_mode=floor]
       [--dists uniform,realistic,hard] [--layouts contiguous,strided] [--reps 20] [--json FILE]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from pathlib import Path

import numpy as np
import nbx  # (first: it chooses the backend, and the interpreter, before any kernel is decorated)
import triton
import triton.language as tl
from nbx import backend
from nbx.harness.records.files import atomic_write_text
from nbx.harness.targets import peers
from nbx.harness.targets.target import Target, measured
from nbx.ops import OPS, registry

from bench.distributions import DISTS, LAYOUTS, Inputs, fast_path

COUNT_ELEMENTS = 1 << 22
MARKER = tl.constexpr(0x7FC0DEAD)     # a quiet NaN whose payload no fast value has (theirs are canonical)


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


# ---------------------------------------------------------------- which targets
def bench_dtype(spec):
    names = spec.dtype_names
    return next(nbx.dtype.DTYPES[d] for d in ("float32", "int32", *names) if d in names and d != "bool")


def default_targets(spec) -> list[Target]:
    """An op's first measured variant on bench_dtype, and each variant with another value of a
    'choice' parameter (another body or fast path: div's rounding modes, gelu's tanh form)."""
    d = bench_dtype(spec)
    choice = [p.name for p in spec.params if p.kind == "choice"]
    seen, out = set(), []
    for params in measured(spec, d):
        key = tuple(params.get(c) for c in choice)
        if key not in seen:
            out.append(Target(spec.name, params, d))
            seen.add(key)
    return out


def bench_targets(wanted=None) -> list[Target]:
    """wanted: op names (their default_targets) or variant labels (div:rounding_mode=floor); None: every op."""
    if not wanted:
        return [t for spec in OPS.values() for t in default_targets(spec)]
    every = {t.label: t for spec in OPS.values() for t in
             [Target(spec.name, p, bench_dtype(spec)) for p in measured(spec, bench_dtype(spec))]}
    out = []
    for w in wanted:
        if w in OPS:
            out += default_targets(OPS[w])
        elif w in every:
            out.append(every[w])
        else:
            raise SystemExit(f"--ops: no op or variant {w!r}; ops are {', '.join(OPS)}")
    return out


# ---------------------------------------------------------------- the exact path's share, counted
@triton.jit
def _mark1(a):
    return tl.full(a.shape, MARKER, tl.int32).to(tl.float32, bitcast=True)


@triton.jit
def _mark2(a, b):
    return tl.full(a.shape, MARKER, tl.int32).to(tl.float32, bitcast=True)


@triton.jit
def _mark3(a, b, c):
    return tl.full(a.shape, MARKER, tl.int32).to(tl.float32, bitcast=True)


@triton.jit
def _mark1_q1(a, q0):
    return _mark1(a)


@triton.jit
def _mark1_q2(a, q0, q1):
    return _mark1(a)


# by (operands, scalar parameters): the unary ops with fast paths take up to two numbers
MARKERS = {(1, 0): _mark1, (2, 0): _mark2, (3, 0): _mark3, (1, 1): _mark1_q1, (1, 2): _mark1_q2}


def exact_fraction(t: Target, tensors) -> float:
    """The fraction of the result's elements that the exact path wrote: the op's own launch with
    its exact body replaced by one returning MARKER."""
    spec = OPS[t.op]
    numbers = sum(p.kind == "number" for p in spec.params)
    marked = dataclasses.replace(spec, body=MARKERS[spec.arity, numbers])
    got = registry.run(marked, list(tensors), dict(t.params)).numpy()
    return float(np.count_nonzero(got.view(np.uint32) == MARKER.value)) / got.size


# ---------------------------------------------------------------- torch
def torch_call(t: Target, tensors):
    """A no-argument callable running torch's op on the same memory, or a reason why there is none."""
    try:
        import torch
    except ImportError:
        return None, "torch cannot be imported"
    if not peers.has_peer("torch", t.op):
        return None, "no torch op"
    fn = peers.TORCH[t.op]
    xs = [torch.from_dlpack(x) for x in tensors]
    return (lambda: fn(torch, *xs, **t.params)), ""


def _nbytes(y) -> int:
    return int(y.numel()) * int(y.element_size() if hasattr(y, "element_size") else y.itemsize)


# ---------------------------------------------------------------- the run
def measure(inputs: Inputs, t: Target, dist: str, layout: str, n: int, reps: int) -> dict:
    """One row: nbx's and torch's times and bytes on the same operands, the exact-path fraction."""
    row = {"op": t.label, "dtype": t.dtype.name, "dist": dist, "layout": layout, "nbx_ms": None, "nbx_bytes": None,
           "torch_ms": None, "torch_bytes": None, "torch": "", "exact_fraction": None, "error": ""}
    try:
        ops = inputs.operands(t, dist, layout, n)
        row["nbx_bytes"] = ops.read_bytes + _nbytes(t.invoke(list(ops.tensors), {}))
        row["nbx_ms"] = time_ms(lambda: t.invoke(list(ops.tensors), {}), reps)
        call, row["torch"] = torch_call(t, ops.tensors)
        if call is not None:
            try:
                row["torch_bytes"] = ops.read_bytes + _nbytes(call())
                row["torch_ms"] = time_ms(call, reps)
            except Exception as e:  # noqa: BLE001 (torch refuses these operands: say so)
                row["torch"] = f"{type(e).__name__}: {str(e)[:80]}"
        if fast_path(t) is not None:
            counted = inputs.operands(t, dist, layout, min(n, COUNT_ELEMENTS))
            row["exact_fraction"] = exact_fraction(t, counted.tensors)
    except Exception as e:  # noqa: BLE001 (an op that refuses the case: say so, do not hide it)
        row["error"] = f"{type(e).__name__}: {str(e)[:120]}"
    return row


def bench(targets, n: int, dists, layouts, reps: int, out=print) -> dict:
    """Every target x dist x layout at n elements, each row printed (`out`) as it is measured."""
    copy_bytes = 4 * n
    copy_ms = device_copy_ms(copy_bytes, reps)
    copy_gbs = 2 * copy_bytes / copy_ms / 1e6
    try:
        import torch
        torch_version = str(torch.__version__)
    except ImportError:
        torch_version = None
    inputs = Inputs()
    rows = []
    out(f"backend {nbx.backend_id()} ({nbx.backend_info()['device']}); n = 2^{int(math.log2(n))}; reps {reps}; "
        f"torch {torch_version or '-'}")
    out(f"device copy of 2^{int(math.log2(n))} float32: {copy_ms:.3f} ms, {copy_gbs:.0f} GB/s (read + write); "
        f"/copy: the op's GB/s over this")
    out(f"{'op':<28} {'dtype':<8} {'dist':<9} {'layout':<10} {'nbx ms':>9} {'/copy':>6} {'torch ms':>9} "
        f"{'/copy':>6} {'exact':>7}")
    for t in targets:
        for dist in dists:
            for layout in layouts:
                row = measure(inputs, t, dist, layout, n, reps)
                for side in ("nbx", "torch"):
                    ms, nbytes = row[f"{side}_ms"], row[f"{side}_bytes"]
                    row[f"{side}_of_copy"] = nbytes / ms / 1e6 / copy_gbs if ms else None
                rows.append(row)
                out(format_row(row))
    copy_after = device_copy_ms(copy_bytes, reps)
    out(f"device copy again: {copy_after:.3f} ms ({copy_after / copy_ms:.3f} of the first)")
    return {"backend": nbx.backend_info(), "torch": torch_version, "n": n, "reps": reps, "copy_ms": copy_ms,
            "copy_GB/s": copy_gbs, "copy_ms_after": copy_after, "count_elements": min(n, COUNT_ELEMENTS),
            "rows": rows}


def format_row(row: dict) -> str:
    f = lambda v, spec: "-" if v is None else format(v, spec)
    head = f"{row['op']:<28} {row['dtype']:<8} {row['dist']:<9} {row['layout']:<10} "
    if row["error"]:
        return head + "error: " + row["error"]
    return head + (f"{f(row['nbx_ms'], '9.3f')} {f(row['nbx_of_copy'], '6.2f')} {f(row['torch_ms'], '9.3f'):>9} "
                   f"{f(row['torch_of_copy'], '6.2f'):>6} {f(row['exact_fraction'], '7.4f'):>7}")


def _names(text: str, allowed, flag: str) -> list[str]:
    got = [w for w in text.split(",") if w]
    bad = [w for w in got if w not in allowed]
    if bad:
        raise SystemExit(f"{flag}: {', '.join(bad)} not among {', '.join(allowed)}")
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=28 if backend.IS_CUDA else 12,
                    help="elements per operand: 2^log2n (default 28 on CUDA, 12 on the interpreter)")
    ap.add_argument("--ops", default="", help="comma-separated op names or labels (div:rounding_mode=floor); "
                                              "default: every op")
    ap.add_argument("--dists", default=",".join(DISTS), help=f"of {', '.join(DISTS)}")
    ap.add_argument("--layouts", default=",".join(LAYOUTS), help=f"of {', '.join(LAYOUTS)}")
    ap.add_argument("--reps", type=int, default=20 if backend.IS_CUDA else 2)
    ap.add_argument("--json", default="", help="write the table as JSON here (atomically)")
    a = ap.parse_args(argv)
    targets = bench_targets([w for w in a.ops.split(",") if w] or None)
    res = bench(targets, 1 << a.log2n, _names(a.dists, DISTS, "--dists"), _names(a.layouts, LAYOUTS, "--layouts"),
                a.reps, out=lambda s: print(s, flush=True))
    if a.json:
        atomic_write_text(Path(a.json), json.dumps(res, indent=1) + "\n")
    return 1 if any(r["error"] for r in res["rows"]) else 0


if __name__ == "__main__":
    sys.exit(main())
