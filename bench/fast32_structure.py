"""Kernel structure for the float32 fast paths, outside the launcher: where the cost of the rounding
test and the deferred exact path comes from, and what a persistent kernel with prefetch changes.

Each variant is a flat kernel over 2^28 float32 elements in [1, 2) with a deferred body's fast part
(math.DEFERRED) and, where it has one, its exact part; figures are fractions of a device copy
measured in the same run, with the registers and spills of the compiled kernel.
  nofb      fast values stored, keys ignored (no test: the floor of what a test can cost)
  first     values stored, one min over the tile's keys, exact pieces after a barrier (the launcher's
            store_first); after: the min first, values stored only where the tile is clean
  halves    the tile as two halves loaded up front, the first computed and stored before a barrier
            (the second half's registers start after it); halves-nobar: no barrier
  flag      values stored, and a flag per tile stored by every hard element (no reduction, no
            barrier: the main kernel of a fix-up scheme; the fix-up kernel is not run)
  rowmin    values stored, keys reduced per thread row (128 x 8), a flag per tile stored where hard
            (the main kernel of a fix-up scheme; the fix-up kernel is not run)
  persist   grid of G programs looping over tiles, the next tile's load issued before this one's
            compute (8 more live registers, twice the loads in flight per thread); -nofb / -first
Usage: PYTHONPATH=$PWD python3 bench/fast32_structure.py [--ops tan,sin] [--reps 10] [--grids 8,12,16]
"""
from __future__ import annotations

import argparse
import sys

import nbx                                   # first: it sets TRITON_INTERPRET where there is no GPU
from nbx import backend
from nbx.kernels import math as m

import triton
import triton.language as tl

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from elementwise import device_copy_ms, make_input, time_ms  # noqa: E402

PIECE = tl.constexpr(128)


@triton.jit
def _pieces(x_ptr, o_ptr, n, base, n_pieces, EXACT: tl.constexpr):
    # a runtime trip count, as in the launcher: one piece's registers at a time, not unrolled
    j = 0
    while j < n_pieces:
        po = base + j * PIECE + tl.arange(0, PIECE)
        tl.store(o_ptr + po, EXACT(tl.load(x_ptr + po, mask=po < n)), mask=po < n)
        j += 1


@triton.jit
def flat(x_ptr, o_ptr, f_ptr, n, n_pieces, FAST: tl.constexpr, EXACT: tl.constexpr, MODE: tl.constexpr,
         BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if MODE == "halves" or MODE == "halves-nobar":
        # both halves loaded up front; the barrier ends the first half's registers before the second
        oa = pid * BLOCK + tl.arange(0, BLOCK // 2)
        ob = oa + BLOCK // 2
        xa = tl.load(x_ptr + oa, mask=oa < n)
        xb = tl.load(x_ptr + ob, mask=ob < n)
        ra, ka = FAST(xa)
        tl.store(o_ptr + oa, ra, mask=oa < n)
        if MODE == "halves":
            tl.debug_barrier()
        rb, kb = FAST(xb)
        tl.store(o_ptr + ob, rb, mask=ob < n)
        k = tl.minimum(tl.where(oa < n, ka, 0), tl.where(ob < n, kb, 0))
        if tl.min(k) < 0:
            tl.debug_barrier()
            _pieces(x_ptr, o_ptr, n, pid * BLOCK, n_pieces, EXACT)
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    msk = offs < n
    res, key = FAST(tl.load(x_ptr + offs, mask=msk))
    if MODE == "after":
        if tl.min(tl.where(msk, key, 0)) < 0:
            _pieces(x_ptr, o_ptr, n, pid * BLOCK, n_pieces, EXACT)
        else:
            tl.store(o_ptr + offs, res, mask=msk)
    else:
        tl.store(o_ptr + offs, res, mask=msk)
        if MODE == "first":
            if tl.min(tl.where(msk, key, 0)) < 0:
                tl.debug_barrier()
                _pieces(x_ptr, o_ptr, n, pid * BLOCK, n_pieces, EXACT)
        elif MODE == "flag":
            tl.store(f_ptr + pid + offs * 0, tl.full(offs.shape, 1, tl.int32), mask=msk & (key < 0))
        elif MODE == "rowmin":
            k2 = tl.min(tl.reshape(tl.where(msk, key, 0), (BLOCK // 8, 8)), axis=1)
            o2 = tl.arange(0, BLOCK // 8)
            tl.store(f_ptr + pid + o2 * 0, tl.full(o2.shape, 1, tl.int32), mask=k2 < 0)


@triton.jit
def persist(x_ptr, o_ptr, f_ptr, n, n_tiles, n_pieces, FAST: tl.constexpr, EXACT: tl.constexpr, MODE: tl.constexpr,
            BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    lane = tl.arange(0, BLOCK)
    t = pid
    xn = tl.load(x_ptr + t * BLOCK + lane, mask=t * BLOCK + lane < n)
    while t < n_tiles:
        offs = t * BLOCK + lane
        msk = offs < n
        x = xn
        tn = t + nprog
        xn = tl.load(x_ptr + tn * BLOCK + lane, mask=tn * BLOCK + lane < n)
        res, key = FAST(x)
        tl.store(o_ptr + offs, res, mask=msk)
        if MODE == "first":
            if tl.min(tl.where(msk, key, 0)) < 0:
                tl.debug_barrier()
                _pieces(x_ptr, o_ptr, n, t * BLOCK, n_pieces, EXACT)
        t = tn


def _regs(k):
    return f"{getattr(k, 'n_regs', '?')} regs {getattr(k, 'n_spills', '?')} spills"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=28)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--ops", default="tan,sin", help="bodies without a table (log reads one since 2026-12-03)")
    ap.add_argument("--modes", default="nofb,first,after,rowmin")
    ap.add_argument("--grids", default="8,12,16", help="persistent programs per SM")
    ap.add_argument("--blocks", default="1024")
    ap.add_argument("--warps", default="4")
    a = ap.parse_args(argv)
    n = 1 << a.log2n
    copy_ms = device_copy_ms(4 * n, a.reps)
    sms = backend.active.extra_info()["multiprocessors"] if backend.IS_CUDA else 1
    print(f"backend {nbx.backend_id()}; n = 2^{a.log2n} float32 in [1, 2); copy {copy_ms:.3f} ms; {sms} SMs")
    x = make_input(n)
    out = nbx.empty(n, dtype="float32")
    refs = {op: nbx.FUNCTIONS[op](x).numpy().view("int32") for op in a.ops.split(",")}
    wrong = lambda op: int((out.numpy().view("int32") != refs[op]).sum())
    flags = nbx.zeros(n // 128 + 1, dtype="int32")
    extra = {"enable_reflect_ftz": False} if backend.IS_CUDA else {}
    for op in a.ops.split(","):
        fast, exact = m.DEFERRED[getattr(m, op)][:2]
        for block, warps in [(b, w) for b in map(int, a.blocks.split(",")) for w in map(int, a.warps.split(","))]:
            tiles = triton.cdiv(n, block)
            opts = dict(extra, num_warps=warps) if backend.IS_CUDA else {}
            for mode in a.modes.split(","):
                holder = {}
                run = lambda: holder.setdefault("k", flat[(tiles,)](x, out, flags, n, block // PIECE.value, FAST=fast, EXACT=exact,
                                                                    MODE=mode, BLOCK=block, **opts))
                ms = time_ms(run, a.reps)
                print(f"{op:>6} flat {mode:>12} block {block:5d} warps {warps}: {ms:7.3f} ms  {copy_ms / ms:5.2f} of copy  "
                      f"{_regs(holder['k'])}  {wrong(op)} differ from nbx", flush=True)
            for g in map(int, filter(None, a.grids.split(","))):
                for mode in ("nofb", "first"):
                    holder = {}
                    grid = min(tiles, g * sms)
                    run = lambda: holder.setdefault("k", persist[(grid,)](x, out, flags, n, tiles, block // PIECE.value, FAST=fast, EXACT=exact,
                                                                          MODE=mode, BLOCK=block, **extra))
                    ms = time_ms(run, a.reps)
                    print(f"{op:>6} persist {g:2d}/SM {mode:>5} block {block:5d}: {ms:7.3f} ms  "
                          f"{copy_ms / ms:5.2f} of copy  {_regs(holder['k'])}  {wrong(op)} differ from nbx", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
