"""What the runner measures: op x parameter variant x dtype, and how one case batch is run.

A Target is one row of the precision table. Variants measure the parameter values whose code
paths differ (div's rounding modes, gelu's tanh form, add with alpha != 1, every cast target).
`Target.run` runs 1-D operand arrays through the op's function; `call` runs the op on its real
signature (tensors, views, Python scalars, out=) for the structural suites.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import dtype as D
from ..ops import FUNCTIONS, OPS
from ..ops import registry as R
from ..tensor import from_numpy

# Parameter variants measured besides the defaults. `to` has no default target: only variants.
VARIANTS: dict[str, list[dict]] = {
    "add": [{"alpha": 2}], "sub": [{"alpha": 3}], "rsub": [{"alpha": 2}],
    "div": [{"rounding_mode": "trunc"}, {"rounding_mode": "floor"}],
    "gelu": [{"approximate": "tanh"}],
    "softplus": [{"beta": 2.0, "threshold": 10.0}],
    "leaky_relu": [{"negative_slope": 0.2}],
    "elu": [{"alpha": 0.5}], "celu": [{"alpha": 2.0}],
    "to": [{"dtype": d.name} for d in D.ALL],
    "threshold": [{"threshold": 0.5, "value": -2.0}, {"threshold": 0, "value": 7}],
    "masked_fill": [{"value": 1}, {"value": -2.5}],
    "clamp": [{"min": 1, "max": 100}, {"min": 100, "max": 1}, {"min": -1.5, "max": 2.5}, {"min": -1.5},
              {"max": 2.5}],
}
NO_DEFAULT = {"to", "threshold", "masked_fill", "clamp"}
# Scalar parameters that the oracle takes as operands (clamp(x, min, max) is ternary there).
PARAM_OPERANDS = {"clamp": ("min", "max")}

# Operands that are masks/conditions, not values of the dtype under test.
BOOL_OPERANDS = {"where": (0,), "masked_fill": (1,)}
# Ops whose single tensor operand is split in two halves along a dim; the oracle takes the halves.
SPLIT_OPS = {"glu": -1, "silu_and_mul": -1}
# Ops whose integer operand holds the raw bits of another format: the oracle sees that format's value.
BITS_OF = {"bf16_to_fp16": D.bfloat16}


@dataclass(frozen=True)
class Target:
    op: str
    params: dict = field(default_factory=dict)
    dtype: D.DType = D.float32

    @property
    def label(self) -> str:
        if not self.params:
            return self.op
        return self.op + ":" + ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))

    @property
    def spec(self):
        return OPS[self.op]

    @property
    def oracle_arity(self) -> int:
        return 2 if self.op in SPLIT_OPS else self.spec.arity

    def operand_dtypes(self) -> list[D.DType]:
        return [D.bool_ if i in BOOL_OPERANDS.get(self.op, ()) else self.dtype
                for i in range(self.oracle_arity)]

    def oracle_values(self, arrays: list[np.ndarray], out: D.DType | None = None) -> list[np.ndarray]:
        """The operands as float64 values, as the oracle sees them.

        An integer operand of an op with a float result is first converted to that float dtype, as
        the op defines it (ATen: integers promote to the default float, then the math happens):
        sin(2**31 - 1) in float32 is sin(2147483648.0)."""
        res = []
        for a in arrays:
            if self.op in BITS_OF and a.dtype != np.bool_:
                a = a.view(BITS_OF[self.op].uint_np).view(BITS_OF[self.op].np)
            elif out is not None and out.is_float and a.dtype.kind in "iub" and self.op != "to":  # ml_dtypes bfloat16 has kind "V"
                with np.errstate(all="ignore"):
                    a = a.astype(out.np)
            with np.errstate(all="ignore"):
                res.append(a.astype(np.float64))
        for name in PARAM_OPERANDS.get(self.op, ()):
            v = self.params.get(name)
            fill = {"min": -np.inf, "max": np.inf}.get(name, np.nan) if v is None else float(v)
            res.append(np.full(len(res[0]), fill))
        return res

    def oracle_kwargs(self) -> dict:
        return {k: v for k, v in self.params.items() if k not in PARAM_OPERANDS.get(self.op, ())}

    def run(self, arrays: list[np.ndarray]) -> np.ndarray:
        """Run the op through nbx on 1-D operand arrays; returns the result as numpy."""
        fn = FUNCTIONS[self.op]
        if self.op in SPLIT_OPS:
            a, b = arrays
            x = from_numpy(np.stack([a, b], axis=0))        # (2, n): halves along dim 0
            dim = 0 if self.op == "glu" else None
            if dim is None:                                  # silu_and_mul splits the LAST dim
                x = from_numpy(np.stack([a, b], axis=1))     # (n, 2)
                return fn(x).numpy().reshape(-1)
            return fn(x, dim=0).numpy().reshape(-1)
        return fn(*[from_numpy(a) for a in arrays], **self.params).numpy()


def targets(ops=None, dtypes=None) -> list[Target]:
    """Every (op, variant, dtype) of OPS, filtered by op names and dtype names."""
    out = []
    for name, spec in OPS.items():
        if ops and name not in ops:
            continue
        variants = ([] if name in NO_DEFAULT else [{}]) + VARIANTS.get(name, [])
        for d in spec.dtypes:
            if dtypes and d.name not in dtypes:
                continue
            for params in variants:
                if not variant_applies(spec, params, d):
                    continue
                out.append(Target(name, params, d))
    return out


def variant_applies(spec, params, d: D.DType) -> bool:
    if spec.name in ("threshold", "masked_fill", "clamp") and not d.is_float:
        return all(isinstance(v, int) and (d.is_bool or d.min <= v <= d.max) for v in params.values()) and \
            not (d.is_bool and spec.name != "masked_fill")
    if "alpha" in params and spec.name in ("add", "sub", "rsub") and not d.is_float:
        return isinstance(params["alpha"], int)
    if spec.name == "to" and d.is_bool and params.get("dtype") == "bool":
        return True
    if spec.name == "div" and params.get("rounding_mode") and d.is_bool:
        return False
    return True


# ---------------------------------------------------------------------- calling an op (structural suites)
def call(t: Target, operands, out=None):
    """The op on its real signature (operands, then the target's parameters: clamp's bounds, to's dtype),
    through OPS, so a patched OPS entry is what runs."""
    return R.run(OPS[t.op], list(operands), dict(t.params), out=out)


def n_operands(t: Target) -> int:
    return OPS[t.op].arity


def scalar_positions(t: Target) -> tuple:
    return tuple(OPS[t.op].scalar_operands)


def operand_dtype(t: Target, i: int) -> D.DType:
    return D.bool_ if i in BOOL_OPERANDS.get(t.op, ()) else t.dtype
