"""A callable held to an op of nbx (or to an mpmath reference) and a budget, by the harness's own
inputs, oracles and rule (nbx.verify; nbx.harness.api.score for inputs of one's own): the Check
that `assert_correctly_rounded` and the pytest plugin's `nbx_verify` fail from. A failure's message
lists the worst inputs in decimal and hex, what the callable returned and what was due, and a
command that measures each again."""
from __future__ import annotations

import shlex
from typing import Callable, NamedTuple

import numpy as np

from nbx.dtype import DType, as_dtype
from nbx.harness import api
from nbx.harness.records.measurement import Measurement
from nbx.harness.targets.target import Target
from nbx.harness.verify import verify
from nbx.tensor import from_dlpack, from_numpy

SHOWN = 5       # worst inputs a failure lists per measurement


class Check(NamedTuple):
    """The verdict of one check: passed, the Measurements it made, and the failure's text ("" on
    a pass)."""
    passed: bool
    measurements: list
    message: str


def show_bits(text: str, dtype: DType | None) -> str:
    """`1.5 (0x3fc00000)`: a hex bit pattern with its value in `dtype`; the text as it is else."""
    try:
        b = int(text, 16)
    except (TypeError, ValueError):
        return text
    if dtype is None or b >= 1 << dtype.bits:
        return text
    v = np.array([b], dtype=np.uint64).astype(dtype.uint_np).view(dtype.np)[0]
    if dtype.is_bool:
        return f"{bool(v)} ({text})"
    return f"{float(v)!r} ({text})" if dtype.is_float else f"{int(v)} ({text})"


def _budget_text(max_ulp: float | None) -> str:
    return "correctly rounded" if max_ulp is None else f"max_ulp {max_ulp:g}"


def failures(m: Measurement, max_ulp: float | None) -> list[str]:
    """What fails in m against the budget: a raise, a special mismatch, a wrong exact result, a
    misrounded result (max_ulp None: correctly rounded is asked) or an error over max_ulp."""
    if m.error:
        return [f"raised: {m.error}"]
    out = []
    if m.special_mismatches:
        out.append(f"{m.special_mismatches:,} special mismatches (NaN, inf or zero sign)")
    if m.wrong:
        out.append(f"{m.wrong:,} wrong results")
    if max_ulp is None and m.not_correctly_rounded:
        out.append(f"{m.not_correctly_rounded:,} not correctly rounded (max {m.max_ulp:.4g} ulp)")
    elif max_ulp is not None and m.max_ulp > max_ulp:
        out.append(f"max {m.max_ulp:.4g} ulp > max_ulp {max_ulp:g} ({m.not_correctly_rounded:,} not correctly rounded)")
    return out


def _worst_lines(m: Measurement, t: Target | None) -> list[str]:
    ins = t.operand_dtypes() if t is not None else None
    out_d = t.out_dtype if t is not None else None
    lines = []
    for w in m.worst[:SHOWN]:
        names = ins if ins is not None and len(ins) == len(w.inputs) else [None] * len(w.inputs)
        args = ", ".join(show_bits(x, d) for x, d in zip(w.inputs, names))
        lines.append(f"    ({args}): got {show_bits(w.got, out_d)}, expected {show_bits(w.expected, out_d)}, "
                     f"{w.ulp:.4g} ulp" + (f" [{w.note}]" if w.note else ""))
        if t is not None and all(x.startswith("0x") for x in w.inputs):
            lines.append("      " + " ".join(["nbx", "repro", shlex.quote(t.label), t.dtype.name, *w.inputs]))
    return lines


def describe(m: Measurement, t: Target | None, max_ulp: float | None, who: str) -> str:
    """A failing measurement in a few lines: what failed, then its worst inputs with repro commands."""
    head = (f"{who} against {m.op} {m.dtype}, suite {m.suite}: " + "; ".join(failures(m, max_ulp)) +
            f" of {m.cases:,} cases (allowed: {_budget_text(max_ulp)})")
    lines = _worst_lines(m, t)
    return "\n".join([head] + (["  worst inputs (nbx repro prints the expected value):"] + lines if lines else []))


def _dtype(dtype, where: str) -> DType:
    return as_dtype(dtype, op=where, arg="dtype")


def _budget(max_ulp, where: str) -> float | None:
    if max_ulp is None:
        return None
    if isinstance(max_ulp, bool) or not isinstance(max_ulp, (int, float)) or not max_ulp >= 0:
        raise ValueError(f"{where}: max_ulp={max_ulp!r}; allowed: a number >= 0, or None for correctly rounded")
    return float(max_ulp)


def _operands(inputs, d: DType, where: str) -> list[np.ndarray]:
    """inputs (one array, or a tuple or list of arrays, one per operand) as numpy arrays; Python
    values and lists become arrays of d."""
    if isinstance(inputs, (tuple, list)) and inputs and all(hasattr(x, "__len__") or hasattr(x, "__dlpack__")
                                                             for x in inputs):
        items = list(inputs)
    else:
        items = [inputs]
    out = []
    for i, x in enumerate(items):
        if isinstance(x, np.ndarray):
            out.append(x)
        elif hasattr(x, "__dlpack__"):
            out.append(from_dlpack(x).numpy())
        else:
            out.append(np.asarray(x, dtype=d.np))
    if not out or any(a.size == 0 for a in out):
        raise ValueError(f"{where}: inputs hold no values; pass one array per operand")
    return out


def check_op(fn: Callable, op: str, dtype, *, params: dict | None = None, arrays="numpy", max_ulp=None,
             profile: str = "ci", inputs=None, where: str = "check_op", **options) -> Check:
    """fn held to nbx's op `op` on `dtype`: over `inputs` (one array, or one per operand; scored by
    nbx.harness.api.score), or else by nbx.verify over the op's value suites at `profile`'s depth
    (the bank, then a sweep, every 16-bit input or operand pairs; `options` go to nbx.verify:
    suites=, bits=, seed=, name=). max_ulp None asks for correct rounding."""
    d = _dtype(dtype, where)
    budget = _budget(max_ulp, where)
    if inputs is None:
        v = verify(fn, op, d, params=params, arrays=arrays, profile=profile, max_ulp=budget,
                   correctly_rounded=budget is None, **options)
        return Check(v.passed, list(v.measurements.values()), "" if v.passed else str(v))
    if options:
        raise TypeError(f"{where}: {', '.join(sorted(options))} do not go with inputs= (your inputs are the cases)")
    t = api.target(op, d, params=params, fn=fn, arrays=arrays)
    xs = _operands(inputs, d, where)
    got = t.invoke([from_numpy(np.ascontiguousarray(x)) for x in xs], {})
    m = api.score(op, xs, got.numpy(), params=params, suite="inputs").measurement
    if not failures(m, budget):
        return Check(True, [m], "")
    return Check(False, [m], describe(m, t, budget, t.name))


def check_reference(fn: Callable, reference: Callable, dtype, *, max_ulp=None, arrays="numpy",
                    profile: str = "ci", where: str = "check_reference", **options) -> Check:
    """fn held to `reference`, an mpmath function of the operands (mpf) that gives the exact value
    of an op nbx does not have, by nbx.verify (its inputs: every 16-bit input, a sweep or operand
    pairs at `profile`'s depth; `options` go to it: name=, params=, suites=, bits=, float64=,
    bound=, specials=, domain=, arity=). max_ulp None asks for correct rounding."""
    d = _dtype(dtype, where)
    budget = _budget(max_ulp, where)
    v = verify(fn, dtype=d, reference=reference, arrays=arrays, profile=profile, max_ulp=budget,
               correctly_rounded=budget is None, **options)
    return Check(v.passed, list(v.measurements.values()), "" if v.passed else str(v))
