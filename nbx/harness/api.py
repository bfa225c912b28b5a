"""The harness as a library: a target (nbx's op, or any callable on arrays), a suite, and what
comes back (a Measurement, or the per-element scores of arrays you already have). The runner
(each job is one `measure`), `nbx run`, `nbx repro`, nbx.verify and the peers are its clients; docs/ARCHITECTURE.md ("The public API")
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

from nbx.dtype import DTYPES, from_numpy_dtype
from nbx.backend import backend_id
from nbx.ops import OPS
from nbx.tensor import Tensor, from_dlpack
from nbx.harness.scoring.host import Accumulator, Batch, score as score_batch
from nbx.harness.records.measurement import Measurement
from nbx.harness.scoring import rule
from nbx.harness.suites import structural
from nbx.harness.suites.values import VALUE_SUITES, measure_values
from nbx.harness.targets.callables import ARRAYS, CallableTarget, converter
from nbx.harness.targets.peers import NBX
from nbx.harness.targets.target import Target

__all__ = ["ARRAYS", "CallableTarget", "Scores", "VALUE_SUITES", "measure", "score", "suites_for", "target"]


def target(op: str, dtype, *, params: dict | None = None, fn: Callable | None = None, arrays="numpy",
           name: str | None = None) -> Target:
    """The target `op` (a name of nbx.OPS) on `dtype` with `params` (the op's parameters by name):
    nbx's op, or `fn` on arrays of `arrays` (see the module docstring), labelled `name`."""
    if op not in OPS:
        raise ValueError(f"op={op!r} is not an op of nbx; allowed: the names of nbx.OPS (`nbx ops` lists them)")
    spec = OPS[op]
    try:
        d = DTYPES[dtype] if isinstance(dtype, str) else dtype
    except KeyError:
        raise ValueError(f"{op}: dtype={dtype!r} is not a dtype of nbx; allowed: {', '.join(DTYPES)}") from None
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


def suites_for(t: Target, wanted=None) -> list[str]:
    """The suites that measure t, in order: the bank, exhaustive16 (16-bit and bool unary ops the
    op's Verify lets have every input) or sweep (other unary ops) or pairs (binary and ternary), then
    the structural suites (structural.structural_suites); only those in `wanted`, when given."""
    out = ["bank"]
    if t.oracle_arity == 1:
        every = (t.dtype.itemsize <= 2 and t.verify.exhaustive16) or t.dtype.is_bool
        out.append("exhaustive16" if every else "sweep")
    else:
        out.append("pairs")
    out += structural.structural_suites(t)
    return [s for s in out if not wanted or s in wanted]


def measure(t: Target, suite: str, *, profile: str = "ci", seed: int = 0, bits=None, sizes=None,
            backend: str | None = None) -> Measurement:
    """One Measurement of target t over `suite` (VALUE_SUITES for a callable or a peer; every suite
    of suites_for for nbx's op), at the profile's sizes (sizes: overrides, values.profile_sizes);
    bits (lo, hi): the bit patterns, or stratified tuples, lo .. hi - 1 only. An exception is the
    measurement's `error`, which the gate fails. backend: the id recorded (default: this process's)."""
    start = time.perf_counter()
    acc = Accumulator(t, suite, backend or backend_id())
    other = t.name != NBX
    error = ""
    try:
        if suite in VALUE_SUITES:
            measure_values(t, suite, profile, seed, acc, bits, sizes)
        elif other:
            raise ValueError(f"{t.name} is measured on the value suites only ({', '.join(VALUE_SUITES)}), not {suite}")
        else:
            structural.run_structural(t, suite, profile, seed, acc)
    except Exception as e:  # noqa: BLE001 (a failure is a result here; the gate reads it)
        error = f"{type(e).__name__}: {e}"
    m = acc.measurement(time.perf_counter() - start, error)
    if other:
        m.target, m.target_info = t.name, t.describe
    return m


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
    t = target(op, from_numpy_dtype(arrays[0].dtype), params=params)
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
