"""The gate (gate.decide) on hand-made measurements, and the budget file (update, save)."""
from __future__ import annotations

import json
import math
import re

import pytest

from nbx.harness.gate.budgets import BudgetFileError, SCHEMA, load, round_up_tenth, save, update
from nbx.dtype import float32
from nbx.harness.gate import verdict as gate
from nbx.harness import api
from nbx.harness.targets.target import Target
from nbx.harness.records.measurement import Measurement, Worst

EXP_SUITES = api.suites_for(Target("exp", {}, float32))        # bank, sweep, and the structural
BUDGETS = {"schema": SCHEMA, "backend": "test",
           "budgets": {"exp|float32": {"max_ulp": 1.0}, "log|float32": {"max_ulp": 0.5}}}


def M(op="exp", dtype="float32", suite="sweep", **kw) -> Measurement:
    kw.setdefault("cases", 1000)
    kw.setdefault("max_ulp", 0.7)
    kw.setdefault("mean_ulp", 0.1)
    kw.setdefault("p999_ulp", 0.6)
    return Measurement(op, dtype, suite, "test-backend", **kw)


def decide(ms, budgets=BUDGETS, ops=("exp",), dtypes=("float32",), suites=("sweep",), **kw):
    """Gate as for a run of `--suite sweep` unless told otherwise (one measurement suffices)."""
    return gate.decide(ms, budgets, ops=list(ops), dtypes=list(dtypes),
                       suites=list(suites) if suites else None, **kw)


def only(fails, key):
    got = [f for f in fails if tuple(f.key) == key]
    assert got, f"no failure for {key}: {fails}"
    return got


def test_within_budget_passes():
    ms = [M(suite=s, max_ulp=0.5) for s in EXP_SUITES] + [M(suite="sweep", max_ulp=1.0)]   # = the budget
    assert decide(ms, suites=None) == []
    assert gate.format_failures([]) == "gate: every figure within budget"


def test_within_budget_up_to_rounding_noise():
    assert decide([M(max_ulp=1.0 + 1e-12)]) == []


def test_regressed_max_ulp_fails():
    w = Worst(["0x42b17218"], "0x7f7ffff0", "0x7f7fffff", 1.25, "near overflow")
    fails = decide([M(suite="bank"), M(suite="sweep", max_ulp=1.25, worst=[w])])
    assert len(fails) == 1
    f = fails[0]
    assert f.key == ("exp", "float32", "sweep")
    assert "max ulp 1.25 > budget 1.0" in f.reason
    assert f.worst == [w]
    text = gate.format_failures(fails)
    assert "1 failure(s)" in text and "exp" in text and "0x42b17218" in text and "near overflow" in text


def test_missing_op_or_dtype_fails():
    fails = decide([M()], ops=("exp", "log"), dtypes=("float32", "float16"))
    keys = {tuple(f.key) for f in fails}
    assert keys == {("exp", "float16", ""), ("log", "float32", ""), ("log", "float16", "")}
    assert all("no measurement" in f.reason for f in fails)


def test_every_variant_needs_a_measurement():
    """add:alpha=2 is its own row of the table: measuring plain add is not enough."""
    b = {"budgets": {"add|float32": {"max_ulp": 0.5}, "add:alpha=2|float32": {"max_ulp": 0.5}}}
    fails = decide([M("add", max_ulp=0.5)], b, ops=("add",))
    assert [tuple(f.key) for f in fails] == [("add:alpha=2", "float32", "")]
    assert decide([M("add", max_ulp=0.5), M("add:alpha=2", max_ulp=0.5)], b, ops=("add",)) == []


def test_every_suite_of_a_target_needs_a_measurement():
    """A run of all suites (a lone shard, say) that lacks one suite of a target fails."""
    assert {"bank", "sweep"} <= set(EXP_SUITES)
    fails = decide([M(suite=s) for s in EXP_SUITES if s != "bank"], suites=None)
    assert [tuple(f.key) for f in fails] == [("exp", "float32", "bank")]
    assert "bank suite" in fails[0].reason
    assert decide([M(suite=s) for s in EXP_SUITES], suites=None) == []
    # a run restricted to some suites (`--suite bank`) is gated on those only
    assert decide([M(suite="bank")], suites=["bank"]) == []
    # binary ops have a pairs suite instead of sweep
    t = Target("atan2", {}, float32)
    b = {"budgets": {"atan2|float32": {"max_ulp": 2.0}}}
    fails = decide([M("atan2", suite="bank")], b, ops=("atan2",), suites=None)
    missing = {tuple(f.key) for f in fails}
    assert ("atan2", "float32", "pairs") in missing
    assert missing == {("atan2", "float32", s) for s in api.suites_for(t) if s != "bank"}


def test_zero_case_measurement_fails():
    fails = decide([M(cases=0, max_ulp=0.0)])
    assert "zero cases" in only(fails, ("exp", "float32", "sweep"))[0].reason
    only(fails, ("exp", "float32", ""))                  # and the dtype counts as unmeasured


def test_zero_cases_in_one_suite_fails_even_when_another_measured():
    fails = decide([M(suite=s, cases=0 if s == "sweep" else 100) for s in EXP_SUITES], suites=None)
    assert [tuple(f.key) for f in fails] == [("exp", "float32", "sweep")]


@pytest.mark.parametrize("field", ["max_ulp", "mean_ulp", "p999_ulp"])
def test_nan_metric_fails(field):
    fails = decide([M(**{field: math.nan})])
    assert len(fails) == 1 and "NaN" in fails[0].reason


def test_special_mismatch_fails_even_within_ulp_budget():
    fails = decide([M(special_mismatches=2, max_ulp=0.5)])
    assert len(fails) == 1 and "2 special mismatches" in fails[0].reason


def test_special_mismatch_with_inf_ulp_fails():
    fails = decide([M(special_mismatches=1, max_ulp=math.inf)])
    reasons = " | ".join(f.reason for f in fails)
    assert "special mismatches" in reasons and "budget 1.0" in reasons


def test_wrong_integer_result_fails():
    b = {"budgets": {"bitwise_and|int32": {"max_ulp": 0.0}}}
    ok = M("bitwise_and", "int32", suite="pairs", max_ulp=0.0, mean_ulp=0.0, p999_ulp=0.0)
    assert decide([ok], b, ops=("bitwise_and",), dtypes=("int32",), suites=("pairs",)) == []
    bad = M("bitwise_and", "int32", suite="pairs", max_ulp=1.0, mean_ulp=0.001, p999_ulp=0.0, wrong=3,
            not_correctly_rounded=3)
    fails = decide([bad], b, ops=("bitwise_and",), dtypes=("int32",), suites=("pairs",))
    assert any("3 wrong results" in f.reason for f in fails), fails


def test_measurement_with_error_fails():
    fails = decide([M(suite="bank", error="BankError: exp/float32.txt: sha256 does not match"), M()])
    assert len(fails) == 1
    assert fails[0].key == ("exp", "float32", "bank") and fails[0].reason.startswith("raised: BankError")


def test_unresolved_cases_fail():
    fails = decide([M(unresolved=1)])
    assert len(fails) == 1 and "unresolved" in fails[0].reason


def test_bank_problem_fails():
    fails = decide([M()], bank_problems=["exp/float32.txt: sha256 does not match the manifest"])
    assert len(fails) == 1 and fails[0].key == ("bank", "", "")
    assert "stale or corrupted bank" in fails[0].reason and "exp/float32.txt" in fails[0].reason


def test_no_budget_for_inexact_result_fails():
    fails = decide([M()], {"budgets": {}})
    assert len(fails) == 1 and "no budget for exp float32" in fails[0].reason


def test_no_budget_for_an_exact_result_fails_too():
    """The gate fails closed: an entry is the reviewed promise later runs are held to, so an exact
    measurement (0 ulp, an integer op, a layout) without one fails as well."""
    fails = decide([M(max_ulp=0.0, mean_ulp=0.0, p999_ulp=0.0)], {"budgets": {}})
    assert [tuple(f.key) for f in fails] == [("exp", "float32", "sweep")]
    assert "no budget for exp float32" in fails[0].reason and "nbx gate --update" in fails[0].reason
    exact = M("bitwise_and", "int32", suite="pairs", max_ulp=0.0, mean_ulp=0.0, p999_ulp=0.0)
    fails = decide([exact], {"budgets": {}}, ops=("bitwise_and",), dtypes=("int32",), suites=("pairs",))
    assert "no budget for bitwise_and int32" in only(fails, ("bitwise_and", "int32", "pairs"))[0].reason
    layout = M(suite="layout", max_ulp=0.0, mean_ulp=0.0, p999_ulp=0.0)
    assert "no budget" in only(decide([layout], {"budgets": {}}, suites=("layout",)),
                               ("exp", "float32", "layout"))[0].reason


def test_a_missing_budget_file_is_one_named_failure(tmp_path):
    """evaluate() on a budget file that does not exist: one failure naming the path and how to
    create it, standing for the entries it lacks, never an empty table that passes."""
    from nbx.harness.report import Report
    rep = Report(backend={"id": "test-backend"}, argv=["run", "--op", "exp", "--dtype", "float32", "--suite",
                                                      "sweep"], measurements=[M(max_ulp=0.0)])
    missing = tmp_path / "no-such" / "test-backend.json"
    v = gate.evaluate(rep, budgets_path=missing, check_bank=False)
    assert not v.passed and [tuple(f.key) for f in v.failures] == [("budgets", "", "")]
    reason = v.failures[0].reason
    assert str(missing) in reason and "no budget file" in reason and "nbx gate --update" in reason
    assert not missing.parent.exists()                   # the gate writes nothing


@pytest.mark.parametrize("text, why", [("{not json", "invalid JSON"), ("[1, 2]", "not a budget file"),
                                       ('{"schema": 99, "budgets": {}}', "budget schema 99")])
def test_an_unreadable_budget_file_is_a_named_failure(tmp_path, text, why):
    from nbx.harness.report import Report
    rep = Report(backend={"id": "test-backend"}, argv=["run", "--suite", "sweep"], measurements=[M()])
    path = tmp_path / "b.json"
    path.write_text(text)
    v = gate.evaluate(rep, budgets_path=path, ops=["exp"], dtypes=["float32"], check_bank=False)
    assert [tuple(f.key) for f in v.failures] == [("budgets", "", "")]
    assert str(path) in v.failures[0].reason and why in v.failures[0].reason


def test_a_stopped_run_is_a_named_failure_and_names_what_it_did_not_measure():
    """`nbx run` stopped by a time limit's SIGTERM records `--interrupted=done/total`: the gate
    fails on the stop itself, and names each missing measurement as cut by it."""
    fails = decide([M(suite="bank", max_ulp=0.5)], suites=None, interrupted=["1/4"])
    stop = only(fails, ("run", "", ""))
    assert "stopped" in stop[0].reason and "after 1/4 jobs" in stop[0].reason
    cut = only(fails, ("exp", "float32", "sweep"))
    assert "not measured: the run was stopped (after 1/4 jobs)" in cut[0].reason
    # even a run that measured everything it was asked before the stop fails
    assert only(decide([M()], interrupted=["1/1"]), ("run", "", ""))


def test_failures_by_key_groups_reasons():
    fails = decide([M(max_ulp=2.0, special_mismatches=1)])
    by = gate.failures_by_key(fails)
    assert len(by[("exp", "float32", "sweep")]) == 2


# ---------------------------------------------------------------- budgets
def test_round_up_tenth():
    assert round_up_tenth(0.5) == 0.5
    assert round_up_tenth(0.3) == 0.3                    # 0.3 * 10 is 3.0000000000000004
    assert round_up_tenth(0.51) == 0.6
    assert round_up_tenth(0.4999) == 0.5
    assert round_up_tenth(1.0000001) == 1.1
    assert round_up_tenth(0.0) == 0.0
    assert round_up_tenth(123.45) == 123.5


def test_update_writes_improvements_and_new_entries_only():
    data = {"schema": SCHEMA, "backend": "test", "budgets": {
        "exp|float32": {"max_ulp": 1.0}, "log|float32": {"max_ulp": 0.5}, "sin|float32": {"max_ulp": 2.0}}}
    ms = [M("exp", max_ulp=0.71), M("exp", suite="bank", max_ulp=0.62),     # improvement: 0.8
          M("log", max_ulp=0.93),                                          # regression: kept 0.5
          M("sin", max_ulp=2.0),                                           # unchanged
          M("cos", max_ulp=1.234),                                         # new: 1.3
          M("tan", max_ulp=math.inf, special_mismatches=1),                # not finite: skipped
          M("tanh", max_ulp=0.1, error="RuntimeError: boom"),              # raised: skipped
          M("erf", cases=0, max_ulp=0.0)]                                  # no cases: skipped
    new, changes = update(data, ms)
    b = new["budgets"]
    assert b["exp|float32"]["max_ulp"] == 0.8
    assert b["log|float32"]["max_ulp"] == 0.5
    assert b["sin|float32"]["max_ulp"] == 2.0
    assert b["cos|float32"]["max_ulp"] == 1.3
    assert not {"tan|float32", "tanh|float32", "erf|float32"} & set(b)
    assert sorted(changes) == [("cos|float32", None, 1.3), ("exp|float32", 1.0, 0.8)]
    assert data["budgets"]["exp|float32"]["max_ulp"] == 1.0            # the input is not modified
    assert new["schema"] == SCHEMA


def test_update_everything_also_raises():
    data = {"schema": SCHEMA, "budgets": {"exp|float32": {"max_ulp": 1.0}, "log|float32": {"max_ulp": 0.5}}}
    new, changes = update(data, [M("exp", max_ulp=0.71), M("log", max_ulp=0.93)], everything=True,
                            source={"run_id": "r1"})
    assert new["budgets"]["exp|float32"]["max_ulp"] == 0.8
    assert new["budgets"]["log|float32"]["max_ulp"] == 1.0
    assert sorted(changes) == [("exp|float32", 1.0, 0.8), ("log|float32", 0.5, 1.0)]
    assert new["source"] == {"run_id": "r1"}
    # unchanged maxima produce no change, even with everything=True
    again, ch = update(new, [M("exp", max_ulp=0.71)], everything=True)
    assert ch == [] and again["budgets"] == new["budgets"]


def test_updated_budgets_pass_the_gate():
    ms = [M("exp", max_ulp=0.7123), M("exp", suite="bank", max_ulp=0.5)]
    new, _ = update({"schema": SCHEMA, "budgets": {}}, ms)
    assert decide(ms, new) == []


def test_save_is_atomic_and_round_trips(tmp_path):
    p = tmp_path / "sub" / "interpreter-test.json"
    data, _ = update(load(p, missing_ok=True), [M("exp", max_ulp=0.7)])
    assert data["budgets"] == {"exp|float32": {"max_ulp": 0.7}}
    save(data, p)
    assert sorted(x.name for x in p.parent.iterdir()) == [p.name]         # no temp file left
    assert load(p) == data
    assert json.loads(p.read_text())["budgets"]["exp|float32"]["max_ulp"] == 0.7
    # a second save replaces the file, again leaving nothing else
    data2, _ = update(data, [M("exp", max_ulp=0.4)])
    save(data2, p)
    assert sorted(x.name for x in p.parent.iterdir()) == [p.name]
    assert load(p)["budgets"]["exp|float32"]["max_ulp"] == 0.4


def test_failed_save_keeps_old_file_and_leaves_no_temp(tmp_path):
    p = tmp_path / "b.json"
    good = {"schema": SCHEMA, "budgets": {"exp|float32": {"max_ulp": 1.0}}}
    save(good, p)
    with pytest.raises((TypeError, ValueError)):
        save({"schema": SCHEMA, "budgets": {"x|y": {"max_ulp": object()}}}, p)
    with pytest.raises(ValueError):
        save({"schema": SCHEMA, "budgets": {"x|y": {"max_ulp": math.nan}}}, p)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["b.json"]
    assert load(p) == good


def test_load_missing_and_wrong_schema(tmp_path):
    p = tmp_path / "cuda-sm90-triton3.6.json"
    with pytest.raises(BudgetFileError, match="no budget file") as e:
        load(p)
    assert e.value.path == p and str(p) in str(e.value)
    assert load(p, missing_ok=True) == {"schema": SCHEMA, "backend": "cuda-sm90-triton3.6", "budgets": {}}
    p.write_text(json.dumps({"schema": 99, "budgets": {}}))
    with pytest.raises(BudgetFileError, match="schema"):
        load(p, missing_ok=True)


def test_reasons_live_in_their_own_map_one_line_each(tmp_path):
    """The file keeps figures under "budgets" and reasons under "reasons", one line per entry in
    each; load folds a reason into its entry, save splits it out again."""
    p = tmp_path / "b.json"
    data = {"schema": SCHEMA, "backend": "test", "budgets": {
        "mish|float64": {"max_ulp": 7.5, "reason": "x * tanh(softplus(x)): 7.5"},
        "exp|float32": {"max_ulp": 0.5}}}
    save(data, p)
    text = p.read_text()
    assert '"mish|float64": {"max_ulp": 7.5}\n' in text and '"mish|float64": "x * tanh(softplus(x)): 7.5"\n' in text
    assert json.loads(text)["reasons"] == {"mish|float64": "x * tanh(softplus(x)): 7.5"}
    assert load(p) == data


@pytest.mark.parametrize("reasons, entry, words", [
    ({"exp|float64": "left over"}, {"max_ulp": 0.5}, "reason for 'exp|float64' names no budget entry"),
    ({"exp|float32": ""}, {"max_ulp": 0.5}, "expected non-empty text"),
    ({"exp|float32": 4}, {"max_ulp": 0.5}, "expected non-empty text"),
    ([], {"max_ulp": 0.5}, "'reasons' must be an object"),
    ({}, {"max_ulp": 9.0, "reason": "inline"}, "belongs in the 'reasons' map"),
    ({}, 0.5, "expected an object of figures"),
])
def test_a_misplaced_or_stale_reason_is_a_budget_file_error(tmp_path, reasons, entry, words):
    p = tmp_path / "b.json"
    p.write_text(json.dumps({"schema": SCHEMA, "budgets": {"exp|float32": entry}, "reasons": reasons}))
    with pytest.raises(BudgetFileError, match=re.escape(words)):
        load(p)


def test_the_committed_budget_files_load_and_every_reason_explains_an_entry():
    from nbx.harness.gate import budgets
    for path in sorted(budgets.ROOT.glob("*.json")):
        data = load(path)
        assert budgets.unexplained(data) == [], path
        assert path.read_text() == budgets.dumps(data), f"{path} is not in save's layout"


def test_a_special_mismatch_allowance_must_be_in_the_budget_file():
    """Like glibc's libm-test-ulps: an exception to the zero budget is data, with its reason."""
    b = {"budgets": {"exp|float32": {"max_ulp": 1.0, "special_mismatches": 1,
                                     "reason": "interpreter: unfused fma loses the sign of an underflow"}}}
    assert decide([M(special_mismatches=1)], b) == []
    fails = decide([M(special_mismatches=2)], b)
    assert "2 special mismatches (budget 1)" in only(fails, ("exp", "float32", "sweep"))[0].reason
    assert decide([M(special_mismatches=1)])           # the default budget is 0


def _undeclared(monkeypatch, op: str, dtype) -> None:
    """The op as if it did not declare `dtype` correctly rounded (with a reason for float32)."""
    import dataclasses

    from nbx.ops import OPS
    v = OPS[op].verify
    cr = tuple(d for d in v.correctly_rounded if d is not dtype)
    monkeypatch.setitem(OPS, op, dataclasses.replace(OPS[op], verify=dataclasses.replace(
        v, correctly_rounded=cr, not_cr=v.not_cr or ("planted" if dtype is float32 else ""))))


def test_a_misrounded_result_fails_where_the_op_declares_correct_rounding(monkeypatch):
    """exp declares float32 correctly rounded (Verify.correctly_rounded): one misrounded result
    fails, even at max ulp 0.5 within a budget of 1.0. An op that says why it does not (swiglu,
    planted): its count is reported, and only its ulp budget gates."""
    from nbx.dtype import float16
    from nbx.ops import OPS
    assert float32 in OPS["exp"].verify.correctly_rounded
    fails = decide([M(max_ulp=0.5, not_correctly_rounded=1)])
    assert "1 results not correctly rounded; the op declares float32 correctly rounded" in fails[0].reason
    assert decide([M(max_ulp=0.5, not_correctly_rounded=0)]) == []
    swiglu = {"budgets": {"swiglu|float32": {"max_ulp": 1.0}}}
    assert decide([M("swiglu", max_ulp=0.5, not_correctly_rounded=3)], swiglu, ops=("swiglu",))
    _undeclared(monkeypatch, "swiglu", float32)
    assert decide([M("swiglu", max_ulp=0.5, not_correctly_rounded=3)], swiglu, ops=("swiglu",)) == []
    assert decide([M("exp", "float64", max_ulp=0.9, not_correctly_rounded=3)],
                  {"budgets": {"exp|float64": {"max_ulp": 1.0}}}, dtypes=("float64",)) == []
    # mul declares float16 too (verify.CR16); lerp, planted without it, does not
    mul16 = {"budgets": {"mul|float16": {"max_ulp": 0.5}, "lerp|float16": {"max_ulp": 1.0}}}
    fails = decide([M("mul", "float16", "pairs", max_ulp=0.5, not_correctly_rounded=1)], mul16, ops=("mul",),
                   dtypes=("float16",), suites=("pairs",))
    assert "the op declares float16 correctly rounded" in fails[0].reason
    _undeclared(monkeypatch, "lerp", float16)
    assert decide([M("lerp", "float16", "pairs", max_ulp=0.5, not_correctly_rounded=1)], mul16, ops=("lerp",),
                  dtypes=("float16",), suites=("pairs",)) == []


def test_left_out_inputs_fail_a_declared_correct_rounding(monkeypatch):
    """A stratified sample's undecided tuples beyond the host's quota are in no figure: where the
    op declares correct rounding, the gate cannot vouch for it."""
    fails = decide([M(max_ulp=0.5, left_out=12)])
    assert "12 undecided inputs left out" in fails[0].reason
    swiglu = {"budgets": {"swiglu|float32": {"max_ulp": 1.0}}}
    _undeclared(monkeypatch, "swiglu", float32)
    assert decide([M("swiglu", max_ulp=0.5, left_out=12)], swiglu, ops=("swiglu",)) == []


@pytest.mark.parametrize("backend", ["cuda-sm90-triton3.6.0", "interpreter-numpy2.4.6"])
def test_float32_budgets_agree_with_the_rounding_declarations(backend):
    # a target declared correctly rounded on float32 promises 0.5 ulp; one declared not correctly
    # rounded misrounds by 0.5 + a hair (NEAR_MIDPOINT: 2^-29 ulp; SUBNORMAL_TIES: the O(x^2) term),
    # so a 0.5 budget would fail the first exhaustive run that finds one: 0.6, the next tenth
    import json

    from nbx.harness.targets.target import targets
    from helpers import REPO
    b = json.loads((REPO / "reports" / "budgets" / f"{backend}.json").read_text())["budgets"]
    for t in targets(dtypes=["float16", "bfloat16"]):       # declared on 16-bit: mul, div, sqrt, ...
        e = b.get(f"{t.label}|{t.dtype.name}", {}).get("max_ulp")
        if t.dtype in t.verify.correctly_rounded and e is not None:
            assert e <= 0.5, (t.label, t.dtype.name, e)
    for t in targets(dtypes=["float32"]):
        e = b.get(f"{t.label}|float32", {}).get("max_ulp")
        if e is None or not t.dtype.is_float:
            continue
        cr = t.verify.correctly_rounded
        declared = "float32" in [x if isinstance(x, str) else x.name for x in cr]
        if declared:
            assert e <= 0.5, (t.label, e)
        else:
            assert e > 0.5, (t.label, e)
