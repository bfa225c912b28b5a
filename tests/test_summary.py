"""summary.md leads with the verdict (gate.evaluate's), the figures closest to their budgets and the
changes since the previous comparable report; worst inputs in decimal and hex with repro commands.
Also: finding the previous report, target labels, and what the diff compares."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from nbx.harness.gate import verdict as gate
from nbx.harness.records.measurement import Measurement, Worst
from nbx.harness.report import (Previous, Report, diff_reports, find_previous, incomparable,
                                render_markdown, write_report)
from nbx.harness.report.json_report import parse_label, parse_param_value, read_header
from nbx.harness.report.markdown import decimal, repro_command
from nbx.harness.targets.target import targets

BACKEND = {"id": "interpreter-numpy2.4.6", "device": "cpu"}
BUDGETS = {"exp|float32": {"max_ulp": 0.5}, "gelu:approximate=tanh|float32": {"max_ulp": 1.0},
           "erf|float32": {"max_ulp": 4.0}, "where|float32": {"max_ulp": 0.0},
           "log|float64": {"max_ulp": 2.0}}


def M(op="exp", dtype="float32", suite="sweep", **kw) -> Measurement:
    kw.setdefault("cases", 1000)
    return Measurement(op, dtype, suite, BACKEND["id"], **kw)


def R(ms, *, run_id="new", created="2026-12-04T10:00:00Z", profile="ci", argv=None, **kw) -> Report:
    return Report(run_id=run_id, created=created, backend=dict(BACKEND), git_commit="abc1234",
                  profile=profile, argv=argv if argv is not None else ["run", "--profile", profile],
                  measurements=list(ms), **kw)


def verdict(fails=(), budgets=None) -> gate.Verdict:
    return gate.Verdict(list(fails), dict(BUDGETS if budgets is None else budgets),
                        Path("reports/budgets/interpreter-numpy2.4.6.json"), BACKEND["id"])


def measured_fails(ms, budgets=BUDGETS) -> list:
    """The gate's failures of these measurements (not the coverage of every op, which a
    hand-made report lacks)."""
    keys = {m.key() for m in ms}
    return [f for f in gate.decide(ms, {"budgets": budgets}) if tuple(f.key) in keys]


def sample() -> Report:
    return R([
        M("exp", max_ulp=1.5, not_correctly_rounded=3,
          worst=[Worst(["0xc1a00000"], "0x34000001", "0x34000000", 1.5)]),
        M("gelu:approximate=tanh", max_ulp=0.9, worst=[Worst(["0x807fffff"], "0x80400000", "0x803fffff", 0.9)]),
        M("erf", max_ulp=1.0),
        M("where", suite="pairs", worst=[Worst(["0x1", "0xc1a00000", "0x3f800000"], "0xc1a00000",
                                               "0xc1a00000", 0.0, "wrong")], wrong=1),
        M("log", "float64", max_ulp=0.5, worst=[Worst(["0xc034000000000000"], "0x7ff8000000000000",
                                                      "0x7ff8000000000000", 0.0)]),
    ])


def test_the_summary_leads_with_the_verdict_then_failures_closest_changes():
    rep = sample()
    fails = measured_fails(rep.measurements)
    assert {f.key for f in fails} == {("exp", "float32", "sweep"), ("where", "float32", "pairs")}
    old = R([M("exp", max_ulp=0.5), M("erf", max_ulp=1.0), M("gone")], run_id="old",
            created="2026-12-03T10:00:00Z")
    md = render_markdown(rep, verdict=verdict(fails), previous=Previous(Path("runs"), old, Path("runs/old")))
    lines = md.splitlines()
    assert lines[0] == "# nbx report: FAIL | interpreter-numpy2.4.6 | profile ci | run new"
    assert lines[2].startswith("**FAIL**: 3 gate failure(s); 5 measurements, 5,000 cases, 0 raised.")
    assert "Since run old: **2 regressions**, 0 improvements, 3 added, 1 removed." in lines[2]
    heads = [x for x in lines if x.startswith("## ")]
    assert heads[:5] == ["## Gate failures (3)", "## Closest to budget", "## Changes since the previous report",
                         "## Worst inputs", "## All changes"]
    assert heads[5] == "## All measurements"
    first = "\n".join(lines[:40])
    # the first screen answers "did anything get worse, and where"
    assert "| exp | float32 | sweep | max ulp 1.5 > budget 0.5 | -20.0 (0xc1a00000) |" in first
    assert "| gelu:approximate=tanh | float32 | sweep | 0.9 | 1 | 90% |" in first
    assert "| erf | float32 | sweep | 1 | 4 | 25% |" in first
    assert "Against run old (`runs/old`" in first
    assert "| exp | float32 | sweep | max_ulp | 0.5 | 1.5 |" in md
    assert "| exp | float32 | sweep | not_correctly_rounded | 0 | 3 |" in md
    # the tables carry the budget
    assert "| status | op | dtype | cases | max ulp | budget |" in md
    assert "| FAIL | exp | float32 | 1000 | 1.5 | 0.5 |" in md
    assert "| ok | erf | float32 | 1000 | 1 | 4 |" in md


def test_worst_inputs_in_decimal_and_hex_with_repro_commands():
    rep = sample()
    fails = measured_fails(rep.measurements)
    md = render_markdown(rep, verdict=verdict(fails))
    assert "| -20.0 (0xc1a00000) | 1.192093e-07 (0x34000001) | 1.1920929e-07 (0x34000000) | 1.5 |" in md
    assert "`nbx repro exp float32 0xc1a00000`" in md
    assert "`nbx repro gelu:approximate=tanh float32 0x807fffff`" in md
    # a ternary op: a bool condition and two float32 operands
    assert "| True (0x1), -20.0 (0xc1a00000), 1.0 (0x3f800000) |" in md
    assert "`nbx repro where float32 0x1 0xc1a00000 0x3f800000`" in md
    assert decimal("0xc034000000000000", "float64") == "-20.0"
    assert decimal("0xc500", "float16") == "-5.0" and decimal("0xc1a0", "bfloat16") == "-20.0"
    assert decimal("0xff", "int8") == "-1" and decimal("0x1", "bool") == "True"
    assert decimal("zz", "float32") is None and decimal("0x1", "no_such_dtype") is None
    # structural suites describe cases that repro cannot replay
    assert repro_command(M("exp", suite="layout"), ["0x1"]) is None
    assert repro_command(M("exp"), ["0x1", "0x2"]) is None                  # exp takes one operand
    assert repro_command(M("no_such_op"), ["0x1"]) == "nbx repro no_such_op float32 0x1"


def test_a_passing_summary_without_history():
    rep = R([M("exp", max_ulp=0.5), M("erf", max_ulp=3.5)])
    md = render_markdown(rep, verdict=verdict())
    assert md.startswith("# nbx report: PASS |")
    assert "**PASS**: every figure within budget" in md and "## Gate failures: none" in md
    assert "Not compared: no directory of earlier reports was given." in md
    md = render_markdown(rep, verdict=verdict(), previous=Previous(Path("/x/runs")))
    assert "No earlier report to compare with." in md.splitlines()[2]
    assert "None found: no report under `/x/runs` created before this one has profile ci, " \
           "backend interpreter-numpy2.4.6, seed 0" in md
    assert "| erf | float32 | sweep | 3.5 | 4 | 88% |" in md
    shard = R([M()], argv=["run", "--shard", "1/4"])
    md = render_markdown(shard)
    assert md.startswith("# nbx report: NOT GATED |") and "a lone shard (1/4), not gated" in md


def test_the_summary_says_where_nbx_stands_against_each_peer():
    """Under the verdict, one line per peer over the measurements both made (a peer's raised one
    left out): in how many it misrounds, gets wrong or mismatches specials, how many results, nbx's
    same figures, and where its max ulp is above nbx's."""
    rep = R([M("exp", max_ulp=0.5), M("exp", target="torch", max_ulp=1.5, not_correctly_rounded=40),
             M("log", max_ulp=0.7, not_correctly_rounded=2), M("log", target="torch", max_ulp=0.5),
             M("erf", max_ulp=0.5), M("erf", target="torch", cases=0, error="RuntimeError: no erf")])
    for m in rep.measurements:
        if not m.is_nbx:
            m.target_info = "torch 2.11 on cpu"
    lines = render_markdown(rep, verdict=verdict()).splitlines()
    standing = [ln for ln in lines if ln.startswith("Against its peers")]
    assert standing == ["Against its peers, on the same inputs: torch 2.11 on cpu: misrounded, wrong or special "
                        "results in 1 of 2 shared measurements (40 results), nbx in 1 (2); max ulp above nbx's "
                        "in 1."]
    assert lines.index(standing[0]) < lines.index("## Gate failures: none")     # on the first screen
    assert not [ln for ln in render_markdown(R([M()]), verdict=verdict()).splitlines()
                if ln.startswith("Against its peers")]


def test_many_failures_keep_the_first_screen_short():
    ms = [M(f"op{i}", max_ulp=9.0, worst=[Worst(["0x1"], "0x2", "0x3", 9.0)]) for i in range(60)]
    fails = measured_fails(ms, {f"op{i}|float32": {"max_ulp": 1.0} for i in range(60)})
    md = render_markdown(R(ms), verdict=verdict(fails, {}))
    lines = md.splitlines()
    head = lines[:40]
    assert any("... and 50 more" in x for x in head)
    assert any(x.startswith("## Changes since") for x in head)
    assert "## All gate failures (60)" in md


def _write(dir: Path, rep: Report) -> Path:
    dir.mkdir(parents=True)
    (dir / "report.json").write_text(rep.to_json())
    return dir


def test_find_previous_takes_the_latest_earlier_comparable_report(tmp_path):
    new = R([M()], run_id="new", created="2026-12-05T00:00:00Z")
    assert find_previous(new, None) == Previous(None)
    assert find_previous(new, tmp_path / "none") == Previous(tmp_path / "none")
    _write(tmp_path / "a", R([M()], run_id="a", created="2026-12-01T00:00:00Z"))
    _write(tmp_path / "b", R([M()], run_id="b", created="2026-12-02T00:00:00Z"))
    _write(tmp_path / "gpu" / "c", R([M()], run_id="c", created="2026-12-03T00:00:00Z"))
    _write(tmp_path / "later", R([M()], run_id="later", created="2026-12-06T00:00:00Z"))
    _write(tmp_path / "nightly", R([M()], run_id="nightly", created="2026-12-04T00:00:00Z", profile="nightly"))
    _write(tmp_path / "seed1", R([M()], run_id="seed1", created="2026-12-04T00:00:00Z",
                                 argv=["run", "--seed", "1"]))
    _write(tmp_path / "shard", R([M()], run_id="shard", created="2026-12-04T00:00:00Z",
                                 argv=["run", "--shard", "0/2"]))
    other = R([M()], run_id="cuda", created="2026-12-04T00:00:00Z")
    other.backend = {"id": "cuda-sm90-triton3.6.0"}
    _write(tmp_path / "cuda", other)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "report.json").write_text("{not json")
    p = find_previous(new, tmp_path)
    assert p.report.run_id == "c" and p.path == tmp_path / "gpu" / "c" and p.searched == tmp_path
    # the report itself and its own shards are never its previous
    merged = R([M()], run_id="m", created="2026-12-05T00:00:00Z", shards=["c", "b"],
               argv=["run", "--shard", "0/2"])
    assert find_previous(merged, tmp_path).report.run_id == "a"
    assert find_previous(R([M()], run_id="c", created="2026-12-05T00:00:00Z"), tmp_path).report.run_id == "b"


def test_read_header_reads_the_top_fields_only(tmp_path):
    rep = R([M(worst=[Worst(["0x1"], "0x2", "0x3", 1.0)])] * 3, argv=["run", "--seed=7"])
    path = _write(tmp_path / "r", rep) / "report.json"
    h = read_header(path)
    full = json.loads(path.read_text())
    full.pop("measurements")
    assert h == full and Report(argv=h["argv"]).seed == 7
    path.write_text(json.dumps({"measurements": [], **full}))      # another layout: parsed whole
    assert read_header(path) == full
    path.write_text("[]")
    assert read_header(path) is None


def test_write_report_renders_the_verdict_in_every_file(tmp_path):
    rep = sample()
    fails = measured_fails(rep.measurements)
    write_report(rep, tmp_path, verdict=verdict(fails))
    assert (tmp_path / "summary.md").read_text().startswith("# nbx report: FAIL")
    assert (tmp_path / "junit.xml").read_text().count("<failure ") == 2


def test_parse_label_round_trips_every_target():
    for t in targets():
        assert parse_label(t.label) == (t.op, t.params), t.label
        for v in t.params.values():
            assert type(parse_param_value(str(v))) is type(v), (t.label, v)
    assert parse_label("clamp:max=2.5,min=-1.5") == ("clamp", {"max": 2.5, "min": -1.5})
    assert parse_label("div:rounding_mode=None") == ("div", {"rounding_mode": None})
    for bad in ("", ":a=1", "gelu:approximate", "gelu:=tanh"):
        with pytest.raises(ValueError):
            parse_label(bad)


def test_diff_compares_correctly_rounded_ops_by_their_misrounded_count():
    old = R([M("exp", max_ulp=0.49, not_correctly_rounded=0), M("sin", max_ulp=0.5, not_correctly_rounded=2),
             M("cos", max_ulp=0.5), M("tan", max_ulp=0.7)], run_id="old")
    new = R([M("exp", max_ulp=0.5, not_correctly_rounded=0), M("sin", max_ulp=0.42, not_correctly_rounded=3),
             M("cos", max_ulp=0.5 + 1e-12), M("tan", max_ulp=0.5)], run_id="new")
    d = diff_reports(old, new)
    # exp: max ulp noise within [0, 0.5] is no change; sin: one more case misrounded is a regression
    assert [(c.key[0], c.field) for c in d.regressions] == [("sin", "not_correctly_rounded")]
    # tan: from above 0.5 to correctly rounded is an improvement of max ulp
    assert [(c.key[0], c.field) for c in d.improvements] == [("tan", "max_ulp")]


def test_incomparable_reports():
    a = R([M()], argv=["run", "--profile", "ci"])
    assert incomparable(a, R([M()], argv=["run", "--seed", "0"])) == []
    b = R([M()], profile="nightly", argv=["run", "--profile", "nightly", "--seed=3"])
    b.backend = {"id": "cuda-sm90-triton3.6.0"}
    why = incomparable(a, b)
    assert [w.split(" (")[0] for w in why] == ["profiles differ", "seeds differ", "backends differ"]
    assert "(0 vs 3)" in why[1]


def test_a_change_shows_the_digits_that_differ():
    old = R([M("addcmul", "bfloat16", "pairs", max_ulp=0.5000000000008527), M("exp", max_ulp=1.0)], run_id="old")
    new = R([M("addcmul", "bfloat16", "pairs", max_ulp=0.5000000020954758), M("exp", max_ulp=2.5)])
    d = diff_reports(old, new)
    assert [c.describe() for c in d.regressions] == [("max_ulp", "0.5", "0.5000000021"),
                                                     ("max_ulp", "1", "2.5")]


# -- trends across runs ---------------------------------------------------------------------

def _nights(tmp_path: Path) -> Report:
    """Three runs of one profile, backend and seed: exp misrounds from run 2, log raises in run 3;
    beside them a run of another profile and a lone shard, which are no part of the history."""
    figures = [dict(exp=0, log=0.5), dict(exp=3, log=0.5), dict(exp=3, log=None)]
    runs = []
    for k, f in enumerate(figures):
        log = M("log", "float64", max_ulp=f["log"]) if f["log"] is not None else M("log", "float64", error="boom")
        runs.append(R([M("exp", max_ulp=0.5, not_correctly_rounded=f["exp"], wall_s=1.0 + k), log,
                       M("exp", target="torch", max_ulp=9.0)],
                      run_id=f"night{k + 1}", created=f"2026-12-0{k + 1}T03:00:00Z"))
        runs[-1].git_commit = f"{k + 1}" * 12
    for r in runs[:2]:
        _write(tmp_path / r.run_id, r)
    _write(tmp_path / "other", R([M("exp", not_correctly_rounded=99)], run_id="other", profile="nightly",
                                 created="2026-12-02T04:00:00Z"))
    _write(tmp_path / "gpu" / "shard", R([M("exp", not_correctly_rounded=99)], run_id="shard",
                                         created="2026-12-02T05:00:00Z", argv=["run", "--shard", "0/2"]))
    _write(tmp_path / "killed", R([M("exp", not_correctly_rounded=99)], run_id="killed",
                                  created="2026-12-02T06:00:00Z"))
    (tmp_path / "killed" / "INCOMPLETE").write_text("{}")
    return runs[2]


def test_history_finds_the_earlier_runs_and_where_each_regression_started(tmp_path):
    from nbx.harness.report import load_history
    from nbx.harness.report.trends import started
    now = _nights(tmp_path)
    h = load_history(now, tmp_path)
    assert [r.run_id for r in h.runs] == ["night1", "night2", "night3"] and h.runs[-1].path is None
    assert len(h.unreadable) == 1 and "killed is incomplete" in h.unreadable[0]
    exp = h.series[("exp", "float32", "sweep")]
    assert exp["not_correctly_rounded"] == [0, 3, 3] and exp["wall_s"] == [1.0, 2.0, 3.0]
    assert ("exp", "float32", "sweep", "torch") not in h.series            # a peer's is not nbx's history
    got = [(g.key[0], g.figure, g.old, g.since) for g in h.regressions]
    assert got[0] == ("exp", "not_correctly_rounded", 0, 1)                 # since night2
    assert got[1] == ("log", "raised", 0.5, 2) and len(got) == 2           # one regression, not two
    assert load_history(now, tmp_path, runs=3).runs[0].run_id == "night2"
    assert load_history(now, None).runs == h.runs[-1:]
    # a figure that got worse, better, then worse again: since the last time it was better
    assert started([1.0, 2.0, 1.0, 2.0, 2.0], "max_ulp") == 3
    assert started([0.3, 0.5, 0.49], "max_ulp") is None                    # within correct rounding
    assert started([None, 0.0, None, 4.0], "not_correctly_rounded") == 3
    assert started([5.0, 4.0], "not_correctly_rounded") is None
    # a measurement of zero cases has no figure (a gap), not a perfect one
    empty = R([M("exp", cases=0), M("log", "float64", max_ulp=0.5)], run_id="night4",
              created="2026-12-04T03:00:00Z")
    h = load_history(empty, tmp_path)
    assert h.series[("exp", "float32", "sweep")]["not_correctly_rounded"] == [0, 3, None]
    assert [g.key[0] for g in h.regressions] == []


def test_the_summary_shows_the_overview_and_the_trends(tmp_path):
    now = _nights(tmp_path)
    md = render_markdown(now, verdict=verdict(), previous=find_previous(now, tmp_path),
                         overview_image="overview.png")
    lines = md.splitlines()
    assert lines[6] == "![Overview: ops (rows) by dtype and suite (columns), colored by status](overview.png)"
    assert lines[8].startswith("Overview (op x dtype x suite): 0 correctly rounded (exact) on every case "
                               "measured, 1 within budget, 0 near its budget, 1 failing")
    trends = md.split("## Trends over the last 3 runs")[1].split("\n## ")[0]
    assert "**2 regression(s)**" in trends
    assert "| exp | float32 | sweep | not_correctly_rounded | 0 | 3 | 2: night2 | 222222222 |" in trends
    md = render_markdown(now, verdict=verdict(), overview_note="overview.png not drawn: matplotlib is "
                         "not installed (pip install matplotlib).")
    assert "overview.png not drawn: matplotlib" in md and "![" not in md and "## Trends" not in md


def test_report_history_command(tmp_path, capsys):
    from nbx.cli import main
    now = _nights(tmp_path)
    _write(tmp_path / "night3", now)
    assert main(["report", "history", str(tmp_path / "night3"), "--history", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "3 run(s) of one profile, backend and seed" in out
    assert "(this report)" in out and "night1" in out and "other" not in out
    assert "since run 2 (night2, commit 222222222)" in out
    with pytest.raises(SystemExit) as e:
        main(["report", "history", str(tmp_path / "night3"), "--runs", "1"])
    assert e.value.code == 2
