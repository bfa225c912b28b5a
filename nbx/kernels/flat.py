"""The flat kernel of the float32 fast paths (FastPath), and the body calls both kernels share.

launch.py takes fast_flat_kernel for a fast-path launch over one flat dim; everything else runs
elementwise_kernel there. This module imports nothing of nbx but kernels/math.py and fast32/keys.py,
so bench/sass_mix.py compiles the very kernel the launcher runs for sm_90 on a machine without a GPU
(its register counts match the H200's compiled kernels).
"""
import triton
import triton.language as tl

from .fast32.keys import hard_key
from .hard32 import WINDOW, settle
from .math import cast, load_as


@triton.jit
def apply_body(BODY: tl.constexpr, N_IN: tl.constexpr, NP: tl.constexpr, a, b, c, q0, q1, q2):
    """BODY takes its operands, then its NP scalar parameters."""
    if N_IN == 1:
        if NP == 0:
            return BODY(a)
        elif NP == 1:
            return BODY(a, q0)
        elif NP == 2:
            return BODY(a, q0, q1)
        else:
            return BODY(a, q0, q1, q2)
    elif N_IN == 2:
        if NP == 0:
            return BODY(a, b)
        elif NP == 1:
            return BODY(a, b, q0)
        elif NP == 2:
            return BODY(a, b, q0, q1)
        else:
            return BODY(a, b, q0, q1, q2)
    else:
        if NP == 0:
            return BODY(a, b, c)
        elif NP == 1:
            return BODY(a, b, c, q0)
        elif NP == 2:
            return BODY(a, b, c, q0, q1)
        else:
            return BODY(a, b, c, q0, q1, q2)


@triton.jit
def apply_exact(BODY: tl.constexpr, N_IN: tl.constexpr, NP: tl.constexpr, a, b, c, q0, q1, q2,
                HX: tl.constexpr, HR: tl.constexpr, HN: tl.constexpr):
    """BODY, the exact path, and where the op has a float32 table of HN hard cases (hard32.py: inputs
    HX, results HR), the rounding test and the table over its float64 value."""
    res = apply_body(BODY, N_IN, NP, a, b, c, q0, q1, q2)
    if HN > 0:
        res = settle(a, res, HX, HR, HN, WINDOW)
    return res


@triton.jit
def apply_fast(FAST: tl.constexpr, TAB: tl.constexpr, K: tl.constexpr, N_IN: tl.constexpr, NP: tl.constexpr,
               a, b, c, q0, q1, q2, tab):
    """A fast path's evaluation (FastPath.evaluate: its operands, then the op's NP scalar parameters,
    then, with a table, the table: FAST(a, q0, tab)) -> (the float32 values, the int32 keys: <=
    keys.key_hard(K) where the exact body is needed)."""
    y, outside = evaluate(FAST, TAB, N_IN, NP, a, b, c, q0, q1, q2, tab)
    return y.to(tl.float32), hard_key(y, outside, K)


@triton.jit
def evaluate(FAST: tl.constexpr, TAB: tl.constexpr, N_IN: tl.constexpr, NP: tl.constexpr, a, b, c, q0, q1, q2, tab):
    """FastPath.evaluate on its operands, the op's NP scalar parameters and, with a table, the table
    after them (apply_body with the table as one more parameter) -> (float64 y, outside)."""
    if TAB:
        tl.static_assert(NP < 3, "a fast path with a table takes at most two number parameters")
        if NP == 0:
            q0 = tab
        elif NP == 1:
            q1 = tab
        else:
            q2 = tab
        return apply_body(FAST, N_IN, NP + 1, a, b, c, q0, q1, q2)
    else:
        return apply_body(FAST, N_IN, NP, a, b, c, q0, q1, q2)


@triton.jit
def load_params(p0, p1, p2, NP: tl.constexpr):
    """The op's NP scalar parameters, each a one-element tensor on the device (0 for those it lacks)."""
    q0 = 0
    q1 = 0
    q2 = 0
    if NP > 0:
        q0 = tl.load(p0)
    if NP > 1:
        q1 = tl.load(p1)
    if NP > 2:
        q2 = tl.load(p2)
    return q0, q1, q2


@triton.jit
def _load_flat(x0, x1, x2, offs, s0, s1, s2, mask, N_IN: tl.constexpr,
               CT0: tl.constexpr, CT1: tl.constexpr, CT2: tl.constexpr):
    a = load_as(tl.load(x0 + offs * s0, mask=mask), CT0)
    b = a
    c = a
    if N_IN > 1:
        b = load_as(tl.load(x1 + offs * s1, mask=mask), CT1)
    if N_IN > 2:
        c = load_as(tl.load(x2 + offs * s2, mask=mask), CT2)
    return a, b, c


@triton.jit
def piece_mask(key, HARD_KEY: tl.constexpr, NP: tl.constexpr, PIECE_C: tl.constexpr):
    """Bit j set where piece j (elements j PIECE_C .. (j + 1) PIECE_C - 1 of the tile) holds a key
    <= HARD_KEY: the pieces of a flagged tile that need the exact path. NP <= 32 (bit 31 is the
    sign; the bits are distinct, so their sum is their union). In erf's kernel for sm_90 it costs
    2 instructions per element before the first barrier (bench/sass_mix.py)."""
    least = tl.min(tl.reshape(key, (NP, PIECE_C)), axis=1)
    return tl.sum(tl.where(least <= HARD_KEY, 1 << tl.arange(0, NP), 0))


@triton.jit
def _exact_pieces(out, x0, x1, x2, q0, q1, q2, base, n, s0, s1, s2, n_pieces, pieces, EXACT: tl.constexpr,
                  N_IN: tl.constexpr, NP: tl.constexpr,
                  CT0: tl.constexpr, CT1: tl.constexpr, CT2: tl.constexpr, OUT_T: tl.constexpr, PIECE_C: tl.constexpr,
                  HX: tl.constexpr, HR: tl.constexpr, HN: tl.constexpr):
    """The exact body over the pieces of the tile at base whose bit is set in pieces (-1: all
    n_pieces), PIECE_C elements each, reloaded from memory: a loop with a runtime trip count, so
    one piece's registers at a time."""
    j = 0
    while j < n_pieces:
        if ((pieces >> j) & 1) != 0:
            po = base + j * PIECE_C + tl.arange(0, PIECE_C)
            pm = po < n
            pa, pb, pc = _load_flat(x0, x1, x2, po, s0, s1, s2, pm, N_IN, CT0, CT1, CT2)
            tl.store(out + po, cast(apply_exact(EXACT, N_IN, NP, pa, pb, pc, q0, q1, q2, HX, HR, HN), OUT_T), mask=pm)
        j += 1


@triton.jit
def fast_flat_kernel(out, x0, x1, x2, p0, p1, p2, n, s0, s1, s2, n_pieces, tab, col_tiles, ro, r0, r1, r2,
                     FAST: tl.constexpr, EXACT: tl.constexpr, TAB: tl.constexpr, K: tl.constexpr, N_IN: tl.constexpr,
                     NP: tl.constexpr,
                     CT0: tl.constexpr, CT1: tl.constexpr, CT2: tl.constexpr, OUT_T: tl.constexpr,
                     BLOCK: tl.constexpr, PIECE_C: tl.constexpr, INDEX64: tl.constexpr,
                     STORE_FIRST: tl.constexpr, PIECE_MASK: tl.constexpr, ROWS: tl.constexpr,
                     HX: tl.constexpr, HR: tl.constexpr, HN: tl.constexpr):
    """A fast path over rows of n elements: out's row contiguous, each input's row contiguous
    (stride 1) or one broadcast element (stride 0); with ROWS, row i of out starts at out + i ro, of
    input k at xk + i rk (without: one flat dim, one row of n). A program takes one tile of one row,
    its row's bases in scalar arithmetic. The same steps as elementwise_kernel's fast branch
    without the 2-D tile's per-element row and column index arithmetic, which costs log and sin
    5-7% of copy bandwidth on the H200. STORE_FIRST: the fast values are stored before the keys'
    reduction; a flagged tile's pieces overwrite them after a barrier. Otherwise a flagged tile
    stores only its pieces (out= aliasing an input: the pieces must reload the inputs unchanged)."""
    pid = tl.program_id(0)
    if INDEX64:
        pid = pid.to(tl.int64)
    if ROWS:                               # a division per program, not per element
        row = pid // col_tiles
        out = out + row * ro
        x0 = x0 + row * r0
        x1 = x1 + row * r1
        x2 = x2 + row * r2
        pid = pid - row * col_tiles
    base = pid * BLOCK
    offs = base + tl.arange(0, BLOCK)
    mask = offs < n
    a, b, c = _load_flat(x0, x1, x2, offs, s0, s1, s2, mask, N_IN, CT0, CT1, CT2)
    q0, q1, q2 = load_params(p0, p1, p2, NP)
    res, key = apply_fast(FAST, TAB, K, N_IN, NP, a, b, c, q0, q1, q2, tab)
    if STORE_FIRST:
        tl.store(out + offs, cast(res, OUT_T), mask=mask)
    if PIECE_MASK:
        pieces = piece_mask(tl.where(mask, key, 0), 16 * K - 2 ** 31, BLOCK // PIECE_C, PIECE_C)
    else:
        pieces = (tl.min(tl.where(mask, key, 0)) <= 16 * K - 2 ** 31).to(tl.int32) * -1
    hard = pieces != 0
    if not STORE_FIRST:
        if not hard:
            tl.store(out + offs, cast(res, OUT_T), mask=mask)
    if hard:
        if STORE_FIRST:
            tl.debug_barrier()   # every fast store of the tile before any piece's store
        _exact_pieces(out, x0, x1, x2, q0, q1, q2, base, n, s0, s1, s2, n_pieces, pieces, EXACT, N_IN, NP,
                      CT0, CT1, CT2, OUT_T, PIECE_C,
                      HX, HR, HN)
