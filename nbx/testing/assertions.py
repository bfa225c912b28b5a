"""Assertions on results, by nbx's scoring rule (nbx/harness/scoring/rule.py): ulp distance as the
harness measures it, correct rounding against an op of nbx or a reference, identical bits."""
from __future__ import annotations

from typing import Callable

import numpy as np

from nbx.dtype import as_dtype
from nbx.harness.scoring import rule
from nbx.tensor import Tensor, from_dlpack
from nbx.testing.checks import SHOWN, check_op, check_reference


def host(a, argument: str = "a", where: str = "nbx.testing") -> np.ndarray:
    """a as a numpy array: an nbx Tensor, a numpy array, anything that speaks DLPack, or Python values."""
    if isinstance(a, Tensor):
        return a.numpy()
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "__dlpack__"):
        return from_dlpack(a).numpy()
    try:
        return np.asarray(a)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{where}: {argument} is a {type(a).__name__}, not an array ({e})") from None


def bits(a) -> np.ndarray:
    """The raw bit patterns of an array (nbx Tensor, numpy, DLPack), as same-width unsigned ints."""
    a = np.array(host(a, "a", "bits"), order="C")
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _hex(a: np.ndarray, i) -> str:
    v = a[i]
    b = int(np.asarray(v).reshape(1).view(np.dtype(f"u{a.dtype.itemsize}"))[0])
    return f"0x{b:0{a.dtype.itemsize * 2}x}"


def _value(a: np.ndarray, i) -> str:
    v = a[i]
    return repr(float(v)) if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else repr(v.item())


def assert_bits_equal(actual, desired, *, context: str = "") -> None:
    """Identical bit patterns (NaN payloads and zero signs included), shapes and dtypes."""
    __tracebackhide__ = True
    g, w = host(actual, "actual", "assert_bits_equal"), host(desired, "desired", "assert_bits_equal")
    where = f"{context}: " if context else ""
    assert g.dtype == w.dtype, f"{where}dtype {g.dtype} != {w.dtype}"
    assert g.shape == w.shape, f"{where}shape {g.shape} != {w.shape}"
    bad = bits(g) != bits(w)
    if bad.any():
        idx = [tuple(i) for i in np.argwhere(bad)[:SHOWN]]
        rows = [f"  at {[int(k) for k in i]}: actual {_value(g, i)} ({_hex(g, i)}), desired {_value(w, i)} ({_hex(w, i)})"
                for i in idx]
        raise AssertionError(f"{where}{int(bad.sum())} of {bad.size} elements differ in their bits\n" + "\n".join(rows))


def assert_ulp_close(actual, desired, *, max_ulp: float, dtype=None) -> None:
    """Each element of `actual` within `max_ulp` ulps of `desired`, in the format of `dtype` (default:
    actual's dtype; a float dtype).

    `desired` is the exact value (any float dtype, as float64 it holds exactly): the error is
    |actual - desired| / ulp(desired) as the harness measures it (rule.classify_arrays with an exact
    truth), ulp(y) = 2^(max(floor(log2|y|), emin) - p + 1). Special values compare exactly: NaN
    with NaN, an infinity with the infinity due (the overflow edge: a desired value in [max,
    2^(emax+1)) takes max or inf, inf measured as 2^(emax+1)), zeros with their sign. The shapes
    broadcast. A failure lists the worst elements in decimal and hex."""
    __tracebackhide__ = True
    where = "assert_ulp_close"
    got = host(actual, "actual", where)
    want = host(desired, "desired", where)
    d = as_dtype(dtype if dtype is not None else got.dtype, op=where, arg="dtype" if dtype is not None else "actual.dtype")
    if not d.is_float:
        raise TypeError(f"{where}: dtype={d.name}; allowed float16, bfloat16, float32, float64 (integer and bool "
                        "results compare exactly: assert_bits_equal)")
    if isinstance(max_ulp, bool) or not isinstance(max_ulp, (int, float)) or not max_ulp >= 0:
        raise ValueError(f"{where}: max_ulp={max_ulp!r}; allowed: a number >= 0 (0.5: correctly rounded)")
    for name, a in (("actual", got), ("desired", want)):
        if a.dtype.kind != "f" and a.dtype.name != "bfloat16":
            raise TypeError(f"{where}: {name} has dtype {a.dtype}; allowed: float arrays (the exact value as "
                            "float64 for desired)")
    try:
        shape = np.broadcast_shapes(got.shape, want.shape)
    except ValueError:
        raise ValueError(f"{where}: shapes {got.shape} (actual) and {want.shape} (desired) do not broadcast") from None
    got, want = np.broadcast_to(got, shape), np.broadcast_to(want, shape)
    s = rule.classify_arrays(got, want, d.name, exact=True)
    special = s.cls == rule.SPECIAL
    bad = special | (s.err > max_ulp)
    if not bad.any():
        return
    key = np.where(bad, np.where(np.isfinite(s.err), s.err, 1e308), -1.0).reshape(-1)
    order = np.argsort(-key, kind="stable")[:SHOWN]
    rows = []
    for flat in order:
        if key[flat] < 0:
            break
        i = np.unravel_index(flat, shape)
        note = " (special mismatch)" if special[i] else ""
        rows.append(f"  at {[int(k) for k in i]}: actual {_value(got, i)} ({_hex(got, i)}), desired "
                    f"{_value(want, i)} ({_hex(want, i)}): {s.err[i]:.4g} ulp{note}")
    worst = float(np.max(np.where(np.isfinite(s.err), s.err, 0.0)))
    n_special = int(special.sum())
    raise AssertionError(
        f"{where}: {int(bad.sum())} of {bad.size} elements over max_ulp={max_ulp:g} ulp of {d.name} or special "
        f"mismatches (max finite error {worst:.4g} ulp; {n_special} special mismatches)\n" + "\n".join(rows))


def assert_correctly_rounded(fn: Callable, op_or_reference, dtype, inputs=None, *, params: dict | None = None,
                             arrays="numpy", profile: str = "ci", **options) -> None:
    """fn's results correctly rounded on `dtype`.

    op_or_reference: the name of an op of nbx (`nbx ops` lists them), whose oracles give the exact
    value; fn gets the operands as `arrays` (numpy, nbx, torch, cupy, jax) and `params` by name, as
    the harness runs a callable. With `inputs` (one array, or one per operand) those are scored
    (nbx.harness.api.score); without, nbx.verify measures the op's value suites at `profile`'s
    depth (ci, nightly, exhaustive). Or an mpmath function of the operands giving the exact value
    of an op nbx does not have (nbx.verify's reference=, its inputs). `options` go to nbx.verify
    (suites=, bits=, seed=, name=; for a reference float64=, bound=, specials=, domain=). A failure
    lists the worst inputs in decimal and hex and a command that measures each again."""
    __tracebackhide__ = True
    where = "assert_correctly_rounded"
    if isinstance(op_or_reference, str):
        c = check_op(fn, op_or_reference, dtype, params=params, arrays=arrays, inputs=inputs, profile=profile,
                     where=where, **options)
    elif callable(op_or_reference):
        if inputs is not None:
            raise ValueError(f"{where}: inputs= goes with an op name; against a reference nbx.verify draws the "
                             "inputs (suites=, bits= choose them)")
        c = check_reference(fn, op_or_reference, dtype, params=params, arrays=arrays, profile=profile,
                            where=where, **options)
    else:
        raise TypeError(f"{where}: op_or_reference is a {type(op_or_reference).__name__}; allowed: the name of an "
                        "op of nbx, or an mpmath function giving the exact value")
    if not c.passed:
        raise AssertionError(c.message)
