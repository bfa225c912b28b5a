"""The public harness API (nbx/harness/api.py): nbx's op, a callable on numpy arrays and arrays
already computed are measured and scored by one path, with the same figures."""
from __future__ import annotations

import numpy as np
import pytest

import nbx
from nbx.harness import api
from nbx.harness.scoring import rule


def test_a_callable_is_measured_as_nbx_is():
    """nbx's own function passed as a callable gives nbx's figures, labelled with its name."""
    own = api.measure(api.target("exp", "float32"), "sweep")
    other = api.measure(api.target("exp", "float32", fn=nbx.exp, arrays="nbx", name="mine"), "sweep")
    numpy_in = api.measure(api.target("exp", "float32", fn=lambda x: nbx.exp(nbx.from_numpy(x)).numpy()), "sweep")
    assert numpy_in.max_ulp == own.max_ulp and numpy_in.cases == own.cases
    assert other.error == "" and other.target == "mine"
    for f in ("cases", "max_ulp", "mean_ulp", "p999_ulp", "not_correctly_rounded", "special_mismatches"):
        assert getattr(other, f) == getattr(own, f), f


def test_numpy_exp_is_measured_and_misrounds():
    """numpy's float32 exp is not correctly rounded: the bank suite shows it, with worst inputs."""
    m = api.measure(api.target("exp", "float32", fn=np.exp), "bank")
    assert m.error == "" and m.target == "numpy.exp"
    assert m.not_correctly_rounded > 0 and 0.5 < m.max_ulp < 4 and m.worst


def test_parameters_reach_the_callable_by_name():
    seen = {}

    def add(a, b, alpha=1):
        seen["alpha"] = alpha
        return (a.astype(np.float64) + alpha * b.astype(np.float64)).astype(np.float32)

    m = api.measure(api.target("add", "float32", params={"alpha": 2}, fn=add), "pairs")
    assert seen == {"alpha": 2} and m.error == "" and m.not_correctly_rounded == 0


@pytest.mark.parametrize("fn, words", [
    (lambda x: np.exp(x).astype(np.float64), "returned float64"),
    (lambda x: np.exp(x)[:-1], "returned shape"),
    (lambda x: [1.0], "DLPack"),
])
def test_a_callable_with_a_wrong_result_is_named(fn, words):
    with np.errstate(all="ignore"):
        m = api.measure(api.target("exp", "float32", fn=fn, name="bad"), "bank")
    assert words in m.error and "bad" in m.error


def test_score_arrays_directly():
    x = np.linspace(-3, 3, 1001, dtype=np.float32)
    s = api.score("exp", [x], nbx.exp(nbx.from_numpy(x)).numpy())
    assert (s.classes == rule.CORRECT).all() and s.measurement.max_ulp <= 0.5 and s.measurement.cases == 1001
    bad = nbx.exp(nbx.from_numpy(x)).numpy()
    bad[7] = np.nextafter(bad[7], np.float32(np.inf))
    bad[9] = np.inf
    s = api.score("exp", [x], bad)
    assert s.classes[7] == rule.MISROUNDED and s.classes[9] == rule.SPECIAL
    assert s.measurement.not_correctly_rounded == 1 and s.measurement.special_mismatches == 1


@pytest.mark.parametrize("call, words", [
    (lambda: api.target("nope", "float32"), "not an op of nbx"),
    (lambda: api.target("bitwise_and", "float32"), "not one of its dtypes"),
    (lambda: api.target("exp", "float99"), "not a dtype of nbx"),
    (lambda: api.target("add", "float32", params={"beta": 1}), "no parameter beta"),
    (lambda: api.target("exp", "float32", fn=3), "must be callable"),
    (lambda: api.target("exp", "float32", fn=np.exp, arrays="pandas"), "arrays='pandas'"),
    (lambda: api.score("exp", [np.ones(3, np.float32)], np.ones(2, np.float32)), "got has 2 elements"),
    (lambda: api.score("exp", [np.ones(3, np.float32)], np.ones(3)), "got has dtype float64"),
])
def test_bad_calls_name_what_is_wrong(call, words):
    with pytest.raises((ValueError, TypeError), match=words):
        call()


@pytest.mark.parametrize("op, dtype", [("acos", "float16"), ("cosh", "float64"), ("exp", "float32")])
def test_one_figure_per_case_in_the_bank_suite_and_repro(op, dtype):
    """A worst case of the bank suite has the ulp `nbx repro` (measure.score) gives it: both measure
    against the truth, not against the stored rounded value."""
    import subprocess
    import sys

    m = api.measure(api.target(op, dtype), "bank")
    assert m.worst
    d = nbx.DTYPES[dtype]
    for w in m.worst[:3]:
        x = np.array([int(w.inputs[0], 16)], dtype=np.uint64).astype(d.uint_np).view(d.np)
        s = api.score(op, [x], getattr(nbx, op)(nbx.from_numpy(x)).numpy())
        assert s.err[0] == w.ulp, (w.inputs, s.err[0], w.ulp)
    w = m.worst[0]
    out = subprocess.run([sys.executable, "-m", "nbx", "repro", op, dtype, w.inputs[0]], capture_output=True,
                         text=True, check=True).stdout
    assert f"ulp error {w.ulp:.6g}" in out, out
