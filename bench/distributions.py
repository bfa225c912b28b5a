"""The inputs of bench/elementwise.py: per target, distribution and layout, its operand tensors.

Distributions (DISTS), per operand of the op:
- uniform: U[1, 2] (integers: 1 or 2), the inputs of the earlier figures; it ignores the domain
  (asin on [1, 2] is NaN but at 1).
- realistic: randn * 4 where that lies in the op's oracle domain (ORACLES[op].domain, closed
  intervals); an element outside it is reflected about a half-infinite domain's finite end (log:
  |x|, acosh: 2 - x) or drawn uniformly in a bounded one (asin, atanh, lerp's weight). Integers:
  uniform over the domain within the dtype's range (a shift count in [0, 64]).
- hard: the mix that sends the most elements to the exact path. An op with a float32 fast path:
  2^17 candidates (every binade, the values below and the realistic ones, all in the domain) go
  through the fast path's own evaluation and rounding test (flat.apply_fast, the launcher's keys);
  the block is drawn from those it flags (a fast value within K float64 ulps of a float32 rounding
  midpoint, or an input outside the fast domain), jointly for a binary op's pairs. Without a fast
  path, or where no candidate is flagged: signed zeros, subnormals, values near 0 (2^-40..2^-1),
  large magnitudes (2^20..2^127 and the largest finite), infinities, +-1 and the domain's ends and
  their neighbours, inside the domain; integers: the dtype's extremes, -1, 0, 1, the domain's ends
  and a shift's width - 1 and width.
NaN is in no domain and in no distribution. A mask is random bools (p = 1/2) in each distribution;
a bits operand (bf16_to_fp16) holds the bfloat16 bit patterns of the distribution's values.

Layouts (LAYOUTS), an (R, C) problem for strided, R C = n, C = 2^ceil(log2(n) / 2):
- contiguous: every operand a contiguous 1-D tensor of n elements (a split op halves it).
- strided: unary (and split): operand 0 an (R, C) slice of an (R, C + PAD) buffer (rows not
  dense, so the output is C order: the 2-D kernel). Binary: operand 0 the transpose of a contiguous
  (C, R) tensor (the output takes its layout, as ATen's does), operand 1 a broadcast row of C
  elements. Ternary: those two, and operand 2 a padded slice, read across the output's layout.

Each operand's values are a block of min(n, 2^20) elements, drawn from its own seed, tiled to n on
the device: a binary op's operands are distinct tensors with distinct values.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import NamedTuple

import numpy as np
import nbx  # (first: it chooses the backend, and the interpreter, before any kernel is decorated)
import triton
import triton.language as tl
from nbx import backend
from nbx.dtype import DTYPES
from nbx.harness.inputs.cases import stratified
from nbx.harness.targets.target import Target
from nbx.kernels import launch
from nbx.kernels.flat import apply_fast, load_params
from nbx.ops.verify import DIVISOR, EXPONENT, MASK
from nbx.oracles import ORACLES

DISTS = ("uniform", "realistic", "hard")
LAYOUTS = ("contiguous", "strided")
BLOCK_ELEMENTS = 1 << 20
PAD = 32                      # elements past each row of a padded slice: 128 bytes of float32, rows stay aligned
POOL = 1 << 17                # fast-path candidates tested for the hard mix
F32_MAX = float(np.finfo(np.float32).max)


class Operands(NamedTuple):
    """One case's operands: tensors (as the op takes them) and the bytes the op must read of them
    (a broadcast row once, a padded slice without its padding)."""
    tensors: tuple
    read_bytes: int


def domain(t: Target, i: int) -> tuple[float, float]:
    """Operand i's closed interval from the op's oracle (a split op's one operand: its first half's)."""
    dom = ORACLES[t.op].domain
    return tuple(map(float, dom[i] if i < len(dom) else (-math.inf, math.inf)))


def in_domain(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    v = np.asarray(values)
    if v.dtype == np.bool_:
        v = v.astype(np.int8)
    with np.errstate(invalid="ignore"):
        return (v >= lo) & (v <= hi)


def fast_path(t: Target):
    """The FastPath a float32 launch of the target runs, or None."""
    return t.spec.select_fast32(_params(t), t.typing())


def scalars(t: Target) -> list:
    """The target's number parameters as its kernels take them (OpSpec.scalar_tensors)."""
    return t.spec.scalar_tensors(_params(t), t.typing())


def _params(t: Target) -> dict:
    return {**{p.name: p.default for p in t.spec.params}, **t.params}


# ---------------------------------------------------------------- values, as float64 or int64 blocks
def _fold(x: np.ndarray, lo: float, hi: float, rng) -> np.ndarray:
    if lo > -math.inf and hi < math.inf:
        return np.where(in_domain(x, lo, hi), x, rng.uniform(lo, hi, x.size))
    if lo > -math.inf:
        return np.where(x >= lo, x, 2 * lo - x)
    if hi < math.inf:
        return np.where(x <= hi, x, 2 * hi - x)
    return x


def _float_specials(lo: float, hi: float, rng, n: int) -> np.ndarray:
    tiny = 2.0 ** rng.uniform(-40, -1, n)
    huge = 2.0 ** rng.uniform(20, 127.99, n)
    sub = rng.integers(1, 1 << 23, n).astype(np.uint32).view(np.float32).astype(np.float64)
    edges = [v for e in (lo, hi) if math.isfinite(e) for v in (e, *np.nextafter(np.float32(e), [-np.inf, np.inf]))]
    fixed = np.array([0.0, -0.0, 1.0, -1.0, 2.0 ** -126, F32_MAX, -F32_MAX, math.inf, -math.inf, *edges])
    sign = rng.choice([-1.0, 1.0], 3 * n)
    pool = np.concatenate([fixed, np.concatenate([tiny, huge, sub]) * sign])
    return pool[in_domain(pool, lo, hi)]


def _int_values(dist: str, dt, lo: float, hi: float, role, rng, n: int) -> np.ndarray:
    info = np.iinfo(dt.np)
    lo_i, hi_i = max(info.min, math.ceil(max(lo, -2.0 ** 63))), min(info.max, math.floor(min(hi, 2.0 ** 63)))
    if role == DIVISOR or role == EXPONENT:      # an integer zero divisor or negative power faults
        lo_i = max(lo_i, 0 if role == EXPONENT else 1)
    if dist == "uniform":
        return rng.integers(1, 3, n)
    if dist == "realistic":
        return rng.integers(lo_i, hi_i, n, endpoint=True)
    width = dt.bits
    cand = np.array([info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max, lo_i, hi_i, width - 1, width], np.int64)
    cand = cand[(cand >= lo_i) & (cand <= hi_i)]
    return rng.choice(cand, n)


def _float_values(dist: str, lo: float, hi: float, rng, n: int) -> np.ndarray:
    if dist == "uniform":
        return rng.uniform(1.0, 2.0, n)
    x = rng.standard_normal(n) * 4
    if dist == "realistic":
        return _fold(x, lo, hi, rng)
    return rng.choice(_float_specials(lo, hi, rng, 4096), n)


def _as_operand(t: Target, i: int, values: np.ndarray) -> np.ndarray:
    """float64/int64 values as operand i's array (a bits operand: the bit patterns of its format)."""
    role, d = t.role(i), t.dtype
    with np.errstate(all="ignore"):
        if role is not None and role.fmt is not None:
            return values.astype(role.fmt.np).view(role.fmt.uint_np).view(d.np)
        return values.astype(d.np)


@triton.jit
def _hard_flags(flag, x0, x1, x2, n, p0, p1, p2, tab, FAST: tl.constexpr, TAB: tl.constexpr, K: tl.constexpr,
                N_IN: tl.constexpr, NP: tl.constexpr, BLOCK: tl.constexpr):
    """1 where the launcher's rounding test sends the element to the exact path (its key <= the
    window's threshold, keys.key_hard), else 0."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a = tl.load(x0 + i, mask=m, other=1.0)
    b = a
    c = a
    if N_IN > 1:
        b = tl.load(x1 + i, mask=m, other=1.0)
    if N_IN > 2:
        c = tl.load(x2 + i, mask=m, other=1.0)
    q0, q1, q2 = load_params(p0, p1, p2, NP)
    _, key = apply_fast(FAST, TAB, K, N_IN, NP, a, b, c, q0, q1, q2, tab)
    tl.store(flag + i, (key <= 16 * K - 2 ** 31).to(tl.int8), mask=m)


def hard_flags(fast, arrays: list[np.ndarray], scalars: list = ()) -> np.ndarray:
    """Per element of the float32 operand arrays: does the fast path's rounding test fail there
    (scalars: the op's number parameters as its kernels take them, OpSpec.scalar_tensors)."""
    n = arrays[0].size
    qs = list(scalars) + [nbx.empty(1, dtype="float64")] * (3 - len(scalars))
    xs = [nbx.from_numpy(np.ascontiguousarray(a, np.float32)) for a in arrays]
    xs += [xs[0]] * (3 - len(xs))
    flag = nbx.empty(n, dtype="int8")
    tab = flag if fast.table is None else launch.device_table(fast.table)
    block = 1024 if backend.IS_CUDA else 1 << 14
    opts = {**launch.kernel_options(), **fast.options} if backend.IS_CUDA else {}
    with np.errstate(all="ignore"):
        _hard_flags[(triton.cdiv(n, block),)](flag, xs[0], xs[1], xs[2], n, *qs, tab, FAST=fast.evaluate,
                                              TAB=fast.table is not None, K=fast.k, N_IN=len(arrays),
                                              NP=len(scalars), BLOCK=block, **opts)
    return flag.numpy().astype(bool)


def _fast_hard_pool(t: Target, fast, rng) -> list[np.ndarray] | None:
    """Operand tuples (float32) the fast path's rounding test flags, from POOL candidates in the domain."""
    k = t.spec.arity
    cols = []
    for i in range(k):
        lo, hi = domain(t, i)
        wide = stratified(DTYPES["float32"], POOL // 2, rng, (lo, hi), in_domain=1.0).astype(np.float64)
        cols.append(np.concatenate([wide, _float_values("realistic", lo, hi, rng, POOL // 4),
                                    _float_values("hard", lo, hi, rng, POOL // 4)]))
        rng.shuffle(cols[-1])
    cols = [c.astype(np.float32) for c in cols]
    keep = np.ones(cols[0].size, bool)
    for i, c in enumerate(cols):
        keep &= in_domain(c, *domain(t, i))
    cols = [c[keep] for c in cols]
    flagged = hard_flags(fast, cols, scalars(t))
    return [c[flagged] for c in cols] if flagged.any() else None


def hard_pool(t: Target, seed: int = 0):
    """(the operand tuples the target's fast path flags among its candidates, or None where it has no
    fast path or flags none of them: pow's libdevice value lies within 64 float64 ulps of a midpoint
    for ~2^-22 of its inputs, none of 2^17; the generator the hard mix then picks with)."""
    fast = fast_path(t)
    rng = np.random.default_rng([seed, DISTS.index("hard"), *t.label.encode()])
    return (None if fast is None else _fast_hard_pool(t, fast, rng)), rng


def blocks(t: Target, dist: str, size: int, seed: int = 0) -> list[np.ndarray]:
    """`size` values per operand of the target under `dist`, each operand's array in its dtype."""
    if dist not in DISTS:
        raise ValueError(f"blocks: dist {dist!r} is not one of {DISTS}")
    if dist == "hard":
        pool, rng = hard_pool(t, seed)
        if pool is not None:
            pick = rng.integers(0, pool[0].size, size)
            return [_as_operand(t, i, p[pick].astype(np.float64)) for i, p in enumerate(pool)]
    out = []
    for i in range(t.spec.arity):
        rng = np.random.default_rng([seed, DISTS.index(dist), i])      # operand i's own stream
        lo, hi = domain(t, i)
        role, d = t.role(i), t.dtype
        if role == MASK:
            out.append(rng.integers(0, 2, size).astype(bool))
        elif d.is_int and (role is None or role.fmt is None):
            out.append(_as_operand(t, i, _int_values(dist, d, lo, hi, role, rng, size)))
        else:
            out.append(_as_operand(t, i, _float_values(dist, lo, hi, rng, size)))
    return out


# ---------------------------------------------------------------- tensors on the device, by layout
def shape_2d(n: int) -> tuple[int, int]:
    c = 1 << math.ceil(math.log2(n) / 2)
    return n // c, c


class Inputs:
    """Operand tensors per (target, dist, layout, n), their values tiled from blocks() on the
    device; the flat tensors are kept (the least recently used dropped past `keep`), so ops of one
    domain share them."""

    def __init__(self, keep: int = 12, seed: int = 0):
        self.keep, self.seed = keep, seed
        self._flat: OrderedDict = OrderedDict()

    def _key(self, t: Target, dist: str, i: int):
        if dist == "hard" and fast_path(t) is not None:
            return ("hard", t.label, t.dtype.name, i)
        return (dist, t.dtype.name, t.role(i), domain(t, i), i, t.split)

    def flat(self, t: Target, dist: str, n: int) -> list:
        """One contiguous tensor of n elements per operand."""
        keys = [self._key(t, dist, i) + (n,) for i in range(t.spec.arity)]
        if not all(k in self._flat for k in keys):
            size = min(n, BLOCK_ELEMENTS)
            for k, b in zip(keys, blocks(t, dist, size, self.seed)):
                dev = nbx.from_numpy(b)
                if n > size:
                    dev = dev.expand(n // size, size).contiguous().view(n)
                self._flat[k] = dev
        for k in keys:
            self._flat.move_to_end(k)
        while len(self._flat) > self.keep:
            self._flat.popitem(last=False)
        return [self._flat[k] for k in keys]

    def operands(self, t: Target, dist: str, layout: str, n: int) -> Operands:
        if layout not in LAYOUTS:
            raise ValueError(f"operands: layout {layout!r} is not one of {LAYOUTS}")
        flat = self.flat(t, dist, n)
        if layout == "contiguous":
            return Operands(tuple(flat), sum(x.numel() * x.itemsize for x in flat))
        r, c = shape_2d(n)
        if len(flat) == 1:
            kinds = ["padded"]
        else:
            kinds = ["transposed", "row", "padded"][:len(flat)]
        ts = []
        for x, kind in zip(flat, kinds):
            if kind == "transposed":
                ts.append(x.view(c, r).T)
            elif kind == "row":
                ts.append(x[:c])
            else:
                buf = nbx.empty(r, c + PAD, dtype=x.dtype)[:, :c]
                nbx.copy(x.view(r, c), out=buf)
                ts.append(buf)
        return Operands(tuple(ts), sum(x.numel() * x.itemsize for x in ts))
