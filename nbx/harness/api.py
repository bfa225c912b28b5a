"""The harness as a library: a target (nbx's op, or any callable on arrays), a suite, and what
comes back (a Measurement, or the per-element scores of arrays you already have). The runner,
`nbx run`, `nbx repro` and the peers are its clients; docs/ARCHITECTURE.md ("The public API")
shows it in use.

    import numpy as np, nbx
    from nbx.harness import api
    m = api.measure(api.target("exp", "float32"), "bank")                 # nbx's op
    m = api.measure(api.target("exp", "float32", fn=np.exp), "sweep")     # any callable on arrays
    s = api.score("exp", [x], got)                                        # arrays already computed
    s.measurement.max_ulp, s.err, s.classes

A callable gets the operands as arrays of its own library through DLPack (`arrays=`: "numpy",
"torch", "cupy", "jax", "nbx" or a function of an nbx Tensor) and its parameters by name
(`alpha=`, `rounding_mode=`); it returns an array of any library that speaks DLPack, on nbx's
backend (host memory under the interpreter, the device's on cuda), of the op's result dtype and
shape. It is scored exactly as nbx's op is: the same inputs, oracles and rule.
"""
from __future__ import annotations

import time
from typing import Callable, NamedTuple

import numpy as np

from nbx import dtype as D
from nbx.backend import backend_id
from nbx.ops import OPS
from nbx.tensor import Tensor, from_dlpack
from nbx.harness.run import runner
from nbx.harness.scoring.host import Accumulator, Batch, score as score_batch
from nbx.harness.records.measurement import Measurement
from nbx.harness.scoring import rule
from nbx.harness.targets.callable import ARRAYS, CallableTarget, converter
from nbx.harness.targets.target import Target

NBX = "nbx"
__all__ = ["ARRAYS", "CallableTarget", "Scores", "measure", "score", "target"]


def target(op: str, dtype, *, params: dict | None = None, fn: Callable | None = None, arrays="numpy",
           name: str | None = None) -> Target:
    """The target `op` (a name of nbx.OPS) on `dtype` with `params` (the op's parameters by name):
    nbx's op, or `fn` on arrays of `arrays` (see the module docstring), labelled `name`."""
    if op not in OPS:
        raise ValueError(f"op={op!r} is not an op of nbx; allowed: the names of nbx.OPS (`nbx ops` lists them)")
    spec = OPS[op]
    try:
        d = D.DTYPES[dtype] if isinstance(dtype, str) else dtype
    except KeyError:
        raise ValueError(f"{op}: dtype={dtype!r} is not a dtype of nbx; allowed: {', '.join(D.DTYPES)}") from None
    if d not in spec.dtypes:
        raise ValueError(f"{op}: dtype={d.name} is not one of its dtypes ({', '.join(x.name for x in spec.dtypes)})")
    params = dict(params or {})
    known = {p.name for p in spec.params}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"{op}: no parameter {', '.join(unknown)}; its parameters: {', '.join(sorted(known)) or 'none'}")
    if fn is None:
        return Target(op, params, d)
    if not callable(fn):
        raise TypeError(f"{op}: fn must be callable, got {type(fn).__name__}")
    module, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None) or type(fn).__name__
    label = name or (f"{module}.{qual}" if module else qual)
    return CallableTarget(op, params, d, fn=fn, convert=converter(arrays), name=label,
                          arrays=arrays if isinstance(arrays, str) else "")


def measure(t: Target, suite: str, *, profile: str = "ci", seed: int = 0, bits=None) -> Measurement:
    """One Measurement of target t over `suite` (runner.VALUE_SUITES for a callable; every suite of
    runner.suites_for for nbx's op), at the profile's sizes; an exception is the measurement's
    `error`."""
    return runner.measure(t, suite, profile, seed, backend_id(), bits)


class Scores(NamedTuple):
    """Per element: the class (rule.CORRECT, MISROUNDED, SPECIAL; for an integer or bool result
    CORRECT or MISROUNDED, i.e. wrong), the ulp error (0 or 1 for an exact result), the expected
    bits; and the Measurement of them all."""
    classes: np.ndarray
    err: np.ndarray
    expected_bits: np.ndarray
    measurement: Measurement


def score(op: str, operands, got, *, params: dict | None = None, suite: str = "arrays") -> Scores:
    """Score results `got` of `op` at `operands` (arrays of one dtype, 1-D or of one shape; any
    library that speaks DLPack, or numpy) against the op's oracles, as the runner scores a batch."""
    arrays = [np.ascontiguousarray(_host(a, f"operand {i}")).reshape(-1) for i, a in enumerate(operands)]
    if not arrays:
        raise ValueError(f"{op}: no operands")
    g = np.ascontiguousarray(_host(got, "got")).reshape(-1)
    if any(a.size != g.size for a in arrays):
        raise ValueError(f"{op}: got has {g.size} elements, the operands {[a.size for a in arrays]}")
    t = target(op, D.from_numpy_dtype(arrays[0].dtype), params=params)
    if g.dtype != t.out_dtype.np:
        raise TypeError(f"{op}: got has dtype {g.dtype}; the op's result on {t.dtype.name} is {t.out_dtype.name}")
    start = time.perf_counter()
    b: Batch = score_batch(t, arrays, g)
    acc = Accumulator(t, suite, backend_id())
    acc.add(arrays, g, b)
    classes = np.where(b.special, rule.SPECIAL, np.where(b.not_cr, rule.MISROUNDED, rule.CORRECT)).astype(np.int8)
    return Scores(classes, b.err, b.expected_bits, acc.measurement(time.perf_counter() - start))


def _host(a, what: str) -> np.ndarray:
    if isinstance(a, np.ndarray):
        return a
    if isinstance(a, Tensor):
        return a.numpy()
    try:
        return from_dlpack(a).numpy()
    except (TypeError, BufferError) as e:
        raise TypeError(f"{what}: {type(a).__name__} is neither a numpy array nor an array that speaks DLPack "
                        f"({e})") from None
