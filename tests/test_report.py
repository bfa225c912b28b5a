"""The report layer on hand-made reports: JSON round trip, atomic writes, merge, renderers, diff."""

from __future__ import annotations

import json
import math
import os
import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from nbx.harness.records.measurement import SCHEMA_VERSION, Measurement, Worst
from nbx.harness.report import (Previous, Report, atomic_write_text, diff_reports, format_diff,
                                load_report, merge_reports, render_html, render_junit,
                                render_markdown, write_report)

BACKEND = {"id": "interpreter-numpy2.4.6", "name": "interpreter", "device": "cpu",
           "triton": "3.6.0", "numpy": "2.4.6", "python": "3.11.7"}


def meas(op="exp", dtype="float32", suite="sweep", *, plot=False, **kw) -> Measurement:
    kw.setdefault("cases", 1000)
    m = Measurement(op=op, dtype=dtype, suite=suite, backend=BACKEND["id"], **kw)
    if plot:
        rng = random.Random(hash((op, dtype, suite)) & 0xFFFF)
        xs = [rng.uniform(-1, 1) * 10 ** rng.uniform(-5, 38) for _ in range(400)]
        m.plot = {"x": [float(f"{x:.4g}") for x in xs],
                  "ulp": [float(f"{rng.expovariate(3):.4g}") for _ in xs]}
        m.hist = {"edges": [0.0, 0.25, 0.5, 1.0, 2.0, 4.0, math.inf], "counts": [700, 200, 60, 30, 9, 1]}
    return m


def report(ms, **kw) -> Report:
    return Report(backend=dict(BACKEND), git_commit="abc1234", profile="ci", argv=["nbx", "run"],
                  measurements=list(ms), **kw)


def sample_report() -> Report:
    return report([
        meas("exp", "float32", "sweep", plot=True, max_ulp=1.84, mean_ulp=0.2, p999_ulp=1.1,
             not_correctly_rounded=120, close_calls=3, wall_s=1.25,
             worst=[Worst(["0x42b00000"], "0x7f800000", "0x7f7fffff", math.inf, "overflow"),
                    Worst(["0x3f800000"], "0x402df855", "0x402df854", 1.84)]),
        meas("sin", "float16", "exhaustive16", plot=True, cases=65536, max_ulp=math.nan,
             mean_ulp=0.1, p999_ulp=0.5),
        meas("log", "float32", "sweep", max_ulp=0.83, mean_ulp=0.1, special_mismatches=2),
        meas("add", "float32", "layout", cases=500, layouts=40, wrong=3),
        meas("floor_divide", "int32", "intdiv", cases=9000, wrong=0),
        meas("tanh", "bfloat16", "bank", error="RuntimeError: kernel failed | with <b>markup</b>\n"
                                                "\x00\x1b second line"),
    ])


# -- measurement and JSON ---------------------------------------------------------------------

def test_measurement_basics():
    m = meas(cases=200, not_correctly_rounded=50)
    assert m.frac_not_correctly_rounded == 0.25
    assert meas(cases=0).frac_not_correctly_rounded == 0.0
    assert m.key() == ("exp", "float32", "sweep")
    with pytest.raises(ValueError, match="unknown fields"):
        Measurement.from_dict({**m.to_dict(), "bogus": 1})


def test_json_round_trip_with_inf_and_nan():
    r = sample_report()
    r.measurements[0].plot["ulp"][:3] = [math.inf, math.nan, -math.inf]
    text = r.to_json()
    # Strict JSON: no NaN/Infinity tokens anywhere.
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON token {c}"))
    back = Report.from_json(text)
    assert back.to_dict() == r.to_dict()
    assert back.to_json() == text
    m0, m1 = back.measurements[0], back.measurements[1]
    assert m0.worst[0].ulp == math.inf and m0.worst[0].note == "overflow"
    assert m0.plot["ulp"][0] == math.inf and math.isnan(m0.plot["ulp"][1])
    assert m0.plot["ulp"][2] == -math.inf
    assert m0.hist["edges"][-1] == math.inf and m0.hist["counts"] == [700, 200, 60, 30, 9, 1]
    assert all(isinstance(c, int) for c in m0.hist["counts"])
    assert math.isnan(m1.max_ulp)
    assert back.backend == BACKEND and back.argv == ["nbx", "run"]


def test_schema_version_and_not_a_report():
    d = json.loads(sample_report().to_json())
    d["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ValueError, match="unknown nbx report schema_version"):
        Report.from_json(json.dumps(d))
    for text in ("not json", "[]", '{"measurements": []}', '{"schema_version": 1}'):
        with pytest.raises(ValueError, match="not an nbx report"):
            Report.from_json(text)


def test_load_report(tmp_path):
    (tmp_path / "report.json").write_text(sample_report().to_json())
    assert len(load_report(tmp_path).measurements) == 6
    assert len(load_report(tmp_path / "report.json").measurements) == 6
    with pytest.raises(FileNotFoundError):
        load_report(tmp_path / "nothing")
    (tmp_path / "bad.json").write_text('{"x": 1}')
    with pytest.raises(ValueError, match="bad.json"):
        load_report(tmp_path / "bad.json")


# -- writing ----------------------------------------------------------------------------------

def test_write_report_atomic_and_latest(tmp_path):
    reports = tmp_path / "reports"
    latest = reports / "latest"
    first = sample_report()
    run1 = reports / first.run_id
    paths = write_report(first, run1, latest, failures={("exp", "float32", "sweep"): ["max"]})
    assert sorted(p.name for p in run1.iterdir()) == ["junit.xml", "overview.png", "report.html",
                                                       "report.json", "summary.md"]
    assert set(paths) == {"json", "markdown", "junit", "html", "png"}
    assert paths["png"].read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "![Overview: ops (rows) by dtype and suite (columns), colored by status](overview.png)" \
        in paths["markdown"].read_text()
    assert latest.is_symlink() and not os.path.isabs(os.readlink(latest))
    assert latest.resolve() == run1.resolve()
    assert load_report(latest).run_id == first.run_id

    second = report([meas()], run_id="second")
    run2 = reports / "second"
    write_report(second, run2, latest)
    assert latest.resolve() == run2.resolve()
    assert load_report(latest).run_id == "second"
    assert sorted(p.name for p in reports.iterdir()) == sorted(["latest", first.run_id, "second"])


def test_atomic_write_keeps_old_file_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    atomic_write_text(target, "old")

    def fail(*args):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_renderer_that_raises_loses_no_measurements(tmp_path, monkeypatch):
    import nbx.harness.report as R

    def broken(*a, **k):
        raise KeyError("he")
    monkeypatch.setattr(R, "render_html", broken)
    with pytest.raises(RuntimeError, match="report.html could not be rendered"):
        write_report(sample_report(), tmp_path / "run", tmp_path / "latest")
    assert len(load_report(tmp_path / "run").measurements) == 6
    assert "could not be rendered: KeyError" in (tmp_path / "run" / "report.html").read_text()
    assert (tmp_path / "run" / "summary.md").read_text().startswith("# nbx report:")
    assert not (tmp_path / "latest").exists()


def test_latest_refuses_to_replace_a_real_directory(tmp_path):
    (tmp_path / "latest").mkdir()
    with pytest.raises(ValueError, match="not a symlink"):
        write_report(report([meas()]), tmp_path / "run", tmp_path / "latest")


# -- merge ------------------------------------------------------------------------------------

def test_merge_shards():
    a = report([meas("sin"), meas("exp")], run_id="shard-a")
    b = report([meas("cos"), meas("exp", suite="bank")], run_id="shard-b")
    merged = merge_reports([a, b])
    assert [m.key() for m in merged.measurements] == sorted(m.key() for m in a.measurements
                                                            + b.measurements)
    assert merged.run_id not in ("shard-a", "shard-b") and merged.shards == ["shard-a", "shard-b"]
    assert merged.backend == BACKEND and merged.git_commit == "abc1234"
    assert Report.from_json(merged.to_json()).shards == ["shard-a", "shard-b"]


def test_merge_errors():
    a = report([meas("exp")], run_id="a")
    with pytest.raises(ValueError, match="exp-float32-sweep appears in run a and in run b"):
        merge_reports([a, report([meas("exp")], run_id="b")])
    other = report([meas("sin")])
    other.backend = {**BACKEND, "id": "cuda-sm90-triton3.6.0"}
    with pytest.raises(ValueError, match="different backends"):
        merge_reports([a, other])
    with pytest.raises(ValueError, match="empty"):
        merge_reports([])


# -- renderers --------------------------------------------------------------------------------

def test_junit():
    r = sample_report()
    root = ET.fromstring(render_junit(r))
    cases = root.findall(".//testcase")
    assert len(cases) == len(r.measurements)
    names = {c.get("name") for c in cases}
    assert "exp-float32-sweep" in names and "floor_divide-int32-intdiv" in names
    exp = next(c for c in cases if c.get("name") == "exp-float32-sweep")
    assert exp.get("classname") == "nbx.sweep" and exp.get("time") == "1.250"
    props = {p.get("name"): p.get("value") for p in exp.find("properties")}
    assert props["max_ulp"] == "1.84" and props["cases"] == "1000"
    # Without failures only the crashed measurement fails, as an error.
    assert root.findall(".//failure") == [] and len(root.findall(".//error")) == 1
    assert root.get("errors") == "1"

    failures = {("exp", "float32", "sweep"): ["max_ulp 1.84 > budget 1.0"],
                ("add", "float32", "layout"): ["wrong 3 > budget 0"]}
    root = ET.fromstring(render_junit(r, failures=failures))
    failed = {c.get("name") for c in root.findall(".//testcase") if c.find("failure") is not None}
    assert failed == {"exp-float32-sweep", "add-float32-layout"}
    assert "0x42b00000" in root.find(".//testcase[@name='exp-float32-sweep']/failure").text
    assert root.get("failures") == "2"


def test_markdown():
    r = sample_report()
    md = render_markdown(r, failures={("log", "float32", "sweep"): ["specials 2 > 0"]})
    lines = md.splitlines()
    assert lines[0].startswith("# nbx report: FAIL | interpreter-numpy2.4.6 | profile ci | run ")
    assert r.run_id in lines[0] and "abc1234" in md
    assert "1 measurement(s) failing their budgets" in md and "1 raised" in md
    sweep = md.split("<summary>sweep")[1].split("</details>")[0]
    rows = [line for line in sweep.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [row.split(" | ")[1] for row in rows] == ["exp", "log"]   # by op in the tables
    assert "| FAIL | log |" in md
    assert "0x402df855" in md                                        # worst inputs listed
    assert "kernel failed \\| with &lt;b>markup&lt;/b>" in md               # pipes and markup escaped
    for line in md.splitlines():
        if line.startswith("| "):
            assert line.endswith(" |")


def test_html():
    # The page in detail, and in a browser: tests/test_report_html.py.
    r = sample_report()
    failures = {("exp", "float32", "sweep"): ["max_ulp 1.84 > budget 1.0"]}
    page = render_html(r, failures=failures)
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"""(src|href)\s*=""", page)                # loads nothing
    assert page.count('<tr class="fail">') == 1 and page.count('<tr class="error">') == 1
    assert "<b>markup</b>" not in page and "&lt;b&gt;markup" in page
    assert 'id="p-exp-float32-sweep"' in page                        # failing: drawn up front
    assert "sign(x)\\u00b7log2(1+|x|)" in page


def test_html_size_for_a_large_run():
    ms = [meas(f"op{i}", dtype, "sweep", plot=True, max_ulp=i / 7)
          for i in range(250) for dtype in ("float16", "float32")]
    page = render_html(report(ms))
    assert page.split('id="measurements"')[1].split("<tbody>")[1].split("</tbody>")[0].count("<tr") == 500
    assert page.split('id="grid"')[1].split("<tbody>")[1].split("</tbody>")[0].count("<tr") == 250
    assert len(page.encode()) < 500_000


# -- diff -------------------------------------------------------------------------------------

def test_diff():
    old = report([meas("exp", max_ulp=1.0), meas("log", max_ulp=0.8, wrong=2),
                  meas("sin", max_ulp=2.0), meas("cos", max_ulp=math.inf),
                  meas("gone")], run_id="old")
    new = report([meas("exp", max_ulp=1.5, special_mismatches=1), meas("log", max_ulp=0.5),
                  meas("sin", max_ulp=2.01), meas("cos", max_ulp=math.inf),
                  meas("fresh")], run_id="new")
    d = diff_reports(old, new)
    assert {(c.key[0], c.field) for c in d.regressions} == {
        ("exp", "max_ulp"), ("exp", "special_mismatches"), ("sin", "max_ulp")}
    assert {(c.key[0], c.field) for c in d.improvements} == {("log", "max_ulp"), ("log", "wrong")}
    assert d.added == [("fresh", "float32", "sweep")] and d.removed == [("gone", "float32", "sweep")]
    assert d.same_backend and d.has_regressions

    d = diff_reports(old, new, tolerance=0.05)
    assert {(c.key[0], c.field) for c in d.regressions} == {("exp", "max_ulp"),
                                                           ("exp", "special_mismatches")}
    text = format_diff(d)
    assert "old" in text and "2 regressions" in text and "NOTE" not in text
    assert re.search(r"exp\s+float32\s+sweep\s+max_ulp\s+1\s+1.5", text)
    assert "Added (1)" in text and "fresh" in text and "Removed (1)" in text

    with pytest.raises(ValueError, match="tolerance"):
        diff_reports(old, new, tolerance=-1)


def test_diff_across_backends_nan_and_errors():
    old = report([meas("exp", max_ulp=1.0), meas("sin", cases=100, not_correctly_rounded=10)])
    new = report([meas("exp", max_ulp=math.nan, error="boom"),
                  meas("sin", cases=1000, not_correctly_rounded=50)])
    new.backend = {**BACKEND, "id": "cuda-sm90-triton3.6.0"}
    d = diff_reports(old, new)
    assert not d.same_backend
    assert {c.field for c in d.regressions} == {"error"}           # raised: no figure to compare
    # Case counts differ, so the fraction is compared: 10% -> 5% is an improvement.
    assert [c.field for c in d.improvements] == ["frac_not_correctly_rounded"]
    text = format_diff(d)
    assert "NOTE: backends differ" in text and "cuda-sm90-triton3.6.0" in text
    assert d.incomparable == ["backends differ (interpreter-numpy2.4.6 vs cuda-sm90-triton3.6.0): "
                              "other code and libm"]
    assert "boom" in text


def test_diff_of_measurements_without_figures(tmp_path):
    """A measurement that raised or counted zero cases has no figures: gaining them is newly
    measured, never a regression of the figures it lacked; losing them is one regression, never an
    improvement of figures that read 0. Both reports written by write_report and read back."""
    sweep = dict(cases=8192, max_ulp=1.75, mean_ulp=0.3, not_correctly_rounded=389, special_mismatches=1)
    old = report([meas("exp", cases=0),                                   # zero cases, then figures
                  meas("log", cases=0, error="TimeoutError: job over 600 s"),   # raised, then figures
                  meas("sin", **sweep), meas("cos", **sweep),            # figures, then zero / raised
                  meas("tan", cases=0), meas("erf", cases=0, error="boom"),    # none, none
                  meas("atan", cases=0)],                                 # none, then raised
                 run_id="old", created="2026-12-01T03:00:00Z")
    new = report([meas("exp", **sweep), meas("log", **sweep),
                  meas("sin", cases=0), meas("cos", cases=0, error="RuntimeError: lost the worker"),
                  meas("tan", cases=0), meas("erf", cases=0, error="boom again"),
                  meas("atan", cases=0, error="boom"),
                  meas("tanh", **sweep)],                                 # absent before
                 run_id="new", created="2026-12-02T03:00:00Z")
    write_report(old, tmp_path / "old")
    write_report(new, tmp_path / "new")
    old, new = load_report(tmp_path / "old"), load_report(tmp_path / "new")
    d = diff_reports(old, new)
    assert [(c.key[0], c.describe()) for c in d.measured] == [
        ("exp", ("cases", "0", "8,192")), ("log", ("error", "TimeoutError: job over 600 s", "-"))]
    assert [(c.key[0], c.describe()) for c in d.regressions] == [
        ("atan", ("error", "-", "boom")),
        ("cos", ("error", "-", "RuntimeError: lost the worker")), ("sin", ("cases", "8,192", "0"))]
    assert d.improvements == []
    assert d.added == [("tanh", "float32", "sweep")] and d.removed == []
    text = format_diff(d)
    assert "3 regressions, 0 improvements, 2 newly measured, 1 added, 0 removed" in text
    assert re.search(r"Newly measured \(zero cases or raised before\) \(2\):\n.*\n.*\n\s+exp\s+float32\s+sweep"
                     r"\s+cases\s+0\s+8,192", text)
    # the summary counts them apart, and lists them among all changes
    md = render_markdown(new, previous=Previous(tmp_path, old, tmp_path / "old"))
    assert "**3 regressions**, 0 improvements, 2 newly measured, 1 added, 0 removed" in md
    assert "| exp | float32 | sweep | cases | 0 | 8,192 |" in md.split("Newly measured")[-1]
    # nbx report diff: exit 1 on the three regressions only; without them, 0
    p = subprocess.run([sys.executable, "-m", "nbx", "report", "diff", str(tmp_path / "old"), str(tmp_path / "new")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "2 newly measured" in p.stdout, p.stdout + p.stderr
    fixed = report([m for m in new.measurements if m.op in ("exp", "log", "tan", "tanh")], run_id="fixed",
                   created="2026-12-03T03:00:00Z")
    write_report(fixed, tmp_path / "fixed")
    p = subprocess.run([sys.executable, "-m", "nbx", "report", "diff", str(tmp_path / "old"), str(tmp_path / "fixed")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "0 regressions, 0 improvements, 2 newly measured, 1 added, 4 removed" in p.stdout, \
        p.stdout + p.stderr
