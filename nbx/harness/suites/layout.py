"""The layout suite (docs/PRECISION.md, "The layout suite"): broadcast and strides.

For an op and dtype, the op on views must equal, BIT FOR BIT (uint views, NaN payloads included),
the same op on contiguous copies of the same values, and the contiguous result is scored against
the oracle (host.score) so the measurement has cases and ulp figures. A "group" is a set of
operand values (operands may have broadcasting shapes); its reference is the op on contiguous
full-shape copies (the references of all groups of a target are ONE launch over the copies end to
end: an element-wise result depends on its own element's operands only; a split op, whose last dim
is halved, takes one per group); each "layout" of the group lays the same values out as views.
Fixed cases pin three broadcast reads: a (4,1) operand with a (4,8) one must not be read flat past
its end, a 0-dim operand must not be read as numel elements, and a bitwise op must broadcast
((2,3,1) & (1,4)). Shapes for the random groups are drawn with numpy from the seed (hypothesis's
mutually_broadcastable_shapes, deterministically); hypothesis itself drives tests/test_suites.py.
Figures: `layouts` (layouts tried), `wrong` (mismatching elements; a wrong shape, dtype or
strides, or an exception, counts every element), `cases` and ulp (the scored contiguous results);
worst entries are Worsts with note "layout <description>".

The layouts are chosen to take every distinct code path of the launcher (launch.py, iterate.plan)
once per op and dtype, not many alike. PATHS names each path (launch_paths / call_paths classify a
launch or a call; "@i": at each input position i of the launch) and the layout that takes it;
tests/test_layout_paths.py records the plans of the full set for a sample of ops and fails when a
path of required_paths is no longer taken. Path -> layout (group: layout):

  flat contiguous         every group's contiguous reference; views: dense permuted operands
  flat broadcast          0-dim: the pin (a 0-dim operand with (4,8) ones; unary: 0-dim expanded)
  flat strided            views: "flat, strided inner dim" (steps of 2 and 3 on the inner dim)
  2-D tiles               views: "2-D tiles, unit inner stride"; broadcast: the (4,1)/(4,8) pin
  2-D transposed          views: "2-D tiles, transposed" (permute (2,0,1)+narrow: inner stride 25);
                          broadcast: explicit expand, full operands transposed+stepped
  NDIM 8                  views: "NDIM 8, unit inner stride" (permute (1,0,2)+step); the random
                          groups of rank >= 3
  NDIM 8 transposed       views: "NDIM 8, transposed" (permute (2,1,0)+step); out= aliasing
  stride 0 inner @i       broadcast: the (4,1)/(4,8) pin (@0), "(1,8) with (4,1)" (@1), the
                          (2,3,1)&(1,4) pin's (3,1) (@2); unary: the (4,1)->(4,8) pin
  stride 0 outer @i       broadcast: "(1,8) with (4,1)" (@0), the (2,3,1)&(1,4) pin (@1, @2);
                          unary: expand (1,6)->(5,6)
  strided inner @i        views: the flat-strided and transposed layouts (rows rotated over the
                          operand positions, so every position gets each row)
  storage offset @i       views: narrow, select (an offset view [k]) and offset1 rows, rotated
  unaligned @i            views: offset1 rows (one element in: not 16-byte aligned), rotated;
                          broadcast: explicit expand+offset1
  0-dim operand @i        0-dim: the pin at the last scalar position, a 0-dim operand (or a
                          Python scalar) at every other position (not for a unary op)
  Python scalar @i        0-dim: a Python scalar at every position of OpSpec.scalar_operands
  0-dim result            0-dim: all operands 0-dim (unary: 0-dim in, 0-dim out)
  out= aliasing           views: out= a transposed view of the first operand of the tested dtype
  dense permuted output   views: dense permuted operands (permute (1,2,0): the output keeps it)
  size-0 dims             size-0: (0,4) and (2,0,...) shapes, contiguous and as views (no launch)
  64-bit offsets          GPU only, nightly: numel > 2^31 and a span > 2^31 (_big_offsets) for
                          the dtype of Verify.big
  (plus, not a launcher path: random mutually broadcastable groups with random views, for the
  view machinery of tensor.py.) The dtype decides the kernel's loads and body (float vs int vs
  bool, 16-bit loads, float32 fast paths: launch._flat), so the set runs per dtype.

Sizes per profile (cases.PROFILE_SIZES, RANDOM_LAYOUTS; the interpreter costs ~15 ms a launch):
- ci: the full set (~15-20 launches, shapes of <= 120 elements) for float32, ONE integer dtype
  (chosen per op from its name, so every integer dtype is covered by some op) and bool, where the
  op supports them; every other dtype gets the pinned broadcast case, one composite strided view
  and the reference (~4 launches). Rank 8 for the ops whose Verify.ci_rank8 gives a reason (a
  sample that holds every arity, a faulting, a split, a compose, a cast and a bool-result op);
  one random group of rank 1..5.
- nightly: the full set for every dtype, plus one random group of rank 1..8 (and rank 8 where
  Verify.ci_rank8 asks), a random view each: ~14-20 launches a target (before: ~41).
Scored elements per target: 2048 (ci) / 8192 (nightly), 64 / 256 for float64 results (mpmath).
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from nbx.oracles import ORACLES

from nbx.dtype import DType, float32
from nbx.backend import IS_CUDA
from nbx.ops import OPS
from nbx.tensor import Tensor, from_numpy
from nbx.harness.inputs.cases import int_operand, rng_for, special_values, stratified
from nbx.harness.inputs.cases import PROFILE_SIZES
from nbx.harness.inputs import patterns
from nbx.harness.scoring.host import flat_bits, hexes, score
from nbx.harness.records.measurement import Worst
from nbx.harness.targets.target import Target, call, measured, n_operands, operand_dtype, scalar_positions


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
        v = int_operand(t, i, n, rng, d)
    else:
        dom = ORACLES[t.op].domain
        lo_hi = dom[i] if (i < len(dom) and not t.split) else (-math.inf, math.inf)
        v = stratified(d, n, rng, lo_hi, in_domain=0.9)
        if n >= 8:
            sp = special_values(d)
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


def py_scalar(v: np.ndarray, d: DType):
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



# ====================================================================== the launcher's code paths
# The distinct code paths a layout can take, each with the layout that takes it (the module
# docstring's table; "@i": at every input position of the launch).
PATHS = {
    "flat contiguous": "every group's contiguous reference; dense permuted operands",
    "flat broadcast": "the 0-dim pin: a 0-dim operand with (4,8) ones (unary: 0-dim expanded to (4,8))",
    "flat strided": "views: steps of 2 and 3 on the inner dim",
    "2-D tiles": "views: narrow / step on an outer dim; the (4,1) with (4,8) pin",
    "2-D transposed": "views: permute (2,0,1)+narrow (inner stride 25)",
    "NDIM 8": "views: permute (1,0,2)+step; random groups of rank >= 3",
    "NDIM 8 transposed": "views: permute (2,1,0)+step",
    "stride 0 inner @i": "the (4,1) with (4,8) pin, (1,8) with (4,1), the (2,3,1) & (1,4) pin",
    "stride 0 outer @i": "(1,8) with (4,1), the (2,3,1) & (1,4) pin (unary: expand (1,6)->(5,6))",
    "strided inner @i": "views: the strided-inner and transposed rows, rotated over the positions",
    "storage offset @i": "views: narrow, select and offset1 rows, rotated over the positions",
    "unaligned @i": "views: offset1 rows, rotated over the positions",
    "0-dim operand @i": "a 0-dim operand (the pin) or a Python scalar at each position (n > 1)",
    "Python scalar @i": "a Python scalar at each position of OpSpec.scalar_operands",
    "0-dim result": "all operands 0-dim",
    "out= aliasing": "out= a transposed view of the first operand of the tested dtype",
    "dense permuted output": "dense permuted operands (permute (1,2,0))",
    "size-0 dims": "(0,4) and (2,0,...) shapes, contiguous and as views (no launch)",
    "64-bit offsets": "GPU only, nightly: numel > 2^31 and a span > 2^31 (_big_offsets)",
}


def launch_paths(out: Tensor, inputs, plan) -> set[str]:
    """The distinct code paths of one launch (launch.launch's `iterate.plan(out, inputs)`), as PATHS
    names them: the kernel's shape (launch._ndim_class, launch._tile_shape, launch._flat), then per
    input position i what its strides and pointer take, then the output's layout."""
    cols = [st[0] for st in plan.strides]
    strided = any(c not in (0, 1) for c in cols)
    if not plan.outer:
        kind = "flat strided" if strided else ("flat broadcast" if 0 in cols[1:] else "flat contiguous")
    elif len(plan.outer) == 1:
        kind = "2-D transposed" if strided else "2-D tiles"
    else:
        kind = "NDIM 8 transposed" if strided else "NDIM 8"
    out_paths = {kind}
    for i, x in enumerate(inputs):
        st = plan.strides[i + 1]
        if x.ndim == 0 and out.ndim:
            out_paths.add(f"0-dim operand @{i}")
        if st[0] == 0 and plan.C > 1:
            out_paths.add(f"stride 0 inner @{i}")
        if 0 in st[1:]:
            out_paths.add(f"stride 0 outer @{i}")
        if st[0] not in (0, 1):
            out_paths.add(f"strided inner @{i}")
        if x.storage_offset():
            out_paths.add(f"storage offset @{i}")
        if (x.storage_offset() * x.dtype.itemsize) % 16:
            out_paths.add(f"unaligned @{i}")
    if out.ndim == 0:
        out_paths.add("0-dim result")
    if any(x._storage is out._storage for x in inputs):
        out_paths.add("out= aliasing")
    elif not out.is_contiguous() and out.is_non_overlapping_and_dense():
        out_paths.add("dense permuted output")
    if plan.index64:
        out_paths.add("64-bit offsets")
    return out_paths


def call_paths(t: Target, operands, result_shape) -> set[str]:
    """The paths of one call that the launcher does not see: Python scalars (0-dim tensors by then)
    and size-0 results (no launch)."""
    out = {f"Python scalar @{i}" for i, x in enumerate(operands) if not isinstance(x, Tensor)}
    if 0 in tuple(result_shape):
        out.add("size-0 dims")
    return out


def required_paths(n_inputs: int, scalars=(), big: bool = False) -> set[str]:
    """The paths (PATHS) a full layout set exercises for an op whose launches take n_inputs inputs
    and whose operands at `scalars` may be Python scalars; big: the GPU's 64-bit offsets."""
    out = {p for p in PATHS if "@" not in p and p != "64-bit offsets"}
    for p in PATHS:
        base = p[:-3]
        if p.endswith(" @i") and base != "Python scalar" and (n_inputs > 1 or base != "0-dim operand"):
            out |= {f"{base} @{i}" for i in range(n_inputs)}
    out |= {f"Python scalar @{i}" for i in scalars}
    if big:
        out.add("64-bit offsets")
    return out

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
    ref_dtype: DType | None = None
    scored: list = field(default_factory=list)      # (operand arrays for the oracle, contiguous result)
    pending: list = field(default_factory=list)     # groups drawn, not yet run (flush)

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
        its layouts, run now."""
        self.add_group(shapes, layouts, label, full)
        self.flush()

    def add_group(self, shapes, layouts, label: str, full=None) -> None:
        """group(), the values drawn now, the reference and the layouts run at flush(), where the
        references of every group added are ONE launch over the groups' contiguous copies end to end
        (an element-wise result depends on its element's operands only); a split op (its last dim
        halved) takes one reference launch per group."""
        t = self.t
        expands = [tr[0][1] for lay in layouts for tr in lay.per_operand
                   if tr != SCALAR and tr and tr[0][0] == "expand"]
        full = tuple(np.broadcast_shapes(*shapes, *expands, *([full] if full is not None else [])))
        vals = [_values(t, i, s, self.rng) for i, s in enumerate(shapes)]
        ref_full = full if full else (1,)
        dense = [np.ascontiguousarray(np.broadcast_to(v, ref_full)) for v in vals]
        self.pending.append((vals, full, dense, layouts, label))
        if self.split:
            self.flush()

    def flush(self) -> None:
        """The pending groups' reference (one launch), then their layouts."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        try:
            if self.split:                              # one group: its own reference
                ref = call(self.t, [from_numpy(x) for x in pending[0][2]])
                parts = [ref.numpy()]
            else:
                pool = [np.concatenate([g[2][i].reshape(-1) for g in pending]) for i in range(len(pending[0][2]))]
                ref = call(self.t, [from_numpy(x) for x in pool])
                parts = np.split(ref.numpy(), np.cumsum([g[2][0].size for g in pending])[:-1])
            ref_dtype = ref.dtype
        except Exception as e:  # noqa: BLE001 (the gate reads it)
            for vals, full, dense, layouts, label in pending:
                for lay in layouts:
                    self.acc.layouts += 1
                    self.mismatch(max(1, dense[0].size), f"{label} {lay.desc}",
                                  f"the contiguous reference raised {type(e).__name__}: {e}")
            return
        if self.ref_dtype is None:
            self.ref_dtype = ref_dtype
        for (vals, full, dense, layouts, label), ref_np in zip(pending, parts):
            self._keep_for_scoring(dense, ref_np)
            want_shape = self.result_shape(full)
            ref_bits = flat_bits(ref_np)
            flat_inputs = [x.reshape(-1) for x in dense]
            for lay in layouts:
                self.one_layout(vals, full, lay, label, ref_dtype, ref_bits, want_shape, flat_inputs)

    def _garbage(self, i):
        return lambda shape: _values(self.t, i, shape, self.rng)

    def one_layout(self, vals, full, lay: Layout, label, ref_dtype, ref_bits, want_shape, flat_inputs) -> None:
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
                if not isinstance(out, Tensor) or out.shape != tuple(want_shape) or out.dtype is not ref_dtype:
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
        if res.shape != tuple(want_shape) or res.dtype is not ref_dtype:
            self.mismatch(numel, desc, f"result shape {res.shape} dtype {res.dtype.name}, expected "
                                       f"{tuple(want_shape)} {ref_dtype.name}")
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
            idx = patterns.evenly(len(got), limit)
            arrays, got = [a[idx] for a in arrays], got[idx]
        self.acc.add(arrays, got, score(self.t, arrays, got))


def _full_set_dtypes(op: str) -> set:
    spec = OPS[op]
    out = {d for d in spec.dtypes if d is float32 or d.is_bool}
    ints = [d for d in spec.dtypes if d.is_int]
    if ints:
        out.add(ints[zlib.crc32(op.encode()) % len(ints)])
    return out


def _rot(rows, n: int, s: int) -> list:
    """Operands 0..n-1 take rows s, s+1, ... (mod 3): each operand position meets every row; a unary
    op takes row 0."""
    return [list(rows[(i + s) % 3 if n > 1 else 0]) for i in range(n)]


# The kernel shapes of a group of full-shape (3,5,6) operands: one layout each, its three rows (one
# per operand position, rotated per layout) all of that shape after iterate.plan's coalescing.
VIEW_ROWS = (
    ("flat, strided inner dim (steps of 2 and 3)",
     ([("step", 2, 2)], [("step", 2, 3), ("offset1",)], [("step", 2, 2), ("select", 1)])),
    ("2-D tiles, unit inner stride (narrow / step on an outer dim)",
     ([("narrow", 1, 1)], [("narrow", 1, 2), ("offset1",)], [("step", 0, 2)])),
    ("2-D tiles, transposed (inner stride 25)",
     ([("perm", (2, 0, 1)), ("narrow", 1, 2)], [("perm", (2, 0, 1)), ("narrow", 1, 1), ("offset1",)],
      [("step", 2, 3), ("select", 1)])),
    ("NDIM 8, unit inner stride (permute (1,0,2)+step)",
     ([("perm", (1, 0, 2)), ("step", 0, 2)], [("perm", (1, 0, 2)), ("step", 0, 3), ("offset1",)],
      [("step", 1, 2), ("narrow", 0, 1)])),
    ("NDIM 8, transposed (permute (2,1,0)+step)",
     ([("perm", (2, 1, 0)), ("step", 1, 2)], [("perm", (0, 2, 1)), ("step", 2, 2), ("offset1",)],
      [("step", 0, 3), ("perm", (2, 1, 0))])),
)


def _layouts_views(n: int, alias_at: int | None, dense_ok: bool = True) -> list[Layout]:
    """The view layouts of a group whose operands all have the full shape (3,5,6): one per kernel
    shape (VIEW_ROWS), the dense permuted operands (the output keeps their layout: a flat launch),
    out= aliasing a transposed view of input alias_at."""
    out = [Layout(desc, _rot(rows, n, s)) for s, (desc, rows) in enumerate(VIEW_ROWS)]
    out.append(Layout("dense permuted operands (output keeps their layout)", [[("perm", (1, 2, 0))]] * n,
                      dense_out=dense_ok))
    if alias_at is not None:
        out.append(Layout(f"out= aliasing input {alias_at} (a transposed view)",
                          [[("perm", (2, 1, 0))] if i == alias_at else [] for i in range(n)], alias=alias_at))
    return out


def _layout_ci_composite(n: int) -> Layout:
    """The ci profile's one strided layout for the dtypes outside _full_set_dtypes."""
    combo = [[("perm", (0, 2, 1)), ("step", 2, 2), ("offset1",)], [("narrow", 1, 1)],
             [("select", 1), ("step", 1, 3), ("narrow", 0, 2)]]
    return Layout("composite views (permute+step+unaligned, narrow, offset+step+narrow)",
                  _rot(combo, n, 0) if n > 1 else combo[:1])


def _zero_dim_position(t: Target, n: int) -> int:
    sp = scalar_positions(t)
    return sp[-1] if sp else n - 1


# Random groups (ranks from cases.PROFILE_SIZES' rand_ranks; its rand_groups / rand_layouts are
# not read): one group of a rank drawn from the seed, one random view of it, plus a rank-8 group
# for the ops whose Verify.ci_rank8 gives a reason (nightly: the rank is drawn from 1..8, so across
# its ~900 targets every rank comes up ~100 times; the paths are the fixed layouts' business).
RANDOM_LAYOUTS = 1


def run_layout(t: Target, profile: str, seed: int, acc) -> None:
    sizes = PROFILE_SIZES[profile]
    rng = rng_for(seed, t.label, t.dtype.name, "layout")
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
        run.add_group(shapes, lays, "broadcast")
        run.add_group([F] * n, [_layout_ci_composite(n)], "views")
        run.flush()
        run.score_all(sizes["score"], sizes["score64"])
        return

    # A: every operand of the full shape: one layout per kernel shape, dense permuted, out= aliasing
    run.add_group([F] * n, _layouts_views(n, None if split else alias_at, not split), "views")
    # B1: the pinned broadcast read: (4,1) with (4,8) (a unary op sees the stride-0 expand); stride 0
    # on the inner and on an outer dim at every operand position
    if n == 1:
        run.add_group([(4, 1)], [Layout("pin: stride 0 on dim 1 (expand (4,1)->(4,8))", [[("expand", (4, 8))]])],
                  "broadcast")
        run.add_group([(1, 6)], [Layout("stride 0 on dim 0 (expand (1,6)->(5,6)), unaligned",
                                    [[("expand", (5, 6)), ("offset1",)]])], "broadcast")
    else:
        shapes = [(4, 1)] + [(4, 8)] * (n - 2) + [(8,)] if n == 3 else [(4, 1), (4, 8)]
        run.add_group(shapes, [Layout("pin: (4,1) with (4,8), broadcast inside the op", [[] for _ in range(n)]),
                           Layout("explicit stride 0 (expand)+unaligned / stepped, full operands transposed+stepped",
                                  [[("expand", (4, 8)), ("offset1",)]] +
                                  [[("perm", (1, 0)), ("step", 0, 2)] if s == (4, 8) else
                                   [("expand", (4, 8)), ("step", 0, 2)] for s in shapes[1:]])],
                  "broadcast")
        run.add_group([(1, 8), (4, 1), (4, 8)][:n], [Layout("stride 0 on dim 0 of operand 0, on dim 1 of operand 1",
                                                        [[] for _ in range(n)])], "broadcast")
    # B2: a 0-dim operand (must not be read as numel elements) and Python scalars, at every position
    if split:
        run.add_group([()], [Layout("0-dim expanded to (4,8): stride 0 on every dim", [[("expand", (4, 8))]])], "0-dim")
    elif n == 1:
        run.add_group([()], [Layout("0-dim expanded to (4,8): stride 0 on every dim", [[("expand", (4, 8))]])], "0-dim")
        run.add_group([()], [Layout("0-dim in, 0-dim out (storage offset)", [[("select", 2)]])], "0-dim")
    else:
        p = _zero_dim_position(t, n)
        for q in [p] + [i for i in range(n) if i != p]:
            shapes = [(4, 8) if i != q else () for i in range(n)]
            lays = [Layout("pin: 0-dim operand read as numel elements?", [[] for _ in range(n)])] if q == p else []
            if q in sp:
                lays.append(Layout(f"Python scalar operand {q}", [SCALAR if i == q else [("perm", (1, 0))]
                                                                 for i in range(n)]))
            elif q == p:
                lays.append(Layout("0-dim view with a storage offset", [[("select", 1)] if i == q else []
                                                                        for i in range(n)]))
            else:
                lays.append(Layout(f"0-dim operand {q} (a storage offset), others transposed",
                                   [[("select", 1)] if i == q else [("perm", (1, 0))] for i in range(n)]))
            run.add_group(shapes, lays, "0-dim")
        run.add_group([()] * n, [Layout("all operands 0-dim: a 0-dim result", [[("select", 1)]] + [[]] * (n - 1))],
                  "0-dim")
    # B3: the bitwise-ignores-broadcast pin: (2,3,1) & (1,4)
    if n == 1:
        run.add_group([(2, 3, 1)], [Layout("pin: expand (2,3,1)->(2,3,4)", [[("expand", (2, 3, 4))]])], "broadcast")
    else:
        shapes = [(2, 3, 1), (1, 4)] + [(3, 1)] * (n - 2)
        run.add_group(shapes, [Layout("pin: (2,3,1) with (1,4) must broadcast", [[] for _ in range(n)])], "broadcast")
    # R: random mutually broadcastable shapes (numpy-drawn from the seed), random views
    lo, hi = sizes["rand_ranks"]
    ranks = [int(rng.integers(lo, hi + 1))]
    if 8 not in ranks and t.verify.ci_rank8:
        ranks.append(8)
    for r in ranks:
        _random_group(run, r, RANDOM_LAYOUTS, sp)
    run.flush()
    # E: size-0 dims (no launch; after the reference, whose dtype they must have)
    if n == 1:
        run.shape_only([(0, 4)], "size-0")
        run.shape_only([(2, 0, 6)], "size-0")
    else:
        run.shape_only([(0, 4)] + [(1, 4)] * (n - 1), "size-0")
        run.shape_only([(2, 0, 1)] + [(1, 4)] * (n - 1), "size-0")
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
    run.add_group(shapes, lays, f"rank {rank} {shapes}")
