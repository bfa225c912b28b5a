"""The launcher: ONE generic element-wise kernel, parametrized by arity and by the op's body.

The op's scalar body arrives as a `tl.constexpr` callable (compiles on Triton 3.6 and runs in the
interpreter). The iteration space is a 2-D tile grid: columns are the innermost dim after
coalescing (unit stride for contiguous operands, which the compiler vectorizes), rows are all outer
dims flattened; a row index is split into per-dim indices once per row, not once per element.
All-contiguous operands are the special case R = 1 (one flat dim). Offsets are 64-bit when the
element count or any operand's span exceeds 2^31.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as _np
import triton
import triton.language as tl

from .. import backend
from ..tensor import Tensor, empty, from_numpy
from . import iterate
from .fast32.poly import param_bits
from .fastpath import FastPath
from .flat import apply_exact, apply_fast, fast_flat_kernel, load_params
from .hard32 import HardCases
from .math import cast, load_as

MAX_OPERANDS = 3
MAX_PARAMS = 3


@triton.jit
def _load_operands(x0, x1, x2, r0, r1, r2, cols, s0, s1, s2, mask, N_IN: tl.constexpr,
                   CT0: tl.constexpr, CT1: tl.constexpr, CT2: tl.constexpr):
    a = load_as(tl.load(x0 + (r0[:, None] + cols[None, :] * s0[0]), mask=mask), CT0)
    b = a
    c = a
    if N_IN > 1:
        b = load_as(tl.load(x1 + (r1[:, None] + cols[None, :] * s1[0]), mask=mask), CT1)
    if N_IN > 2:
        c = load_as(tl.load(x2 + (r2[:, None] + cols[None, :] * s2[0]), mask=mask), CT2)
    return a, b, c


@triton.jit
def elementwise_kernel(out, x0, x1, x2, p0, p1, p2, fault, R, C, sizes, so, s0, s1, s2, n_pieces, tab,
                       BODY: tl.constexpr, FAST: tl.constexpr, TAB: tl.constexpr, K: tl.constexpr,
                       FAULT: tl.constexpr, N_IN: tl.constexpr, NP: tl.constexpr,
                       CT0: tl.constexpr, CT1: tl.constexpr, CT2: tl.constexpr, OUT_T: tl.constexpr,
                       NDIM: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
                       INDEX64: tl.constexpr, PIECE_C: tl.constexpr, STORE_FIRST: tl.constexpr,
                       HX: tl.constexpr, HR: tl.constexpr, HN: tl.constexpr):
    pid = tl.program_id(0)
    if INDEX64:
        pid = pid.to(tl.int64)
    n_col_tiles = tl.cdiv(C, BLOCK_C)
    rows = (pid // n_col_tiles) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = (pid % n_col_tiles) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (rows < R)[:, None] & (cols < C)[None, :]
    # per-row offsets: split the row index over the outer dims (innermost-outer first)
    ro = rows * 0
    r0 = rows * 0
    r1 = rows * 0
    r2 = rows * 0
    rest = rows
    for k in tl.static_range(1, NDIM):
        if k < NDIM - 1:
            idx = rest % sizes[k]
            rest = rest // sizes[k]
        else:
            idx = rest
        ro += idx * so[k]
        r0 += idx * s0[k]
        if N_IN > 1:
            r1 += idx * s1[k]
        if N_IN > 2:
            r2 += idx * s2[k]
    a, b, c = _load_operands(x0, x1, x2, r0, r1, r2, cols, s0, s1, s2, mask, N_IN, CT0, CT1, CT2)
    q0, q1, q2 = load_params(p0, p1, p2, NP)
    if FAST is None:
        res = apply_exact(BODY, N_IN, NP, a, b, c, q0, q1, q2, HX, HR, HN)
        tl.store(out + (ro[:, None] + cols[None, :] * so[0]), cast(res, OUT_T), mask=mask)
    else:
        # a fast path (FastPath): the fast values and int32 keys, <= the window's threshold where
        # BODY, the exact path, is needed (flat.fast_flat_kernel says why the two store orders)
        res, key = apply_fast(FAST, TAB, K, N_IN, NP, a, b, c, q0, q1, q2, tab)
        if STORE_FIRST:
            tl.store(out + (ro[:, None] + cols[None, :] * so[0]), cast(res, OUT_T), mask=mask)
        hard = tl.min(tl.where(mask, key, 0)) <= 16 * K - 2 ** 31
        if not STORE_FIRST:
            if not hard:
                tl.store(out + (ro[:, None] + cols[None, :] * so[0]), cast(res, OUT_T), mask=mask)
        if hard:
            if STORE_FIRST:
                tl.debug_barrier()   # every fast store of the tile before any piece's store
            row_mask = rows < R
            col0 = (pid % n_col_tiles) * BLOCK_C
            # a loop with a runtime trip count, so it is not unrolled: one piece's registers at a
            # time (`while`: the interpreter cannot take a runtime bound in range() under numpy 2.4)
            j = 0
            while j < n_pieces:
                pc = col0 + j * PIECE_C + tl.arange(0, PIECE_C)
                pm = row_mask[:, None] & (pc < C)[None, :]
                pa, pb, pcc = _load_operands(x0, x1, x2, r0, r1, r2, pc, s0, s1, s2, pm, N_IN, CT0, CT1, CT2)
                pres = apply_exact(BODY, N_IN, NP, pa, pb, pcc, q0, q1, q2, HX, HR, HN)
                tl.store(out + (ro[:, None] + pc[None, :] * so[0]), cast(pres, OUT_T), mask=pm)
                j += 1
    if FAULT is not None:
        hit = FAULT(a, b, c) & mask
        tl.store(fault + (rows[:, None] * 0 + cols[None, :] * 0), tl.full(hit.shape, 1, tl.int32), mask=hit)


def _next_pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


# Tile sizes. GPU: 1024 columns for flat access, which runs at copy speed on the H200 where 4096
# runs 3-5% slower (docs/DECISIONS.md). Interpreter: each program is a numpy call over the whole
# tile, so a tile of 2^16 elements makes 1M elements take 0.05 s instead of 0.7 s at 1024.
if backend.IS_CUDA:
    _TILE, _MAX_C = 1024, 1024
else:
    _TILE, _MAX_C = 1 << 16, 1 << 16


def _tile_shape(plan: iterate.Plan) -> tuple[int, int]:
    if backend.IS_CUDA:
        if not plan.outer:
            return 1, _MAX_C
        # Six tile shapes of 1024 elements, whatever the sizes: every shape is one more compilation
        # per op and dtype (add and exp's layout suite compiles 388 kernels with these, 528 with
        # tiles sized to the rows too). A transposed operand (some column stride other than 0/1)
        # gets square tiles, so every 32-byte sector a tile touches is used by the same program.
        if not all(st[0] in (0, 1) for st in plan.strides):
            return 32, 32
        block_c = min(_MAX_C, max(32, _next_pow2(plan.C)))
        return _TILE // block_c, block_c
    if not plan.outer:
        return 1, min(_MAX_C, _next_pow2(plan.C))
    block_c = min(_MAX_C, _next_pow2(plan.C))
    block_r = max(1, min(_next_pow2(plan.rows), _TILE // block_c))
    return block_r, block_c


def _ndim_class(plan: iterate.Plan) -> int:
    """The kernel's NDIM: 1 (flat), 2, or the maximum rank with unused dims of size 1 and stride 0
    (their index is always 0). Three compilations per op and dtype instead of one per rank."""
    nd = 1 + len(plan.outer)
    return nd if nd <= 2 else iterate.MAX_RANK


# ---------------------------------------------------------------- fast paths
# A float32 launch of an op with a fast path (OpSpec.fast32, a FastPath) runs its evaluation over
# every tile and the op's body, the exact path, only over tiles with a hard key, in pieces of PIECE
# elements reloaded from memory one loop iteration at a time: inline, the exact code would set the
# kernel's register count for every tile (sin: 47 -> 72 registers).
PIECE = 128 if backend.IS_CUDA else _TILE      # one element per thread of 4 warps; the interpreter: whole tiles


@dataclass(frozen=True)
class LaunchConfig:
    """How the launcher runs fast paths; DEFAULT in use, variants for tests and benchmarks.
    fast: run an op's fast path where it has one (False: the exact body alone).
    flat: fast paths over one flat dim take fast_flat_kernel (False: elementwise_kernel).
    store_first: honour FastPath.store_first (False: every fast path stores after its reduction).
    piece: elements per piece of the exact path (0: PIECE).
    piece_mask: force the flat kernel's piece mask on (True) or off (False); None: the fast path's.
    block: the flat kernel's tile for every fast path (0: each one's own on CUDA, 2^16 elements on
        the interpreter).
    options: Triton launch options on CUDA, over the fast path's own."""
    fast: bool = True
    flat: bool = True
    store_first: bool = True
    piece: int = 0
    piece_mask: bool | None = None
    block: int = 0
    options: tuple = ()


DEFAULT = LaunchConfig()


def _flat(plan: iterate.Plan, fault) -> bool:
    """A fast-path launch takes fast_flat_kernel: one flat dim, or rows of one outer dim (a padded
    slice, a broadcast row; on CUDA rows of at least a tile, 1024, so that a program's tile is one
    row's), out's rows contiguous, every input's rows contiguous or a broadcast element, no fault
    flag."""
    rows_ok = not plan.outer or (len(plan.outer) == 1 and (plan.C >= _MAX_C or not backend.IS_CUDA))
    return (rows_ok and fault is None and plan.strides[0][0] == 1
            and all(st[0] in (0, 1) for st in plan.strides[1:]))


def _pieces(block_r: int, block_c: int, piece: int = 0) -> tuple[int, int]:
    """(piece columns, pieces per tile): pieces span the tile's rows and split its columns."""
    piece_c = min(block_c, max(1, (piece or PIECE) // block_r))
    return piece_c, block_c // piece_c


_FAULT_FLAG: Tensor | None = None
_ZERO = _np.zeros(1, dtype=_np.int32)


def kernel_options() -> dict:
    """Launch options every kernel of nbx takes on CUDA (none under the interpreter)."""
    return {"enable_reflect_ftz": False} if backend.IS_CUDA else {}


def fault_flag() -> Tensor:
    global _FAULT_FLAG
    if _FAULT_FLAG is None:
        _FAULT_FLAG = empty(1, dtype="int32")
    return _FAULT_FLAG


_TABLES: dict = {}


def device_table(table):
    """A fast path's table (FastPath.table) as its evaluation's second argument: an array on the
    device, copied once per process; a tuple of floats as kernel parameters, each a float64's int64
    bit pattern (Triton passes a Python float as a float32; fast32/poly.param decodes them)."""
    key = id(table)
    if key not in _TABLES:
        if isinstance(table, tuple):
            arg = param_bits(table)
        else:
            arg = from_numpy(_np.ascontiguousarray(table))
        _TABLES[key] = (table, arg)
    return _TABLES[key][1]


def _pad(seq, fill=0):
    seq = list(seq)
    return tuple(seq + [fill] * (iterate.MAX_RANK - len(seq)))


def launch(body, out: Tensor, inputs: list[Tensor], params: list[Tensor], *, compute, op: str,
           fault=None, fast: FastPath | None = None, hard: HardCases | None = None,
           config: LaunchConfig = DEFAULT) -> bool:
    """Run `body` over the broadcast of `inputs` into `out`. Returns True when the fault flag was set.
    fast: the op's float32 fast path (the caller passes it for float32 computations only), with
    `body` its exact path. hard: the op's float32 hard cases (hard32.py), settled after every call
    of `body` (the caller passes them for a float32 unary computation, whose body returns the
    float64 value)."""
    assert 1 <= len(inputs) <= MAX_OPERANDS and len(params) <= MAX_PARAMS
    if out.numel() == 0:
        return False
    plan = iterate.plan(out, inputs, op=op)
    block_r, block_c = _tile_shape(plan)
    n_tiles = triton.cdiv(plan.rows, block_r) * triton.cdiv(plan.C, block_c)
    flag = fault_flag()
    if fault is not None:
        flag._storage.write(0, _ZERO)
    xs = list(inputs) + [inputs[0]] * (MAX_OPERANDS - len(inputs))
    ps = list(params) + [flag] * (MAX_PARAMS - len(params))
    cts = [d.tl for d in compute] + [compute[0].tl] * (MAX_OPERANDS - len(compute))
    st = plan.strides + [plan.strides[1]] * (MAX_OPERANDS + 1 - len(plan.strides))
    sizes = _pad([plan.C] + plan.outer, fill=1)
    extra = {**kernel_options(), **dict(config.options)} if backend.IS_CUDA else {}
    if not config.fast:
        fast = None
    assert hard is None or (len(inputs) == 1 and out.dtype.name == "float32"), \
        f"{op}: hard cases are for float32 results of unary ops"
    hx, hr = (hard.xs, hard.rs) if hard is not None and hard.n else ((), ())
    piece_c, n_pieces = 1, 1
    store_first = False
    tab = flag
    k = 0
    if fast is not None:
        piece_c, n_pieces = _pieces(block_r, block_c, config.piece)
        if backend.IS_CUDA:
            extra = {**kernel_options(), **fast.options, **dict(config.options)}
        if fast.table is not None:
            tab = device_table(fast.table)
        k = fast.k
        store_first = (fast.store_first and config.store_first
                       and not any(t._storage is out._storage for t in inputs))
        if config.flat and _flat(plan, fault):
            block = config.block or fast.block
            if block and (backend.IS_CUDA or config.block):
                block_c = block
            piece_c, n_pieces = _pieces(1, block_c, config.piece)      # a tile is one row's block_c
            col_tiles = triton.cdiv(plan.C, block_c)
            rows = plan.outer[0] if plan.outer else 1
            row_st = [st[1] if plan.outer else 0 for st in st[:4]]
            mask = fast.pieces if config.piece_mask is None else config.piece_mask
            with _np.errstate(all="ignore"):
                fast_flat_kernel[(rows * col_tiles,)](
                    out, xs[0], xs[1], xs[2], ps[0], ps[1], ps[2], plan.C, st[1][0], st[2][0], st[3][0], n_pieces, tab,
                    col_tiles, *row_st,
                    FAST=fast.evaluate, EXACT=body, TAB=fast.table is not None, K=k, N_IN=len(inputs), NP=len(params),
                    CT0=cts[0], CT1=cts[1], CT2=cts[2], OUT_T=out.dtype.tl, BLOCK=block_c, PIECE_C=piece_c,
                    INDEX64=plan.index64, STORE_FIRST=store_first, PIECE_MASK=bool(mask) and n_pieces <= 32,
                    ROWS=bool(plan.outer), HX=hx, HR=hr, HN=len(hx), **extra)
            return False
    with _np.errstate(all="ignore"):   # the interpreter's numpy warns on inf/NaN lanes; the GPU does not
        elementwise_kernel[(n_tiles,)](
            out, xs[0], xs[1], xs[2], ps[0], ps[1], ps[2], flag, plan.rows, plan.C, sizes,
            _pad(st[0]), _pad(st[1]), _pad(st[2]), _pad(st[3]), n_pieces, tab,
            BODY=body, FAST=None if fast is None else fast.evaluate, TAB=fast is not None and fast.table is not None,
            K=k, FAULT=fault, N_IN=len(inputs), NP=len(params),
            CT0=cts[0], CT1=cts[1], CT2=cts[2], OUT_T=out.dtype.tl,
            NDIM=_ndim_class(plan), BLOCK_R=block_r, BLOCK_C=block_c, INDEX64=plan.index64,
            PIECE_C=piece_c, STORE_FIRST=store_first, HX=hx, HR=hr, HN=len(hx), **extra)
    if fault is None:
        return False
    return bool(flag._storage.read(0, 4).view("int32")[0])
