"""Device oracles (nbx/oracles/device) and the device's decisions (nbx/harness/device_score.py).

- round_to rounds float64 to float32, float16 and bfloat16 exactly as nbx/oracles/rounding.py does.
- Every device oracle keeps its stated bound against mpmath, on the bank's inputs, on stratified
  float32 values and in the regions where its float64 form is weakest (tails, cancellations).
- The device's decisions and figures agree with the host's scoring (measure.score) on the same
  results, and a planted misrounding is counted and listed.
- Every op with a float CPU oracle has a device oracle, or a reasoned entry in NO_DEVICE_ORACLE.
- On the reference bank's cases every device oracle keeps its bound against mpmath, and the device
  decides each case as the bank's correctly rounded value (or leaves it undecided).
Run on both backends: on the GPU these check NVIDIA's libdevice, here numpy's libm.
"""
import math
import zlib
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import nbx
from nbx.oracles import device
from nbx.harness.suites import bank
from nbx.harness.scoring import device as S
from nbx.harness.scoring import host as measure
from nbx.harness.scoring import rule
from nbx.harness.targets.target import Target, targets
from nbx.oracles import ORACLES
from nbx.oracles.base import evaluate_mp
from nbx.oracles.formats import FORMATS, to_bits
from nbx.oracles.rounding import round_fraction


# The exact-result oracles (nbx/oracles/device/exact.py): bool, integer and cast results, checked
# against the bank (test_exact_device_oracle_on_the_bank) rather than against a bound.
EXACT = tuple(sorted(device.exact.LABELS))
BINARY = tuple(sorted(k for k, d in device.DEVICE_ORACLES.items() if d.arity == 2 and k not in EXACT))
TERNARY = tuple(sorted(k for k, d in device.DEVICE_ORACLES.items() if d.arity == 3 and k not in EXACT))

# Ops with a CPU oracle and no device oracle, and why none is needed or possible. Every other op
# has one (test_every_float_op_has_a_device_oracle).
_INT = "integer dtypes only: no float input, exact integer results checked on the host"
NO_DEVICE_ORACLE = {
    **{op: _INT for op in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
                           "bitwise_right_shift")},
    "bf16_to_fp16": "its operand is bfloat16 bit patterns in an int16 tensor (role bits): 65,536 inputs, all "
                    "checked on the host (exhaustive16)",
    "where": "a bool condition operand (role mask): not a float operand of the dtype under test",
    "masked_fill": "a bool mask operand (role mask): not a float operand of the dtype under test",
}
def _float_ops():
    return sorted(name for name, o in ORACLES.items() if o.kind != "bool" and name in nbx.OPS)


def _device_oracle_of(t: Target):
    """The device oracle of a target (by label, else by op when the device oracle takes the
    target's parameters), or None; any arity, any float format of device_score."""
    d = device.DEVICE_ORACLES.get(t.label)
    if d is None:
        d = device.DEVICE_ORACLES.get(t.op)
        if d is not None and not set(t.oracle_kwargs()) <= set(d.params):
            return None
    return d


def test_every_float_op_has_a_device_oracle():
    have = {label.split(":")[0].split("/")[0] for label in device.DEVICE_ORACLES}
    missing = [op for op in _float_ops() if op not in have and op not in NO_DEVICE_ORACLE]
    assert not missing, f"ops with a float CPU oracle and no device oracle: {missing}"
    stale = [op for op in NO_DEVICE_ORACLE if op in have or op not in ORACLES]
    assert not stale, f"NO_DEVICE_ORACLE lists ops that have one or no longer exist: {stale}"
    # the reasons hold: bool ops are bool, integer ops take no float dtype, masks are masks
    for op, why in NO_DEVICE_ORACLE.items():
        if why == _INT:
            assert not any(d.is_float for d in nbx.OPS[op].dtypes), op
    for label, d in device.DEVICE_ORACLES.items():
        op = label.split(":")[0].split("/")[0]
        assert op in nbx.OPS, label
        # op/N: the op taken with N operands (clamp/1: clamp by scalar bounds)
        assert d.arity == (int(label.split("/")[1]) if "/" in label else ORACLES[op].arity), label
        assert d.k >= 0 and d.why, label
        if d.k == 0:
            assert d.exact_at is None, label           # exact everywhere: EXACT_AT adds nothing
        for p in d.params:
            assert p in ORACLES[op].params or d.args is not None, (label, p)
    # every measured variant of such an op on a format the device decides finds its device oracle
    # (the label's, or the op's taking the variant's parameters)
    unmatched = sorted({t.label for t in targets(dtypes=list(S.FORMATS))
                        if t.op in have and _device_oracle_of(t) is None})
    assert not unmatched, unmatched


@pytest.mark.parametrize("dtype", sorted(S.FORMATS))
def test_round_to_matches_exact_rounding(dtype):
    """The rule's round_to (one source, run here as the device runs it) against round_fraction, the
    exact rational rounding."""
    rng = np.random.default_rng(1)
    f32 = rng.standard_normal(4000).astype(np.float32).astype(np.float64)
    x = np.concatenate([rng.standard_normal(20000) * 10.0 ** rng.integers(-46, 40, 20000),
                        np.frombuffer(rng.bytes(8 * 20000), np.float64),
                        f32 * (1 + 2.0 ** -24), f32 * (1 + 2.0 ** -11), f32 * (1 + 2.0 ** -8),   # midpoints
                        [0.0, -0.0, np.inf, -np.inf, 2.0 ** -150, -2.0 ** -150, 1.5 * 2.0 ** -149, 2.0 ** -1074,
                         3.4028235677973366e38, 3.4028235677973366e38 * (1 + 2.0 ** -25), 65519.99, 65520.0]])
    x = x[~np.isnan(x)]
    f = FORMATS[dtype]
    got = to_bits(rule.round_to_format(x, f), f).tolist()
    want = [int(f.uint_dtype.type(0x7C00 if dtype == "float16" else 0x7F80 if dtype == "bfloat16" else 0x7F800000)
                | (1 << (f.bits - 1) if v < 0 else 0)) if math.isinf(v)
            else round_fraction(Fraction(v), f, negative_zero=math.copysign(1.0, v) < 0) for v in x.tolist()]
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, [(x[i], hex(got[i]), hex(want[i])) for i in bad[:5]]
    assert np.isnan(rule.round_array(np.array([np.nan]), dtype)).all()


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


@pytest.mark.parametrize("label", sorted(k for k, d in device.DEVICE_ORACLES.items() if d.arity == 1 and k not in EXACT))
def test_device_oracle_keeps_its_bound_against_mpmath(label):
    d = device.DEVICE_ORACLES[label]
    op, _, choice = label.partition(":")
    oracle = ORACLES[op]
    params = {**oracle.params, **PARAMS.get(op, {})}
    if choice:
        k, v = choice.split("=")
        params[k] = v
    rng = np.random.default_rng(zlib.crc32(label.encode()))   # the same inputs in every process
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
            if abs(f) < mpmath.mpf(2) ** -151:                # rounds to zero in every target format:
                assert abs(vi) < 2.0 ** -150, (label, xi, vi, f)   # the bounds hold above (the module's doc)
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


def _label_params(label):
    """The CPU oracle and its parameters for a device oracle's label (`div:rounding_mode=trunc`)."""
    op, _, choice = label.partition(":")
    oracle = ORACLES[op]
    params = dict(oracle.params)
    if choice:
        for kv in choice.split(","):
            k, v = kv.split("=")
            params[k] = v
    return op, oracle, params


def _in(dt, x):
    """x rounded to dtype dt, as float64."""
    with np.errstate(all="ignore"):
        return np.asarray(x, np.float64).astype(dt.np).astype(np.float64)


def _hard_pairs(label, dt, rng, n=300):
    """Operand pairs where each binary form is weakest: cancellations, quotients near integers and
    near 2^53, pow near 1 and at huge and tiny results, the gated forms' far tails."""
    op = label.split(":")[0]
    big = float(dt.max)
    u = rng.uniform
    if op in ("floor_divide", "div", "remainder", "fmod"):
        b = _in(dt, u(0.5, 2, n) * 2.0 ** rng.integers(-20, 20, n) * rng.choice([-1, 1], n))
        k = rng.integers(1, 2 ** 12, n) * rng.choice([-1, 1], n)
        a = _in(dt, k * b * (1 + u(-2.0 ** -10, 2.0 ** -10, n)))       # quotients near integers
        a2 = _in(dt, u(1, 2, n) * min(big / 4, 2.0 ** 100) * rng.choice([-1, 1], n))
        b2 = _in(dt, a2 / 2.0 ** rng.uniform(48, 58, n))                    # quotients across 2^53
        b3 = _in(dt, u(1, 2, n) * min(big / 4, 2.0 ** 60) * rng.choice([-1, 1], n))
        a3 = _in(dt, u(1, 2, n) * 2.0 ** rng.integers(-40, 0, n) * rng.choice([-1, 1], n))  # r + b inexact
        return np.concatenate([a, a2, a3]), np.concatenate([b, b2, b3])
    if op == "pow":
        e = 2.0 ** -(S.FORMATS[dt.name].precision - 1)
        x1 = _in(dt, 1 + e * rng.integers(-8, 9, n))
        y1 = _in(dt, u(-1, 1, n) * min(big, 2.0 ** 30))                    # near 1, large exponents
        x2 = _in(dt, u(0.5, 1e4, n) if big > 1e5 else u(0.5, 30, n))
        y2 = _in(dt, u(-150, 150, n))                                       # huge and tiny results
        x3 = _in(dt, -rng.integers(1, 60, n).astype(float))
        y3 = rng.integers(-12, 13, n).astype(float)                         # negative bases, integer powers
        x4 = _in(dt, rng.integers(1, 2 ** min(S.FORMATS[dt.name].precision, 12), n) * 2.0 ** rng.integers(-10, 10, n))
        y4 = rng.choice([2.0, 3.0, 0.5, -1.0, -2.0], n)                     # exact results, ties
        return np.concatenate([x1, x2, x3, x4]), np.concatenate([y1, y2, y3, y4])
    if op in ("glu", "swiglu", "silu_and_mul"):
        lo = max(-800.0, -big)
        t = _in(dt, u(lo, -560, n))                                         # sigmoid's far tail
        m = _in(dt, u(1, 2, n) * min(big / 2, 2.0 ** 127) * rng.choice([-1, 1], n))
        t2 = _in(dt, u(-60, 60, n))
        m2 = _in(dt, u(-4, 4, n) * 2.0 ** rng.integers(-30, 30, n))
        if op == "glu":
            return np.concatenate([m, m2]), np.concatenate([t, t2])
        return np.concatenate([t, t2]), np.concatenate([m, m2])
    return np.zeros(0), np.zeros(0)


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_binary_device_oracle_keeps_its_bound_against_mpmath(op, dtype):
    label = op
    d = device.DEVICE_ORACLES[label]
    op, oracle, params = _label_params(label)
    params = {**params, **({"alpha": 3} if "alpha" in oracle.params else {})}
    rng = np.random.default_rng(17)
    dt = nbx.DTYPES[dtype]
    n = 400
    bits = rng.integers(0, 2 ** (8 * dt.itemsize), (2, n), dtype=np.uint64).astype(dt.uint_np)
    a, b = (bits[i].view(dt.np).astype(np.float64) for i in range(2))
    near = rng.random(n) < 0.25                           # near-equal operands: cancellation
    b = np.where(near, (a * (1 + rng.uniform(-2.0 ** -8, 2.0 ** -8, n))).astype(dt.np).astype(np.float64), b)
    ha, hb = _hard_pairs(label, dt, rng)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -0.5, 3.0])
    a = np.concatenate([a, ha, np.repeat(sp, len(sp))])
    b = np.concatenate([b, hb, np.tile(sp, len(sp))])
    v = S.evaluate(d, a, [params[p] for p in d.params], y=b)
    f64 = oracle.f64(a, b, **{k: params[k] for k in oracle.params})
    worst = 0.0
    with mpmath.workdps(60):
        for ai, bi, vi, fi in zip(a, b, v, f64):
            # NaN operands: the float64 oracle defines the op there (mpmath has no NaN)
            truth = fi if math.isnan(ai) or math.isnan(bi) else evaluate_mp(oracle, (float(ai), float(bi)), params)
            worst = max(worst, _check(label, oracle, d, (ai, bi), vi, truth))
    print(f"{label} {dtype}: worst {worst / 2.0 ** -53:.3g} float64 ulps of {d.k:g}")


def _hard_triples(label, dt, rng, n=300):
    """Operand triples where each ternary form cancels: lerp between values of opposite signs at the
    weight that nearly cancels them, addcmul's x near -t1 t2, addcdiv's x near -t1/t2."""
    u = rng.uniform
    big = float(dt.max)
    sgn = lambda: rng.choice([-1.0, 1.0], n)
    mag = lambda lo, hi: u(1, 2, n) * 2.0 ** rng.integers(lo, hi, n)
    lim = 60 if big > 1e6 else 7
    if label == "lerp":
        s = _in(dt, mag(-lim, lim) * sgn())
        e = _in(dt, -s * u(0.1, 10, n))
        w = _in(dt, s / (s - e))                                            # start + w (end - start) ~ 0
        w2 = _in(dt, u(0, 1, n))
        e2 = _in(dt, s * (1 + u(-2.0 ** -6, 2.0 ** -6, n)))                 # near-equal ends
        return np.concatenate([s, s]), np.concatenate([e, e2]), np.concatenate([w, w2])
    t1 = _in(dt, mag(-lim, lim) * sgn())
    t2 = _in(dt, mag(-lim, lim) * sgn())
    if label == "addcmul":
        x = _in(dt, -t1 * t2 * (1 + u(-2.0 ** -12, 2.0 ** -12, n)))
    else:
        x = _in(dt, -t1 / t2 * (1 + u(-2.0 ** -12, 2.0 ** -12, n)))
    return x, t1, t2


@pytest.mark.parametrize("label", TERNARY)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("value", [None, 0.3])
def test_ternary_device_oracle_keeps_its_bound_against_mpmath(label, dtype, value):
    d = device.DEVICE_ORACLES[label]
    if value is not None and "value" not in d.params:
        pytest.skip(f"{label} takes no value")
    op, oracle, params = _label_params(label)
    if value is not None:
        params["value"] = value                           # a float64 value that is no float32
    rng = np.random.default_rng(23)
    dt = nbx.DTYPES[dtype]
    n = 300
    bits = rng.integers(0, 2 ** (8 * dt.itemsize), (3, n), dtype=np.uint64).astype(dt.uint_np)
    xs = [bits[i].view(dt.np).astype(np.float64) for i in range(3)]
    if label == "lerp":
        xs[2] = _in(dt, rng.uniform(-0.25, 1.25, n))     # weights where lerp is used
    hard = _hard_triples(label, dt, rng)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5])
    g = [x.reshape(-1) for x in np.meshgrid(sp, sp, sp, indexing="ij")]
    xs = [np.concatenate([x, h, gi]) for x, h, gi in zip(xs, hard, g)]
    v = S.evaluate(d, xs[0], [params[p] for p in d.params], y=xs[1], z=xs[2])
    f64 = oracle.f64(*xs, **{k: params[k] for k in oracle.params})
    worst = 0.0
    with mpmath.workdps(60):
        for row in zip(*xs, v, f64):
            ins, vi, fi = row[:3], row[3], row[4]
            truth = fi if any(math.isnan(x) for x in ins) else evaluate_mp(oracle, tuple(map(float, ins)), params)
            worst = max(worst, _check(label, oracle, d, ins, vi, truth))
    print(f"{label} {dtype} value={value}: worst {worst / 2.0 ** -53:.3g} float64 ulps of {d.k:g}")


def _bank_targets(label):
    """The measured targets (formats device_score decides) whose device oracle is `label`'s."""
    return [t for t in targets(dtypes=list(S.FORMATS))
            if _device_oracle_of(t) is device.DEVICE_ORACLES[label] and t.out_dtype is t.dtype]


@pytest.mark.parametrize("label", EXACT)
def test_exact_device_oracle_on_the_bank(label):
    """Every bank case of the label's targets (on formats the device decides) scored on the device
    with the bank's expected result: all decided, none wrong, misrounded or special. The planted
    counterpart: each result changed (a bool flipped, an integer or float moved by one unit of its
    last place) is found wrong at every case where it changes the value."""
    from nbx.harness.suites import exhaustive as X
    d = device.DEVICE_ORACLES[label]
    ts = [t for t in targets(dtypes=list(S.FORMATS)) if X.device_oracle(t) is d]
    assert ts, f"{label}: no measured target on float16, bfloat16 or float32"
    for t in ts:
        bf = bank.load(t)
        out = t.out_dtype
        x = [nbx.from_numpy(np.ascontiguousarray(a)) for a in bf.inputs]
        exp = bf.expected.astype(out.uint_np).view(out.np) if not out.is_bool else bf.expected.astype(bool)
        s = S.score(d, x, nbx.from_numpy(exp), X._params(t, d), zero_sign=ORACLES[t.op].zero_sign_matters)
        assert s.decided == len(exp) and s.undecided == 0, t.label
        assert s.misrounded == 0 and s.specials == 0, (t.label, t.dtype.name, s.failing_at[:5],
                                                       [a[s.failing_at[:5]] for a in bf.inputs])
        if out.is_bool:
            bad = ~exp
        else:
            bad = (exp.view(out.uint_np) ^ out.uint_np.type(1)).view(out.np)
        changed = np.ones(len(exp), bool)
        if out.is_float:                             # a NaN moved by one unit is still a NaN
            changed = ~(np.isnan(exp.astype(np.float64)) & np.isnan(bad.astype(np.float64)))
        s = S.score(d, x, nbx.from_numpy(bad), X._params(t, d), zero_sign=ORACLES[t.op].zero_sign_matters)
        assert s.misrounded + s.specials == int(changed.sum()), (t.label, t.dtype.name)


@pytest.mark.parametrize("label", sorted(k for k in device.DEVICE_ORACLES if k not in EXACT))
def test_device_oracle_on_the_bank(label):
    """On every bank case of the label's targets: the value keeps its bound against mpmath, and the
    device's decision is the bank's correctly rounded result (no misrounded, no special mismatch
    among the decided cases: `got` is the bank's expected value)."""
    d = device.DEVICE_ORACLES[label]
    ts = _bank_targets(label)
    assert ts, f"{label}: no measured target on float16, bfloat16 or float32"
    oracle = ORACLES[ts[0].op]
    for t in ts:
        bf = bank.load(t)
        out = t.out_dtype
        params = measure.oracle_params(t, out)
        vals = t.oracle_values(bf.inputs, out)
        v = S.evaluate(d, vals[0], [params[p] for p in d.params], *vals[1:])
        f64 = oracle.f64(*vals, **{k: params[k] for k in oracle.params if k in params})
        with mpmath.workdps(60):
            for i, vi in enumerate(v):
                ins = tuple(float(x[i]) for x in vals)
                truth = f64[i] if any(math.isnan(x) for x in ins) else evaluate_mp(oracle, ins, params)
                _check(t.label, oracle, d, ins, vi, truth)
        # the device decides the bank's cases as the bank does: operands in the dtype (a parameter
        # operand, clamp's bounds, as the dtype's value where it is one)
        ops = [x.astype(t.dtype.np) for x in vals]
        if not all(np.array_equal(o.astype(np.float64), x, equal_nan=True) for o, x in zip(ops, vals)):
            continue
        got = bf.expected.astype(t.dtype.uint_np).view(t.dtype.np)
        s = S.score(d, [nbx.from_numpy(np.ascontiguousarray(o)) for o in ops], nbx.from_numpy(got),
                    [params[p] for p in d.params], zero_sign=oracle.zero_sign_matters)
        assert s.decided + s.undecided == len(got), t.label
        assert s.misrounded == 0 and s.specials == 0, (t.label, t.dtype.name, s.failing_at[:5],
                                                       [x[s.failing_at[:5]] for x in vals])


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
        s = S.score_unary(device.DEVICE_ORACLES[op], X, nbx.from_numpy(result), zero_sign=zs)
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
        assert np.array_equal(s.special_at, np.flatnonzero(host.special & decided))
        e = host.err[decided & ~host.special & np.isfinite(host.err)]
        assert math.isclose(s.err_max, float(e.max()), rel_tol=1e-6, abs_tol=1e-6)
        if extra:
            assert s.misrounded >= extra and set(hit.tolist()) <= set(s.failing_at.tolist()) | set(s.undecided_at.tolist())


@pytest.mark.parametrize("label, dtype", [("floor_divide", "float32"), ("div:rounding_mode=trunc", "bfloat16"),
                                          ("remainder", "float16"), ("pow", "float16"), ("glu", "float32"),
                                          ("swiglu", "bfloat16"), ("lerp", "bfloat16"), ("addcmul", "float16"),
                                          ("addcdiv", "float32")])
def test_multi_operand_decisions_agree_with_the_host_and_catch_a_planted_error(label, dtype):
    """As above for binary and ternary ops: nbx's own results and results one ulp off at known
    positions, scored on the device and on the host (measure.score)."""
    op, oracle, params = _label_params(label)
    d = device.DEVICE_ORACLES[label]
    dt = nbx.DTYPES[dtype]
    rng = np.random.default_rng(11)
    n = 1 << 12
    t = Target(op, {k: v for k, v in params.items() if k not in oracle.params or v != oracle.params[k]}, dt)
    assert _device_oracle_of(t) is d
    bits = rng.integers(0, 2 ** (8 * dt.itemsize), (d.arity, n), dtype=np.uint64).astype(dt.uint_np)
    xs = [bits[i].view(dt.np).copy() for i in range(d.arity)]
    # half the cases where values are moderate, so that most results are finite and nonzero
    mod = [_in(dt, rng.uniform(-4, 4, n)).astype(dt.np) for _ in range(d.arity)]
    xs = [np.where(np.arange(n) % 2 == 0, x, m) for x, m in zip(xs, mod)]
    got = t.run(xs)
    planted = got.copy()
    hit = np.arange(5, n, 97)
    with np.errstate(all="ignore"):
        g64 = planted[hit].astype(np.float64)
    hit = hit[np.isfinite(g64) & (g64 != 0)]
    planted.view(dt.uint_np)[hit] += 1
    assert len(hit) > 10
    zs = oracle.zero_sign_matters
    for result, extra in ((got, 0), (planted, len(hit))):
        s = S.score(d, [nbx.from_numpy(x) for x in xs], nbx.from_numpy(result),
                    [params[p] for p in d.params], zero_sign=zs)
        host = measure.score(t, xs, result)
        assert s.decided + s.undecided == n and s.undecided == len(s.undecided_at)
        decided = np.ones(n, bool)
        decided[s.undecided_at] = False
        host_wrong = host.not_cr & ~host.special
        if not zs:
            host_wrong &= ~((result == 0) & (host.expected_bits.view(dt.np) == 0))
        failing = np.zeros(n, bool)
        failing[s.failing_at] = True
        assert s.misrounded == int((host_wrong & decided).sum()), label
        assert s.specials == int((host.special & decided).sum()), label
        assert np.array_equal(np.flatnonzero(failing), np.flatnonzero((host_wrong | host.special) & decided)), label
        if extra:
            assert set(hit.tolist()) <= set(s.failing_at.tolist()) | set(s.undecided_at.tolist())
            assert s.misrounded >= extra - len(s.undecided_at)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_hardsigmoid_exact_ties_are_decided_on_the_device(dtype):
    """hardsigmoid's (x + 3)/6 is exactly a float32 midpoint for 4% of x in [0.17, 0.19): its EXACT_AT
    marks those values exact, so the device decides the tie (to even) as mpmath does, instead of
    sending millions of inputs to the host (the H200's exhaustive run overflowed its list)."""
    d = nbx.DTYPES[dtype]
    lo, hi = (0x3e300000, 0x3e310000) if dtype == "float32" else (0x3e30, 0x3f80)
    x = np.arange(lo, hi, dtype=np.uint64).astype(d.uint_np).view(d.np)
    X = nbx.from_numpy(x)
    got = nbx.hardsigmoid(X).numpy()
    s = S.score_unary(device.DEVICE_ORACLES["hardsigmoid"], X, nbx.from_numpy(got))
    host = measure.score(Target("hardsigmoid", {}, d), [x], got)
    ties = int((np.abs(host.err - 0.5) < 1e-12).sum())
    assert ties > len(x) // 50                              # the region is full of exact ties
    assert s.undecided == 0 and s.misrounded == int(host.not_cr.sum()) == 0
    planted = got.copy()
    planted.view(d.uint_np)[::7] += 1
    s = S.score_unary(device.DEVICE_ORACLES["hardsigmoid"], X, nbx.from_numpy(planted))
    assert s.misrounded == int(measure.score(Target("hardsigmoid", {}, d), [x], planted).not_cr.sum()) > 0
