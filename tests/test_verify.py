"""nbx.verify (nbx/harness/verify/): any callable on arrays measured against nbx's oracle of an op, or
against the user's mpmath definition of an op nbx does not have; `nbx run --target module:function`.

Real components throughout: numpy's functions, Triton kernels written here and run by Triton's
interpreter (on the GPU by the device), mpmath as the truth, the CLI in a subprocess."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import mpmath
import numpy as np
import pytest

import nbx  # noqa: I001  (before triton: nbx switches Triton's interpreter on)
import triton
import triton.language as tl

from helpers import REPO
from nbx.harness.report import load_report
from nbx.oracles import ORACLES

QG = float(np.float32(1.702))        # quick-gelu's constant as the float32 kernels hold it


# ---------------------------------------------------------------------- kernels of a user, in Triton
@triton.jit
def _expm1_by_hand_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    tl.store(y_ptr + i, tl.exp(x) - 1.0, mask=m)


@triton.jit
def _quick_gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m).to(tl.float32)
    y = x * tl.sigmoid(1.702 * x)
    tl.store(y_ptr + i, y.to(y_ptr.dtype.element_ty), mask=m)


def _launch(kernel, x):
    y = nbx.empty(x.shape, dtype=x.dtype)
    n = x.numel()
    kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y


def expm1_by_hand(x):
    """exp(x) - 1 on an nbx tensor: cancels near 0, where expm1 does not."""
    return _launch(_expm1_by_hand_kernel, x)


def quick_gelu(x):
    """x * sigmoid(1.702 x) on an nbx tensor, computed in float32, stored in x's dtype."""
    return _launch(_quick_gelu_kernel, x)


def quick_gelu_mp(x):
    return x / (1 + mpmath.exp(-mpmath.mpf(QG) * x))


def quick_gelu_f64(x):
    with np.errstate(all="ignore"):
        return x / (1 + np.exp(-QG * x))


@triton.jit
def quick_gelu_device(x, p0, p1):
    """quick-gelu in float64: the product, the sum and the quotient round once each, exp is within
    16 ulp, and the product's rounding moves exp's argument by |QG x| 2^-53 relative to the result,
    at most 108 float64 ulps where the result is a float32 above its least subnormal / 2
    (x >= -63); k = 256 covers them."""
    return x / (1.0 + tl.exp(-1.7020000219345093 * x))


# ---------------------------------------------------------------------- nbx's ops
def test_numpy_exp_float32_is_measured_and_not_correctly_rounded():
    with np.errstate(all="ignore"):
        v = nbx.verify(np.exp, "exp", "float32")
    assert v.suites == ("bank", "sweep") and v.name == "numpy.exp"
    s = v["sweep"]
    assert s.error == "" and s.cases == 8192 and s.target == "numpy.exp"
    assert s.not_correctly_rounded > 0 and 0.5 < s.max_ulp < 4 and s.special_mismatches == 0
    assert v.passed and v.misrounded == sum(m.not_correctly_rounded for m in v.measurements.values())
    text = str(v)
    assert "numpy.exp" in text and "PASS" in text and "worst inputs (sweep)" in text
    w = s.worst[0]
    assert w.inputs[0] in text and "repro: nbx.verify(numpy.exp, 'exp'" in text
    assert str(np.array([int(w.inputs[0], 16)], np.uint32).view(np.float32)[0]) in text     # decimal beside hex
    md = v.markdown()
    assert md.startswith("### PASS") and "| sweep | 8,192 |" in md
    strict = nbx.verify(np.exp, "exp", "float32", suites="sweep", correctly_rounded=True, max_ulp=1.0)
    assert not strict.passed and not strict
    assert any("not correctly rounded" in f for f in strict.failures)
    assert any("over max_ulp=1" in f for f in strict.failures)


def test_a_bits_range_is_decided_by_the_device_scorer():
    """A float32 bits range of an op with a device oracle takes the runner's device path
    (exhaustive.sweep, Target.run_device through the callable): every input decided there."""
    v = nbx.verify(np.exp, "exp", "float32", bits=(0x3F800000, 0x3F801000))
    m = v["sweep"]
    assert m.cases == 4096 and m.decided_on_device == 4096 and m.error == ""
    assert m.not_correctly_rounded > 0
    assert "bits=(0x" in v.repro["sweep"]


def test_a_triton_kernel_against_nbx_op():
    """exp(x) - 1 by hand against nbx's expm1: the cancellation near 0 costs thousands of ulps."""
    v = nbx.verify(expm1_by_hand, "expm1", "float32", arrays="nbx", max_ulp=4)
    m = v["sweep"]
    assert m.error == "" and m.target.endswith("expm1_by_hand")
    assert m.max_ulp > 1000 and not v.passed
    tiny = [w for w in m.worst if abs(np.array([int(w.inputs[0], 16)], np.uint32).view(np.float32)[0]) < 1e-3]
    assert tiny, m.worst
    nbx_own = nbx.verify(nbx.expm1, "expm1", "float32", arrays="nbx", correctly_rounded=True)
    assert nbx_own.passed, str(nbx_own)


def test_numpy_on_bfloat16_crosses_as_a_copy():
    """numpy has no bfloat16 in DLPack: its operands and results are copied (ml_dtypes arrays)."""
    v = nbx.verify(np.negative, "neg", "bfloat16", suites="exhaustive16", correctly_rounded=True)
    assert v.passed and v["exhaustive16"].cases == 65536, str(v)


def test_parameters_reach_the_callable_by_name():
    seen = []

    def leaky(x, negative_slope=0.01):
        seen.append(negative_slope)
        return np.where(x >= 0, x, (x.astype(np.float64) * negative_slope).astype(np.float32))

    v = nbx.verify(leaky, "leaky_relu", "float32", params={"negative_slope": 0.25}, suites="sweep")
    assert set(seen) == {0.25} and v["sweep"].error == "" and v.params == {"negative_slope": 0.25}


def test_torch_exp_on_the_cpu():
    torch = pytest.importorskip("torch")
    v = nbx.verify(torch.exp, "exp", "float32", arrays="torch", suites="sweep")
    assert v["sweep"].error == "" and v["sweep"].cases == 8192


# ---------------------------------------------------------------------- an op nbx does not have
def test_a_user_op_on_every_float16_input():
    """quick-gelu by its mpmath definition, all 65,536 float16 inputs: rounded twice (float32, then
    float16) the kernel misrounds a few; at -inf it gives NaN where the limit is -0."""
    v = nbx.verify(quick_gelu, reference=quick_gelu_mp, dtype="float16", name="quick_gelu", arrays="nbx")
    assert "quick_gelu" not in ORACLES                       # lent for the call only
    m = v["exhaustive16"]
    assert v.suites == ("exhaustive16",) and m.error == "" and m.cases == 65536 and m.op == "quick_gelu"
    assert m.special_mismatches == 1 and m.worst[0].inputs == ["0xfc00"] and m.worst[0].expected == "0x8000"
    assert m.not_correctly_rounded < 100 and m.max_ulp < 0.51      # 2 under the interpreter
    assert not v.passed and "special mismatch" in v.failures[0]
    assert "the mpmath reference of quick_gelu" in str(v)


def test_a_user_op_on_a_float32_range_three_ways():
    """The same float32 bits range decided three ways gives the same figures: mpmath for every case,
    a float64 function with a loose bound E = 2^-40 (the cases within E of a boundary go to mpmath),
    and a device form (the device scorer; mpmath for its undecided)."""
    bits = (0xC0000000, 0xC0000800)         # -2 .. -2.0039: results near -0.0649
    kw = dict(reference=quick_gelu_mp, dtype="float32", name="quick_gelu", arrays="nbx", bits=bits)
    by_mp = nbx.verify(quick_gelu, **kw)["sweep"]
    by_f64 = nbx.verify(quick_gelu, float64=quick_gelu_f64, bound=2.0 ** -40, **kw)["sweep"]
    by_dev = nbx.verify(quick_gelu, device=quick_gelu_device, device_k=256, **kw)["sweep"]
    assert by_mp.cases == by_f64.cases == by_dev.cases == 2048
    assert by_dev.decided_on_device + by_dev.undecided == 2048 and by_dev.decided_on_device > 2000
    assert by_mp.not_correctly_rounded == by_f64.not_correctly_rounded == by_dev.not_correctly_rounded > 0
    assert by_mp.max_ulp == pytest.approx(by_f64.max_ulp, abs=2 ** -14)
    assert by_mp.max_ulp == pytest.approx(by_dev.max_ulp, abs=2 ** -14)
    assert "quick_gelu" not in ORACLES


def test_user_specials_limits_and_zero_signs():
    """Limits at infinities from the mpmath definition, the sign of a zero from its side, and a
    table row that overrides the definition."""
    from nbx.harness.verify.userop import UserOp
    user = UserOp("qg", quick_gelu_mp, 1)
    f64 = user.f64_fn("float32")
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0])
    y = f64(x)
    assert y[0] == np.inf and y[1] == 0 and np.signbit(y[1]) and np.isnan(y[2])
    assert y[3] == 0 and not np.signbit(y[3]) and y[4] == 0 and np.signbit(y[4])
    assert y[5] == pytest.approx(1 / (1 + math.exp(-QG)), rel=1e-15)
    assert np.isnan(UserOp("s", mpmath.sin, 1).f64_fn("float32")(np.array([np.inf]))[0])      # no limit
    assert UserOp("sq", lambda x: x * x, 1).f64_fn("float32")(np.array([-0.0]))[0] == 0
    assert not np.signbit(UserOp("sq", lambda x: x * x, 1).f64_fn("float32")(np.array([-0.0]))[0])
    row = UserOp("qg", quick_gelu_mp, 1, specials=(((-np.inf,), 7.0),)).f64_fn("float32")(np.array([-np.inf]))
    assert row[0] == 7.0


def test_a_user_op_with_a_domain():
    """log by mpmath, drawn from its domain (0, inf); the specials still cross it (NaN there)."""
    with np.errstate(all="ignore"):
        v = nbx.verify(np.log, reference=mpmath.log, name="my_log", dtype="float32", domain=(0, math.inf))
    m = v["sweep"]
    assert m.error == "" and m.cases == 8192 and m.special_mismatches == 0 and 0.5 < m.max_ulp < 4, str(v)


def test_a_binary_user_op_on_pairs():
    def hypot32(a, b):
        return np.hypot(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)

    # IEEE's hypot is inf where either operand is, NaN or not: rows that say so over the definition
    rows = [((n, i), math.inf) for n, i in ((math.nan, math.inf), (math.nan, -math.inf))]
    rows += [((i, n), v) for (n, i), v in rows]
    with np.errstate(all="ignore"):
        v = nbx.verify(hypot32, reference=lambda a, b: mpmath.sqrt(a * a + b * b), name="my_hypot",
                       dtype="float32", specials=rows)
    m = v["pairs"]
    assert v.suites == ("pairs",) and m.error == "" and m.cases == 4096
    assert m.special_mismatches == 0 and m.max_ulp <= 0.5 + 2 ** -20


def test_a_verification_writes_nbx_report_files(tmp_path):
    v = nbx.verify(np.exp, "exp", "float32", suites="sweep")
    paths = v.write(tmp_path / "r")
    assert {"json", "markdown", "junit", "html"} <= set(paths)
    rep = load_report(tmp_path / "r")
    (m,) = rep.measurements
    assert m.target == "numpy.exp" and m.not_correctly_rounded == v["sweep"].not_correctly_rounded
    assert "numpy.exp" in (tmp_path / "r" / "summary.md").read_text()
    u = nbx.verify(quick_gelu, reference=quick_gelu_mp, dtype="float32", name="quick_gelu", arrays="nbx",
                   bits=(0x3F800000, 0x3F800100))
    u.write(tmp_path / "u")
    assert load_report(tmp_path / "u").measurements[0].op == "quick_gelu"
    diff = subprocess.run([sys.executable, "-m", "nbx", "report", "diff", str(tmp_path / "r"), str(tmp_path / "r")],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert diff.returncode == 0, diff.stderr


# ---------------------------------------------------------------------- the CLI
MODULE = '''
import numpy as np

def my_exp(x):
    with np.errstate(all="ignore"):
        return np.exp(x)

not_a_function = 3
'''


def _cli(tmp_path, *args):
    (tmp_path / "mykernels.py").write_text(MODULE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    return subprocess.run([sys.executable, "-m", "nbx", "run", *map(str, args)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def test_cli_target_module_function(tmp_path):
    p = _cli(tmp_path, "--target", "mykernels:my_exp", "--as", "exp", "--dtype", "float16", "--out",
             tmp_path / "r", "--quiet")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "peer mykernels:my_exp" in p.stdout
    rep = json.loads((tmp_path / "r" / "report.json").read_text())
    mine = {(m["op"], m["suite"]) for m in rep["measurements"] if m["target"] == "mykernels:my_exp"}
    own = {(m["op"], m["suite"]) for m in rep["measurements"] if m["target"] == "nbx"}
    assert mine == {("exp", "bank"), ("exp", "exhaustive16")} and ("exp", "exhaustive16") in own
    assert {m["op"] for m in rep["measurements"]} == {"exp"}          # the callable's op only
    assert "mykernels:my_exp" in (tmp_path / "r" / "summary.md").read_text()


@pytest.mark.parametrize("args, words", [
    (["--target", "nosuch_module:f", "--as", "exp"], "cannot import module 'nosuch_module'"),
    (["--target", "mykernels:nope", "--as", "exp"], "has no attribute 'nope'"),
    (["--target", "mykernels:not_a_function", "--as", "exp"], "not a callable"),
    (["--target", "mykernels:my_exp"], "'my_exp' is not an op of nbx"),
    (["--target", "mykernels:my_exp", "--as", "nope"], "'nope' is not an op of nbx"),
    (["--as", "exp"], "give it after the --target"),
    (["--target", "numpy"], "package.module:function"),
])
def test_cli_bad_targets_are_usage_errors(tmp_path, args, words):
    p = _cli(tmp_path, *args, "--out", tmp_path / "r", "--quiet")
    assert p.returncode == 2 and words in p.stderr, p.stderr
    assert not (tmp_path / "r" / "report.json").exists()


# ---------------------------------------------------------------------- bad calls
class _OnAnotherDevice:
    """An array DLPack places on a ROCm device: memory neither backend of nbx reads."""

    def __dlpack_device__(self):
        return (10, 0)

    def __dlpack__(self, stream=None, max_version=None):
        raise BufferError("not readable here")


@pytest.mark.parametrize("call, error, words", [
    (lambda: nbx.verify(np.exp, "nope", "float32"), ValueError, "not an op of nbx"),
    (lambda: nbx.verify(np.exp), TypeError, "name the op"),
    (lambda: nbx.verify(3, "exp"), TypeError, "fn must be callable"),
    (lambda: nbx.verify(np.exp, "exp", "float99"), ValueError, "not a dtype of nbx"),
    (lambda: nbx.verify(lambda x: np.exp(x).astype(np.float64), "exp", "float32", name="bad"), TypeError,
     "bad: returned float64"),
    (lambda: nbx.verify(lambda x: np.exp(x)[:-1], "exp", "float32", name="bad"), ValueError, "bad: returned shape"),
    (lambda: nbx.verify(lambda x: _OnAnotherDevice(), "exp", "float32", name="bad"), TypeError,
     "but nbx runs the"),
    (lambda: nbx.verify(np.exp, "exp", "float32", bits=(0, 1 << 33)), ValueError, "out of range"),
    (lambda: nbx.verify(np.exp, "exp", "float16", bits=(0, 1 << 17)), ValueError, "out of range"),
    (lambda: nbx.verify(np.exp, "exp", "float64", bits=(0, 16)), ValueError, "bits= takes"),
    (lambda: nbx.verify(np.exp, "exp", "float32", suites="layout"), ValueError, "not a value suite"),
    (lambda: nbx.verify(np.exp, reference=mpmath.exp, name="exp"), ValueError, "is an op of nbx"),
    (lambda: nbx.verify(np.exp, reference=lambda x: 1 / x, name="inv"), ValueError, "raised ZeroDivisionError"),
    (lambda: nbx.verify(np.exp, reference=mpmath.exp, name="e", float64=np.exp), ValueError, "go together"),
    (lambda: nbx.verify(np.exp, reference=mpmath.exp, name="e", suites="bank"), ValueError, "not a value suite"),
    (lambda: nbx.verify(np.exp, reference=mpmath.exp, name="e", dtype="int32"), ValueError, "float dtypes"),
    (lambda: nbx.verify(np.exp, "exp", float64=np.exp), TypeError, "belongs to a user op"),
])
def test_bad_calls_name_what_is_wrong(call, error, words):
    with np.errstate(all="ignore"), pytest.raises(error, match=words):
        call()


def test_a_reference_that_raises_names_the_input():
    def picky(x):
        if 1000 < x < 10 ** 30:
            raise RuntimeError("no such value")
        return mpmath.exp(x)

    with np.errstate(all="ignore"), pytest.raises(ValueError, match=r"raised RuntimeError: no such value at 1024\.0"):
        nbx.verify(np.exp, reference=picky, name="picky", dtype="float32", bits=(0x44800000, 0x44800010))
    assert "picky" not in ORACLES
    with pytest.raises(ValueError, match=r"standing in for inf"):
        nbx.verify(np.exp, reference=lambda x: mpmath.exp(x) if x < 10 ** 30 else 1 / mpmath.mpf(0), name="at_inf")


# ---------------------------------------------------------------------- on the GPU
@pytest.mark.cuda
def test_cuda_every_float32_input_of_a_user_op_on_the_device():
    """All 2^32 float32 inputs of quick-gelu, decided on the device with its float64 form; mpmath
    decides the undecided ones (at most sweep_host of them; the rest are left out). Below 2^-125 the
    result x/2 + 0.4255 x^2 lies within 2^-250 of x/2, which is a subnormal midpoint for every odd x:
    2^24 inputs no float64 form decides. On an H100 (2026-12-05): 4,278,189,723 decided on the
    device, 4,453 by mpmath, 16,773,120 left out."""
    v = nbx.verify(quick_gelu, reference=quick_gelu_mp, dtype="float32", name="quick_gelu", arrays="nbx",
                   device=quick_gelu_device, device_k=256, float64=quick_gelu_f64, bound=2.0 ** -45,
                   bits=(0, 1 << 32), profile="exhaustive")
    m = v["sweep"]
    assert m.error == "" and m.cases + m.left_out == 1 << 32 and m.decided_on_device + m.undecided == m.cases
    assert 1 << 24 <= m.undecided + m.left_out < (1 << 24) + (1 << 12)
    print(v)


@pytest.mark.cuda
def test_cuda_numpy_callable_on_the_gpu_backend():
    """numpy arrays on the cuda backend: operands copied to the host and results back."""
    v = nbx.verify(np.exp, "exp", "float32", bits=(0x3F800000, 0x3F900000))
    assert v["sweep"].error == "" and v["sweep"].decided_on_device == 0x100000
