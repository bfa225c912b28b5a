"""What the runner measures: op x parameter variant x dtype, and how one case batch is run.

A Target is one row of the precision table. Which parameter variants an op has (div's rounding
modes, gelu's tanh form, add with alpha != 1, every cast target), what its operands are to the
oracle and how a split op is called, the op declares (OpSpec.verify, nbx/ops/verify.py); this
module reads it and names no op. `Target.run` runs 1-D operand arrays through the op's function;
`call` runs the op on its real signature (tensors, views, Python scalars, out=) for the structural
suites.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import triton
import triton.language as tl

from nbx.dtype import DType, bool_, float32, from_numpy_dtype
from nbx.kernels import launch
from nbx.ops import FUNCTIONS, OPS
from nbx.ops import registry
from nbx.ops.verify import MASK, Role, Variant, Verify
from nbx.tensor import Tensor, empty, from_numpy

BLOCK = 1024 if launch.backend.IS_CUDA else 1 << 16


@dataclass(frozen=True)
class Target:
    op: str
    params: dict = field(default_factory=dict)
    dtype: DType = float32

    @property
    def label(self) -> str:
        if not self.params:
            return self.op
        return self.op + ":" + ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))

    @property
    def spec(self):
        return OPS[self.op]

    @property
    def name(self) -> str:
        """Whose results are measured: "nbx" (a peer library's or a callable's target says its own)."""
        return "nbx"

    @property
    def describe(self) -> str:
        """What runs, for the report (nbx's op: nothing more to say)."""
        return ""

    @property
    def verify(self) -> Verify:
        return self.spec.verify

    @property
    def split(self) -> bool:
        return self.verify.split is not None

    def role(self, i: int) -> Role | None:
        """The role of oracle operand i (None: a value of the dtype under test)."""
        return self.verify.role(i)

    @property
    def oracle_arity(self) -> int:
        return 2 if self.split else self.spec.arity

    def operand_dtypes(self) -> list[DType]:
        return [bool_ if self.role(i) == MASK else self.dtype for i in range(self.oracle_arity)]

    def typing(self, dtypes=None) -> registry.Typing:
        """The op's typing for oracle operands of `dtypes` (default: operand_dtypes()); a split op's
        one operand holds both halves."""
        dts = list(dtypes or self.operand_dtypes())
        spec = self.spec
        dummies = [empty(2, dtype=dts[0])] if self.split else [empty(1, dtype=d) for d in dts[:spec.arity]]
        return spec.typing(dummies, {**{p.name: p.default for p in spec.params}, **self.params})

    @property
    def out_dtype(self) -> DType:
        return self.typing().out

    @property
    def order(self):
        """The documented evaluation order (verify.Order) the op follows on this target's result
        dtype; None where the exact value is the contract."""
        spec = self.spec
        return spec.select_order({**{p.name: p.default for p in spec.params}, **self.params}, self.out_dtype)

    def oracle_values(self, arrays: list[np.ndarray], out: DType | None = None) -> list[np.ndarray]:
        """The operands as float64 values, as the oracle sees them.

        An integer operand that the op loads as a float (its Typing.compute) is first converted to the
        float result dtype, as the op defines it (ATen: integers promote to the default float, then the
        math happens): sin(2**31 - 1) in float32 is sin(2147483648.0). A cast loads its source in an
        integer dtype and converts once, on the store: its oracle sees the exact source value."""
        res = []
        loads = self.typing([from_numpy_dtype(a.dtype) for a in arrays]).compute if (
            out is not None and out.is_float) else ()
        for i, a in enumerate(arrays):
            role = self.role(i)
            if role is not None and role.fmt is not None and a.dtype != np.bool_:
                a = a.view(role.fmt.uint_np).view(role.fmt.np)
            elif loads and a.dtype.kind in "iub" and loads[0 if self.split else i].is_float:
                with np.errstate(all="ignore"):           # (kind "iub": bfloat16, of ml_dtypes, is "V")
                    a = a.astype(out.np)
            with np.errstate(all="ignore"):
                res.append(a.astype(np.float64))
        for name, fill in self.verify.param_operands:
            v = self.params.get(name)
            res.append(np.full(len(res[0]), fill if v is None else float(v)))
        return res

    def oracle_kwargs(self) -> dict:
        operands = {name for name, _ in self.verify.param_operands}
        return {k: v for k, v in self.params.items() if k not in operands}

    def invoke(self, tensors: list, kw: dict):
        """The op of this target on nbx tensors (a peer target runs its library's op instead)."""
        return FUNCTIONS[self.op](*tensors, **kw, **self.params)

    def run(self, arrays: list[np.ndarray]) -> np.ndarray:
        """Run the op on 1-D operand arrays; returns the result as numpy."""
        split = self.verify.split
        if split is None:
            return self.invoke([from_numpy(a) for a in arrays], {}).numpy()
        a, b = arrays
        if split.dim_param is not None:                       # (2, n): contiguous halves along dim 0
            return self.invoke([from_numpy(np.stack([a, b], axis=0))], {split.dim_param: 0}).numpy().reshape(-1)
        return self.invoke([from_numpy(np.stack([a, b], axis=1))], {}).numpy().reshape(-1)   # (n, 2): the last dim

    def run_device(self, xs):
        """Run the op on 1-D device operands xs (the oracle's operands), called as `run` calls it:
        a split op gets one tensor holding both halves; the result, flat."""
        split = self.verify.split
        if split is None:
            return self.invoke(list(xs), {})
        if split.dim_param is not None:                       # (2, n): contiguous halves along dim 0
            return self.invoke([pack(xs[0], xs[1], False)], {split.dim_param: 0}).reshape(-1)
        return self.invoke([pack(xs[0], xs[1], True)], {}).reshape(-1)    # (n, 2): the last dim


def measured(spec, d: DType) -> list[dict]:
    """The parameter sets measured for an op on dtype d: the defaults ({}) unless the op has none,
    then its variants that apply to d, in the order declared."""
    v = spec.verify
    sets = ((Variant({}),) if v.measure_default else ()) + tuple(v.variants)
    return [dict(s.params) for s in sets if s.applies(d)]


def targets(ops=None, dtypes=None) -> list[Target]:
    """Every (op, variant, dtype) of OPS, filtered by op names and dtype names."""
    out = []
    for name, spec in OPS.items():
        if ops and name not in ops:
            continue
        for d in spec.dtypes:
            if dtypes and d.name not in dtypes:
                continue
            out += [Target(name, params, d) for params in measured(spec, d)]
    return out


# ---------------------------------------------------------------------- calling an op (structural suites)
def call(t: Target, operands, out=None):
    """The op on its real signature (operands, then the target's parameters: clamp's bounds, to's dtype),
    through OPS, so a patched OPS entry is what runs."""
    return registry.run(OPS[t.op], list(operands), dict(t.params), out=out)


def n_operands(t: Target) -> int:
    return OPS[t.op].arity


def scalar_positions(t: Target) -> tuple:
    return tuple(OPS[t.op].scalar_operands)


def operand_dtype(t: Target, i: int) -> DType:
    return bool_ if t.role(i) == MASK else t.dtype


# ---------------------------------------------------------------------- a split op's operand on the device
@triton.jit
def _pack_kernel(a_ptr, b_ptr, out_ptr, n, INTERLEAVE: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a = tl.load(a_ptr + i, mask=m)
    b = tl.load(b_ptr + i, mask=m)
    if INTERLEAVE:
        tl.store(out_ptr + 2 * i, a, mask=m)
        tl.store(out_ptr + 2 * i + 1, b, mask=m)
    else:
        tl.store(out_ptr + i, a, mask=m)
        tl.store(out_ptr + n + i, b, mask=m)


def pack(a: Tensor, b: Tensor, interleave: bool) -> Tensor:
    """The two halves of a split op's operand, on the device: (n, 2) with a and b along the last dim
    (interleave), else (2, n) with a and b as rows."""
    n = a.numel()
    out = empty((n, 2) if interleave else (2, n), dtype=a.dtype)
    _pack_kernel[(max(1, triton.cdiv(n, BLOCK)),)](a, b, out, n, INTERLEAVE=interleave, BLOCK=BLOCK,
                                                   **launch.kernel_options())
    return out
