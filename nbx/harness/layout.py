"""The layout suite (docs/PRECISION.md, "The layout suite"): broadcast and strides.

For an op and dtype, the op on views must equal, BIT FOR BIT (uint views, NaN payloads included),
the same op on contiguous copies of the same values, and the contiguous result is scored against
the oracle (measure.score) so the measurement has cases and ulp figures. A "group" is a set of
operand values (operands may have broadcasting shapes); its reference is the op on contiguous
full-shape copies; each "layout" of the group lays the same values out as views: stride 0 (expand)
on each dim, steps of 2 and 3, permutations (negative order) and transposes, narrow with a storage
offset, a one-element offset (a pointer not 16-byte aligned), 0-dim operands and Python scalars
(where spec.scalar_operands allows), size-0 dims (shape and dtype only), ranks 1 to 8, a dense
permuted input (the output keeps its strides, as ATen) and out= aliasing an input (where the result
dtype is the input's). Fixed cases pin three broadcast reads: a (4,1) operand with a (4,8) one must
not be read flat past its end, a 0-dim operand must not be read as numel elements, and a bitwise op
must broadcast ((2,3,1) & (1,4)). Shapes for the random groups are drawn with numpy from the seed
(hypothesis's mutually_broadcastable_shapes, deterministically); hypothesis itself drives
tests/test_suites.py. Figures: `layouts` (layouts tried), `wrong` (mismatching elements; a wrong
shape, dtype or strides, or an exception, counts every element), `cases` and ulp (the scored
contiguous results); worst entries are Worsts with note "layout <description>".

Sizes per profile (cases.PROFILE_SIZES; the interpreter costs ~15 ms a launch):
- ci: the full layout set (~17-20 launches, shapes of <= 120 elements) for float32, ONE integer
  dtype (chosen per op from its name, so every integer dtype is covered by some op) and bool, where
  the op supports them; every other dtype gets the pinned broadcast cases and one composite strided
  view (~5 launches). Rank 8 for the ops whose Verify.ci_rank8 gives a reason (a sample that holds
  every arity, a faulting, a split, a compose, a cast and a bool-result op); random groups of rank
  1..5.
- nightly: the full set for every dtype, plus random groups for every rank 1..8 (rank 8 for every
  op), about 3x the ci launches.
Scored elements per target: 2048 (ci) / 8192 (nightly), 64 / 256 for float64 results (mpmath).
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from oracles import ORACLES

from .. import dtype as D
from ..backend import IS_CUDA
from ..ops import OPS
from ..tensor import Tensor, from_numpy
from . import cases as C
from .cases import PROFILE_SIZES
from .measure import flat_bits, hexes, score
from .measurement import Worst
from .targets import Target, call, measured, n_operands, operand_dtype, scalar_positions


def applies(t: Target) -> bool:
    """The layout suite measures the default parameters; for an op without a default target (to,
    clamp, ...), the first variant that applies to the dtype."""
    return t.params == measured(t.spec, t.dtype)[0]


# ====================================================================== values and views
def _values(t: Target, i: int, shape, rng) -> np.ndarray:
    """Operand i's values: finite mostly (a few NaN/inf/-0 for floats), masks bool, divisors nonzero."""
    d = operand_dtype(t, i)
    n = math.prod(shape)
    if d.is_bool:
        v = rng.integers(0, 2, n).astype(bool)
    elif d.is_int:
        v = C.int_operand(t, i, n, rng, d)
    else:
        dom = ORACLES[t.op].domain
        lo_hi = dom[i] if (i < len(dom) and not t.split) else (-math.inf, math.inf)
        v = C.stratified(d, n, rng, lo_hi, in_domain=0.9)
        if n >= 8:
            sp = C.special_values(d)
            k = max(1, n // 16)
            at = rng.choice(n, k, replace=False)
            v[at] = sp[rng.integers(0, len(sp), k)]
    return v.reshape(shape)


def _inv(p):
    q = [0] * len(p)
    for i, x in enumerate(p):
        q[x] = i
    return q


def build(v: np.ndarray, transforms, garbage) -> Tensor:
    """A Tensor whose logical values are v (broadcast to the shape of an 'expand'), laid out as the
    transforms say (outermost first): ('expand', F), ('perm', p), ('step', dim, k), ('narrow', dim,
    off), ('select', pos) (a storage offset through a leading dim), ('offset1',) (innermost only: the
    data starts one element into its storage, so the pointer is not 16-byte aligned)."""
    if not transforms:
        return from_numpy(np.array(v, order="C", copy=True))      # (ascontiguousarray makes 0-dim 1-dim)
    kind, *arg = transforms[0]
    rest = transforms[1:]
    if kind == "expand":
        return build(v, rest, garbage).expand(*arg[0])
    if kind == "perm":
        p = list(arg[0])
        return build(np.transpose(v, p), rest, garbage).permute(*_inv(p))
    if kind == "step":
        d, k = arg
        shape = list(v.shape)
        shape[d] *= k
        base = garbage(tuple(shape))
        sl = [slice(None)] * v.ndim
        sl[d] = slice(0, None, k)
        base[tuple(sl)] = v
        return build(base, rest, garbage)[tuple(sl)]
    if kind == "narrow":
        d, off = arg
        shape = list(v.shape)
        shape[d] += off + 1
        base = garbage(tuple(shape))
        sl = [slice(None)] * v.ndim
        sl[d] = slice(off, off + v.shape[d])
        base[tuple(sl)] = v
        return build(base, rest, garbage).narrow(d, off, v.shape[d])
    if kind == "select":
        pos = arg[0]
        base = garbage((pos + 2,) + v.shape)
        base[pos] = v
        return build(base, rest, garbage)[pos]
    if kind == "offset1":
        flat = garbage((v.size + 1,)).reshape(-1)
        flat[1:] = v.reshape(-1)
        st = from_numpy(flat)
        strides, acc_ = [], 1
        for s in reversed(v.shape):
            strides.append(acc_)
            acc_ *= max(s, 1)
        return st.as_strided(v.shape, tuple(reversed(strides)), 1)
    raise ValueError(f"unknown view transform {kind!r}")


def describe(transforms) -> str:
    if not transforms:
        return "contiguous"
    parts = []
    for kind, *arg in transforms:
        if kind == "expand":
            parts.append(f"expand{tuple(arg[0])}")
        elif kind == "perm":
            parts.append(f"permute{tuple(arg[0])}")
        elif kind == "step":
            parts.append(f"step{arg[1]}@dim{arg[0]}")
        elif kind == "narrow":
            parts.append(f"narrow(dim{arg[0]},offset {arg[1]})")
        elif kind == "select":
            parts.append(f"offset view [{arg[0]}]")
        else:
            parts.append("offset 1 element (unaligned)")
    return ".".join(parts)


SCALAR = ("scalar",)          # a layout entry: the operand (0-dim) passed as a Python scalar


def py_scalar(v: np.ndarray, d: D.DType):
    x = np.asarray(v).reshape(())
    if d.is_bool:
        return bool(x)
    if d.is_int:
        return int(x)
    return float(x)


def draw_broadcastable_shapes(rng, num_shapes: int, min_dims: int = 1, max_dims: int = 4, min_side: int = 1,
                              max_side: int = 4, even_last: bool = False):
    """Shapes that broadcast together (as hypothesis's mutually_broadcastable_shapes), drawn with numpy
    from rng (deterministic). Returns (shapes, result shape)."""
    r = int(rng.integers(min_dims, max_dims + 1))
    base = [int(rng.integers(min_side, max_side + 1)) for _ in range(r)]
    if even_last and r:
        base[-1] = 2 * int(rng.integers(1, 3))
    shapes = []
    for k in range(num_shapes):
        if k == 0 or even_last:
            ri = r                                       # one operand of full rank
        else:
            ri = int(rng.integers(max(0, r - 2), r + 1))
        s = [1 if (rng.random() < 0.3 and not (even_last and j == r - 1)) else base[j] for j in range(r - ri, r)]
        shapes.append(tuple(s))
    return shapes, tuple(np.broadcast_shapes(*shapes)) if shapes else ()


def random_transforms(rng, shape, full) -> list:
    """One random view of an operand of `shape` (which broadcasts to `full`)."""
    nd = len(shape)
    tr = []
    if tuple(shape) != tuple(full) and rng.random() < 0.6:
        tr.append(("expand", tuple(full)))
    kinds = ["plain", "step", "narrow", "offset1", "select"] + (["perm", "perm+step"] if nd >= 2 else [])
    kind = kinds[int(rng.integers(0, len(kinds)))]
    if nd == 0 and kind in ("step", "narrow"):
        kind = "select"
    if kind in ("perm", "perm+step"):
        p = [int(x) for x in rng.permutation(nd)]
        if p == list(range(nd)):
            p = list(reversed(p))
        tr.append(("perm", tuple(p)))
    if kind in ("step", "perm+step"):
        tr.append(("step", int(rng.integers(0, nd)), int(rng.integers(2, 4))))
    if kind == "narrow":
        tr.append(("narrow", int(rng.integers(0, nd)), int(rng.integers(1, 4))))
    if kind == "select":
        tr.append(("select", int(rng.integers(0, 3))))
    if kind == "offset1" or rng.random() < 0.2:
        tr.append(("offset1",))
    return tr


# ====================================================================== the layout suite
@dataclass
class Layout:
    desc: str
    per_operand: list                     # per operand: a list of transforms, or SCALAR
    dense_out: bool = False               # the output must keep operand 0's strides
    alias: int | None = None              # out= this operand's view


@dataclass
class LayoutRun:
    t: Target
    acc: object
    rng: np.random.Generator
    n: int
    split: bool
    ref_dtype: D.DType | None = None
    scored: list = field(default_factory=list)      # (operand arrays for the oracle, contiguous result)

    # ------------------------------------------------------------------ figures
    def mismatch(self, count: int, desc: str, detail: str, inputs=(), got="", expected="") -> None:
        self.acc.wrong += max(int(count), 1)
        self.acc.push_worst(Worst(list(inputs), got, expected, math.inf, f"layout {desc}: {detail}"))

    def result_shape(self, full) -> tuple:
        if self.split and full:
            return tuple(full[:-1]) + (full[-1] // 2,)
        return tuple(full)

    # ------------------------------------------------------------------ one group of values
    def group(self, shapes, layouts, label: str, full=None) -> None:
        """One set of operand values (of `shapes`, broadcasting to `full`), its contiguous reference and
        its layouts."""
        t = self.t
        expands = [tr[0][1] for lay in layouts for tr in lay.per_operand
                   if tr != SCALAR and tr and tr[0][0] == "expand"]
        full = tuple(np.broadcast_shapes(*shapes, *expands, *([full] if full is not None else [])))
        vals = [_values(t, i, s, self.rng) for i, s in enumerate(shapes)]
        ref_full = full if full else (1,)
        dense = [np.ascontiguousarray(np.broadcast_to(v, ref_full)) for v in vals]
        try:
            ref = call(t, [from_numpy(x) for x in dense])
            ref_np = ref.numpy()
        except Exception as e:  # noqa: BLE001 (the gate reads it)
            for lay in layouts:
                self.acc.layouts += 1
                self.mismatch(max(1, math.prod(ref_full)), f"{label} {lay.desc}",
                              f"the contiguous reference raised {type(e).__name__}: {e}")
            return
        if self.ref_dtype is None:
            self.ref_dtype = ref.dtype
        self._keep_for_scoring(dense, ref_np)
        want_shape = self.result_shape(full)
        ref_bits = flat_bits(ref_np)
        flat_inputs = [x.reshape(-1) for x in dense]
        for lay in layouts:
            self.one_layout(vals, full, lay, label, ref, ref_bits, want_shape, flat_inputs)

    def _garbage(self, i):
        return lambda shape: _values(self.t, i, shape, self.rng)

    def one_layout(self, vals, full, lay: Layout, label, ref, ref_bits, want_shape, flat_inputs) -> None:
        t = self.t
        self.acc.layouts += 1
        desc = f"{label} {lay.desc}: " + ", ".join(
            f"arg{i} {v.shape} " + ("Python scalar" if tr == SCALAR else describe(tr))
            for i, (v, tr) in enumerate(zip(vals, lay.per_operand)))
        numel = max(1, math.prod(want_shape))
        try:
            ops = []
            for i, (v, tr) in enumerate(zip(vals, lay.per_operand)):
                ops.append(py_scalar(v, operand_dtype(t, i)) if tr == SCALAR else build(v, tr, self._garbage(i)))
            out = None
            if lay.alias is not None:
                out = ops[lay.alias]
                if not isinstance(out, Tensor) or out.shape != tuple(want_shape) or out.dtype is not ref.dtype:
                    self.acc.layouts -= 1                       # does not apply to this op / dtype
                    return
            res = call(t, ops, out=out)
            if out is not None:
                if res is not out:
                    self.mismatch(numel, desc, "out= given but the op returned another tensor")
                    return
                res = out
        except Exception as e:  # noqa: BLE001
            self.mismatch(numel, desc, f"raised {type(e).__name__}: {e}")
            return
        if not isinstance(res, Tensor):
            self.mismatch(numel, desc, f"returned {type(res).__name__}, not a Tensor")
            return
        if res.shape != tuple(want_shape) or res.dtype is not ref.dtype:
            self.mismatch(numel, desc, f"result shape {res.shape} dtype {res.dtype.name}, expected "
                                       f"{tuple(want_shape)} {ref.dtype.name}")
            return
        if lay.dense_out and isinstance(ops[0], Tensor) and res.stride() != ops[0].stride():
            self.mismatch(numel, desc, f"output strides {res.stride()} do not keep the dense input's layout "
                                       f"{ops[0].stride()} (ATen keeps it)")
            return
        got_bits = flat_bits(res.numpy())
        bad = np.flatnonzero(got_bits != ref_bits)
        if bad.size:
            i = int(bad[0])
            self.mismatch(bad.size, desc, f"{bad.size} of {got_bits.size} elements differ from the contiguous "
                                          f"result (first at flat index {i})",
                          hexes(flat_inputs, i) if len(flat_inputs[0]) == len(got_bits) else [],
                          hex(int(got_bits[i])), hex(int(ref_bits[i])))

    def shape_only(self, shapes, label: str) -> None:
        """Size-0 dims: no elements to compare; the result must have the broadcast shape and dtype."""
        t = self.t
        full = tuple(np.broadcast_shapes(*shapes))
        want = self.result_shape(full)
        vals = [_values(t, i, s, self.rng) for i, s in enumerate(shapes)]
        for variant, trs in (("contiguous", [[] for _ in shapes]),
                             ("views", [[("step", len(s) - 1, 2)] if s else [("select", 1)] for s in shapes])):
            self.acc.layouts += 1
            desc = f"{label} {variant}: " + ", ".join(f"arg{i} {s}" for i, s in enumerate(shapes))
            try:
                res = call(t, [build(v, tr, self._garbage(i)) for i, (v, tr) in enumerate(zip(vals, trs))])
            except Exception as e:  # noqa: BLE001
                self.mismatch(1, desc, f"raised {type(e).__name__}: {e}")
                continue
            if not isinstance(res, Tensor) or res.shape != want or (self.ref_dtype is not None and
                                                                     res.dtype is not self.ref_dtype):
                got = f"{res.shape} {res.dtype.name}" if isinstance(res, Tensor) else type(res).__name__
                self.mismatch(1, desc, f"result {got}, expected {want} "
                                       f"{self.ref_dtype.name if self.ref_dtype else '?'}")

    # ------------------------------------------------------------------ scoring the contiguous results
    def _keep_for_scoring(self, dense, ref_np) -> None:
        if self.split:
            x = dense[0]
            k = x.shape[-1] // 2
            arrays = [x[..., :k].reshape(-1), x[..., k:].reshape(-1)]
        else:
            arrays = [x.reshape(-1) for x in dense]
        self.scored.append((arrays, ref_np.reshape(-1)))

    def score_all(self, cap: int, cap64: int) -> None:
        if not self.scored:
            return
        k = len(self.scored[0][0])
        arrays = [np.concatenate([a[i] for a, _ in self.scored]) for i in range(k)]
        got = np.concatenate([g for _, g in self.scored])
        limit = cap64 if got.dtype == np.float64 else cap
        if len(got) > limit:
            idx = np.unique(np.linspace(0, len(got) - 1, limit).astype(np.int64))
            arrays, got = [a[idx] for a in arrays], got[idx]
        self.acc.add(arrays, got, score(self.t, arrays, got))


def _full_set_dtypes(op: str) -> set:
    spec = OPS[op]
    out = {d for d in spec.dtypes if d is D.float32 or d.is_bool}
    ints = [d for d in spec.dtypes if d.is_int]
    if ints:
        out.add(ints[zlib.crc32(op.encode()) % len(ints)])
    return out


def _layouts_main(n: int, alias_at: int | None, dense_ok: bool = True) -> list[Layout]:
    """The fixed view layouts of a group whose operands all have the full shape (rank nd = 3)."""
    steps = [[("step", 2, 2)], [("step", 0, 3)], [("step", 1, 2)]]
    perms = [[("perm", (2, 1, 0))], [("perm", (1, 0, 2))], [("perm", (2, 0, 1)), ("offset1",)]]
    combo = [[("perm", (0, 2, 1)), ("step", 2, 2), ("offset1",)], [("narrow", 1, 1)],
             [("select", 1), ("step", 1, 3), ("narrow", 0, 2)]]
    combo2 = [[("offset1",)], [("perm", (1, 0, 2)), ("narrow", 2, 1), ("step", 0, 2), ("offset1",)],
              [("narrow", 0, 2), ("offset1",)]]
    rot = lambda rows, s: [rows[(i + s) % 3] for i in range(n)]  # noqa: E731
    out = [Layout("steps of 2 and 3", rot(steps, 0)),
           Layout("permutations and transposes", rot(perms, 0)),
           Layout("composite views (permute+step+unaligned, narrow, offset+step+narrow)",
                  rot(combo, 0) if n > 1 else combo[:1]),
           Layout("storage offsets (unaligned, narrow), permute+narrow+step", rot(combo2, 0) if n > 1 else combo2[1:2]),
           Layout("dense permuted operands (output keeps their layout)", [[("perm", (1, 2, 0))]] * n,
                  dense_out=dense_ok)]
    if alias_at is not None:
        out.append(Layout(f"out= aliasing input {alias_at} (a transposed view)",
                          [[("perm", (2, 1, 0))] if i == alias_at else [] for i in range(n)], alias=alias_at))
    return out


def _zero_dim_position(t: Target, n: int) -> int:
    sp = scalar_positions(t)
    return sp[-1] if sp else n - 1


def run_layout(t: Target, profile: str, seed: int, acc) -> None:
    sizes = PROFILE_SIZES[profile]
    rng = C.rng_for(seed, t.label, t.dtype.name, "layout")
    n = n_operands(t)
    split = t.split
    run = LayoutRun(t, acc, rng, n, split)
    full_set = sizes["full_all_dtypes"] or t.dtype in _full_set_dtypes(t.op)
    sp = scalar_positions(t)
    F = (3, 5, 6)                           # last dim even: split ops halve it

    # the operand that may alias out=: the first of the tested dtype (where's / masked_fill's mask excluded)
    alias_at = next((i for i in range(n) if operand_dtype(t, i) is t.dtype), None)

    if not full_set:
        # the pinned broadcast read (4,1) with (4,8) and one composite strided layout
        shapes = [(4, 1)] + [(4, 8)] * (n - 1)
        lays = [Layout("pin: broadcast (4,1) read flat past its end?", [[("expand", (4, 8))]] if n == 1
                       else [[] for _ in range(n)])]
        if n > 1:
            lays.append(Layout("broadcast operand expanded (stride 0), others transposed+stepped",
                               [[("expand", (4, 8)), ("offset1",)]] + [[("perm", (1, 0)), ("step", 0, 2)]] * (n - 1)))
        run.group(shapes, lays, "broadcast")
        run.group([F] * n, [_layouts_main(n, None)[2]], "views")
        run.score_all(sizes["score"], sizes["score64"])
        return

    # A: every operand of the full shape, many views of the same values
    run.group([F] * n, _layouts_main(n, None if split else alias_at, not split), "views")
    # B1: the pinned broadcast read: (4,1) with (4,8) (a unary op sees the stride-0 expand)
    if n == 1:
        run.group([(4, 1)], [Layout("pin: stride 0 on dim 1 (expand (4,1)->(4,8))", [[("expand", (4, 8))]])],
                  "broadcast")
        run.group([(1, 6)], [Layout("stride 0 on dim 0 (expand (1,6)->(5,6)), unaligned",
                                    [[("expand", (5, 6)), ("offset1",)]])], "broadcast")
    else:
        shapes = [(4, 1)] + [(4, 8)] * (n - 2) + [(8,)] if n == 3 else [(4, 1), (4, 8)]
        run.group(shapes, [Layout("pin: (4,1) with (4,8), broadcast inside the op", [[] for _ in range(n)]),
                           Layout("explicit stride 0 (expand) on every broadcast dim",
                                  [[("expand", (4, 8))] for _ in range(n)])], "broadcast")
    # B2: a 0-dim operand (must not be read as numel elements) and Python scalars
    if split:
        run.group([()], [Layout("0-dim expanded to (4,8): stride 0 on every dim", [[("expand", (4, 8))]])], "0-dim")
    elif n == 1:
        run.group([()], [Layout("0-dim expanded to (4,8): stride 0 on every dim", [[("expand", (4, 8))]])], "0-dim")
        run.group([()], [Layout("0-dim in, 0-dim out (storage offset)", [[("select", 2)]])], "0-dim")
    else:
        p = _zero_dim_position(t, n)
        shapes = [(4, 8) if i != p else () for i in range(n)]
        lays = [Layout("pin: 0-dim operand read as numel elements?", [[] for _ in range(n)])]
        if p in sp:
            lays.append(Layout("Python scalar operand", [SCALAR if i == p else [("perm", (1, 0))] for i in range(n)]))
        else:
            lays.append(Layout("0-dim view with a storage offset", [[("select", 1)] if i == p else []
                                                                    for i in range(n)]))
        run.group(shapes, lays, "0-dim")
        run.group([()] * n, [Layout("all operands 0-dim: a 0-dim result", [[("select", 1)]] + [[]] * (n - 1))],
                  "0-dim")
    # B3: the bitwise-ignores-broadcast pin: (2,3,1) & (1,4)
    if n == 1:
        run.group([(2, 3, 1)], [Layout("pin: expand (2,3,1)->(2,3,4)", [[("expand", (2, 3, 4))]])], "broadcast")
    else:
        shapes = [(2, 3, 1), (1, 4)] + [(3, 1)] * (n - 2)
        run.group(shapes, [Layout("pin: (2,3,1) with (1,4) must broadcast", [[] for _ in range(n)])], "broadcast")
    # E: size-0 dims
    if n == 1:
        run.shape_only([(0, 4)], "size-0")
        run.shape_only([(2, 0, 6)], "size-0")
    else:
        run.shape_only([(0, 4)] + [(1, 4)] * (n - 1), "size-0")
        run.shape_only([(2, 0, 1)] + [(1, 4)] * (n - 1), "size-0")
    # R: random mutually broadcastable shapes (numpy-drawn from the seed), random views
    lo, hi = sizes["rand_ranks"]
    ranks = list(range(lo, hi + 1)) if sizes["rand_groups"] > 1 else [int(rng.integers(lo, hi + 1))]
    for r in ranks:
        _random_group(run, r, sizes["rand_layouts"], sp)
    # rank 8
    if hi < 8 and t.verify.ci_rank8:
        _random_group(run, 8, 1, sp)
    run.score_all(sizes["score"], sizes["score64"])
    big = t.verify.big
    if big is not None and t.dtype is big.dtype and profile != "ci" and IS_CUDA:
        _big_offsets(t, big, acc)


def _big_offsets(t: Target, big, acc) -> None:
    """64-bit offsets, GPU only (2 GiB of an 8-bit dtype per tensor): more than 2^31 elements, and a
    strided view whose span crosses 2^31 with few elements, against the op's BigCase.reference
    (numpy's own arithmetic in the dtype, which wraps)."""
    n = (1 << 31) + 1027
    host = ((np.arange(n, dtype=np.int64) % 251) - 125).astype(t.dtype.np)
    x = from_numpy(host)
    for desc, view, ref in (("numel > 2^31", x, host), ("span > 2^31, step 4099", x[::4099], host[::4099])):
        acc.layouts += 1
        try:
            got = call(t, (view, *big.scalars)).numpy()
            want = big.reference(ref, *big.scalars)
            bad = int(np.count_nonzero(got.view(np.uint8) != want.view(np.uint8)))
        except Exception as e:  # noqa: BLE001 (a failure is a result)
            bad = ref.size
            acc.push_worst(Worst([], "", "", math.inf, f"layout {desc}: {type(e).__name__}: {e}"))
        acc.wrong += bad
        acc.cases += ref.size
        if bad:
            acc.push_worst(Worst([], "", "", math.inf, f"layout {desc}: {bad} mismatching elements"))


def _random_group(run: LayoutRun, rank: int, n_layouts: int, sp) -> None:
    rng, n = run.rng, run.n
    max_side = 2 if rank >= 7 else (3 if rank >= 5 else 4)
    shapes, full = draw_broadcastable_shapes(rng, n, rank, rank, 1, max_side, even_last=run.split)
    lays = []
    for k in range(n_layouts):
        per = []
        for i, s in enumerate(shapes):
            if s == () and i in sp and rng.random() < 0.5:
                per.append(SCALAR)
            else:
                per.append(random_transforms(rng, s, full))
        lays.append(Layout(f"random views #{k}", per))
    run.group(shapes, lays, f"rank {rank} {shapes}")
