"""Bad input to the public ops: every error names the op and the argument and says what is
allowed, nothing is computed silently wrong, and `out=` is untouched when an op raises."""
from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import nbx
from nbx.errors import DeviceOOMError, SizeLimitError

ALLOWED = (TypeError, ValueError, OverflowError, ZeroDivisionError, MemoryError)
F = nbx.tensor([1.0, -2.0, 3.0])


def _raises(exc, fn, *words):
    with pytest.raises(exc) as e:
        fn()
    for w in words:
        assert w in str(e.value), (w, str(e.value))
    return e.value


def test_dropout_p_none():
    _raises(TypeError, lambda: nbx.dropout(F, p=None), "nbx.dropout", "p must be a Python number")


def test_optional_number_still_takes_none():
    assert nbx.nan_to_num(F, posinf=None).tolist() == F.tolist()


@pytest.mark.parametrize("dt", ["int16", "int32", "uint8", "int64"])
def test_threshold_nan_on_integers(dt):
    x = nbx.tensor([1, 2, 3], dtype=dt)
    _raises(ValueError, lambda: nbx.threshold(x, threshold=float("nan"), value=0),
            "nbx.threshold", "threshold=nan", dt, "allowed")


def test_threshold_infinite_on_integers():
    x = nbx.tensor([1, 2, 3], dtype="int16")
    assert nbx.threshold(x, threshold=float("inf"), value=7).tolist() == [7, 7, 7]
    assert nbx.threshold(x, threshold=float("-inf"), value=7).tolist() == [1, 2, 3]
    assert nbx.threshold(x, threshold=-1e300, value=7).tolist() == [1, 2, 3]
    big = nbx.tensor([np.iinfo(np.int64).min, 0], dtype="int64")
    # int64.min <= threshold for every int64 threshold: no int64 threshold replaces nothing
    _raises(ValueError, lambda: nbx.threshold(big, threshold=float("-inf"), value=7),
            "nbx.threshold", "threshold=-inf", "int64")
    assert nbx.threshold(big, threshold=float(np.iinfo(np.int64).min), value=7).tolist() == [7, 0]


def test_expand_beyond_any_memory_names_the_op():
    _raises(MemoryError, lambda: nbx.neg(nbx.tensor([1.0]).expand(2**62)), "nbx.neg")


def test_out_of_memory_names_the_op(monkeypatch):
    # the interpreter's element limit lifted (a real setting, read at every call): the allocation
    # itself fails, and the error says which op and what it was for, not only "host"
    monkeypatch.setenv("NBX_INTERPRETER_MAX_ELEMENTS", str(2**64))
    e = _raises(DeviceOOMError, lambda: nbx.neg(nbx.tensor([1.0]).expand(2**58)),
                "nbx.neg", "result", "(288230376151711744,)", "float32", "out of memory on")
    assert e.nbytes == 2**60
    e = _raises(DeviceOOMError, lambda: nbx.neg(nbx.tensor([1.0]).expand(2**62)), "nbx.neg", "bytes")


@pytest.mark.parametrize("fn, words", [
    (lambda: nbx.add(nbx.tensor([1.0]), 2**1100), ("nbx.add", "other", "2**1024")),
    (lambda: nbx.add(2**1100, nbx.tensor([1.0])), ("nbx.add", "input", "2**1024")),
    (lambda: nbx.mul(nbx.tensor([1.0]), -(10**400)), ("nbx.mul", "other")),
    (lambda: nbx.elu(F, alpha=10**400), ("nbx.elu", "alpha", "2**1024")),
    (lambda: nbx.add(F, F, alpha=10**400), ("nbx.add", "alpha")),
    (lambda: nbx.softplus(F, beta=-(10**309)), ("nbx.softplus", "beta")),
], ids=["add-other", "add-input", "mul-neg", "elu-alpha", "add-alpha", "softplus-beta"])
def test_ints_too_large_for_a_float(fn, words):
    e = _raises(OverflowError, fn, *words)
    assert "int too large to convert" not in str(e)


def test_rounding_mode_tensor_names_div():
    e = _raises(ValueError, lambda: nbx.div(F, 2, rounding_mode=F), "nbx.div", "rounding_mode",
                "'trunc'", "'floor'")
    assert "nbx.eq" not in str(e)
    _raises(ValueError, lambda: nbx.div(F, 2, rounding_mode=1), "nbx.div", "rounding_mode")


def test_interpreter_refuses_huge_outputs_fast(monkeypatch):
    if nbx.backend_info()["backend"] != "interpreter":
        pytest.skip("the element limit is the interpreter's")
    monkeypatch.delenv("NBX_INTERPRETER_MAX_ELEMENTS", raising=False)
    e = _raises(SizeLimitError, lambda: nbx.isnan(nbx.tensor([1.0]).expand(2**31)),
                "nbx.isnan", "2147483648 elements", "NBX_INTERPRETER_MAX_ELEMENTS", str(2**26))
    assert isinstance(e, MemoryError)
    monkeypatch.setenv("NBX_INTERPRETER_MAX_ELEMENTS", "10")
    assert nbx.isnan(nbx.tensor([1.0]).expand(10)).tolist() == [False] * 10
    _raises(SizeLimitError, lambda: nbx.isnan(nbx.tensor([1.0]).expand(11)), "nbx.isnan", "limit of 10")
    out = nbx.zeros(11)
    _raises(SizeLimitError, lambda: nbx.neg(nbx.ones(11), out=out), "nbx.neg")   # out= counts too
    assert out.tolist() == [0.0] * 11


# ---------------------------------------------------------------------- fuzz
BAD_VALUES = [None, "x", [1.0], (), {}, object(), 10**400, -(10**400), 2**64, float("nan"),
              float("inf"), -float("inf"), True, -1, np.float32(1.0), np.array([1.0]), F,
              nbx.tensor([1, 2, 3], dtype="int16"), nbx.tensor([1.0, 2.0]), nbx.zeros(2, 3),
              nbx.tensor([True, False, True]), 1.5]
_DTYPES = ("float32", "int32", "bool")
_BASE_PARAMS = {"threshold": {"threshold": 0.5, "value": 0.0}, "clamp": {"min": 0.0}}


def _baseline(name):
    """Operands and parameters on which nbx.<name> works, or None."""
    spec = nbx.OPS[name]
    for dt in _DTYPES:
        ops = [nbx.tensor([1, 0, 3, 2], dtype=dt) for _ in range(spec.arity)]
        if name == "where":
            ops[0] = nbx.tensor([True, False, True, False])
        params = dict(_BASE_PARAMS.get(name, {}))
        try:
            res = getattr(nbx, name)(*ops, **params)
        except Exception:   # noqa: BLE001 (try the next dtype)
            continue
        return ops, params, res
    return None


_BASELINES = {}


def baseline(name):
    if name not in _BASELINES:
        _BASELINES[name] = _baseline(name)
    return _BASELINES[name]


NAMES = sorted(nbx.OPS)


def _fuzz_examples() -> int:
    """NBX_FUZZ_EXAMPLES, the fuzz test's example count: 600 by default (CI), more in the nightly
    (`make report`)."""
    raw = os.environ.get("NBX_FUZZ_EXAMPLES", "600")
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"NBX_FUZZ_EXAMPLES={raw!r}: expected a positive integer")
    return n


FUZZ_EXAMPLES = _fuzz_examples()
_FUZZ_RAN = {"examples": 0, "calls": 0, "raised": 0}


@pytest.fixture(scope="module", autouse=True)
def _print_fuzz_count(request):
    """After this module's tests, one line in pytest's output (with or without -s) saying how many
    examples the fuzz test ran: hypothesis may stop short of the count it was given."""
    yield
    if not _FUZZ_RAN["examples"]:
        return
    line = (f"fuzz: test_fuzz_bad_arguments ran {_FUZZ_RAN['examples']} examples "
            f"(NBX_FUZZ_EXAMPLES={FUZZ_EXAMPLES}): {_FUZZ_RAN['calls']} op calls, "
            f"{_FUZZ_RAN['raised']} raised an allowed error")
    # the terminal's stdout is captured while a fixture runs: suspend the capture, as capsys.disabled()
    plugins = request.config.pluginmanager
    reporter, capture = plugins.getplugin("terminalreporter"), plugins.getplugin("capturemanager")
    if reporter is None or capture is None:   # pragma: no cover (-p no:terminal)
        print(line)
        return
    with capture.global_and_fixture_disabled():
        reporter.write("\n")
        reporter.write_line(line)


def _bits(t):
    a = t.numpy()
    return a.view(np.uint8).tobytes() if a.size else b""


@seed(20240611)
@settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(NAMES), slot=st.integers(0, 7), value=st.sampled_from(BAD_VALUES),
       extra=st.booleans())
def test_fuzz_bad_arguments(name, slot, value, extra):
    """One argument of a working call replaced by a bad value: the op either accepts it or raises
    an allowed exception whose message names `nbx.<op>` and the argument; `out=` is untouched
    when it raises."""
    _FUZZ_RAN["examples"] += 1
    base = baseline(name)
    if base is None:
        return
    ops, params, res = base
    spec = nbx.OPS[name]
    names = list(spec.operand_names) + [p.name for p in spec.params if p.kind != "flag"]
    if extra:
        names.append("no_such_argument")
    arg = names[slot % len(names)]
    ops, params = list(ops), dict(params)
    if arg in spec.operand_names:
        ops[spec.operand_names.index(arg)] = value
    else:
        params[arg] = value
    out = nbx.full(res.shape, 7, dtype=res.dtype.name) if res.dtype.name != "bool" else \
        nbx.full(res.shape, True, dtype="bool")
    before = _bits(out)
    _FUZZ_RAN["calls"] += 1
    try:
        getattr(nbx, name)(*ops, **params, out=out)
    except ALLOWED as e:
        _FUZZ_RAN["raised"] += 1
        msg = str(e)
        assert f"nbx.{name}" in msg, (type(e).__name__, msg)
        # the argument by its name ('input[first half]' for the halves of a composition: the name
        # the user passed is what is checked, `input`)
        word = re.escape(arg.split("[")[0])
        # a bad value that changes the result's shape or dtype is refused as a mismatch of `out`
        names_it = re.search(rf"(?<![A-Za-z_]){word}(?![A-Za-z_])", msg) or \
            msg.startswith(f"nbx.{name}: out has ")
        assert names_it, (arg, msg)
        assert _bits(out) == before, (name, arg, msg)
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"nbx.{name}({arg}={value!r:.40}): {type(e).__name__}: {e}")
