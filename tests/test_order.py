"""Compound ops against their documented evaluation order (nbx.ops.verify.Order, nbx/oracles/order.py):
the declarations match the oracles, the real kernels follow their order to the bit, the gate holds
that figure at its budget, and a planted 1-ulp regression or a changed order fails it."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import triton
import triton.language as tl

import nbx
from nbx.harness.gate.budgets import ORDER_REASON_ULP, ROOT, key, load, path_for, unexplained, update
from nbx.harness.gate import verdict as gate
from nbx.harness.run import runner
from nbx.harness.records.measurement import Measurement
from nbx.harness.scoring.order import order_oracle
from nbx.harness.targets.target import Target, targets
from nbx.ops import FUNCTIONS, OPS
from nbx.ops.registry import make_function
from nbx.oracles.order import ORDER_ORACLES

ORDERED = [t for t in targets() if t.order is not None]


def test_declared_orders_and_their_oracles_match():
    labels = {t.label for t in ORDERED}
    assert {t.op for t in ORDERED} >= {"addcmul", "addcdiv", "lerp", "glu", "swiglu", "silu_and_mul", "gelu"}
    assert "gelu:approximate=tanh" in labels
    for t in ORDERED:
        o = order_oracle(t)
        assert o.arity == t.oracle_arity, t.label
        assert set(o.params) <= {p.name for p in t.spec.params}, t.label
        assert t.order.steps and t.order.why, f"{t.label}: an order states its steps and why"
    # every order oracle belongs to a target that declares an order (no orphan)
    assert set(ORDER_ORACLES) <= labels | {t.op for t in ORDERED}


def _inputs(arity: int, n: int = 3000, seed: int = 7) -> list[np.ndarray]:
    """Values over the whole float64 range, both signs, with cancellation (input ~ -value*t1*t2),
    the negative tails of gelu and silu, zeros, infinities and NaN."""
    rng = np.random.default_rng(seed)
    xs = [np.ldexp(rng.uniform(-1, 1, n), rng.integers(-1074, 1024, n)) for _ in range(arity)]
    xs = [np.where(rng.random(n) < 0.4, rng.normal(0, 30, n), x) for x in xs]
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.0, -1.0, -38.5])
    for x in xs:
        x[:special.size] = special[rng.permutation(special.size)]
    if arity == 3:
        with np.errstate(all="ignore"):
            xs[0][-500:] = -(xs[1][-500:] * xs[2][-500:])      # input + t1*t2 cancels
    return xs


@pytest.mark.parametrize("t", ORDERED, ids=lambda t: f"{t.label}-{t.dtype.name}")
def test_kernels_follow_their_documented_order_to_the_bit(t):
    arrays = _inputs(t.oracle_arity)
    got = t.run(arrays)
    from nbx.harness.scoring.host import oracle_params
    from nbx.harness.scoring.order import order_error
    err, bits = order_error(t, t.oracle_values(arrays, t.out_dtype), oracle_params(t, t.out_dtype), got)
    assert err.max() == 0.0, f"{t.label}: {int((err != 0).sum())} results differ from the order"
    assert np.array_equal(bits, got.view(np.uint64))


def M(op, order_max_ulp=0.0, **kw) -> Measurement:
    kw.setdefault("cases", 100)
    return Measurement(op, "float64", "pairs", "test", order_cases=kw["cases"], order_max_ulp=order_max_ulp,
                       order_differ=int(order_max_ulp > 0), **kw)


def test_the_gate_holds_the_order_figure_and_reports_the_exact_one():
    data = {"budgets": {"addcdiv|float64": {"order_max_ulp": 0.0}}}
    sel = dict(ops=["addcdiv"], dtypes=["float64"], suites=["pairs"])
    # an exact error of 2.7e12 ulp (cancellation) is the order's, not the kernel's: reported, not gated
    assert gate.decide([M("addcdiv", max_ulp=2.7e12, special_mismatches=1)], data, **sel) == []
    fails = gate.decide([M("addcdiv", order_max_ulp=1.0)], data, **sel)
    assert len(fails) == 1 and "differ from the documented evaluation order" in fails[0].reason
    fails = gate.decide([M("addcdiv", order_max_ulp=float("inf"))], data, **sel)
    assert "order budget 0.0" in fails[0].reason
    fails = gate.decide([M("addcdiv")], {"budgets": {}}, **sel)
    assert "no order budget" in fails[0].reason
    fails = gate.decide([M("addcdiv", wrong=1)], data, **sel)
    assert "1 wrong" in fails[0].reason


def test_budgets_above_four_ulp_or_with_exceptions_need_a_written_reason():
    entries = {"a|float64": {"max_ulp": 4.0}, "b|float64": {"max_ulp": 4.1},
               "c|float32": {"max_ulp": 0.5, "special_mismatches": 1},
               "d|float64": {"order_max_ulp": 1.0}, "e|float64": {"max_ulp": 9.0, "reason": "argument rounding"},
               "f|int8": {"max_ulp": 0.0, "wrong": 2, "reason": " "}}
    flagged = dict(unexplained({"budgets": entries}))
    assert set(flagged) == {"b|float64", "c|float32", "d|float64", "f|int8"}
    assert "max_ulp 4.1 > 4" in flagged["b|float64"]
    fails = gate.decide([], {"budgets": entries}, ops=["exp"], dtypes=["float32"], suites=["sweep"])
    assert {f.key[1] for f in fails if f.key[0] == "budgets"} == set(flagged)


@pytest.mark.parametrize("path", sorted(ROOT.glob("*.json")), ids=lambda p: p.stem)
def test_committed_budget_files_hold_no_unexplained_entry(path):
    data = load(path)
    assert unexplained(data) == []
    for t in ORDERED:                 # a compound op's float64 budget is its order figure, tight
        e = data["budgets"].get(key(t.label, t.dtype.name))
        assert e is not None and e.get("order_max_ulp", 1) <= ORDER_REASON_ULP, (path.name, t.label)


def test_update_writes_the_order_figure_of_an_ordered_measurement():
    new, changes = update({"budgets": {}}, [M("addcdiv", order_max_ulp=0.0, max_ulp=5e12),
                                              Measurement("exp", "float64", "sweep", "t", cases=5, max_ulp=0.61)])
    assert new["budgets"] == {"addcdiv|float64": {"order_max_ulp": 0.0}, "exp|float64": {"max_ulp": 0.7}}


# ---------------------------------------------------------------- planted regressions, real runs
@triton.jit
def _addcdiv_one_ulp_up(x, t1, t2, value):
    # the documented order, then one ulp up on every finite nonzero result
    r = x + value * t1 / t2
    up = (r.to(tl.int64, bitcast=True) + 1).to(tl.float64, bitcast=True)
    return tl.where((r == r) & (tl.abs(r) < float("inf")) & (r != 0), up, r)


@triton.jit
def _addcdiv_reordered(x, t1, t2, value):
    # (x*t2 + value*t1)/t2: the same value by another order (with no cancellation between two
    # roundings), a change the docs would have to state first
    return (x * t2 + value * t1) / t2


def _gate_addcdiv(monkeypatch, body):
    if body is not None:
        spec = dataclasses.replace(OPS["addcdiv"], body=body)
        monkeypatch.setitem(OPS, "addcdiv", spec)
        monkeypatch.setitem(FUNCTIONS, "addcdiv", make_function(spec))
    ms = runner.run(ops=["addcdiv"], dtypes=["float64"], profile="ci", progress=False)
    budgets = load(path_for(nbx.backend_id()))
    return ms, gate.decide(ms, budgets, ops=["addcdiv"], dtypes=["float64"])


def test_the_committed_addcdiv_passes_its_order_budget(monkeypatch):
    ms, fails = _gate_addcdiv(monkeypatch, None)
    assert fails == [], gate.format_failures(fails)
    assert all(m.order_cases == m.cases > 0 for m in ms if m.suite in ("bank", "pairs"))


@pytest.mark.parametrize("body", [_addcdiv_one_ulp_up, _addcdiv_reordered], ids=["one-ulp-up", "reordered"])
def test_a_planted_regression_in_a_compound_float64_op_fails_the_gate(monkeypatch, body):
    ms, fails = _gate_addcdiv(monkeypatch, body)
    reasons = [f.reason for f in fails]
    assert any("differ from the documented evaluation order" in r for r in reasons), reasons
    worst = [w for m in ms for w in m.worst if "documented evaluation order" in w.note]
    assert worst and all(w.ulp >= 1 for w in worst)
    # against the exact value alone the plant hides in the cancellation error (max ulp ~1e12)
    assert max(m.max_ulp for m in ms if m.suite == "pairs") < 2.8e12
