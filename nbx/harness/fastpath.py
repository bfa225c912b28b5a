"""Checks of the float32 fast paths (nbx/kernels/fast32.py) against the libdevice paths they stand in for.

`probe_unary(name, ...)` runs float32 bit patterns (all 2^32 of them on the GPU: bench/fast32_exhaustive.py)
through a fast path and, per input, the float64 libdevice value: the fast value's worst relative error
inside the fast domain (the rounding test's bound E, bound(name), must exceed it), how many inputs the test
calls hard, how many 1024-element tiles would fall back, and WRONG: inputs the test passes whose float32
result differs from the libdevice path's (the test's whole claim: must be 0).
`probe_divide(a, b, trunc)` does the same for the exact floor/trunc quotient against the fmod path.
"""
from __future__ import annotations

import math
import time

import numpy as np
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from .. import empty, from_numpy
from ..kernels import fast32, launch
from ..ops import arithmetic

BLOCK = 1024


@triton.jit
def _log_ref(w):
    return libdevice.log(w)


@triton.jit
def _sin_ref(w):
    return libdevice.sin(w)


@triton.jit
def _cos_ref(w):
    return libdevice.cos(w)


@triton.jit
def _tan_ref(w):
    return libdevice.tan(w)


@triton.jit
def _rsqrt_ref(w):
    return 1.0 / libdevice.sqrt(w)


@triton.jit
def _erf_ref(w):
    return libdevice.erf(w)


@triton.jit
def _erf_clamped_ref(w):
    return libdevice.erf(tl.minimum(tl.maximum(w, -fast32.ERF_CLAMP), fast32.ERF_CLAMP))


# name: (fast path, libdevice reference, what the fast value approximates, the rounding test's
# window K in float64 ulps: E = K 2^-53, the fast path's table (an array, or a tuple of parameters)
# or None: fast(x, table) or fast(x))
FNS = {"log": (fast32.log_table_fast, _log_ref, _log_ref, fast32.HARD_K, fast32.LOG_TABLE),
       "sin": (fast32.sincos_fast, _sin_ref, _sin_ref, fast32.HARD_K, fast32.SIN_PARAMS),
       "cos": (fast32.sincos_fast, _cos_ref, _cos_ref, fast32.HARD_K, fast32.COS_PARAMS),
       "tan": (fast32.tan_fast, _tan_ref, _tan_ref, fast32.HARD_K, fast32.TAN_PARAMS),
       "rsqrt": (fast32.rsqrt_fast, _rsqrt_ref, _rsqrt_ref, fast32.HARD_K, None),
       "erf": (fast32.erf_fast, _erf_ref, _erf_clamped_ref, fast32.ERF_K, fast32.ERF_PARAMS)}


def bound(name: str) -> float:
    """E, the relative error the rounding test of `name` allows for (K float64 ulps)."""
    return int(FNS[name][3]) * 2.0 ** -53


@triton.jit
def _probe(err_out, hard_out, wrong_out, first_out, start, stride, tab, FAST: tl.constexpr, TAB: tl.constexpr,
           REF: tl.constexpr, APPROX: tl.constexpr, K: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = (start + (pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)) * stride) & 0xFFFFFFFF
    x = i.to(tl.uint32).to(tl.float32, bitcast=True)
    if TAB:
        y, outside = FAST(x, tab)
    else:
        y, outside = FAST(x)
    ref = REF(x.to(tl.float64))
    hard = outside | fast32.hard_to_round(y, K)
    y32 = y.to(tl.float32)
    r32 = ref.to(tl.float32)
    # the error of y against what it approximates (erf: erf of x clamped to [-4, 4]); WRONG below
    # is against the function itself
    approx = APPROX(x.to(tl.float64))
    ok = (~outside) & (approx == approx) & (tl.abs(approx) < float("inf")) & (approx != 0)
    err = tl.where(ok, tl.abs(y - approx) / tl.abs(tl.where(ok, approx, 1.0)), 0.0)
    differ = (y32.to(tl.int32, bitcast=True) != r32.to(tl.int32, bitcast=True)) & ((y32 == y32) | (r32 == r32))
    tl.store(err_out + pid, tl.max(err))
    tl.store(hard_out + pid, tl.sum(hard.to(tl.int32)))
    tl.store(wrong_out + pid, tl.sum((differ & ~hard).to(tl.int32)))
    tl.store(first_out + pid, tl.min(tl.where(differ & ~hard, i, 0x100000000)))


def probe_unary(name: str, log2n: int, start: int, stride: int, chunk_log2: int) -> dict:
    fast, ref, approx, k, table = FNS[name]
    n = 1 << log2n
    chunk = min(n, 1 << chunk_log2)
    tiles = chunk // BLOCK
    err, hard, wrong, first = (empty(tiles, dtype=d) for d in ("float64", "int32", "int32", "int64"))
    tab = err if table is None else launch.device_table(table)
    wrong_inputs = []
    worst, n_hard, n_tiles_hard, n_wrong = 0.0, 0, 0, 0
    t = time.perf_counter()
    for c in range(n // chunk):
        _probe[(tiles,)](err, hard, wrong, first, start + c * chunk * stride, stride, tab, FAST=fast,
                         TAB=table is not None, REF=ref, APPROX=approx, K=k,
                         BLOCK=BLOCK, enable_reflect_ftz=False)
        e, h, w = err.numpy(), hard.numpy(), wrong.numpy()
        worst = max(worst, float(e.max()))
        n_hard += int(h.sum())
        n_tiles_hard += int((h > 0).sum())
        n_wrong += int(w.sum())
        f = first.numpy()
        wrong_inputs += [int(v) for v in f[f < 0x100000000][:20]]
    return {"fn": name, "inputs": n, "start": start, "stride": stride,
            "max_rel_err": worst, "max_rel_err_log2": math.log2(worst) if worst else None,
            "hard": n_hard, "tiles": n // BLOCK, "tiles_hard": n_tiles_hard, "wrong": n_wrong,
            "wrong_inputs": [f"0x{v:08x}" for v in wrong_inputs[:20]],
            "seconds": round(time.perf_counter() - t, 2)}


@triton.jit
def _probe_divide(a_ptr, b_ptr, wrong_out, outside_out, n, TRUNC: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    a = tl.load(a_ptr + i, mask=mask, other=1.0)
    b = tl.load(b_ptr + i, mask=mask, other=1.0)
    q, outside = fast32.divide_integral_fast(a, b, TRUNC)
    if TRUNC:
        ref = arithmetic._via_fmod(a, b, arithmetic._float_div_trunc_impl)
    else:
        ref = arithmetic._via_fmod(a, b, arithmetic._float_floor_divide_impl)
    q32 = q.to(tl.float32)
    differ = q32.to(tl.int32, bitcast=True) != ref.to(tl.int32, bitcast=True)
    tl.store(wrong_out + pid, tl.sum((differ & ~outside & mask).to(tl.int32)))
    tl.store(outside_out + pid, tl.sum((outside & mask).to(tl.int32)))


def probe_divide(a: np.ndarray, b: np.ndarray, trunc: bool) -> dict:
    """a, b float32 arrays of one length: fast floor (or trunc) quotient against the fmod path."""
    n = a.size
    tiles = -(-n // BLOCK)
    wrong, outside = empty(tiles, dtype="int32"), empty(tiles, dtype="int32")
    t = time.perf_counter()
    _probe_divide[(tiles,)](from_numpy(a), from_numpy(b), wrong, outside, n, TRUNC=trunc, BLOCK=BLOCK,
                            enable_reflect_ftz=False)
    o = outside.numpy()
    return {"fn": "div_trunc" if trunc else "floor_divide", "inputs": n, "outside": int(o.sum()),
            "tiles": tiles, "tiles_hard": int((o > 0).sum()), "wrong": int(wrong.numpy().sum()),
            "seconds": round(time.perf_counter() - t, 2)}


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
