"""Clear errors: each names the op and the argument (and says what is allowed). Never garbage."""
from __future__ import annotations

import numpy as np
import pytest

import nbx
from nbx.dtype import INTS
from nbx.testing import bits


def t(values, d=np.float32):
    return nbx.from_numpy(np.array(values, dtype=d))


BOOLS = t([True, False], np.bool_)
F = t([1.0, 2.0, 3.0])
I = t([1, 2, 3], np.int32)


@pytest.mark.parametrize("op,args", [
    ("floor_divide", (BOOLS, BOOLS)), ("remainder", (BOOLS, BOOLS)), ("sub", (BOOLS, BOOLS)),
    ("rsub", (BOOLS, BOOLS)), ("neg", (BOOLS,)), ("abs", (BOOLS,)), ("floor", (BOOLS,)),
    ("sub", (BOOLS, True)),
], ids=["floor_divide", "remainder", "sub", "rsub", "neg", "abs", "floor", "sub-scalar"])
def test_unsupported_dtype(op, args):
    with pytest.raises(TypeError, match=rf"nbx\.{op}: dtype bool \(input=bool.*\) is not supported; allowed: .*int8"):
        getattr(nbx, op)(*args)


def test_div_rounding_on_bool():
    with pytest.raises(TypeError, match=r"nbx\.div: bool operands"):
        nbx.div(BOOLS, BOOLS, rounding_mode="floor")


@pytest.mark.parametrize("op", ["add", "mul", "lt", "maximum", "floor_divide"])
def test_shapes_that_do_not_broadcast(op):
    with pytest.raises(ValueError, match=rf"nbx\.{op}: shapes do not broadcast: input\(3,\), other\(4,\)"):
        getattr(nbx, op)(F, t([1.0, 2.0, 3.0, 4.0]))
    with pytest.raises(ValueError, match=rf"nbx\.{op}: shapes do not broadcast: input\(2, 3\), other\(3, 3\)"):
        getattr(nbx, op)(nbx.zeros(2, 3), nbx.zeros(3, 3))


@pytest.mark.parametrize("op", ["add", "sub", "rsub"])
def test_float_alpha_with_integer_tensors(op):
    with pytest.raises(TypeError, match=rf"nbx\.{op}: alpha=0\.5 is a float but the operands are int32"):
        getattr(nbx, op)(I, I, alpha=0.5)
    with pytest.raises(TypeError, match=rf"nbx\.{op}: alpha must be a Python number"):
        getattr(nbx, op)(F, F, alpha="2")


def test_unknown_rounding_mode():
    with pytest.raises(ValueError, match=r"nbx\.div: rounding_mode='round' is not allowed; choose one of None, "
                                         r"'trunc', 'floor'"):
        nbx.div(F, F, rounding_mode="round")


def test_scalar_that_does_not_fit_the_tensor_dtype():
    with pytest.raises(ValueError, match=r"nbx\.add: other=300 does not fit in uint8"):
        nbx.add(t([1], np.uint8), 300)
    with pytest.raises(ValueError, match=r"nbx\.sub: input=-129 does not fit in int8"):
        nbx.sub(-129, t([1], np.int8))
    assert nbx.add(t([1], np.uint8), 254).numpy().tolist() == [255]
    assert nbx.lt(t([1], np.uint8), 300).numpy().tolist() == [True]       # comparisons are exact instead


DIV_CASES = [("floor_divide", {}), ("remainder", {}), ("div", {"rounding_mode": "trunc"}),
             ("div", {"rounding_mode": "floor"})]


@pytest.mark.parametrize("d", INTS, ids=lambda d: d.name)
@pytest.mark.parametrize("op,kw", DIV_CASES, ids=["floor_divide", "remainder", "div-trunc", "div-floor"])
def test_integer_division_by_zero(op, kw, d):
    fn = getattr(nbx, op)
    a = t([7, 1, 5, 3], d.np)
    b = t([1, 2, 0, 3], d.np)
    with pytest.raises(ZeroDivisionError, match=rf"nbx\.{op}: integer division by zero \(argument 'other'.*{d.name}"):
        fn(a, b, **kw)
    with pytest.raises(ZeroDivisionError, match=rf"nbx\.{op}: integer division by zero"):
        fn(a, 0, **kw)
    # out= is left untouched when the op raises
    out = t([11, 12, 13, 14], d.np)
    before = bits(out).copy()
    with pytest.raises(ZeroDivisionError):
        fn(a, b, out=out, **kw)
    assert np.array_equal(bits(out), before)
    # the flag is cleared: the next division works
    want = [0, 0, 0, 0] if op == "remainder" else [7, 1, 5, 3]
    assert fn(a, t([1, 1, 1, 1], d.np), **kw).numpy().tolist() == want


def test_float_division_by_zero_does_not_raise():
    got = nbx.floor_divide(t([1.0, -1.0, 0.0]), 0.0).numpy()
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])
    assert nbx.div(I, t([0, 0, 0], np.int32)).numpy().tolist() == [np.inf] * 3    # true division: float


@pytest.mark.parametrize("bad", [[1.0, 2.0, 3.0], np.ones(3, np.float32), np.float32(1.0), "x", None],
                         ids=["list", "ndarray", "np-scalar", "str", "None"])
def test_non_tensor_operand(bad):
    name = type(bad).__name__
    with pytest.raises(TypeError, match=rf"nbx\.add: argument 'other' must be an nbx Tensor or a Python "
                                        rf"bool/int/float, got {name}"):
        nbx.add(F, bad)
    with pytest.raises(TypeError, match=rf"nbx\.mul: argument 'input' must be .*got {name}"):
        nbx.mul(bad, F)
    with pytest.raises(TypeError, match=rf"nbx\.exp: argument 'input' must be an nbx Tensor, got {name}"):
        nbx.exp(bad)


def test_unary_op_rejects_python_scalars_and_needs_a_tensor():
    with pytest.raises(TypeError, match=r"nbx\.neg: argument 'input' must be an nbx Tensor, got float"):
        nbx.neg(1.0)
    with pytest.raises(TypeError, match=r"nbx\.add: at least one operand must be an nbx Tensor"):
        nbx.add(1, 2)


def test_out_wrong_shape_dtype_type():
    with pytest.raises(ValueError, match=r"nbx\.add: out has shape \(4,\) but the result has shape \(3,\)"):
        nbx.add(F, F, out=nbx.zeros(4))
    with pytest.raises(TypeError, match=r"nbx\.add: out has dtype float64 but the result dtype is float32"):
        nbx.add(F, F, out=nbx.zeros(3, dtype="float64"))
    with pytest.raises(TypeError, match=r"nbx\.lt: out has dtype float32 but the result dtype is bool"):
        nbx.lt(F, F, out=nbx.zeros(3))
    with pytest.raises(TypeError, match=r"nbx\.exp: out must be an nbx Tensor, got ndarray"):
        nbx.exp(F, out=np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"nbx\.add: out overlaps itself"):
        nbx.add(F, F, out=nbx.zeros(1).expand(3))


def test_out_partially_overlapping_an_input():
    buf = nbx.from_numpy(np.arange(8, dtype=np.float32))
    x = buf[0:6]
    before = buf.numpy()
    with pytest.raises(ValueError, match=r"nbx\.add: out partially overlaps argument 'input'"):
        nbx.add(x, 1.0, out=buf[2:8])
    with pytest.raises(ValueError, match=r"nbx\.mul: out partially overlaps argument 'other'"):
        nbx.mul(nbx.ones(6), x, out=buf[1:7])
    with pytest.raises(ValueError, match=r"nbx\.neg: out partially overlaps argument 'input'"):
        nbx.neg(buf[0:4], out=buf[1:5])
    assert np.array_equal(buf.numpy(), before)
    # the identical view is allowed, and disjoint parts of one buffer are fine
    nbx.add(x, 1.0, out=x)
    nbx.neg(buf[0:4], out=buf[4:8])
    assert buf.numpy().tolist() == [1, 2, 3, 4, -1, -2, -3, -4]


@pytest.mark.parametrize("op,args", [("add", (F, F)), ("exp", (F,)), ("div", (F, F)), ("lt", (F, F))],
                         ids=["add", "exp", "div", "lt"])
def test_unknown_keyword(op, args):
    with pytest.raises(TypeError, match=rf"nbx\.{op}: unexpected argument 'alhpa'"):
        getattr(nbx, op)(*args, alhpa=2)


def test_wrong_number_of_operands():
    with pytest.raises(TypeError, match=r"nbx\.add: takes 2 operand\(s\) \(input, other\), got 1"):
        nbx.add(F)
    with pytest.raises(TypeError, match=r"nbx\.exp: takes 1 operand\(s\) \(input\), got 2"):
        nbx.exp(F, F)
    with pytest.raises(TypeError, match=r"nbx\.add: got alpha both by position and by keyword"):
        nbx.add(F, F, 2, alpha=2)


def test_to_unknown_dtype():
    with pytest.raises(TypeError, match=r"to: dtype='complex64' is not a dtype nbx supports; allowed: bool"):
        F.to("complex64")


# ---------------------------------------------------------------------- the error types, public
# Every error type nbx documents is importable as nbx.<Name>, the class nbx itself raises.
ERROR_TYPES = {
    "BackendError": ("nbx.errors", RuntimeError),
    "DeviceOOMError": ("nbx.errors", MemoryError),
    "SizeLimitError": ("nbx.errors", MemoryError),
    "BankError": ("nbx.harness.suites.bank", RuntimeError),
    "DirectoryInUse": ("nbx.harness.report.json_report", RuntimeError),
}


@pytest.mark.parametrize("name", sorted(ERROR_TYPES))
def test_error_types_are_public(name):
    import importlib
    module, base = ERROR_TYPES[name]
    cls = getattr(nbx, name)
    assert cls is getattr(importlib.import_module(module), name)
    assert issubclass(cls, base) and issubclass(cls, Exception)
    assert name in dir(nbx)


def test_error_types_in_a_fresh_interpreter():
    # `from nbx import X` before anything else has loaded the library (the lazy path), the
    # harness's errors first and after the library has loaded
    import subprocess
    import sys
    code = ("import sys, nbx\n"
            "from nbx import BankError, DirectoryInUse\n"
            "from nbx import SizeLimitError, DeviceOOMError, BackendError\n"
            "import nbx.errors as E\n"
            "assert SizeLimitError is E.SizeLimitError and DeviceOOMError is E.DeviceOOMError\n"
            "assert nbx.BankError is BankError and nbx.DirectoryInUse is DirectoryInUse\n"
            "assert nbx.exp and 'SizeLimitError' in dir(nbx)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_size_limit_error_is_what_the_guard_raises(monkeypatch):
    if nbx.backend_info()["backend"] != "interpreter":
        pytest.skip("the element limit is the interpreter's")
    monkeypatch.setenv("NBX_INTERPRETER_MAX_ELEMENTS", "10")
    with pytest.raises(nbx.SizeLimitError, match=r"nbx\.neg: .*limit of 10"):
        nbx.neg(nbx.ones(11))
