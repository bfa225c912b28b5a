"""Device oracles (oracles/device) and the device's decisions (nbx/harness/device_score.py).

- round_to rounds float64 to float32, float16 and bfloat16 exactly as oracles/rounding.py does.
- Every device oracle keeps its stated bound against mpmath, on the bank's inputs, on stratified
  float32 values and in the regions where its float64 form is weakest (tails, cancellations).
- The device's decisions and figures agree with the host's scoring (measure.score) on the same
  results, and a planted misrounding is counted and listed.
Run on both backends: on the GPU these check NVIDIA's libdevice, here numpy's libm.
"""
import math

import mpmath
import numpy as np
import pytest

import nbx
import oracles.device as OD
from nbx.harness import device_score as S
from nbx.harness import measure
from nbx.harness.targets import Target
from oracles import ORACLES
from oracles.base import evaluate_mp
from oracles.formats import FORMATS
from oracles.rounding import round_float64_array_to

UNARY_FLOAT_FAMILIES = ("unary", "activations")


def _float_unary_ops():
    return sorted(name for name, spec in nbx.OPS.items()
                  if ORACLES[name].arity == 1 and spec.family in UNARY_FLOAT_FAMILIES and ORACLES[name].kind != "bool")


BINARY = ("add", "sub", "rsub", "mul", "div", "maximum", "minimum", "fmax", "fmin", "copysign", "fmod", "atan2",
          "hypot")


def test_every_float_unary_op_has_a_device_oracle():
    missing = [op for op in _float_unary_ops() + list(BINARY) if op not in OD.DEVICE_ORACLES]
    assert not missing
    assert all(OD.DEVICE_ORACLES[op].arity == ORACLES[op].arity for op in BINARY)
    for label in OD.DEVICE_ORACLES:
        op = label.split(":")[0]
        assert op in nbx.OPS, label
        for p in OD.DEVICE_ORACLES[label].params:
            assert p in ORACLES[op].params, (label, p)


@pytest.mark.parametrize("dtype", sorted(S.FORMATS))
def test_round_to_matches_the_host_rounding(dtype):
    rng = np.random.default_rng(1)
    f32 = rng.standard_normal(4000).astype(np.float32).astype(np.float64)
    x = np.concatenate([rng.standard_normal(20000) * 10.0 ** rng.integers(-46, 40, 20000),
                        np.frombuffer(rng.bytes(8 * 20000), np.float64),
                        f32 * (1 + 2.0 ** -24), f32 * (1 + 2.0 ** -11), f32 * (1 + 2.0 ** -8),   # midpoints
                        [0.0, -0.0, np.inf, -np.inf, 2.0 ** -150, -2.0 ** -150, 1.5 * 2.0 ** -149, 2.0 ** -1074,
                         3.4028235677973366e38, 3.4028235677973366e38 * (1 + 2.0 ** -25), 65519.99, 65520.0]])
    x = x[~np.isnan(x)]
    got = S.round_array(x, dtype)
    want = round_float64_array_to(FORMATS[dtype], x).astype(np.float64)
    bad = (got != want) | (np.signbit(got) != np.signbit(want))
    assert not bad.any(), (x[bad][:5], got[bad][:5], want[bad][:5])
    assert np.isnan(S.round_array(np.array([np.nan]), dtype)).all()


def _stratified_float32(n, rng):
    bits = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32).astype(np.float64)
    return x[np.isfinite(x)]


# where each form is weakest: tails after a cancellation-free rewrite, arguments near poles and
# branch points, the largest conditions the bounds allow for
HARD = {
    "gelu": np.linspace(-14.3, -3, 400), "gelu:approximate=tanh": np.linspace(-11, -2, 400),
    "softplus": np.linspace(-103, -20, 300), "sigmoid": np.linspace(-103, -20, 300),
    "silu": np.linspace(-100, -20, 300), "log_sigmoid": np.linspace(15, 103, 300),
    "mish": np.linspace(-100, -5, 300), "log1p": -1 + np.geomspace(2.0 ** -24, 0.5, 200),
    "acosh": 1 + np.geomspace(2.0 ** -23, 1, 200), "atanh": 1 - np.geomspace(2.0 ** -24, 0.5, 200),
    "asin": 1 - np.geomspace(2.0 ** -24, 0.5, 200), "acos": 1 - np.geomspace(2.0 ** -24, 0.5, 200),
    "erfc": np.linspace(5, 10.0, 300), "erf": np.geomspace(1e-30, 6, 300), "expm1": np.geomspace(1e-30, 1, 300),
    "log": 1 + np.linspace(-2.0 ** -10, 2.0 ** -10, 300), "sin": np.float32(np.arange(1, 300) * np.pi),
    "cos": np.float32((np.arange(1, 300) + 0.5) * np.pi), "tan": np.float32((np.arange(1, 300) + 0.5) * np.pi),
    "celu": np.linspace(-100, -1e-6, 300), "elu": np.linspace(-100, -1e-6, 300), "selu": np.linspace(-100, -1e-6, 300),
    "hardsigmoid": -3 + np.geomspace(1e-7, 1, 200), "hardswish": -3 + np.geomspace(1e-7, 1, 200),
}
PARAMS = {"elu": {"alpha": 0.5}, "celu": {"alpha": 2.0}, "leaky_relu": {"negative_slope": 0.2},
          "softplus": {"beta": 2.0, "threshold": 10.0}, "threshold": {"threshold": 0.5, "value": -2.0}}


@pytest.mark.parametrize("label", sorted(k for k, d in OD.DEVICE_ORACLES.items() if d.arity == 1))
def test_device_oracle_keeps_its_bound_against_mpmath(label):
    d = OD.DEVICE_ORACLES[label]
    op, _, choice = label.partition(":")
    oracle = ORACLES[op]
    params = {**oracle.params, **PARAMS.get(op, {})}
    if choice:
        k, v = choice.split("=")
        params[k] = v
    rng = np.random.default_rng(abs(hash(label)) % 2 ** 32)
    hard = np.asarray(HARD.get(label, []), np.float64)
    x = np.concatenate([_stratified_float32(600, rng), hard.astype(np.float32).astype(np.float64),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0 ** -149, -2.0 ** -149]])
    v = S.evaluate(d, x, [params[p] for p in d.params])
    worst = 0.0
    with mpmath.workdps(60):
        for xi, vi in zip(x, v):
            f = evaluate_mp(oracle, (float(xi),), params)
            f = float(f) if not isinstance(f, mpmath.mpf) else f
            if isinstance(f, float) and (math.isnan(f) or math.isinf(f) or f == 0):
                assert (math.isnan(f) and math.isnan(vi)) or vi == f or (f == 0 and abs(vi) < 2.0 ** -1000), \
                    (label, xi, vi, f)
                if f == 0 and oracle.zero_sign_matters:            # a zero's sign is part of the value
                    assert math.copysign(1, vi) == math.copysign(1, f), (label, xi, vi, f)
                continue
            f = mpmath.mpf(f)
            if abs(f) >= mpmath.mpf(2) ** 1024:                # beyond float64: inf, as in every target
                assert vi == (math.inf if f > 0 else -math.inf), (label, xi, vi, f)
                continue
            if f == 0 or abs(f) < mpmath.mpf(2) ** -1000:     # below every target's subnormals
                assert abs(vi) < 2.0 ** -1000, (label, xi, vi, f)
                continue
            err = float(abs(mpmath.mpf(vi) - f) / abs(f))
            worst = max(worst, err)
            assert err <= d.bound, (label, xi, vi, float(f), err / 2.0 ** -53)
    print(f"{label}: worst {worst / 2.0 ** -53:.3g} float64 ulps of {d.k:g}")


def _check(label, oracle, d, xi, vi, f):
    """vi (the device's value) against f (evaluate_mp's) under d's promise."""
    if not isinstance(f, mpmath.mpf):
        f = float(f)
        if math.isnan(f) or math.isinf(f) or f == 0:
            assert (math.isnan(f) and math.isnan(vi)) or vi == f, (label, xi, vi, f)
            if f == 0 and oracle.zero_sign_matters:
                assert math.copysign(1, vi) == math.copysign(1, f), (label, xi, vi, f)
            return 0.0
        f = mpmath.mpf(f)
    if abs(f) >= mpmath.mpf(2) ** 1024:
        assert vi == (math.inf if f > 0 else -math.inf), (label, xi, vi, f)
        return 0.0
    if f == 0 or abs(f) < mpmath.mpf(2) ** -1000:
        assert abs(vi) < 2.0 ** -1000, (label, xi, vi, f)
        return 0.0
    err = float(abs(mpmath.mpf(vi) - f) / abs(f))
    assert err <= d.bound, (label, xi, vi, float(f), err / 2.0 ** -53)
    return err


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_binary_device_oracle_keeps_its_bound_against_mpmath(op, dtype):
    d = OD.DEVICE_ORACLES[op]
    oracle = ORACLES[op]
    params = {**oracle.params, **({"alpha": 3} if "alpha" in oracle.params else {})}
    rng = np.random.default_rng(17)
    dt = nbx.DTYPES[dtype]
    n = 400
    bits = rng.integers(0, 2 ** (8 * dt.itemsize), (2, n), dtype=np.uint64).astype(dt.uint_np)
    a, b = (bits[i].view(dt.np).astype(np.float64) for i in range(2))
    near = rng.random(n) < 0.25                           # near-equal operands: cancellation
    b = np.where(near, (a * (1 + rng.uniform(-2.0 ** -8, 2.0 ** -8, n))).astype(dt.np).astype(np.float64), b)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0])
    a = np.concatenate([a, np.repeat(sp, len(sp))])
    b = np.concatenate([b, np.tile(sp, len(sp))])
    v = S.evaluate(d, a, [params[p] for p in d.params], y=b)
    f64 = oracle.f64(a, b, **{k: params[k] for k in d.params})
    with mpmath.workdps(60):
        for ai, bi, vi, fi in zip(a, b, v, f64):
            # NaN operands: the float64 oracle defines the op there (mpmath has no NaN)
            truth = fi if math.isnan(ai) or math.isnan(bi) else evaluate_mp(oracle, (float(ai), float(bi)), params)
            _check(op, oracle, d, (ai, bi), vi, truth)


@pytest.mark.parametrize("op, dtype", [("sin", "float32"), ("sigmoid", "float32"), ("gelu", "float32"),
                                       ("exp", "float16"), ("log_sigmoid", "bfloat16"), ("square", "float32")])
def test_device_decisions_agree_with_the_host_and_catch_a_planted_error(op, dtype):
    rng = np.random.default_rng(5)
    d = nbx.DTYPES[dtype]
    n = 1 << 13
    bits = rng.integers(0, 2 ** (8 * d.itemsize), n, dtype=np.uint64).astype(d.uint_np)
    x = bits.view(d.np)
    X = nbx.from_numpy(x)
    got = getattr(nbx, op)(X).numpy()
    planted = got.copy()
    hit = np.arange(7, n, 997)
    pb = planted.view(d.uint_np)
    finite = np.isfinite(planted[hit].astype(np.float64)) & (planted[hit].astype(np.float64) != 0)
    hit = hit[finite]
    pb[hit] += 1                                           # one ulp away from the correctly rounded value
    t = Target(op, {}, d)
    zs = ORACLES[op].zero_sign_matters
    for result, extra in ((got, 0), (planted, len(hit))):
        s = S.score_unary(OD.DEVICE_ORACLES[op], X, nbx.from_numpy(result), zero_sign=zs)
        host = measure.score(t, [x], result)
        assert s.decided + s.undecided == n and s.undecided == len(s.undecided_at)
        decided = np.ones(n, bool)
        decided[s.undecided_at] = False
        # a zero's sign is a special mismatch only where the oracle says it matters; elsewhere -0 is +0
        host_wrong = host.not_cr & ~host.special
        if not zs:
            host_wrong &= ~((result == 0) & (host.expected_bits.view(d.np) == 0))
        assert s.misrounded == int((host_wrong & decided).sum())
        assert s.specials == int((host.special & decided).sum())
        assert np.array_equal(s.failing_at, np.flatnonzero((host_wrong | host.special) & decided))
        e = host.err[decided & ~host.special & np.isfinite(host.err)]
        assert math.isclose(s.err_max, float(e.max()), rel_tol=1e-6, abs_tol=1e-6)
        if extra:
            assert s.misrounded >= extra and set(hit.tolist()) <= set(s.failing_at.tolist()) | set(s.undecided_at.tolist())
