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
    when every parameter of the variant is one the device oracle takes."""
    if t.dtype.name not in DS.FORMATS or t.oracle_arity != 1:
        return None
    d = OD.DEVICE_ORACLES.get(t.label) or OD.DEVICE_ORACLES.get(t.op)
    if d is None or d.name != t.label and not set(t.params) <= set(d.params):
        return None
    return d


def sweep(t: Target, lo: int, hi: int, acc: Accumulator, chunk: int = CHUNK) -> None:
    """Bit patterns lo .. hi - 1 of t.dtype through t's op, into acc."""
    d = device_oracle(t)
    if d is None:
        raise ValueError(f"exhaustive.sweep: {t.label} {t.dtype.name} has no device oracle")
    oracle = ORACLES[t.op]
    params = [t.params.get(p, oracle.params.get(p, 0.0)) for p in d.params]
    fn = FUNCTIONS[t.op]
    for start in range(lo, hi, chunk):
        n = min(chunk, hi - start)
        x = DS.bit_patterns(t.dtype.name, start, n)
        got = fn(x, **t.params)
        s = DS.score_unary(d, x, got, params, zero_sign=oracle.zero_sign_matters)
        acc.add_device(s)
        if s.index_overflow:
            raise RuntimeError(f"{t.label} {t.dtype.name}: {s.index_overflow} undecided or failing inputs in "
                               f"[{start:#x}, {start + n:#x}) beyond the device's list; use a smaller chunk")
        xs, gs = x.numpy(), got.numpy()
        if len(s.undecided_at):
            arrays = [xs[s.undecided_at]]
            acc.add(arrays, gs[s.undecided_at], score(t, arrays, gs[s.undecided_at]))
        show = s.failing_at[:8]
        if s.argmax >= 0:
            show = np.union1d(show, [s.argmax])
        if len(show):
            _push_worst(t, acc, [xs[show]], gs[show])


def _push_worst(t: Target, acc: Accumulator, arrays, got) -> None:
    """Worst entries for decided elements, rescored on the host (their counts are already in acc)."""
    scratch = Accumulator(t, acc.suite, acc.backend)
    scratch.add(arrays, got, score(t, arrays, got))
    for key, _, w in scratch.worst:
        acc.push_worst(w, key)

