"""The pytest plugin (nbx/pytest_plugin.py), each test a real inner pytest session (pytester): the
README's example passes as written; a kernel off by an ulp fails with its worst inputs, the repro
command and the rerun command; --nbx-profile sets the depth; bad calls name what is wrong."""
from __future__ import annotations

import re
from importlib.metadata import entry_points

import pytest

from helpers import REPO

pytest_plugins = ["pytester"]


def _plugin_args() -> list[str]:
    """Where the pytest11 entry point is installed (make setup's editable install, a wheel) pytest
    loads the plugin by itself; else the inner session names it."""
    eps = [ep for ep in entry_points(group="pytest11") if ep.name == "nbx"]
    assert all(ep.value == "nbx.pytest_plugin" for ep in eps), eps
    return [] if eps else ["-p", "nbx.pytest_plugin"]


def readme_example() -> str:
    """The first python block of README.md's "Testing your kernels"."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Testing your kernels", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


HEAD = "import nbx\nimport numpy as np\n"


def test_the_readme_example_passes(pytester):
    pytester.makepyfile(test_my_exp=readme_example())
    r = pytester.runpytest(*_plugin_args(), "-q", "-p", "no:cacheprovider")
    r.assert_outcomes(passed=2)


def test_a_misrounding_callable_fails_with_its_worst_inputs_and_repro(pytester):
    pytester.makepyfile(test_numpy_exp=HEAD + "def test_numpy_exp(nbx_verify):\n"
                                              "    nbx_verify(np.exp, 'exp', 'float32')\n")
    r = pytester.runpytest(*_plugin_args(), "-q", "-p", "no:cacheprovider")
    r.assert_outcomes(failed=1)
    out = r.stdout.str()
    assert "numpy.exp: exp on float32, against nbx's oracle for exp" in out
    assert re.search(r"bank: \d+ of 155 not correctly rounded", out)
    assert re.search(r"0x[0-9a-f]{8} \(-?[0-9.e+-]+\) -> got 0x[0-9a-f]{8} \(.*\), expected 0x[0-9a-f]{8} .*ulp", out)
    assert re.search(r"repro: nbx.verify\(numpy.exp, 'exp', dtype='float32', .*bits=\(0x[0-9a-f]{8}", out)
    assert "rerun: pytest test_numpy_exp.py::test_numpy_exp --nbx-profile=ci" in out


def test_a_budget_and_params_pass_through(pytester):
    pytester.makepyfile(test_budget=HEAD + """
def add(a, b, alpha=1):
    return (a.astype(np.float64) + alpha * b.astype(np.float64)).astype(np.float32)

def test_numpy_exp_within_two_ulp(nbx_verify):
    c = nbx_verify(np.exp, "exp", "float32", max_ulp=2)
    assert [m.suite for m in c.measurements] == ["bank", "sweep"]

def test_add_alpha(nbx_verify):
    nbx_verify(add, "add", "float32", params={"alpha": 2})

def test_own_inputs(nbx_verify):
    x = np.linspace(-3, 3, 101, dtype=np.float32)
    c = nbx_verify(np.exp, "exp", "float32", inputs=x, max_ulp=2)
    assert c.measurements[0].cases == 101

def test_own_inputs_fail_with_nbx_repro(nbx_verify):
    x = np.linspace(-3, 3, 101, dtype=np.float32)
    nbx_verify(np.exp, "exp", "float32", inputs=x)
""")
    r = pytester.runpytest(*_plugin_args(), "-q", "-p", "no:cacheprovider")
    r.assert_outcomes(passed=3, failed=1)
    out = r.stdout.str()
    assert re.search(r"numpy.exp against exp float32, suite inputs: \d+ not correctly rounded .* of 101 cases", out)
    assert re.search(r"nbx repro exp float32 0x[0-9a-f]{8}", out)
    assert "rerun: pytest test_budget.py::test_own_inputs_fail_with_nbx_repro --nbx-profile=ci" in out


def test_nbx_profile_sets_the_depth(pytester):
    pytester.makepyfile(test_depth=HEAD + """
def test_cases(nbx_verify, request):
    c = nbx_verify(np.exp, "exp", "float16", max_ulp=2, suites=["exhaustive16"])
    print("CASES", request.config.getoption("nbx_profile"), c.measurements[0].cases)
""")
    ci = pytester.runpytest(*_plugin_args(), "-q", "-s", "-p", "no:cacheprovider")
    ci.assert_outcomes(passed=1)
    ini = pytester.runpytest(*_plugin_args(), "-q", "-s", "-p", "no:cacheprovider", "-o", "nbx_profile=nightly")
    ini.assert_outcomes(passed=1)
    assert "CASES None 65536" in ci.stdout.str()
    bad = pytester.runpytest(*_plugin_args(), "-q", "-p", "no:cacheprovider", "--nbx-profile", "deep")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "invalid choice: 'deep'" in bad.stderr.str()


def test_bad_calls_name_what_is_wrong(pytester):
    pytester.makepyfile(test_bad=HEAD + """
import pytest

@pytest.mark.parametrize("kw, words", [
    (dict(op="exp"), "dtype is required"),
    (dict(dtype="float32"), "exactly one of them"),
    (dict(op="exp", reference=np.exp, dtype="float32"), "exactly one of them"),
    (dict(op="nope", dtype="float32"), "not an op of nbx"),
    (dict(op="exp", dtype="float32", max_ulp=-1), "max_ulp=-1"),
    (dict(op="exp", dtype="float32", profile="deep"), "--nbx-profile"),
    (dict(reference=np.exp, dtype="float32", inputs=[1.0]), "inputs= goes with op="),
    (dict(op="exp", dtype="float32", inputs=[1.0], suites=["bank"]), "do not go with inputs="),
])
def test_bad(nbx_verify, kw, words):
    with pytest.raises((TypeError, ValueError), match=words):
        nbx_verify(np.exp, **kw)
""")
    r = pytester.runpytest(*_plugin_args(), "-q", "-p", "no:cacheprovider")
    r.assert_outcomes(passed=8)
