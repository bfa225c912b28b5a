"""Unary sweeps over ranges of bit patterns, decided on the device (issue: prove it on every input).

A float32, float16 or bfloat16 unary target with a device oracle (oracles/device) runs here when
its sweep covers a range of bit patterns: all 2^32 float32 inputs in the exhaustive profile, or the
range `nbx run --bits LO:HI` names. Inputs are made on the device chunk by chunk, the op runs
through nbx, and device_score decides and scores each element. Undecided inputs are scored on the
host (measure.score: the float64 oracle, mpmath where it is close); the worst decided inputs are
rescored there for the report's worst entries. Nothing else per element leaves the device.
"""
from __future__ import annotations

import numpy as np

import oracles.device as OD
from oracles import ORACLES

from .. import backend
from ..ops import FUNCTIONS
from . import device_score as DS
from .measure import Accumulator, score
from .targets import Target

CHUNK = 1 << 28 if backend.IS_CUDA else 1 << 20


def device_oracle(t: Target):
    """The device oracle of a target, or None: its label (`gelu:approximate=tanh`), else its op
    when every parameter of the variant is one the device oracle takes. Binary targets: 16-bit
    dtypes (their pairs are the 2^32 indices), two plain tensor operands."""
    if t.dtype.name not in DS.FORMATS or t.oracle_arity > 2:
        return None
    # operand roles other than values (a mask, another format's bits) are no float pairs; a
    # divisor's or exponent's role concerns integer dtypes only
    other_kinds = any(r.kind in ("mask", "bits") for r in t.verify.roles.values())
    if t.oracle_arity == 2 and (t.dtype.itemsize != 2 or t.spec.arity != 2 or other_kinds
                                or t.verify.param_operands):
        return None
    d = OD.DEVICE_ORACLES.get(t.label) or OD.DEVICE_ORACLES.get(t.op)
    if d is None or d.arity != t.oracle_arity or d.name != t.label and not set(t.params) <= set(d.params):
        return None
    return d


def sweep(t: Target, lo: int, hi: int, acc: Accumulator, chunk: int = CHUNK) -> None:
    """Bit patterns lo .. hi - 1 of t.dtype (for a binary target: the operand pairs of the 32-bit
    indices lo .. hi - 1, pair_patterns) through t's op, into acc."""
    d = device_oracle(t)
    if d is None:
        raise ValueError(f"exhaustive.sweep: {t.label} {t.dtype.name} has no device oracle")
    oracle = ORACLES[t.op]
    params = [t.params.get(p, oracle.params.get(p, 0.0)) for p in d.params]
    fn = FUNCTIONS[t.op]
    for start in range(lo, hi, chunk):
        n = min(chunk, hi - start)
        xs_dev = [DS.bit_patterns(t.dtype.name, start, n)] if d.arity == 1 else \
            list(DS.pair_patterns(t.dtype.name, start, n))
        got = fn(*xs_dev, **t.params)
        s = DS.score(d, xs_dev, got, params, zero_sign=oracle.zero_sign_matters)
        acc.add_device(s)
        if s.index_overflow:
            raise RuntimeError(f"{t.label} {t.dtype.name}: {s.index_overflow} undecided or failing inputs in "
                               f"[{start:#x}, {start + n:#x}) beyond the device's list; use a smaller chunk")
        xs, gs = [x.numpy() for x in xs_dev], got.numpy()
        if len(s.undecided_at):
            arrays = [x[s.undecided_at] for x in xs]
            acc.add(arrays, gs[s.undecided_at], score(t, arrays, gs[s.undecided_at]))
        show = s.failing_at[:8]
        if s.argmax >= 0:
            show = np.union1d(show, [s.argmax])
        if len(show):
            _push_worst(t, acc, [x[show] for x in xs], gs[show])


def _push_worst(t: Target, acc: Accumulator, arrays, got) -> None:
    """Worst entries for decided elements, rescored on the host (their counts are already in acc)."""
    scratch = Accumulator(t, acc.suite, acc.backend)
    scratch.add(arrays, got, score(t, arrays, got))
    for key, _, w in scratch.worst:
        acc.push_worst(w, key)

