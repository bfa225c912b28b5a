"""The device oracles' residuals (nbx/oracles/device): where v, the oracle's float64 value, is a float32
midpoint and the exact value a hair off it, lo's sign decides the side (device_score's
_decide_by_residual). In each residual's region the device's decisions are mpmath's correctly
rounded results, none is left undecided, and a residual of the wrong sign is caught:
- silu, gelu (both forms) and hardswish of float32 subnormals are x/2 exactly, a midpoint for an
  odd last bit; elu(alpha = 0.5) likewise; leaky_relu's 0.01 x within 2^-55 of one;
- glu and swiglu with a tiny b or gate (m/2 + m b/4), swiglu with gate >= 38 (gate up, 25 bits),
  and lerp's TwoSum errors, on the stratified float32 sample (device_score.stratified_tuples).
The truth is mpmath at a precision that holds the exact value's offset (for swiglu's gate >= 38
that offset is m e^-gate; past gate = 4000 only its sign is compared, from -m/(1 + e^gate)); the
host's round_exact_or_ziv decides the same by the oracle's splits (tests/test_exact_value_rule.py)."""
import dataclasses
import math

import mpmath
import numpy as np
import pytest
import triton
import triton.language as tl  # noqa: F401  (the jit functions below need it in their module)

import nbx
import nbx.oracles.device as OD
from nbx.harness.scoring import device as DS
from nbx.harness.inputs import stratified
from nbx.harness.suites import exhaustive as X
from nbx.harness.scoring import host as measure
from nbx.harness.targets.target import Target
from nbx.oracles import ORACLES
from nbx.oracles.base import evaluate_mp
from nbx.oracles.device.activations import (_elu_residual, _gelu_residual, _gelu_tanh_residual, _glu_residual,
                                        _hardswish_residual, _leaky_relu_residual, _silu_residual,
                                        _swiglu_residual)
from nbx.oracles.device.ternary import _lerp_residual
from nbx.oracles.rounding import round_mpf


# each residual with its sign flipped: a planted error the decisions must show


@triton.jit
def _silu_flipped(x, p0, p1):
    return _silu_residual(x, p0, p1) * -1.0


@triton.jit
def _gelu_flipped(x, p0, p1):
    return _gelu_residual(x, p0, p1) * -1.0


@triton.jit
def _gelu_tanh_flipped(x, p0, p1):
    return _gelu_tanh_residual(x, p0, p1) * -1.0


@triton.jit
def _hardswish_flipped(x, p0, p1):
    return _hardswish_residual(x, p0, p1) * -1.0


@triton.jit
def _elu_flipped(x, p0, p1):
    return _elu_residual(x, p0, p1) * -1.0


@triton.jit
def _leaky_relu_flipped(x, p0, p1):
    return _leaky_relu_residual(x, p0, p1) * -1.0


@triton.jit
def _glu_flipped(a, b, p0, p1):
    return _glu_residual(a, b, p0, p1) * -1.0


@triton.jit
def _swiglu_flipped(a, b, p0, p1):
    return _swiglu_residual(a, b, p0, p1) * -1.0


@triton.jit
def _lerp_flipped(a, b, c, p0, p1):
    return _lerp_residual(a, b, c, p0, p1) * -1.0


FLIPPED = {"silu": _silu_flipped, "gelu": _gelu_flipped, "gelu:approximate=tanh": _gelu_tanh_flipped,
           "hardswish": _hardswish_flipped, "elu": _elu_flipped, "leaky_relu": _leaky_relu_flipped,
           "glu": _glu_flipped, "swiglu": _swiglu_flipped, "silu_and_mul": _swiglu_flipped, "lerp": _lerp_flipped}


def _target(label: str, params: dict) -> tuple:
    """(target, device oracle, its parameter values, whether a zero's sign counts)."""
    op, _, choice = label.partition(":")
    kw = dict(kv.split("=") for kv in choice.split(",")) if choice else {}
    kw.update(params)
    d = OD.DEVICE_ORACLES[label]
    p = [{**ORACLES[op].params, **kw}[k] for k in d.params]
    return Target(op, kw, nbx.float32), d, p, ORACLES[op].zero_sign_matters


def _score(d, xs, got, p, zs, **change):
    return DS.score(dataclasses.replace(d, **change) if change else d, [nbx.from_numpy(np.ascontiguousarray(x))
                                                                          for x in xs],
                    nbx.from_numpy(np.ascontiguousarray(got)), p, zero_sign=zs)


@pytest.mark.parametrize("label, params, negative", [
    ("silu", {}, False), ("gelu", {}, False), ("gelu:approximate=tanh", {}, False), ("hardswish", {}, False),
    ("elu", {"alpha": 0.5}, True), ("leaky_relu", {}, True)])
def test_unary_residual_decides_as_mpmath(label, params, negative):
    """Float32 subnormals and [2^-126, 2^-125) (the negative ones for elu and leaky_relu, whose
    positive side is x): the device decides every one, as mpmath does (measure.score's expected
    values), nbx's own results included; without the residual the midpoints are undecided, and with
    its sign flipped they are decided the wrong way."""
    t, d, p, zs = _target(label, params)
    rng = np.random.default_rng(3)
    n = 3000
    bits = rng.integers(1, 1 << 24, n, dtype=np.uint64) | \
        ((np.ones(n, np.uint64) if negative else rng.integers(0, 2, n, dtype=np.uint64)) << np.uint64(31))
    x = bits.astype(np.uint32).view(np.float32)
    got = t.run([x])
    host = measure.score(t, [x], got)
    due = host.expected_bits.astype(np.uint32).view(np.float32)
    s = _score(d, [x], due, p, zs)
    assert s.undecided == 0 and s.misrounded == 0 and s.specials == 0, label
    s = _score(d, [x], got, p, zs)
    assert s.undecided == 0 and np.array_equal(s.failing_at, np.flatnonzero(host.not_cr | host.special)), label
    without = _score(d, [x], due, p, zs, residual=None)
    flipped = _score(d, [x], due, p, zs, residual=FLIPPED[label])
    assert without.undecided > n // 100, label
    assert flipped.undecided == 0 and flipped.misrounded >= without.undecided // 2, label
    print(f"{label}: {without.undecided} of {n} undecided without the residual, {flipped.misrounded} "
          f"misdecided with its sign flipped, nbx misrounds {int(host.not_cr.sum())}")


def _in_region(label, xs):
    """Where the residual is given (lerp: every finite tuple)."""
    xs = [x.astype(np.float64) for x in xs]
    finite = np.all([np.isfinite(x) for x in xs], axis=0)
    if label == "glu":
        return finite & (np.abs(xs[1]) <= 2.0 ** -20)
    if label in ("swiglu", "silu_and_mul"):
        return finite & ((np.abs(xs[0]) <= 2.0 ** -20) | (xs[0] >= 38))
    return finite


def _offset_and_rounding(op, ins, v):
    """(sign of the exact value - v, the exact value's float32 rounding or None) by mpmath, with the
    precision the offset needs; past gate = 4000 swiglu's offset -m/(1 + e^gate) gives the sign."""
    oracle = ORACLES[op]
    gate = ins[0] if op in ("swiglu", "silu_and_mul") else 0.0
    if gate > 4000:
        with mpmath.workprec(200):
            diff = -mpmath.mpf(ins[0]) * mpmath.mpf(ins[1]) / (1 + mpmath.exp(mpmath.mpf(gate)))
        assert v == ins[0] * ins[1]
        return int(diff > 0) - int(diff < 0), None
    with mpmath.workprec(3000 + int(1.5 * max(gate, 0.0))):
        f = evaluate_mp(oracle, ins, {})
        if not isinstance(f, mpmath.mpf):
            f = mpmath.mpf(f)
        diff = f - mpmath.mpf(v)
        return int(diff > 0) - int(diff < 0), round_mpf(f, "float32")


@pytest.mark.parametrize("label", ["glu", "swiglu", "silu_and_mul", "lerp"])
def test_binary_residual_decides_as_mpmath(label):
    """The tuples among 2^16 of the stratified sample's first 2^20 that the residual decides: lo's sign is the side of
    v the exact value lies on (mpmath), the device's decisions of nbx's results and of mpmath's
    correctly rounded ones agree with mpmath, none in the residual's region is left undecided, and a
    flipped residual misdecides."""
    t, d, p, zs = _target(label, {})
    arity, key = d.arity, X.tuple_key(t, 0)
    at = np.sort(np.random.default_rng(7).choice(1 << 20, 1 << 16, replace=False))    # two rounds, all classes
    xs = stratified.tuples_host(arity, key, at)
    if label in ("swiglu", "silu_and_mul"):
        # gate = 3 2^k in [48, 3072] times an odd up of 23 bits with 3 up >= 2^24: gate up has 25
        # bits, a float32 midpoint, and sigmoid(gate) is 1 in float64 (the sample has few such gates)
        rng = np.random.default_rng(8)
        gate = 3.0 * 2.0 ** rng.integers(4, 11, 200)
        up = (2 * rng.integers(2796203, 4194304, 200) + 1) * 2.0 ** rng.integers(-60, 40, 200)
        xs = [np.concatenate([x, y.astype(np.float32)]) for x, y in zip(xs, (gate, up))]
    got = t.run(xs)
    without = _score(d, xs, got, p, zs, residual=None, exact_at=None)
    s = _score(d, xs, got, p, zs)
    assert not _in_region(label, [x[s.undecided_at] for x in xs]).any(), label
    newly = np.setdiff1d(without.undecided_at, s.undecided_at)
    assert len(newly) > 40, label
    ops = [x[newly] for x in xs]
    o64 = [o.astype(np.float64) for o in ops]
    v = DS.evaluate(d, o64[0], p, *o64[1:])
    lo = DS.evaluate(dataclasses.replace(d, fn=d.residual), o64[0], p, *o64[1:])
    assert not np.isnan(lo).any(), label
    due = np.zeros(len(newly), np.float32)
    known = np.zeros(len(newly), bool)
    for i in range(len(newly)):
        ins = tuple(float(o[i]) for o in o64)
        side, rounded = _offset_and_rounding(t.op, ins, float(v[i]))
        assert side == int(lo[i] > 0) - int(lo[i] < 0), (label, ins, v[i], lo[i])
        if rounded is not None:
            due[i] = np.uint32(rounded).view(np.float32)
            known[i] = True
    assert known.sum() > 40, label
    ops, g = [o[known] for o in ops], got[newly][known]
    due = due[known]
    s = _score(d, ops, due, p, zs)
    assert s.undecided == 0 and s.misrounded == 0 and s.specials == 0, label
    s = _score(d, ops, g, p, zs)
    assert s.undecided == 0 and np.array_equal(s.failing_at, np.flatnonzero(g.view(np.uint32) != due.view(np.uint32)))
    flipped = _score(d, ops, due, p, zs, residual=FLIPPED[label])
    assert flipped.misrounded > 0, label
    print(f"{label}: {len(newly)} tuples decided by the residual ({int(known.sum())} rounded by mpmath), "
          f"{s.misrounded} misrounded by nbx, {flipped.misrounded} misdecided with the sign flipped")
