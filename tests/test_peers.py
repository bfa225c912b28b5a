"""Peers: `nbx run --target torch` measures torch's op of the same name on nbx's inputs, reported
beside nbx's figures and never gated (nbx/harness/peers.py).

The tests that run torch skip cleanly where it is not installed (`pytest.importorskip` in each);
with torch installed they run a real `nbx run --target nbx --target torch` into a temp dir. A
missing torch is simulated in a subprocess that blocks its import (sys.modules['torch'] = None).
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import nbx
from helpers import REPO, nbx_cmd, ok

from nbx.harness.gate.budgets import load, locked, measured_maxima, round_up_tenth, save, update
from nbx.harness.gate import verdict as gate
from nbx.harness.targets import peers
from nbx.harness.records.measurement import Measurement
from nbx.harness.report import diff_reports, load_report, merge_reports, render_junit, render_markdown

RUN = ["run", "--target", "nbx", "--target", "torch", "--op", "exp", "--op", "add", "--op", "gelu",
       "--dtype", "float32", "--dtype", "float16", "--profile", "ci", "--quiet"]
VALUE_SUITES = ("bank", "exhaustive16", "sweep", "pairs")


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("peers")


@pytest.fixture(scope="module")
def run_dir(work):
    pytest.importorskip("torch")
    out = work / "run"
    p = ok(nbx_cmd(*RUN, "--out", out, cwd=work))
    assert "peer torch" in p.stdout and "not gated" in p.stdout, p.stdout
    return out


# ---------------------------------------------------------------------- without torch
def test_cli_target_names_agree_with_peers():
    from nbx import cli
    assert cli.TARGET_NAMES == peers.TARGETS


def test_every_op_has_a_torch_peer_or_a_reason():
    from nbx.ops import OPS
    for name in OPS:
        assert (name in peers.TORCH) != (name in peers.LACKING["torch"]), name
    for name, why in {**peers.COMPOSED["torch"], **peers.LACKING["torch"]}.items():
        assert name in OPS and why.strip()


def test_a_report_without_target_reads_as_nbx():
    d = Measurement("exp", "float32", "sweep", "interpreter", cases=3).to_dict()
    del d["target"]
    m = Measurement.from_dict(d)
    assert m.target == "nbx" and m.is_nbx and m.key() == ("exp", "float32", "sweep")
    peer = dataclasses.replace(m, target="torch", target_info="torch 9 on cpu")
    back = Measurement.from_dict(json.loads(json.dumps(peer.to_dict())))
    assert back.key() == ("exp", "float32", "sweep", "torch") and back.target_info == "torch 9 on cpu"


def test_missing_torch_is_an_environment_failure(tmp_path):
    p = ok(nbx_cmd("run", "--target", "torch", "--op", "exp", "--dtype", "float32", "--out", tmp_path / "r",
                   cwd=tmp_path, pre="sys.modules['torch'] = None"), code=3)
    assert "--target torch" in p.stderr and "pip install" in p.stderr and "[torch]" in p.stderr, p.stderr
    assert not (tmp_path / "r" / "report.json").exists()


def test_without_target_no_torch_is_imported(tmp_path):
    """nbx alone: the jobs are today's, and torch is never imported."""
    from nbx.harness.run import runner
    code = ("import sys; from nbx.harness.run import runner; runner.jobs(['exp'], ['float32']); "
            "from nbx import cli; cli.parser().parse_args(['run']); print('torch' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr
    assert [(j.target, j.suite) for j in runner.jobs(["exp"], ["float32"])] == \
        [(j.target, j.suite) for j in runner.jobs(["exp"], ["float32"], target_names=("nbx",))]


# ---------------------------------------------------------------------- with torch
def test_both_targets_measured_on_the_same_cases(run_dir):
    pytest.importorskip("torch")
    import torch
    rep = load_report(run_dir)
    own = {m.key(): m for m in rep.measurements if m.is_nbx}
    theirs = {m.key()[:3]: m for m in rep.measurements if m.target == "torch"}
    assert theirs, "no torch measurements"
    value = {k for k in own if k[2] in VALUE_SUITES}
    assert set(theirs) == value                 # every value suite, no structural suite
    for k, m in theirs.items():
        assert m.cases == own[k].cases > 0, k
        assert m.backend == own[k].backend
        # torch's device is the backend's: CUDA on the GPU, the CPU under the interpreter
        where = f"cuda:0 ({torch.cuda.get_device_name(0)})" if nbx.backend_info()["backend"] == "cuda" else "cpu"
        assert m.target_info == f"torch {torch.__version__} on {where}"
    assert not any(m.error for m in own.values())
    exp = theirs[("exp", "float32", "sweep")]
    assert not exp.error and exp.max_ulp <= 2.0 and exp.special_mismatches == 0
    add = theirs[("add", "float32", "pairs")]
    assert not add.error and add.max_ulp <= 0.5 + 1e-9 and add.not_correctly_rounded == 0


def test_summary_junit_html_show_the_peers(run_dir):
    pytest.importorskip("torch")
    text = (run_dir / "summary.md").read_text()
    assert "## Peers side by side" in text
    head, rest = text.split("## Peers side by side", 1)
    assert "## All measurements" in rest and "## All measurements" not in head    # before the tables
    assert "torch max ulp" in rest and "identical" in rest
    tables = rest.split("## All measurements", 1)[1]
    assert "torch" not in tables                    # the tables are nbx's
    root = ET.parse(run_dir / "junit.xml").getroot()
    assert root.get("failures") == "0" and root.get("errors") == "0"
    peer_suites = [s for s in root.iter("testsuite") if s.get("name").startswith("nbx.torch.")]
    assert peer_suites and all(s.get("failures") == "0" for s in peer_suites)
    html = (run_dir / "report.html").read_text()
    assert ">target</th>" in html and "not gated" in html


def _broken_peers(rep):
    """The report with every torch measurement made bad: errors and huge ulps."""
    out = []
    for m in rep.measurements:
        if not m.is_nbx:
            m = dataclasses.replace(m, max_ulp=1e9, special_mismatches=7, not_correctly_rounded=m.cases,
                                    error="RuntimeError: \"exp_vml_cpu\" not implemented for 'Half'"
                                    if m.suite == "bank" else "")
        out.append(m)
    return dataclasses.replace(rep, measurements=out)


def test_the_gate_judges_nbx_only(run_dir, work):
    pytest.importorskip("torch")
    rep = _broken_peers(load_report(run_dir))
    budgets = work / "budgets" / "peers.json"
    # the budgets come from the run (gate --update): nbx's figures only
    with locked(budgets):
        new, changes = update(load(budgets, missing_ok=True), rep.measurements)
        save(new, budgets)
    nbx_max = measured_maxima([m for m in rep.measurements if m.is_nbx])
    assert {(k, "max_ulp" if "order" not in n else n): v for (k, n), v in nbx_max.items()}
    for (k, name), v in nbx_max.items():
        assert new["budgets"][k][name] == round_up_tenth(v)
    assert all(v < 1e6 for e in new["budgets"].values() for v in e.values() if isinstance(v, float))
    verdict = gate.evaluate(rep, budgets_path=budgets, check_bank=False)
    assert verdict.passed, gate.format_failures(verdict.failures)
    # the CLI on the rewritten report: gate passes, --update writes no torch figure
    bad = work / "bad"
    bad.mkdir(exist_ok=True)
    (bad / "report.json").write_text(rep.to_json())
    ok(nbx_cmd("gate", "--report", bad, "--budgets", budgets, "--no-bank", cwd=work))
    ok(nbx_cmd("gate", "--report", bad, "--budgets", budgets, "--update", "--all", "--no-bank", cwd=work))
    assert json.loads(budgets.read_text())["budgets"] == new["budgets"]
    # an nbx measurement that raises still fails it
    broken = dataclasses.replace(rep, measurements=[dataclasses.replace(m, error="boom") if m.is_nbx and
                                                    m.key() == ("exp", "float32", "sweep") else m
                                                    for m in rep.measurements])
    assert not gate.evaluate(broken, budgets_path=budgets, check_bank=False).passed
    # and the summary and junit of the broken peers: peer errors are listed, not failures
    text = render_markdown(rep, verdict=verdict)
    assert "torch raised in" in text and "**PASS**" in text
    root = ET.fromstring(render_junit(rep, failures=verdict.by_key()))
    assert root.get("errors") == "0" and root.get("failures") == "0"


def test_merge_and_diff_with_peers(run_dir):
    pytest.importorskip("torch")
    rep = load_report(run_dir)
    half = len(rep.measurements) // 2
    a = dataclasses.replace(rep, run_id="a", measurements=rep.measurements[:half], shards=[])
    b = dataclasses.replace(rep, run_id="b", measurements=rep.measurements[half:], shards=[])
    merged = merge_reports([a, b])
    assert sorted(m.key() for m in merged.measurements) == sorted(m.key() for m in rep.measurements)
    d = diff_reports(rep, _broken_peers(rep))
    assert not d.regressions and not d.improvements and not d.added and d.peers_ignored
    no_peers = dataclasses.replace(rep, measurements=[m for m in rep.measurements if m.is_nbx])
    d = diff_reports(no_peers, rep)
    assert not d.added and not d.removed


def test_peer_runs_split_ops_and_casts_on_the_host():
    """A few table entries beyond the CLI run: split ops, composed ops, casts, integer ops, and a
    dtype torch returns differently becomes an error, not a figure."""
    pytest.importorskip("torch")
    import numpy as np

    from nbx.harness import api
    from nbx.harness.targets.peers import peer_of
    from nbx.harness.targets.target import Target
    for t, want in [(Target("glu", {}, _dt("float32")), None), (Target("silu_and_mul", {}, _dt("float32")), None),
                    (Target("to", {"dtype": "float16"}, _dt("float32")), None),
                    (Target("bitwise_xor", {}, _dt("int16")), None),
                    (Target("div", {"rounding_mode": "floor"}, _dt("float32")), None)]:
        m = api.measure(peer_of(t, "torch"), "bank", backend="interpreter")
        assert m.target == "torch" and m.cases > 0 and not m.error, (t, m.error)
        ref = api.measure(t, "bank", backend="interpreter")
        assert m.cases == ref.cases
    pt = peer_of(Target("exp", {}, _dt("float32")), "torch")
    got = pt.run([np.array([0.0, 1.0], np.float32)])
    assert got.dtype == np.float32 and got[0] == 1.0


def _dt(name):
    import nbx
    return nbx.DTYPES[name]


@pytest.mark.cuda
def test_cuda_peer_runs_on_nbx_device(tmp_path):
    """On the cuda backend torch runs on nbx's device, operands crossing by DLPack."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    import nbx
    from nbx.harness.scoring import device
    from nbx.harness.inputs import patterns
    from nbx.harness.targets.peers import peer_of
    from nbx.harness.targets.target import Target
    info = peers.load("torch")
    assert info.device.startswith(f"cuda:{torch.cuda.current_device()}")
    pt = peer_of(Target("exp", {}, nbx.DTYPES["float32"]), "torch")
    xs = [patterns.bit_patterns("float32", 0x3f800000, 1024)]
    got = pt.run_device(xs)
    assert got.__dlpack_device__()[0] == xs[0].__dlpack_device__()[0]
    ref = torch.exp(torch.from_dlpack(xs[0]))
    assert torch.equal(torch.from_dlpack(got), ref)
    out = tmp_path / "run"
    ok(nbx_cmd("run", "--target", "torch", "--op", "exp", "--dtype", "float32", "--suite", "sweep",
               "--bits", "0x3f800000:0x3f900000", "--quiet", "--out", out, cwd=tmp_path))
    ms = [m for m in load_report(out).measurements if m.target == "torch"]
    assert ms and all(not m.error and m.decided_on_device for m in ms)
