"""Results against their documented evaluation order (nbx.ops.verify.Order): the second figure of a
compound op.

The op's result on a dtype its Order covers is compared with the oracle of the composition
(nbx/oracles/order.py), run on the same backend without contraction: the ulp distance in the output
format, inf where the two differ in special-value class (NaN, an infinity, a zero's sign). A
faithful kernel gives 0 everywhere; the gate holds it to Order.budget.
"""
from __future__ import annotations

import numpy as np

from nbx.oracles.formats import FORMATS, to_bits
from nbx.oracles.order import ORDER_ORACLES

from nbx.dtype import from_numpy_dtype
from nbx.harness.scoring import device
from nbx.harness.scoring import rule
from nbx.harness.targets.target import Target


def order_oracle(t: Target):
    """The oracle of the composition of t's op (by label, then by op name), or None where the op
    declares no order for t's result dtype."""
    if t.order is None:
        return None
    o = ORDER_ORACLES.get(t.label) or ORDER_ORACLES.get(t.op)
    if o is None:
        raise LookupError(f"{t.label}: the op declares an evaluation order for {t.out_dtype.name} but "
                          "nbx/oracles/order.py has no oracle of it")
    return o


def order_values(t: Target, vals: list[np.ndarray], params: dict) -> np.ndarray:
    """The composition's float64 values at the oracle operands `vals` (Target.oracle_values)."""
    o = order_oracle(t)
    if len(vals) != o.arity:
        raise ValueError(f"{t.label}: {len(vals)} operands, the order oracle takes {o.arity}")
    p = [float(params[name]) for name in o.params]
    return device.evaluate(o, vals[0], p, *vals[1:])      # no contraction, as the op on this dtype


def order_error(t: Target, vals: list[np.ndarray], params: dict, got: np.ndarray):
    """(ulp distance of each result from the composition, the composition's bits), or None where t
    has no order. The distance is inf where the special-value classes differ."""
    if order_oracle(t) is None:
        return None
    fmt = FORMATS[from_numpy_dtype(got.dtype).name]
    v = order_values(t, vals, params)
    s = rule.classify_arrays(got, v, fmt, zero_sign=True, exact=True)
    err, special = s.err, s.cls == rule.SPECIAL
    with np.errstate(all="ignore"):
        bits = to_bits(s.due.astype(fmt.np_dtype), fmt)
    return np.where(special, np.inf, np.where(bits == to_bits(got, fmt), 0.0, err)), bits
