"""nbx's pytest plugin (the `pytest11` entry point `nbx`, loaded wherever nbx is installed): the
`nbx_verify` fixture holds a callable to an op of nbx (or to a reference function) and a budget in
one line, and `--nbx-profile` sets how deep it looks. README.md ("Testing your kernels") shows it.

    def test_my_exp(nbx_verify):
        nbx_verify(my_exp, "exp", "float32", max_ulp=1)

A failure lists the worst inputs in decimal and hex, what the callable returned and what was due,
the `nbx repro` command of each, and the pytest command that reruns the test. Loading the plugin
imports nothing of nbx: the fixture imports the harness when a test first calls it.
"""
from __future__ import annotations

import shlex

import pytest

PROFILES = ("ci", "nightly", "exhaustive")


def pytest_addoption(parser):
    group = parser.getgroup("nbx", "nbx: verify kernels against nbx's ops")
    group.addoption("--nbx-profile", choices=PROFILES, default=None, dest="nbx_profile",
                    help="how deep nbx_verify looks: ci (the op's bank and a sweep of some thousands of "
                         "inputs), nightly (larger sweeps), exhaustive (every 16-bit input, 2^32 float32 ones "
                         "on a GPU); default: the nbx_profile ini value, else ci")
    parser.addini("nbx_profile", "nbx_verify's profile when --nbx-profile is not given (ci, nightly, exhaustive)",
                  default="ci")


def _profile(config) -> str:
    profile = config.getoption("nbx_profile") or config.getini("nbx_profile") or "ci"
    if profile not in PROFILES:
        raise pytest.UsageError(f"nbx: nbx_profile = {profile!r} in the ini file; allowed: {', '.join(PROFILES)}")
    return profile


@pytest.fixture
def nbx_verify(request):
    """verify(fn, op=None, dtype=None, *, reference=None, max_ulp=None, inputs=None, **options)
    -> nbx.testing.Check; a failure fails the test.

    op: an op of nbx (`nbx ops`), whose oracles give the exact value; reference: instead, an mpmath
    function of the operands (an op nbx does not have). fn is measured by nbx.verify on the value
    suites at the profile's depth, or on `inputs` (with op). max_ulp: the budget in ulps; None
    asks for correct rounding. Special mismatches, wrong exact results and a raise always fail.
    options go to nbx.verify: params=, arrays= ("numpy", "nbx", "torch", ...), suites=, bits=,
    seed=, name=, and a reference's float64=, bound=, specials=, domain=."""
    profile = _profile(request.config)
    rerun = f"pytest {shlex.quote(request.node.nodeid)} --nbx-profile={profile}"

    def verify(fn, op=None, dtype=None, *, reference=None, max_ulp=None, inputs=None, **options):
        __tracebackhide__ = True
        from nbx.testing.checks import check_op, check_reference

        if (op is None) == (reference is None):
            raise TypeError("nbx_verify: pass op (the name of an op of nbx) or reference= (an mpmath function), "
                            "exactly one of them")
        if dtype is None:
            raise TypeError("nbx_verify: dtype is required (float32, bfloat16, ...: a dtype of the op)")
        if "profile" in options:
            raise TypeError("nbx_verify: profile= is pytest's --nbx-profile (or the ini value nbx_profile), not an "
                            "argument")
        if op is not None:
            check = check_op(fn, op, dtype, max_ulp=max_ulp, profile=profile, inputs=inputs, where="nbx_verify",
                             **options)
        elif inputs is not None:
            raise TypeError("nbx_verify: inputs= goes with op=; against a reference nbx.verify draws the inputs")
        else:
            check = check_reference(fn, reference, dtype, max_ulp=max_ulp, profile=profile, where="nbx_verify",
                                    **options)
        if not check.passed:
            pytest.fail(f"{check.message}\n  rerun: {rerun}", pytrace=False)
        return check

    return verify
