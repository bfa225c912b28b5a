"""report.html: the overview grid's statuses, the plot data (worst inputs and budget inside every
plot, the compact encoding, a one-bin histogram split from its sample), the peers' charts, the page
size of a nightly-sized report, and the page itself in a headless chromium: the grid, hovering and
clicking a cell, the trends of two earlier reports, its table, sorting, the word filter, a plot
opened on demand, and no network request."""

from __future__ import annotations

import copy
import html
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

import nbx.harness.report.html as H
from nbx.harness.gate import verdict as gate
from nbx.harness.records.measurement import Measurement, Worst
from nbx.harness.report import (Previous, Report, find_previous, load_report, render_html,
                                write_report)
from nbx.harness.report.json_report import fmt_ulp
from nbx.harness.report import overview as O
from nbx.harness.report import trends as T

ROOT = Path(__file__).resolve().parents[1]
BACKEND = {"id": "interpreter-numpy2.4.6", "name": "interpreter", "device": "cpu"}
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def meas(op="exp", dtype="float32", suite="sweep", *, points=0, seed=0, **kw) -> Measurement:
    kw.setdefault("cases", 1000)
    m = Measurement(op=op, dtype=dtype, suite=suite, backend=BACKEND["id"], **kw)
    if points:
        rng = random.Random(seed)
        xs = [rng.uniform(-1, 1) * 10 ** rng.uniform(-5, 38) for _ in range(points)]
        m.plot = {"x": xs, "ulp": [rng.expovariate(3) for _ in xs]}
        m.hist = {"edges": [0.0, 0.5, 1.0, 2.0, math.inf], "counts": [700, 200, 99, 1]}
    return m


def report(ms, **kw) -> Report:
    return Report(backend=dict(BACKEND), git_commit="abc1234", profile="ci", argv=["nbx", "run"],
                  measurements=list(ms), **kw)


def page_data(page: str) -> dict:
    blob = re.search(r'<script type="application/json" id="nbx-data">(.*?)</script>', page, re.S)
    return json.loads(blob.group(1))


def body_rows(page: str) -> list[list[str]]:
    """The table's rows as cell texts (the template leaves out the optional </td>)."""
    tbody = page.split('<table class="m" id="measurements">')[1].split("<tbody>")[1].split("</tbody>")[0]
    rows = []
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", tbody, re.S):
        rows.append([html.unescape(re.sub(r"<[^>]+>", "", c)) for c in tr.split("<td>")[1:]])
    return rows


def grid_cells(page: str) -> dict[int, tuple[str, str]]:
    """The overview grid's measured cells: measurement index -> (status class, label text)."""
    grid = page.split('<table class="g" id="grid">')[1].split("</tbody>")[0]
    return {int(i): (cls.split()[0], html.unescape(re.sub(r"<br>", " ", label)))
            for cls, i, label in re.findall(r'<td class="([^"]+)" data-i="(\d+)">([^<]*(?:<br>[^<]*)?)', grid)}


# -- the overview -----------------------------------------------------------------------------

def test_overview_statuses_from_measurements_and_the_verdict():
    budgets = {"exp|float32": {"max_ulp": 0.5}, "erf|float32": {"max_ulp": 4.0},
               "log|float32": {"max_ulp": 2.0}, "sin|float32": {"max_ulp": 1.0},
               "lerp|float64": {"order_max_ulp": 0.0, "max_ulp": 9.0}}
    ms = [meas("exp", max_ulp=0.5), meas("exp", suite="bank", max_ulp=0.5, left_out=3),
          meas("erf", max_ulp=1.0), meas("log", max_ulp=1.9, not_correctly_rounded=4000, cases=9000),
          meas("sin", max_ulp=3.0), meas("lerp", "float64", "pairs", max_ulp=7.5, order_cases=10),
          meas("add", "int32", "layout", wrong=2, max_ulp=0.0), meas("tanh", error="boom")]
    fails = [gate.Failure(("sin", "float32", "sweep"), "max ulp 3 > budget 1", []),
             gate.Failure(("add", "int32", "layout"), "2 wrong results (budget 0)", []),
             gate.Failure(("exp", "float16", ""), "no measurement (or zero cases) for this op and dtype", []),
             gate.Failure(("budgets", "x|float32", ""), "needs a reason", [])]
    verdict = gate.Verdict(fails, budgets, Path("budgets.json"), BACKEND["id"])
    ov = O.build(report(ms), budgets=budgets, verdict=verdict)
    status = {k: c.status for k, c in ov.cells.items()}
    assert status == {("exp", "float32", "sweep"): "correct",
                      ("exp", "float32", "bank"): "within",         # 3 undecided inputs left out
                      ("erf", "float32", "sweep"): "within",        # 1 of 4 ulp
                      ("log", "float32", "sweep"): "near",          # 1.9 of 2
                      ("sin", "float32", "sweep"): "failing",       # the gate's verdict
                      ("lerp", "float64", "pairs"): "within",       # its order's 0 of 0; 7.5 ulp is not CR
                      ("add", "int32", "layout"): "failing",
                      ("tanh", "float32", "sweep"): "failing"}      # raised
    # no float16 column: the coverage failure is listed beside the grid, as the budget's is
    assert ov.other_failures == ["exp float16: no measurement (or zero cases) for this op and dtype",
                                 "budgets x|float32: needs a reason"]
    assert ov.counts() == {"correct": 1, "within": 3, "near": 1, "failing": 3, "missing": 0}
    assert ov.columns[:2] == [("float32", "bank"), ("float32", "sweep")]
    assert ov.cell("log", "float32", "sweep").label == ("1.9", "4.0k")
    assert "4,000 of 9,000 misrounded" in ov.cell("log", "float32", "sweep").describe()
    # Without a verdict: over the budget fails, nothing else the gate would say.
    ov = O.build(report(ms), budgets=budgets)
    assert ov.cell("sin", "float32", "sweep").status == "failing"
    assert ov.cell("add", "int32", "layout").status == "within"
    # The gate asks for a measurement the run lacks: that cell is "missing".
    ms2 = ms + [meas("exp", "float16", "sweep")]
    ov = O.build(report(ms2[:1] + ms2[-1:]), budgets=budgets,
                 verdict=gate.Verdict([gate.Failure(("erf", "float16", "sweep"), "no measurement of the "
                                                    "sweep suite", [])], budgets, Path("b"), "x"))
    assert ov.cell("erf", "float16", "sweep").status == "missing" and "erf" in ov.ops


def test_short_labels():
    assert [O.short_ulp(v) for v in (0, 0.004, 0.062, 0.4987, 0.5, 0.5000001, 0.75, 1.25, 12.4, 845, 2.1e6,
                                     math.inf, math.nan)] == \
        ["0", "<.01", ".06", ".49", ".5", ">.5", ".75", "1.2", "12", "845", "2e6", "inf", "nan"]
    assert [O.short_count(n) for n in (0, 999, 12_345, 8_388_609, 3 * 10 ** 9)] == \
        ["0", "999", "12k", "8.4M", "3.0G"]


def test_overview_png_and_its_change_marks():
    ms = [meas("exp", max_ulp=0.5), meas("log", max_ulp=1.9, not_correctly_rounded=4), meas("tanh", error="x")]
    old = report([meas("exp", max_ulp=0.5), meas("log", max_ulp=1.9, not_correctly_rounded=9), meas("tanh")])
    marks = O.change_marks(old, report(ms))
    assert marks == {("log", "float32", "sweep"): "better", ("tanh", "float32", "sweep"): "worse"}
    assert O.change_marks(None, report(ms)) == {}
    png = O.overview_png(O.build(report(ms), budgets={"log|float32": {"max_ulp": 2.0}}), title="t",
                         changes=marks)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000


def test_the_grid_on_the_page():
    ms = [meas("exp", max_ulp=0.5), meas("exp", "float16", "exhaustive16", cases=65536, max_ulp=0.5),
          meas("log", max_ulp=1.9, not_correctly_rounded=4), meas("tanh", "bfloat16", error="x")]
    page = render_html(report(ms), failures={}, budgets={"budgets": {"log|float32": {"max_ulp": 2.0}}})
    rows = body_rows(page)
    cells = {tuple(rows[i][:3]): v for i, v in grid_cells(page).items()}
    assert cells == {("exp", "float32", "sweep"): ("c0", ".5 0"), ("exp", "float16", "exhaustive16"): ("c0", ".5 0"),
                     ("log", "float32", "sweep"): ("c2", "1.9 4"), ("tanh", "bfloat16", "sweep"): ("c3", "err")}
    # the first screen: the verdict, then the grid; the run's metadata at the end
    assert page.index("<h1>") < page.index('id="grid"') < page.index('id="measurements"') < page.index('id="run"')
    assert "correctly rounded (exact) on every case measured <b>2</b>" in page
    assert "No trends: no directory of earlier reports was given" in page


def test_wall_times_are_one_digit_a_run():
    text = H.encode_wall([0.001, 0.0126, 1.0, None, 1e9])
    assert len(text) == 5 and text[3] == "." and text[-1] == H.DIGITS[-1]
    for c, v in zip(text[:3], (0.001, 0.0126, 1.0)):
        assert abs(1e-3 * 2 ** (H.DIGITS.index(c) / H.WALL_STEPS) / v - 1) < 0.13


def test_a_one_bin_histogram_is_split_from_its_sample():
    m = meas("exp", "float16", "exhaustive16", points=200, cases=65536, max_ulp=0.49)
    m.plot["ulp"] = [i / 400 for i in range(200)]                 # 0 .. 0.4975
    m.hist = {"edges": [0.0, 0.5, 1.0, math.inf], "counts": [65536, 0, 0]}
    d = H.plot_data(m, 0.5)
    lo, hi, counts, top = d["hs"]
    assert (lo, top) == (0.0, 0.5) and hi == 0.4975 and len(counts) == H.SPLIT_BINS and sum(counts) == 200
    m.hist["counts"] = [65000, 536, 0]
    assert "hs" not in H.plot_data(m, 0.5)


def test_peers_beside_nbx():
    ms = [meas("exp", max_ulp=0.5), meas("exp", target="torch", max_ulp=1.5, not_correctly_rounded=40),
          meas("exp", suite="bank", cases=155, max_ulp=0.5),
          meas("exp", suite="bank", target="torch", cases=155, max_ulp=math.inf, special_mismatches=2),
          meas("exp", suite="layout", cases=300),
          meas("exp", "float16", "exhaustive16", cases=65536, max_ulp=0.5),
          meas("exp", "float16", "exhaustive16", target="torch", cases=65536, max_ulp=0.5),
          meas("log", max_ulp=0.5, not_correctly_rounded=0),
          meas("log", target="torch", cases=0, error="RuntimeError: no log\nsecond line")]
    for m in ms:
        if not m.is_nbx:
            m.target_info = "torch 2.11.0+cu130 on cuda:0"
    page = render_html(report(ms), budgets={"budgets": {}})
    # the table, the grid and the plots are nbx's; a cell a peer measured too has a purple foot
    rows = body_rows(page)
    assert len(rows) == 5 and len(grid_cells(page)) == 5
    peered = {tuple(rows[int(i)][:3]) for i in re.findall(r'<td class="c\d[^"]* pp[^"]*" data-i="(\d+)"', page)}
    assert peered == {("exp", "float32", "sweep"), ("exp", "float32", "bank"), ("exp", "float16", "exhaustive16"),
                      ("log", "float32", "sweep")}
    # the peers' own table, by op, dtype, suite and target
    table = page.split('<table class="w" id="peer-table">')[1].split("</table>")[0]
    peer_rows = [[html.unescape(c) for c in re.sub(r"</?tr>", "", tr).split("<td>")[1:]]
                 for tr in re.findall(r"<tr>(<td>.*?)</tr>", table)]
    assert peer_rows == [["exp", "float16", "exhaustive16", "torch", "65536", "0.5", "0", "0", "0", ""],
                         ["exp", "float32", "bank", "torch", "155", "inf", "0", "2", "0", ""],
                         ["exp", "float32", "sweep", "torch", "1000", "1.5", "40", "0", "0", ""],
                         ["log", "float32", "sweep", "torch", "0", "0", "0", "0", "0", "RuntimeError: no log"]]
    assert ">target</th>" in table and "torch 2.11.0+cu130 on cuda:0 (reported, not gated)" in page
    # the first screen says where nbx stands: over the 3 measurements both made (log's torch raised)
    standing = html.unescape(page.split('<p class="top" id="standing">')[1].split("</p>")[0])
    assert standing == ("Against its peers, on the same inputs: torch 2.11.0+cu130 on cuda:0: misrounded, wrong or "
                        "special results in 2 of 3 shared measurements (42 results), nbx in 0 (0); max ulp above "
                        "nbx's in 2.")
    assert page.index('id="standing"') < page.index('id="grid"')
    # the charts' data: per dtype in the grid's order, per op nbx's figures then torch's over the value
    # suites, and the measurement a click opens (nbx's value suite of most cases)
    pc = page_data(page)["pc"]
    assert pc["t"] == ["nbx", "torch"] and pc["vs"] == ["bank", "exhaustive16", "sweep", "pairs"]
    index = {tuple(r[:3]): i for i, r in enumerate(rows)}
    assert pc["d"] == [
        ["float16", [["exp", index[("exp", "float16", "exhaustive16")], [0, 0.5, 65536, 0, 0], [0, 0.5, 65536, 0, 0]]]],
        ["float32", [["exp", index[("exp", "float32", "sweep")], [0, 0.5, 1155, 0, 0], [40, "inf", 1155, 2, 0]],
                     ["log", index[("log", "float32", "sweep")], [0, 0.5, 1000, 0, 0], [0, 0.0, 0, 0, 1]]]]]
    assert re.findall(r'<div class="wide peerchart" data-k="(\d)">', page) == ["0", "1"]
    assert re.findall(r'<button class="o pk" data-k="\d">(\w+)</button>', page) == ["float16", "float32"]
    # the section follows the grid's detail, before the trends
    assert page.index('id="detail"') < page.index('<h2 id="peers">') < page.index('<h2 id="trends">')
    # a figure that could not be computed (nan) outranks any number, in whichever suite it is
    from nbx.harness.report.markdown import peer_figures
    for order in (1, -1):
        assert math.isnan(peer_figures([meas(max_ulp=math.inf), meas(max_ulp=math.nan)][::order])["max_ulp"])
    alone = render_html(report(ms[:1]), budgets={"budgets": {}})
    assert 'id="peers"' not in alone and page_data(alone)["pc"] is None and " pp" not in alone


def test_cells_round_trip():
    rng = random.Random(5)
    for n in (0, 1, 2, 50, 400):
        values = {rng.randrange(0, 1 << rng.randrange(1, 40)) for _ in range(n)}
        text = H.encode_cells(values)
        assert re.fullmatch(r"[A-Za-z0-9_-]*", text)
        assert H.decode_cells(text) == sorted(values)
    assert H.encode_cells([31, 0, 31]) == "Af" and H.encode_cells([32]) == "gB"
    with pytest.raises(ValueError, match="negative"):
        H.encode_cells([-1])


def test_operand_value():
    assert H.operand_value("0x3f800000", "float32") == 1.0
    assert H.operand_value("0xbc00", "float16") == -1.0
    assert H.operand_value("0x3f80", "bfloat16") == 1.0
    assert H.operand_value("0xc034000000000000", "float64") == -20.0
    assert H.operand_value("0x7f800000", "float32") == math.inf
    assert H.operand_value("0xff", "int8") == -1.0 and H.operand_value("0xff", "uint8") == 255.0
    assert H.operand_value("0x1", "bool") == 1.0
    assert H.operand_value("0x1", "float32") < 1e-44     # where's condition: at the x = 0 column
    assert H.operand_value("0x10000", "float16") is None   # wider than the dtype
    assert H.operand_value("zz", "float32") is None and H.operand_value("0x1", "nope") is None


def test_plot_holds_the_worst_inputs_and_the_budget():
    # As gelu float64 sweep once: every sampled point at 0 ulp, the 1225 ulp case only among the
    # worst entries. The plot must reach it, ring it, and draw the budget (1300) inside too.
    m = meas("gelu", "float64", points=64, max_ulp=1225.0)
    m.plot["ulp"] = [0.0] * 64
    m.worst = [Worst(["0xc034000000000000"], "0x1", "0x2", 1225.0),            # x = -20
               Worst(["0x4000000000000000"], "0x1", "0x2", math.inf, "special mismatch"),  # x = 2
               Worst(["0x7ff8000000000000"], "0x1", "0x2", 3.0)]                # x = nan: not drawn
    d = H.plot_data(m, 1300.0)
    lo, hi, top = d["r"]
    nx, ny = H.GRIDS[0]
    assert top >= H.ulp_scale(1300.0) > H.ulp_scale(1225.0)
    assert lo <= H.symlog(-20.0) and hi >= H.symlog(2.0)
    (worst,) = H.decode_cells(d["w"])
    assert worst // ny == round((H.symlog(-20.0) - lo) / (hi - lo) * (nx - 1))
    assert worst % ny == round(H.ulp_scale(1225.0) / top * (ny - 1)) > 0.9 * (ny - 1)
    assert H.decode_cells(d["wn"]) == [round((H.symlog(2.0) - lo) / (hi - lo) * (nx - 1))]
    assert all(c % ny == 0 for c in H.decode_cells(d["p"]))      # the sample: all at 0 ulp
    assert d["h"] == [700, 200, 99, 1] and d["he"][-1] == "inf"

    # A budget far above the data ("no bound") stays out of the range: the points keep the plot.
    m = meas("swiglu", "float64", points=64, max_ulp=2.0)
    assert H.plot_data(m, 9.007e15)["r"][2] < 1 < H.plot_data(m, 900.0)["r"][2]

    # Exact results (integers): the worst entries' ulp is a wrong/right flag, nothing to plot.
    wrong = meas("add", "int32", "pairs", wrong=1,
                 worst=[Worst(["0x1", "0x2"], "0x4", "0x3", 1.0, "wrong")])
    assert H.plot_data(wrong, 0.0) == {}


def test_page(tmp_path):
    ms = [meas("exp", "float32", "sweep", points=400, max_ulp=0.6,
               worst=[Worst(["0x42b00000"], "0x7f800000", "0x7f7fffff", math.inf, "overflow")]),
          meas("exp2", "float32", "sweep", points=100, seed=1, max_ulp=0.5),
          meas("sin", "float16", "exhaustive16", points=50, seed=2, max_ulp=math.nan),
          meas("add", "float32", "layout", cases=500, layouts=40, wrong=3),
          meas("tanh", "bfloat16", "bank", error="RuntimeError: kernel failed | with <b>markup</b>\n"
                                                  "\x1b second line")]
    failures = {("exp", "float32", "sweep"): ["max ulp 0.6 > budget 0.5"]}
    page = render_html(report(ms), failures=failures,
                       budgets={"budgets": {"exp|float32": {"max_ulp": 0.5},
                                            "exp2|float32": {"max_ulp": 0.5}}})
    # Self-contained: no URL anywhere, no attribute that loads anything.
    assert "http:" not in page and "https:" not in page and "//" not in page.split("<script>")[0]
    assert not re.search(r"""\b(src|href|srcset|action|data)\s*=""", page)
    assert "@import" not in page and "url(" not in page
    rows = body_rows(page)
    assert [r[:3] for r in rows] == [["tanh", "bfloat16", "bank"], ["sin", "float16", "exhaustive16"],
                                     ["exp", "float32", "sweep"], ["exp2", "float32", "sweep"],
                                     ["add", "float32", "layout"]]          # severity order
    assert rows[2][4:6] == ["0.6", "0.5"] and rows[4][5] == ""             # max ulp, budget
    assert rows[2][-1] == "max ulp 0.6 > budget 0.5" and rows[3][-1] == "ok"
    assert page.count('<tr class="fail">') == 1 and page.count('<tr class="error">') == 1
    assert "<b>markup</b>" not in page and "&lt;b&gt;markup" in page
    data = page_data(page)
    assert len(data["m"]) == len(ms) and data["m"][0] == {"s": "c3"}       # the error row: failing
    assert data["m"][2]["W"][0][:4] == [["0x42b00000"], ["88.0"], "0x7f800000", "0x7f7fffff"]
    assert data["edges"] == [0.0, 0.5, 1.0, 2.0, "inf"] and "he" not in data["m"][2]
    # Drawn up front: the failing one, then the closest to its budget.
    cards = re.findall(r'<section class="card" id="([^"]+)" data-i="(\d+)">', page)
    assert cards == [("p-exp-float32-sweep", "2"), ("p-exp2-float32-sweep", "3")]
    assert "budgets</td><td>given by the caller" in page

    # A verdict's budgets (the file the gate used) come before any other.
    verdict = SimpleNamespace(budgets={"exp|float32": {"max_ulp": 0.7}},
                              budgets_path=ROOT / "reports" / "budgets" / "other.json")
    page = render_html(report(ms), failures=failures, verdict=verdict,
                       budgets={"budgets": {"exp|float32": {"max_ulp": 0.5}}})
    assert body_rows(page)[2][5] == "0.7" and "budgets</td><td>reports/budgets/other.json" in page

    # Without budgets given, the committed file of the report's backend, when there is one.
    page = render_html(report([meas("exp", "float32", points=10)]))
    assert "reports/budgets/interpreter-numpy2.4.6.json" in page
    other = report([meas()])
    other.backend = {"id": "no-such-backend"}
    assert "none found for this backend" in render_html(other)


def test_changed_against_a_previous_report(tmp_path):
    old = report([meas("exp", points=20, max_ulp=0.5), meas("log", points=20, max_ulp=0.5),
                  meas("sin", points=20, max_ulp=0.5)], run_id="old-run")
    new = copy.deepcopy(old)
    new.run_id = "new-run"
    new.measurements[0].max_ulp = 2.0
    new.measurements[2].wrong = 0
    old.measurements[2].wrong = 3
    page = render_html(new, budgets={"budgets": {}}, previous=old)
    assert "compared with</td><td>old-run" in page
    assert re.findall(r'<section class="card" id="([^"]+)"', page) == ["p-exp-float32-sweep",
                                                                      "p-sin-float32-sweep"]
    assert "worse: max_ulp 0.5 -&gt; 2" in page
    # the grid marks what changed: exp worse, sin (3 wrong -> 0) only better
    marks = dict(re.findall(r'<td class="c\d (c[wb])[^"]*" data-i="(\d+)"', page))
    rows = body_rows(page)
    assert {rows[int(i)][0]: m for m, i in marks.items()} == {"exp": "cw", "sin": "cb"}
    assert "worse than the previous report <b>1</b>" in page
    # find_previous's result works the same, and write_report hands it over.
    found = Previous(tmp_path, old, tmp_path / "old")
    again = render_html(new, budgets={"budgets": {}}, previous=found)
    assert re.findall(r'<section class="card" id="([^"]+)"', again) == ["p-exp-float32-sweep",
                                                                       "p-sin-float32-sweep"]
    assert "worse: max_ulp 0.5 -&gt; 2" in again and "compared with</td><td>old-run" in again
    # its directory holds no earlier report.json: no trends, and the page says where it looked
    assert f"No trends: no earlier report of this profile, backend and seed under {tmp_path}" in again
    written = write_report(new, tmp_path / "new", previous=found)["html"].read_text()
    assert 'id="p-exp-float32-sweep"' in written and "worse: max_ulp 0.5 -&gt; 2" in written


def test_page_size_for_a_nightly_report():
    # ~2,400 measurements, each with a full 400-point scatter of random points (no two in one
    # cell: the worst case for the encoding) and 8 worst inputs.
    rng = random.Random(7)
    dtypes = ("float16", "bfloat16", "float32", "float64")
    ms = []
    for i in range(2400):
        m = meas(f"op{i // 8}", dtypes[i % 4], ("sweep", "bank")[i // 4 % 2], points=400, seed=i,
                 max_ulp=rng.random())
        m.worst = [Worst([hex(rng.getrandbits(32))], hex(rng.getrandbits(32)),
                         hex(rng.getrandbits(32)), rng.random()) for _ in range(8)]
        ms.append(m)
    failures = {m.key(): ["made up"] for m in ms[:30]}
    budgets = {"budgets": {f"{m.op}|{m.dtype}": {"max_ulp": 1.0} for m in ms}}
    # and the trends of ten runs, each measurement's wall time different in each
    runs = [T.Run(f"run{k}", f"2026-12-0{k}T03:00:00Z", "0123456789ab") for k in range(T.RUNS)]
    series = {m.key(): {"max_ulp": [m.max_ulp] * T.RUNS, "not_correctly_rounded": [0.0] * T.RUNS,
                        "wall_s": [rng.uniform(0.001, 900) for _ in runs]} for m in ms}
    page = render_html(report(ms), failures=failures, budgets=budgets,
                       history=T.History(runs, series, Path("runs")))
    size = len(page.encode())
    assert size < 2_000_000, size
    assert len(grid_cells(page)) == 2400 and len(page_data(page)["t"]["s"]) == 2400
    data = page_data(page)
    drawn = {int(i) for i in re.findall(r'<section class="card" id="[^"]+" data-i="(\d+)"', page)}
    assert len(drawn) == H.FAILING_PLOTS + H.CLOSEST_PLOTS
    # Drawn plots keep the fine grid and all their worst inputs; the rest may be coarser.
    assert all("g" not in data["m"][i] and len(data["m"][i]["W"]) == 8 for i in drawn)
    full = [i for i, d in enumerate(data["m"]) if len(d["W"]) == 8]
    assert len(full) == len(failures) + H.CLOSEST_PLOTS and drawn <= set(full)
    assert all(len(d["W"]) == 1 and d["nw"] == 8 for i, d in enumerate(data["m"]) if i not in full)
    assert len(body_rows(page)) == 2400

    # and a peer beside nbx on 2,280 of them, as torch on the GPU's nightly (4,580 measurements with
    # nbx's): its table and chart data take their share of the points' budget
    for m in ms[:2280]:
        p = copy.deepcopy(m)
        p.target, p.target_info = "torch", "torch 2.11.0+cu130 on cuda:0"
        p.max_ulp, p.not_correctly_rounded = 3 * m.max_ulp, rng.randrange(10 ** 6)
        ms.append(p)
    page = render_html(report(ms), failures=failures, budgets=budgets,
                       history=T.History(runs, series, Path("runs")))
    size = len(page.encode())
    assert size < 2_000_000, size
    assert len(body_rows(page)) == 2400 and page.count("<td>torch<td>") == 2280
    assert sum(len(ops) for _, ops in page_data(page)["pc"]["d"]) == 2280 // 2     # op x dtype, 2 suites each


# -- in a browser -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """A real small run: exp and add on float32 and float16, ci profile (16 measurements)."""
    out = tmp_path_factory.mktemp("html") / "run"
    p = subprocess.run([sys.executable, "-m", "nbx", "run", "--op", "exp", "--op", "add",
                        "--dtype", "float32", "--dtype", "float16", "--profile", "ci",
                        "--out", str(out), "--quiet"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return load_report(out)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.skip(f"needs Debian's chromium and chromium-driver ({CHROMIUM}, {CHROMEDRIVER}); "
                    "`make setup` installs them as root with apt-get (tools/install_browser.sh)")
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="needs selenium (the project's `test` extra)")
    from selenium.webdriver.chrome.service import Service
    profile = tempfile.mkdtemp(prefix="nbx-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                f"--user-data-dir={profile}", "--window-size=1400,1000"):
        options.add_argument(arg)
    # Every request the page makes, from the DevTools network events, and the console.
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    # A Service with the driver's path: selenium then never runs its manager (which downloads).
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def test_page_in_a_browser(small_run, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    rep = small_run
    keys = {m.key() for m in rep.measurements}
    assert len(keys) == 16
    sweep = ("exp", "float32", "sweep")
    previous = copy.deepcopy(rep)
    previous.run_id = "previous-run"
    previous.by_key()[("add", "float16", "pairs")].max_ulp = 0.25
    path = tmp_path / "report.html"
    path.write_text(render_html(rep, failures={sweep: ["made up by the test"]}, previous=previous),
                    encoding="utf-8")
    d = browser
    d.get_log("performance")                     # drop what an earlier page left
    d.get(path.as_uri())
    WebDriverWait(d, 60).until(lambda d: d.execute_script(
        "return document.querySelectorAll('section.card svg').length > 0"))

    def visible_keys():
        return d.execute_script("""
            return Array.from(document.querySelectorAll('#measurements > tbody > tr:not(.detail)'))
              .filter(function (tr) { return !tr.hidden; })
              .map(function (tr) { return [0, 1, 2].map(function (i) { return tr.cells[i].textContent; }); });""")

    # The table: one row per measurement; the failing one marked, the rest "ok".
    assert {tuple(k) for k in visible_keys()} == keys
    assert len(d.find_elements(By.CSS_SELECTOR, "#measurements > tbody > tr.fail")) == 1
    # Drawn up front: the failing measurement, those closest to budget, the changed one.
    cards = [c.get_attribute("id") for c in d.find_elements(By.CSS_SELECTOR, "section.card")]
    assert cards[0] == "p-exp-float32-sweep" and "p-add-float16-pairs" in cards
    # a plot and a histogram per card, and exp float32 sweep's errors by input range (a sampled sweep's bins)
    assert len(d.find_elements(By.CSS_SELECTOR, "section.card svg")) == 2 * len(cards) + 1

    # Sorting: max ulp descending, then ascending; op ascending.
    heads = {h.text.strip(): h for h in d.find_elements(By.CSS_SELECTOR, "#measurements > thead th")}
    by_key = rep.by_key()

    def max_ulps():
        return [by_key[tuple(k)].max_ulp for k in visible_keys()]
    heads["max ulp"].click()
    assert max_ulps() == sorted(max_ulps(), reverse=True) and max_ulps()[0] > max_ulps()[-1]
    assert heads["max ulp"].get_attribute("aria-sort") == "descending"
    heads["max ulp"].click()
    assert max_ulps() == sorted(max_ulps())
    heads["op"].click()
    ops = [k[0] for k in visible_keys()]
    assert ops == sorted(ops) and ops[0] == "add" and ops[-1] == "exp"

    # The filter: every word must match a cell; words never match across cells.
    box = d.find_element(By.ID, "filter")

    def filtered(query):
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(Keys.BACKSPACE)
        box.send_keys(query)
        return {tuple(k) for k in visible_keys()}
    exp32 = {k for k in keys if k[:2] == ("exp", "float32")}
    assert len(exp32) == 3
    assert filtered("exp float32") == exp32
    assert filtered("FLOAT32   exp") == exp32
    assert filtered("exp float16 exhaustive") == {("exp", "float16", "exhaustive16")}
    assert filtered("alpha=2 pairs") == {k for k in keys if k[0] == "add:alpha=2" and k[2] == "pairs"}
    assert filtered("add") == {k for k in keys if k[0] == "add"}           # whole cell: not add:alpha=2
    assert filtered("add:") == {k for k in keys if k[0] == "add:alpha=2"}  # no whole cell: within one
    assert filtered("exp32") == set()
    assert "of 16 rows" in d.find_element(By.ID, "shown").text
    assert filtered("") == keys

    # A plot on demand: the sweep row opens its plots and worst inputs, and closes again.
    filtered("exp float32 sweep")
    row = [tr for tr in d.find_elements(By.CSS_SELECTOR, "#measurements > tbody > tr")
           if tr.is_displayed()][0]
    row.find_element(By.CSS_SELECTOR, "button.o").click()
    detail = d.find_element(By.CSS_SELECTOR, "#measurements > tbody > tr.detail")
    svgs = detail.find_elements(By.TAG_NAME, "svg")
    assert len(svgs) == 3                                                  # plot, histogram, by range
    assert svgs[0].find_elements(By.CSS_SELECTOR, "path.pts")
    assert svgs[0].find_elements(By.CSS_SELECTOR, "circle.worst")          # the worst inputs
    assert svgs[0].find_elements(By.CSS_SELECTOR, "line.budget")           # exp|float32: 0.5
    assert svgs[1].find_elements(By.CSS_SELECTOR, "rect.bar")
    worst = detail.find_elements(By.CSS_SELECTOR, "table.w tbody tr")
    assert len(worst) == len(by_key[sweep].worst)
    assert worst[0].find_elements(By.TAG_NAME, "td")[0].text == by_key[sweep].worst[0].inputs[0]
    assert "nbx repro exp float32 " in detail.text
    row.find_element(By.CSS_SELECTOR, "button.o").click()
    assert not d.find_elements(By.CSS_SELECTOR, "#measurements > tbody > tr.detail")

    # No network request: the page requests only itself (file:, data:), and nothing the browser
    # requested meanwhile went to the network (its own pages are chrome: URLs).
    sent = [json.loads(e["message"])["message"] for e in d.get_log("performance")]
    sent = [m["params"] for m in sent if m["method"] == "Network.requestWillBeSent"]
    mine = [p["request"]["url"] for p in sent if p.get("documentURL") == path.as_uri()]
    assert path.as_uri() in mine and all(u.startswith(("file:", "data:")) for u in mine), mine
    network = [p["request"]["url"] for p in sent
               if p["request"]["url"].split(":")[0] not in ("file", "data", "chrome", "about")]
    assert not network, network
    resources = d.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; })")
    assert all(u.startswith(("file:", "data:")) for u in resources), resources
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_a_sweep_draws_its_error_by_input_range(browser, tmp_path):
    # a float32 sweep's bins (scoring/regions.py) with misrounded results in [2, 4): its detail
    # draws the largest error per range of inputs, that range's bars marked
    from selenium.webdriver.common.by import By
    from nbx.harness.scoring.regions import RangeBins
    b = RangeBins(0, 1 << 32, 1 << 16)
    b.count[:] = 1 << 24
    b.max_ulp[:] = 0.5
    b.max_ulp[0x40], b.misrounded[0x40] = 3.0, 12
    m = meas("exp", "float32", "sweep", points=50, cases=1 << 32, max_ulp=3.0, not_correctly_rounded=12,
             bins=b.to_dict())
    path = tmp_path / "report.html"
    path.write_text(render_html(report([m])), encoding="utf-8")
    d = browser
    d.get(path.as_uri())
    d.find_element(By.CSS_SELECTOR, "#measurements button.o").click()
    chart = d.find_element(By.CSS_SELECTOR, "#measurements tr.detail svg.regions")
    assert len(chart.find_elements(By.CSS_SELECTOR, "rect.bar")) == H.PAGE_BINS
    assert len(chart.find_elements(By.CSS_SELECTOR, "rect.bar.mis")) == 1
    labels = [t.text for t in chart.find_elements(By.TAG_NAME, "text")]
    assert {"0", "2", "-0", "-2", "nan"} <= set(labels) and "12 misrounded, in red" in " ".join(labels)
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


PEER_MODULE = '''
import numpy as np


def np_exp(x):
    with np.errstate(all="ignore"):
        return np.exp(x)
'''


@pytest.fixture(scope="module")
def peer_run(tmp_path_factory) -> Path:
    """A real run of nbx and a callable target beside it: numpy's exp measured as exp (`nbx run
    --target np_targets:np_exp --as exp`) on float32 and float16, ci profile."""
    work = tmp_path_factory.mktemp("peer")
    (work / "np_targets.py").write_text(PEER_MODULE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(work), str(ROOT)])}
    p = subprocess.run([sys.executable, "-m", "nbx", "run", "--op", "exp", "--dtype", "float32", "--dtype", "float16",
                        "--profile", "ci", "--target", "np_targets:np_exp", "--as", "exp", "--out", str(work / "run"),
                        "--quiet"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "peer np_targets:np_exp" in p.stdout, p.stdout + p.stderr
    return work / "run"


def test_peers_in_a_browser(peer_run, browser):
    """nbx beside a callable target from a real run: one chart per dtype that renders, a purple
    foot on the grid's cells the target measured too, whose click opens a detail with the target's
    figures beside nbx's, and the way from there to the op on its dtype's chart and back."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    name = "np_targets:np_exp"
    rep = load_report(peer_run)
    theirs = {m.key()[:3]: m for m in rep.measurements if not m.is_nbx}
    assert {m.target for m in theirs.values()} == {name}
    assert set(theirs) == {("exp", "float16", "bank"), ("exp", "float16", "exhaustive16"),
                           ("exp", "float32", "bank"), ("exp", "float32", "sweep")}
    d = browser
    d.get_log("performance")
    d.get((peer_run / "report.html").as_uri())
    WebDriverWait(d, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, "div.peerchart svg.peers"))

    # one chart per dtype, drawn: the legend names both, and the float32 chart holds numpy's bar of
    # misrounded results (nbx has none) and a max ulp dot of each
    charts = d.find_elements(By.CSS_SELECTOR, "div.peerchart svg.peers")
    assert [c.get_attribute("aria-label").split(":")[0] for c in charts] == ["nbx and peers, float16",
                                                                           "nbx and peers, float32"]
    assert all(c.size["width"] > 100 and c.size["height"] > 200 for c in charts)
    f32 = charts[1]
    assert [t.text for t in f32.find_elements(By.TAG_NAME, "text")][:2] == ["nbx", name]
    strokes = [(p.get_attribute("stroke"), "V" in p.get_attribute("d")) for p in f32.find_elements(By.TAG_NAME, "path")]
    colors = page_data((peer_run / "report.html").read_text())["pc"]["c"]
    assert strokes == [(colors[0], False), (colors[1], True), (colors[1], False)]
    bad = sum(m.not_correctly_rounded + m.wrong for k, m in theirs.items() if k[1] == "float32")
    cases = sum(m.cases for k, m in theirs.items() if k[1] == "float32")
    assert bad > 0
    ActionChains(d).move_to_element(f32.find_element(By.CSS_SELECTOR, "rect.hit")).perform()
    tip = d.find_element(By.ID, "tip")
    WebDriverWait(d, 10).until(lambda d: tip.is_displayed())
    assert f"{name}: {bad:,} misrounded of {cases:,}, max " in tip.text and tip.text.startswith("exp float32")

    # the grid: a purple foot on the cells numpy measured too (its value suites), none on layout
    peered = d.execute_script("""
        var trs = document.querySelectorAll('#measurements > tbody > tr');
        return Array.from(document.querySelectorAll('#grid td.pp')).map(function (td) {
          var c = trs[+td.dataset.i].cells; return [c[0].textContent, c[1].textContent, c[2].textContent]; });""")
    assert {tuple(k) for k in peered} == set(theirs)
    cell = next(c for c, k in zip(d.find_elements(By.CSS_SELECTOR, "#grid td.pp"), peered)
                if tuple(k) == ("exp", "float32", "sweep"))
    sweep = theirs[("exp", "float32", "sweep")]
    ActionChains(d).move_to_element(cell).perform()
    WebDriverWait(d, 10).until(lambda d: f"{name}: {sweep.not_correctly_rounded:,} of {sweep.cases:,} misrounded"
                                         in tip.text)

    # a click opens the detail: numpy's figures per suite beside nbx's, as bars and as a table
    cell.click()
    detail = d.find_element(By.ID, "detail")
    WebDriverWait(d, 10).until(lambda d: detail.find_elements(By.CSS_SELECTOR, "svg.peerbars"))
    assert detail.find_element(By.TAG_NAME, "h3").text.startswith("exp float32 sweep")
    bars = detail.find_element(By.CSS_SELECTOR, "svg.peerbars")
    labels = [t.text for t in bars.find_elements(By.TAG_NAME, "text") if " \u00b7 " in t.text]
    assert labels == ["bank \u00b7 nbx", f"bank \u00b7 {name}", "sweep \u00b7 nbx", f"sweep \u00b7 {name}"]
    table = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
             for tr in detail.find_elements(By.CSS_SELECTOR, ".peerbox table.w tbody tr")]
    assert table[3] == ["sweep", name, f"{sweep.cases:,}", fmt_ulp(sweep.max_ulp), f"{sweep.not_correctly_rounded:,}",
                        f"{sweep.special_mismatches:,}", f"{sweep.wrong:,}", ""]
    mine = rep.by_key()[("exp", "float32", "sweep")]
    assert table[2][:5] == ["sweep", "nbx", f"{mine.cases:,}", fmt_ulp(mine.max_ulp), f"{mine.not_correctly_rounded:,}"]
    assert len(detail.find_elements(By.CSS_SELECTOR, ".fig svg")) == 3           # plot, histogram, by range

    # from the detail to the op on the float32 chart, and from the float16 chart to its detail
    detail.find_element(By.XPATH, ".//button[text()='every float32 op beside its peers']").click()
    assert len(f32.find_elements(By.CSS_SELECTOR, "rect.hl")) == 1
    assert not charts[0].find_elements(By.CSS_SELECTOR, "rect.hl")
    charts[0].find_element(By.CSS_SELECTOR, "rect.hit").click()
    WebDriverWait(d, 10).until(lambda d: detail.find_element(By.TAG_NAME, "h3").text.startswith(
        "exp float16 exhaustive16"))                                            # its value suite of most cases
    assert f"exhaustive16 \u00b7 {name}" in detail.find_element(By.CSS_SELECTOR, "svg.peerbars").text

    sent = [json.loads(e["message"])["message"] for e in d.get_log("performance")]
    urls = [m["params"]["request"]["url"] for m in sent if m["method"] == "Network.requestWillBeSent"]
    assert all(u.split(":")[0] in ("file", "data", "chrome", "about") for u in urls), urls
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_overview_and_trends_in_a_browser(small_run, browser, tmp_path):
    """The first screen: the grid, a cell's figures on hover, its detail on a click, with the trend
    of two earlier reports of the same profile, backend and seed and the run where a regression
    started; the whole-set trend chart and the regressions table."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    key = ("exp", "float32", "sweep")
    history = tmp_path / "runs"
    runs = []
    for k, (commit, extra) in enumerate((("c0ffee1", 0), ("c0ffee2", 5), ("c0ffee3", 5))):
        r = copy.deepcopy(small_run)
        r.run_id, r.git_commit, r.created = f"run{k + 1}", commit, f"2026-12-0{k + 1}T03:00:00Z"
        r.by_key()[key].not_correctly_rounded += extra       # worse since run 2
        if k == 0:
            r.by_key()[("exp", "float16", "exhaustive16")].error = "RuntimeError: raised in run 1"
        runs.append(r)
    for r in runs[:2]:
        (history / r.run_id).mkdir(parents=True)
        (history / r.run_id / "report.json").write_text(r.to_json())
    path = write_report(runs[2], tmp_path / "run3", previous=find_previous(runs[2], history))["html"]
    d = browser
    d.get(path.as_uri())
    WebDriverWait(d, 60).until(lambda d: d.execute_script(
        "return document.querySelectorAll('#grid td[data-i]').length > 0"))

    # The grid: one cell per measurement, each with a status; ops are its rows.
    cells = d.find_elements(By.CSS_SELECTOR, "#grid td[data-i]")
    assert len(cells) == 16
    assert all(c.get_attribute("class").split()[0] in ("c0", "c1", "c2", "c3", "c4") for c in cells)
    assert [th.text for th in d.find_elements(By.CSS_SELECTOR, "#grid tbody th")] == ["add", "add:alpha=2", "exp"]
    assert d.find_element(By.ID, "grid").location["y"] < 400          # on the first screen

    def cell(op, dtype, suite):
        for c in cells:
            i = c.get_attribute("data-i")
            if d.execute_script("var c = arguments[0].cells; return [c[0].textContent, c[1].textContent, "
                                "c[2].textContent]", d.find_elements(
                                    By.CSS_SELECTOR, "#measurements > tbody > tr")[int(i)]) == [op, dtype, suite]:
                return c
    target = cell(*key)
    ActionChains(d).move_to_element(target).perform()
    tip = d.find_element(By.ID, "tip")
    WebDriverWait(d, 10).until(lambda d: tip.is_displayed())
    assert tip.text.startswith("exp float32 sweep: ") and "misrounded" in tip.text and "max " in tip.text

    target.click()
    detail = d.find_element(By.ID, "detail")
    WebDriverWait(d, 10).until(lambda d: detail.find_elements(By.CSS_SELECTOR, "svg.sparkline"))
    assert detail.find_element(By.TAG_NAME, "h3").text.startswith("exp float32 sweep")
    sparks = detail.find_elements(By.CSS_SELECTOR, "svg.sparkline")
    assert len(sparks) == 3                                            # max ulp, misrounded, wall s
    assert len(sparks[1].find_elements(By.TAG_NAME, "circle")) == 3    # three runs
    assert len(sparks[1].find_elements(By.CSS_SELECTOR, "circle.start")) == 1
    assert "worse since run 2 (run2, commit c0ffee2)" in detail.text
    assert len(detail.find_elements(By.CSS_SELECTOR, ".fig svg")) == 3  # plot, histogram, errors by range

    # The whole set over the runs, and the regression with its run and commit.
    trend = d.find_element(By.CSS_SELECTOR, "svg.trend")
    assert len(trend.find_elements(By.CSS_SELECTOR, "circle")) == 9     # 3 panels x 3 runs
    assert len(trend.find_elements(By.CSS_SELECTOR, "circle.start")) == 3
    rows = d.find_elements(By.CSS_SELECTOR, "#regressions tbody tr")
    assert [r.text for r in rows] == ["exp float32 sweep not_correctly_rounded "
                                      f"{small_run.by_key()[key].not_correctly_rounded} "
                                      f"{small_run.by_key()[key].not_correctly_rounded + 5} 2: run2 c0ffee2"]
    detail.find_element(By.CSS_SELECTOR, "h3 button").click()
    assert not detail.find_elements(By.TAG_NAME, "svg")
    rows[0].find_element(By.CSS_SELECTOR, "button.r").click()
    assert detail.find_elements(By.CSS_SELECTOR, "svg.sparkline")
    # a run where the measurement raised breaks its line, marked open
    cell("exp", "float16", "exhaustive16").click()
    sparks = detail.find_elements(By.CSS_SELECTOR, "svg.sparkline")
    assert [len(s.find_elements(By.CSS_SELECTOR, "circle.nan")) for s in sparks] == [1, 1, 0]
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_the_screenshot_tool_saves_the_first_screen_and_a_detail(small_run, browser, tmp_path):
    """tools/report_screenshots.py (the pictures in the closing notes): the first screen at the
    window's size, and the detail panel a click on a grid cell opens."""
    import struct
    write_report(small_run, tmp_path / "run")
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "report_screenshots.py"), str(tmp_path / "run"),
                        str(tmp_path / "shots"), "--cell", "add,float16,pairs"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    sizes = {}
    for name in ("first-screen.png", "detail-add-float16-pairs.png"):
        head = (tmp_path / "shots" / name).read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n", name
        sizes[name] = struct.unpack(">II", head[16:24])
    assert sizes["first-screen.png"] == (1400, 1000)
    assert sizes["detail-add-float16-pairs.png"][1] > 200
    bad = subprocess.run([sys.executable, str(ROOT / "tools" / "report_screenshots.py"), str(tmp_path / "run"),
                          str(tmp_path / "shots"), "--cell", "nosuch,float16,pairs"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "no grid cell for nosuch float16 pairs" in bad.stderr
