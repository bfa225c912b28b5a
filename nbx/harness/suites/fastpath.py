"""Probes of the float32 fast paths (OpSpec.fast32) against the exact bodies they stand in for.

fast_paths() lists every (op, choice of parameters) that runs a fast path on float32. For a unary
one, probe_unary runs float32 bit patterns (all 2^32 of them on the GPU: bench/fast32_exhaustive.py)
through its evaluation and, per input, the op's exact body: the evaluation's worst relative error
against what it approximates (FastPath.reference) inside the fast domain (the rounding test's bound
E = FastPath.bound must exceed it), how many inputs the test calls hard, how many 1024-element tiles
would fall back, and WRONG: inputs the test passes whose float32 result differs from the exact
body's (the test's whole claim: must be 0). probe_binary does the same for a binary fast path on
given operand pairs.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import triton
import triton.language as tl

from nbx.dtype import float32
from nbx.kernels import launch
from nbx.kernels.fast32.keys import hard_to_round
from nbx.kernels.fastpath import FastPath
from nbx.kernels.flat import apply_body, evaluate, load_params
from nbx.ops import COMPOSED, OPS
from nbx.ops.registry import OpSpec, Typing
from nbx.tensor import empty, from_numpy

BLOCK = 1024


@dataclass(frozen=True)
class Probe:
    """One fast path as a float32 launch runs it: the op, its choice parameters, the exact body."""
    spec: OpSpec
    params: dict
    fast: FastPath
    exact: object

    @property
    def label(self) -> str:
        return self.spec.name + "".join(f":{k}={v}" for k, v in sorted(self.params.items()))

    def scalars(self) -> tuple[list, int]:
        """(the op's number parameters at this probe's values as its kernels take them: one-element
        tensors, padded to three; how many there are)."""
        params = {**{p.name: p.default for p in self.spec.params}, **self.params}
        f32 = Typing(float32, float32, (float32,) * self.spec.arity)
        qs = self.spec.scalar_tensors(params, f32)
        return qs + [qs[0] if qs else empty(1, dtype="float64")] * (3 - len(qs)), len(qs)


def fast_paths(arity: int | None = None) -> list[Probe]:
    """Every op (and every spec an op composes over) and choice of its 'choice' parameters with a
    float32 fast path."""
    return [Probe(spec, params, fast, exact) for spec in [*OPS.values(), *COMPOSED]
            if arity is None or spec.arity == arity
            for params, fast, exact in spec.fast32_variants()]


@triton.jit
def _probe(err_out, hard_out, wrong_out, first_out, start, stride, p0, p1, p2, tab, FAST: tl.constexpr,
           TAB: tl.constexpr, EXACT: tl.constexpr, REF: tl.constexpr, K: tl.constexpr, NP: tl.constexpr,
           BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = (start + (pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)) * stride) & 0xFFFFFFFF
    x = i.to(tl.uint32).to(tl.float32, bitcast=True)
    q0, q1, q2 = load_params(p0, p1, p2, NP)
    y, outside = evaluate(FAST, TAB, 1, NP, x, x, x, q0, q1, q2, tab)
    hard = outside | hard_to_round(y, K)
    y32 = y.to(tl.float32)
    r32 = apply_body(EXACT, 1, NP, x, x, x, q0, q1, q2).to(tl.float32)   # the float64 value the store rounds
    # the error of y against what it approximates, where the float32 result is neither 0 nor inf
    # (|ref| in [2^-151, 2^128): a fast path may clamp its argument where the result rounds to 0 or
    # inf either way); WRONG below is against the op's exact body, on every input
    w = x.to(tl.float64)
    ref = apply_body(REF, 1, NP, w, w, w, q0, q1, q2)
    ok = (~outside) & (tl.abs(ref) >= 3.5032461608120427e-46) & (tl.abs(ref) < 3.402823669209385e38)
    err = tl.where(ok, tl.abs(y - ref) / tl.abs(tl.where(ok, ref, 1.0)), 0.0)
    differ = (y32.to(tl.int32, bitcast=True) != r32.to(tl.int32, bitcast=True)) & ((y32 == y32) | (r32 == r32))
    tl.store(err_out + pid, tl.max(err))
    tl.store(hard_out + pid, tl.sum(hard.to(tl.int32)))
    tl.store(wrong_out + pid, tl.sum((differ & ~hard).to(tl.int32)))
    tl.store(first_out + pid, tl.min(tl.where(differ & ~hard, i, 0x100000000)))


def probe_unary(probe: Probe, log2n: int, start: int, stride: int, chunk_log2: int) -> dict:
    """2^log2n float32 bit patterns start, start + stride, ... (mod 2^32) through a unary fast path."""
    fast = probe.fast
    if probe.spec.arity != 1 or fast.reference is None:
        raise ValueError(f"probe_unary: {probe.label} is not a unary fast path with a reference")
    n = 1 << log2n
    chunk = min(n, 1 << chunk_log2)
    tiles = chunk // BLOCK
    err, hard, wrong, first = (empty(tiles, dtype=d) for d in ("float64", "int32", "int32", "int64"))
    tab = err if fast.table is None else launch.device_table(fast.table)
    qs, n_params = probe.scalars()
    wrong_inputs = []
    worst, n_hard, n_tiles_hard, n_wrong = 0.0, 0, 0, 0
    t = time.perf_counter()
    for c in range(n // chunk):
        _probe[(tiles,)](err, hard, wrong, first, start + c * chunk * stride, stride, *qs, tab, FAST=fast.evaluate,
                         TAB=fast.table is not None, EXACT=probe.exact, REF=fast.reference, K=fast.k,
                         NP=n_params, BLOCK=BLOCK, **launch.kernel_options())
        e, h, w = err.numpy(), hard.numpy(), wrong.numpy()
        worst = max(worst, float(e.max()))
        n_hard += int(h.sum())
        n_tiles_hard += int((h > 0).sum())
        n_wrong += int(w.sum())
        f = first.numpy()
        wrong_inputs += [int(v) for v in f[f < 0x100000000][:20]]
    return {"fn": probe.label, "inputs": n, "start": start, "stride": stride, "bound": fast.bound,
            "max_rel_err": worst, "max_rel_err_log2": math.log2(worst) if worst else None,
            "hard": n_hard, "tiles": n // BLOCK, "tiles_hard": n_tiles_hard, "wrong": n_wrong,
            "wrong_inputs": [f"0x{v:08x}" for v in wrong_inputs[:20]],
            "seconds": round(time.perf_counter() - t, 2)}


@triton.jit
def _probe_binary(a_ptr, b_ptr, wrong_out, outside_out, n, p0, p1, p2, tab, FAST: tl.constexpr, TAB: tl.constexpr,
                  EXACT: tl.constexpr, K: tl.constexpr, NP: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    a = tl.load(a_ptr + i, mask=mask, other=1.0)
    b = tl.load(b_ptr + i, mask=mask, other=1.0)
    q0, q1, q2 = load_params(p0, p1, p2, NP)
    y, outside = evaluate(FAST, TAB, 2, NP, a, b, b, q0, q1, q2, tab)
    hard = outside
    if K > 0:
        hard = outside | hard_to_round(y, K)
    ref = apply_body(EXACT, 2, NP, a, b, b, q0, q1, q2).to(tl.float32)   # a body may return the float64 value the store rounds
    differ = y.to(tl.float32).to(tl.int32, bitcast=True) != ref.to(tl.int32, bitcast=True)
    tl.store(wrong_out + pid, tl.sum((differ & ~hard & mask).to(tl.int32)))
    tl.store(outside_out + pid, tl.sum((hard & mask).to(tl.int32)))


def probe_binary(probe: Probe, a: np.ndarray, b: np.ndarray) -> dict:
    """float32 arrays a, b of one length through a binary fast path against the op's exact body."""
    if probe.spec.arity != 2:
        raise ValueError(f"probe_binary: {probe.label} is not a binary fast path")
    n = a.size
    tiles = -(-n // BLOCK)
    wrong, hard = empty(tiles, dtype="int32"), empty(tiles, dtype="int32")
    qs, n_params = probe.scalars()
    tab = wrong if probe.fast.table is None else launch.device_table(probe.fast.table)
    t = time.perf_counter()
    _probe_binary[(tiles,)](from_numpy(a.astype(np.float32)), from_numpy(b.astype(np.float32)), wrong, hard, n,
                            *qs, tab, FAST=probe.fast.evaluate, TAB=probe.fast.table is not None,
                            EXACT=probe.exact, K=probe.fast.k, NP=n_params,
                            BLOCK=BLOCK,
                            **launch.kernel_options())
    h = hard.numpy()
    return {"fn": probe.label, "inputs": n, "hard": int(h.sum()), "tiles": tiles, "tiles_hard": int((h > 0).sum()),
            "wrong": int(wrong.numpy().sum()), "seconds": round(time.perf_counter() - t, 2)}


def random_pairs(n: int, seed: int = 0):
    """float32 pairs whose quotients span the fast range and its edges: magnitudes 2^-40..2^40,
    exact multiples, integers, signed zeros, infinities and NaN sprinkled in."""
    rng = np.random.default_rng(seed)
    mag = lambda: np.exp2(rng.uniform(-40, 40, n)) * rng.choice([-1.0, 1.0], n)
    a, b = mag(), mag()
    close = rng.random(n) < 0.5                      # half the pairs with quotients below 2^24
    b = np.where(close, a / np.exp2(rng.uniform(-30, 24, n)) * rng.choice([-1.0, 1.0], n), b)
    ints = rng.random(n) < 0.2
    b = np.where(ints, rng.integers(-9, 10, n), b)
    a = np.where(ints, rng.integers(-1000, 1000, n), a)
    mult = rng.random(n) < 0.1                       # exact multiples: remainders of zero
    a = np.where(mult, b.astype(np.float32).astype(np.float64) * rng.integers(-4096, 4096, n), a)
    special = rng.random(n) < 1e-3
    a = np.where(special, rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan], n), a)
    return a.astype(np.float32), b.astype(np.float32)
