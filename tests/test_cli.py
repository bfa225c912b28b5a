"""End to end through the command line: `python -m nbx run | gate | bank | report | ops | repro`.

Every command runs as a subprocess (env PYTHONPATH=the repo) with NBX_BANK pointing at a bank
under tmp_path and every --out / --budgets under tmp_path: nothing here writes into the committed
reference_bank/ or reports/.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import REPO, nbx_cmd, ok

import nbx
from nbx.harness.gate import budgets
from nbx.harness.suites import bank
from nbx.harness.run import runner
from nbx.harness.report import load_report, write_report

# The value suites only: the structural suites (layout, intdiv) test the library, not the harness,
# and the gate must pass here whatever state the library is in.
SUITES = ["bank", "sweep", "pairs"]
RUN_ARGS = ["--op", "exp", "--op", "add", "--dtype", "float32", "--profile", "ci", "--quiet",
            *[x for s in SUITES for x in ("--suite", s)]]
# the jobs of that run: bank + sweep (exp) / pairs (add, add:alpha=2)
KEYS = {(j.target.label, j.target.dtype.name, j.suite) for j in runner.jobs(["exp", "add"], ["float32"], SUITES)}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def tbank(work):
    """A bank for exp and add (with its variant) in float32, refreshed into tmp."""
    base = work / "bank"
    base.mkdir()
    bank.refresh(["exp", "add"], ["float32"], base=base, progress=False, log=lambda *a: None)
    bank._MANIFEST.clear()
    return base


@pytest.fixture(scope="module")
def run_dir(work, tbank):
    out = work / "run"
    p = ok(nbx_cmd("run", *RUN_ARGS, "--out", out, bank_dir=tbank, cwd=work))
    assert f"{len(KEYS)} measurements" in p.stdout and "0 raised" in p.stdout, p.stdout
    return out


@pytest.fixture(scope="module")
def budget_file(work, run_dir):
    """A budget file written by `nbx gate --update` from the run."""
    path = work / "budgets" / "test-backend.json"
    p = ok(nbx_cmd("gate", "--report", run_dir, "--budgets", path, "--update", "--no-bank",
                   bank_dir=None, cwd=work))
    assert path.exists() and "(new)" in p.stdout
    return path


def test_run_writes_all_four_files(run_dir):
    assert len(KEYS) == 6
    for name in ("report.json", "summary.md", "junit.xml", "report.html"):
        assert (run_dir / name).is_file() and (run_dir / name).stat().st_size > 0, name
    assert not [p for p in run_dir.iterdir() if ".tmp" in p.name]
    # a finished run leaves its report files only: no lock, no INCOMPLETE marker
    assert not {".nbx-run.lock", "INCOMPLETE"} & {p.name for p in run_dir.iterdir()}
    rep = load_report(run_dir)
    assert rep.backend_id == nbx.backend_id()
    assert rep.profile == "ci"
    got = {m.key(): m for m in rep.measurements}
    assert set(got) == KEYS
    for k, m in got.items():
        assert m.cases > 0, k
        assert m.error == "", (k, m.error)
        assert m.backend == nbx.backend_id()
    assert load_report(run_dir / "report.json").run_id == rep.run_id


def test_gate_without_budgets_fails_then_update_then_passes(work, run_dir, tbank):
    """No budget file: the gate fails naming it and how to create it; `--update` creates it from
    nothing (how a new backend starts) and gates nothing; then the gate passes."""
    path = work / "gate-flow" / "budgets.json"
    p = ok(nbx_cmd("gate", "--report", run_dir, "--budgets", path, "--no-bank", bank_dir=tbank, cwd=work), 1)
    assert "1 failure(s)" in p.stdout and f"{path}: no budget file" in p.stdout, p.stdout
    assert "nbx gate --update" in p.stdout
    assert not path.exists() and not path.parent.exists()

    p = ok(nbx_cmd("gate", "--report", run_dir, "--budgets", path, "--update", "--no-bank",
                   bank_dir=tbank, cwd=work))
    assert "gate: not evaluated" in p.stdout and "PASS" not in p.stdout
    data = json.loads(path.read_text())
    assert set(data["budgets"]) == {"exp|float32", "add|float32", "add:alpha=2|float32"}
    assert data["backend"] == nbx.backend_id()
    assert data["source"]["profile"] == "ci"
    for k in data["budgets"]:
        assert k in p.stdout
    assert sorted(x.name for x in path.parent.iterdir()) == [path.name]

    p = ok(nbx_cmd("gate", "--report", run_dir, "--budgets", path, "--no-bank", bank_dir=tbank, cwd=work))
    assert "every figure within budget" in p.stdout
    # a second --update changes nothing
    p = ok(nbx_cmd("gate", "--report", run_dir, "--budgets", path, "--update", bank_dir=tbank, cwd=work))
    assert "0 change(s)" in p.stdout


def test_gate_with_a_regressed_budget_fails_and_names_the_key(work, run_dir, budget_file):
    tight = work / "tight.json"
    data = json.loads(budget_file.read_text())
    data["budgets"]["exp|float32"]["max_ulp"] = 0.1
    tight.write_text(json.dumps(data))
    p = ok(nbx_cmd("gate", "--report", run_dir, "--budgets", tight, "--no-bank", bank_dir=None, cwd=work), 1)
    assert "exp" in p.stdout and "> budget 0.1" in p.stdout
    # (no "worst:" rows here: measure.py records worst inputs only for cases not correctly rounded,
    # and exp float32 on the interpreter is correctly rounded everywhere)


def test_gate_checks_the_bank(work, run_dir, tbank, budget_file):
    """Without --no-bank the gate fails on a corrupted, stale or empty bank (NBX_BANK)."""
    p = ok(nbx_cmd("gate", "--report", run_dir, "--budgets", budget_file, bank_dir=tbank, cwd=work))
    assert "every figure within budget" in p.stdout

    broken = work / "broken-bank"
    shutil.copytree(tbank, broken)
    f = broken / "exp" / "float32.txt"
    f.write_text(f.read_text().replace("0x402df854", "0x402df855"))
    p = ok(nbx_cmd("gate", "--report", run_dir, "--budgets", budget_file, bank_dir=broken, cwd=work), 1)
    assert "stale or corrupted bank" in p.stdout and "exp/float32.txt" in p.stdout
    p = ok(nbx_cmd("bank", "check", "--op", "exp", "--dtype", "float32", bank_dir=broken, cwd=work), 1)
    assert "1 problem(s)" in p.stdout and "sha256" in p.stdout
    p = ok(nbx_cmd("bank", "check", "--op", "add", "--dtype", "float32", bank_dir=broken, cwd=work))
    assert "hashes match" in p.stdout

    empty = work / "empty-bank"
    empty.mkdir()
    p = ok(nbx_cmd("gate", "--report", run_dir, "--budgets", budget_file, bank_dir=empty, cwd=work), 1)
    assert "no bank manifest" in p.stdout


def test_gate_of_a_run_with_a_bank_error(work, tbank, budget_file):
    """A run against a corrupted bank records the error; the gate fails that measurement, and
    `nbx run` exits 1 with it."""
    broken = work / "broken-bank-2"
    shutil.copytree(tbank, broken)
    f = broken / "exp" / "float32.txt"
    f.write_text(f.read_text() + "0x3f800000 -> 0x402df854   # duplicate\n")
    out = work / "run-broken"
    p = ok(nbx_cmd("run", "--op", "exp", "--dtype", "float32", "--suite", "bank", "--quiet", "--out", out,
                   "--budgets", budget_file, bank_dir=broken, cwd=work), 1)
    assert "1 raised" in p.stdout and "BankError" in p.stdout
    assert "gate: FAIL" in p.stdout and "raised: BankError" in p.stdout
    p = ok(nbx_cmd("gate", "--report", out, "--budgets", budget_file, "--no-bank", bank_dir=broken, cwd=work), 1)
    assert "raised: BankError" in p.stdout


BANK_RUN = ["run", "--op", "exp", "--dtype", "float32", "--suite", "bank", "--profile", "ci", "--quiet"]
SWEEP_RUN = ["run", "--op", "exp", "--dtype", "float32", "--suite", "sweep", "--profile", "ci", "--quiet"]


def test_run_exits_with_the_gate_verdict(work, tbank, budget_file):
    """`nbx run` gates its report: exit 0 when it passes, 1 on a planted failing budget (exp
    float32 measures 0.499 ulp on the ci sweep; 0.1 is planted), the failures printed."""
    ok(nbx_cmd(*SWEEP_RUN, "--out", work / "verdict-pass", "--budgets", budget_file, bank_dir=tbank, cwd=work))
    tight = work / "verdict-tight.json"
    data = json.loads(budget_file.read_text())
    data["budgets"]["exp|float32"]["max_ulp"] = 0.1
    tight.write_text(json.dumps(data))
    p = ok(nbx_cmd(*SWEEP_RUN, "--out", work / "verdict-fail", "--budgets", tight, bank_dir=tbank, cwd=work), 1)
    assert "gate: FAIL (1 failure(s))" in p.stdout and "> budget 0.1" in p.stdout, p.stdout
    assert (work / "verdict-fail" / "report.json").is_file()
    p = ok(nbx_cmd(*SWEEP_RUN, "--out", work / "verdict-none", "--budgets", work / "no-such.json",
                   bank_dir=tbank, cwd=work), 1)
    assert f"{work / 'no-such.json'}: no budget file" in p.stdout, p.stdout


def test_a_removed_budget_entry_fails_an_exact_measurement(work, tbank, budget_file):
    """exp float32 on the bank is correctly rounded everywhere (0 misrounded, at most 0.5 ulp): without
    its entry the gate still fails, in `nbx run` and in `nbx gate`, naming the key."""
    out = work / "exact"
    ok(nbx_cmd(*BANK_RUN, "--out", out, "--budgets", budget_file, bank_dir=tbank, cwd=work))
    m = load_report(out).measurements[0]
    assert m.not_correctly_rounded == 0 and m.max_ulp <= 0.5
    pruned = work / "pruned.json"
    data = json.loads(budget_file.read_text())
    del data["budgets"]["exp|float32"]
    pruned.write_text(json.dumps(data))
    p = ok(nbx_cmd("gate", "--report", out, "--budgets", pruned, bank_dir=tbank, cwd=work), 1)
    assert f"no budget for exp float32 (measured {m.max_ulp:.3g} ulp)" in p.stdout, p.stdout
    p = ok(nbx_cmd(*BANK_RUN, "--out", work / "exact-2", "--budgets", pruned, bank_dir=tbank, cwd=work), 1)
    assert "no budget for exp float32" in p.stdout, p.stdout


def test_gate_refuses_a_report_marked_incomplete(work, run_dir, budget_file):
    """A directory whose writer stopped while writing (INCOMPLETE is there) is not read as a report."""
    from nbx.harness.report.json_report import INCOMPLETE_FILE, mark_incomplete
    half = work / "half"
    shutil.copytree(run_dir, half)
    mark_incomplete(half, run_id="r", command="nbx run --out half")
    for args in (["gate", "--report", half, "--budgets", budget_file],
                 ["report", "merge", work / "half-merged", half], ["report", "diff", run_dir, half]):
        p = ok(nbx_cmd(*args, bank_dir=None, cwd=work), 2)
        assert f"{half} is incomplete" in p.stderr and "`nbx run --out half`" in p.stderr, p.stderr
        assert INCOMPLETE_FILE in p.stderr and "Traceback" not in p.stderr
    assert not (work / "half-merged").exists()


def test_a_missing_optional_dependency_exits_3(tmp_path):
    p = ok(nbx_cmd("run", "--target", "torch", "--op", "exp", "--dtype", "float32", "--out", tmp_path / "r",
                   cwd=tmp_path, pre="sys.modules['torch'] = None"), 3)
    assert p.stderr.startswith("nbx run: --target torch") and "pip install" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert not (tmp_path / "r" / "report.json").exists()


@pytest.mark.parametrize("args", [
    ["run", "--op", "no_such_op", "--out", "x"],
    ["run", "--op", "exp", "--shard", "2/2", "--out", "x"],
], ids=" ".join)
def test_usage_errors_exit_2(work, args):
    p = ok(nbx_cmd(*args, bank_dir=work / "nowhere", cwd=work), 2)
    assert "no_such_op" in p.stderr or "--shard" in p.stderr, p.stderr
    assert not (work / "x").exists()


@pytest.mark.parametrize("args", [
    ["run", "--op", "no_such_op", "--out", "x"],
    ["run", "--dtype", "float8", "--out", "x"],
    ["run", "--op", "exp", "--shard", "2/2", "--out", "x"],
    ["run", "--op", "exp", "--shard", "-1/2", "--out", "x"],
    ["run", "--op", "exp", "--shard", "one/two", "--out", "x"],
    ["run", "--op", "exp", "--profile", "weekly", "--out", "x"],
    ["gate", "--report", "no/such/report"],
    ["bank", "check", "--op", "no_such_op"],
    ["bank", "refresh", "--op", "no_such_op"],
    ["bank", "refresh", "--dtype", "float8"],
    ["gate", "--op", "no_such_op"],
    ["gate", "--dtype", "float8"],
    ["repro", "exp", "float32", "0x1", "0x2"],
    ["repro", "no_such_op", "float32", "0x1"],
    ["repro", "exp", "float8", "0x1"],
    ["repro", "exp", "float32", "zz"],
    ["repro", "exp", "float32", "0x1ffffffff"],
    ["repro", "exp", "float32", "0x1", "--param", "alpha"],
    ["repro", "exp", "float32", "0x1", "--param", "alpha=2"],
    ["repro", "gelu:approximate=tanhh", "float32", "0x1"],
    ["repro", "gelu:approximate", "float32", "0x1"],
    ["report", "diff", "/nonexistent/a", "/nonexistent/b"],
    ["report", "diff", ".", "."],
    ["report", "diff", "a", "b", "--tolerance", "-1"],
    ["report", "merge", "out", "/nonexistent/shard"],
    ["run", "--progress", "fancy", "--out", "x"],
    ["run", "--seed", "x", "--out", "x"],
    ["run", "--prof", "ci", "--out", "x"],
    ["frobnicate"],
    [],
], ids=lambda a: " ".join(a) or "(nothing)")
def test_usage_errors_exit_2_in_process(tmp_path, monkeypatch, capsys, args):
    """The same program in-process (fast): every usage error is exit status 2 with a message."""
    from nbx import cli
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NBX_BANK", str(tmp_path / "nowhere"))
    with pytest.raises(SystemExit) as e:
        cli.main(args)
    assert e.value.code == 2
    assert capsys.readouterr().err.strip(), "a usage error says what is wrong"
    assert list(tmp_path.iterdir()) == []


def test_ops_lists_every_op(work):
    p = ok(nbx_cmd("ops", bank_dir=None, cwd=work))
    assert f"{len(nbx.OPS)} ops" in p.stdout
    listed = {line.split()[0] for line in p.stdout.splitlines()[2:] if line.strip()}
    assert listed == set(nbx.OPS)
    p = ok(nbx_cmd("ops", "--json", bank_dir=None, cwd=work))
    rows = json.loads(p.stdout)
    assert [r["op"] for r in rows] == list(nbx.OPS)
    by = {r["op"]: r for r in rows}
    assert by["exp"]["arity"] == 1 and by["add"]["arity"] == 2 and by["where"]["arity"] == 3
    assert "float32" in by["exp"]["dtypes"].split(",")


def test_repro_prints_got_expected_and_ulp(work, tbank):
    p = ok(nbx_cmd("repro", "exp", "float32", "0x3f800000", bank_dir=tbank, cwd=work))
    out = p.stdout
    assert "input 0: 0x3f800000" in out
    assert "got      0x402df854" in out
    assert "expected 0x402df854" in out
    assert "ulp error" in out and "correctly rounded" in out
    p = ok(nbx_cmd("repro", "add", "float32", "0x3f800000", "0x40000000", "--param", "alpha=2",
                   bank_dir=tbank, cwd=work))
    assert "add:alpha=2" in p.stdout and "expected 0x40a00000" in p.stdout   # 1 + 2*2 = 5
    # a compound float64 op: the exact figure (cancellation), then the gated one against its order
    p = ok(nbx_cmd("repro", "addcdiv", "float64", "0x5c6afd4d8317c41a", "0x5c6afd4d8317c77a",
                   "0xbff0000000000001", bank_dir=tbank, cwd=work))
    assert "NOT correctly rounded" in p.stdout
    assert "order    0xd9baf00000000000" in p.stdout and "0 ulp from the documented evaluation order" in p.stdout


def test_report_diff(work, run_dir):
    p = ok(nbx_cmd("report", "diff", run_dir, run_dir, bank_dir=None, cwd=work))
    assert "0 regressions, 0 improvements, 0 added, 0 removed" in p.stdout

    rep = load_report(run_dir)
    for m in rep.measurements:
        if m.key() == ("exp", "float32", "sweep"):
            m.max_ulp += 3.0
    rep.measurements = [m for m in rep.measurements if m.key() != ("add", "float32", "bank")]
    worse = work / "worse"
    write_report(rep, worse)
    p = ok(nbx_cmd("report", "diff", run_dir, worse, bank_dir=None, cwd=work), 1)
    assert "1 regressions" in p.stdout and "1 removed" in p.stdout
    assert "Regressions" in p.stdout and "max_ulp" in p.stdout and "sweep" in p.stdout
    p = ok(nbx_cmd("report", "diff", worse, run_dir, bank_dir=None, cwd=work))
    assert "1 improvements" in p.stdout and "1 added" in p.stdout
    p = ok(nbx_cmd("report", "diff", run_dir, worse, "--tolerance", "5", bank_dir=None, cwd=work))
    assert "0 regressions" in p.stdout


def test_sharded_runs_merge_to_the_unsharded_keys(work, run_dir, tbank, budget_file):
    shards = []
    for i in range(2):
        out = work / f"shard{i}"
        ok(nbx_cmd("run", *RUN_ARGS, "--shard", f"{i}/2", "--out", out, bank_dir=tbank, cwd=work))
        shards.append(out)
    k0 = {m.key() for m in load_report(shards[0]).measurements}
    k1 = {m.key() for m in load_report(shards[1]).measurements}
    assert k0 and k1 and not k0 & k1
    merged = work / "merged"
    p = ok(nbx_cmd("report", "merge", merged, *shards, bank_dir=None, cwd=work))
    assert f"merged 2 shards ({len(KEYS)} measurements)" in p.stdout
    mrep = load_report(merged)
    assert {m.key() for m in mrep.measurements} == {m.key() for m in load_report(run_dir).measurements} == KEYS
    assert len(mrep.shards) == 2
    # the merged report gates like the unsharded one
    p = ok(nbx_cmd("gate", "--report", merged, "--budgets", budget_file, bank_dir=tbank, cwd=work))
    assert "every figure within budget" in p.stdout
    # a shard alone is incomplete: the gate sees the missing keys
    p = ok(nbx_cmd("gate", "--report", shards[0], "--budgets", budget_file, "--no-bank", bank_dir=None,
                   cwd=work), 1)
    assert "no measurement" in p.stdout
    # merge exits with its gate's verdict
    tight = work / "merge-tight.json"
    data = json.loads(budget_file.read_text())
    data["budgets"]["exp|float32"]["max_ulp"] = 0.1
    tight.write_text(json.dumps(data))
    p = ok(nbx_cmd("report", "merge", work / "merged-tight", *shards, "--budgets", tight, bank_dir=tbank,
                   cwd=work), 1)
    assert "gate: FAIL" in p.stdout and "> budget 0.1" in p.stdout, p.stdout
    assert not (work / "merged-tight" / ".nbx-run.lock").exists()
    # a shard stopped by its time limit: the merged report's gate names the stop
    cut = work / "shard1-cut"
    rep1 = load_report(shards[1])
    rep1.argv = [*rep1.argv, "--interrupted=1/3"]
    write_report(rep1, cut)
    p = ok(nbx_cmd("report", "merge", work / "merged-cut", shards[0], cut, "--budgets", budget_file,
                   bank_dir=tbank, cwd=work), 1)
    assert "the run was stopped" in p.stdout and "after 1/3 jobs" in p.stdout, p.stdout
    # merging a shard with itself is refused (a key in two shards)
    p = nbx_cmd("report", "merge", work / "dup", shards[0], shards[0], bank_dir=None, cwd=work)
    assert p.returncode == 2 and "one shard only" in p.stderr


def test_help_and_console_script_equivalence(work):
    p = ok(nbx_cmd("--help", bank_dir=None, cwd=work))
    for word in ("run", "gate", "bank", "report", "ops", "repro"):
        assert word in p.stdout
    # the console script `nbx` is nbx.cli:main; calling it directly gives the same program
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["nbx"] == "nbx.cli:main"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    q = subprocess.run([sys.executable, "-c", "import sys; from nbx.cli import main; sys.argv[0] = 'nbx'; "
                        "sys.exit(main())", "--help"], cwd=work, env=env, capture_output=True, text=True,
                       timeout=120)
    assert q.returncode == 0 and q.stdout == p.stdout
    exe = shutil.which("nbx", path=os.path.dirname(sys.executable))
    if exe:
        r = subprocess.run([exe, "--help"], cwd=work, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stdout == p.stdout
    from nbx import cli
    for sub in ("run", "gate", "bank", "report", "ops", "repro"):
        with pytest.raises(SystemExit) as e:
            cli.main([sub, "--help"])
        assert e.value.code == 0


def test_a_run_stopped_by_sigterm_still_writes_its_report(tmp_path):
    """A time limit (timeout, a scheduler) sends SIGTERM: the measurements done so far are kept."""
    import signal
    import time
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = tmp_path / "partial"
    p = subprocess.Popen([sys.executable, "-m", "nbx", "run", "--profile", "nightly", "--out", str(out),
                          "--quiet"], env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(8)
    p.send_signal(signal.SIGTERM)
    out_text, err = p.communicate(timeout=120)
    rep = load_report(out)
    assert rep.measurements, err.decode()
    assert any(a.startswith("--interrupted=") for a in rep.argv), rep.argv
    assert b"interrupted after" in err
    # the stop is a named gate failure, and the run's exit status is the gate's
    assert p.returncode == 1, err.decode()
    assert b"stopped after" in out_text and b"gate: FAIL" in out_text, out_text
    g = subprocess.run([sys.executable, "-m", "nbx", "gate", "--report", str(out), "--no-bank"], env=env,
                       cwd=REPO, capture_output=True, text=True, timeout=120)
    assert g.returncode == 1 and "the run was stopped" in g.stdout, g.stdout
    assert "not measured: the run was stopped" in g.stdout
    assert not (out / ".nbx-run.lock").exists() and not (out / "INCOMPLETE").exists()


def test_gate_leaves_the_report_alone_unless_asked(work, run_dir, budget_file):
    """`nbx gate` reads a report; only --write rewrites its summary, junit.xml and report.html."""
    before = {f.name: (f.read_bytes(), f.stat().st_mtime_ns) for f in sorted(run_dir.iterdir())}
    tight = work / "tight-write.json"
    data = json.loads(budget_file.read_text())
    data["budgets"]["exp|float32"]["max_ulp"] = 0.1
    tight.write_text(json.dumps(data))
    ok(nbx_cmd("gate", "--report", run_dir, "--budgets", tight, "--no-bank", bank_dir=None, cwd=work), 1)
    ok(nbx_cmd("gate", "--report", run_dir, "--budgets", budget_file, "--no-bank", bank_dir=None, cwd=work))
    after = {f.name: (f.read_bytes(), f.stat().st_mtime_ns) for f in sorted(run_dir.iterdir())}
    assert after == before

    copy = work / "run-copy"
    shutil.copytree(run_dir, copy)
    p = ok(nbx_cmd("gate", "--report", copy, "--budgets", tight, "--no-bank", "--write",
                   "--history", work / "no-history", bank_dir=None, cwd=work), 1)
    assert "rewrote the summary" in p.stdout
    summary = (copy / "summary.md").read_text()
    assert summary.startswith("# nbx report: FAIL |")
    assert "| exp | float32 | sweep | max ulp" in summary and "> budget 0.1 |" in summary
    assert (copy / "report.json").read_bytes() == before["report.json"][0]


def test_report_diff_refuses_incomparable_reports(work, run_dir):
    rep = load_report(run_dir)
    rep.profile = "nightly"
    rep.argv = [*rep.argv, "--seed", "5"]
    other = work / "other-profile"
    write_report(rep, other)
    p = ok(nbx_cmd("report", "diff", run_dir, other, bank_dir=None, cwd=work), 2)
    assert "not comparable" in p.stderr and "profiles differ (ci vs nightly)" in p.stderr
    assert "seeds differ (0 vs 5)" in p.stderr and "--force" in p.stderr and p.stdout == ""
    p = ok(nbx_cmd("report", "diff", run_dir, other, "--force", bank_dir=None, cwd=work))
    assert "NOTE: profiles differ" in p.stdout and "0 regressions" in p.stdout


def test_repro_commands_from_a_generated_summary(work, tbank):
    """The summary's repro commands replay a parametrized op (gelu:approximate=tanh) and a ternary
    one (addcmul) as printed: label form, string parameter, three operands."""
    out = work / "repro-run"
    # exit 1: the gate fails on the bank, which holds exp and add only; the report is written
    p = ok(nbx_cmd("run", "--op", "gelu", "--op", "addcmul", "--dtype", "float32", "--suite", "sweep",
                   "--suite", "pairs", "--quiet", "--out", out, "--history", work / "no-history",
                   bank_dir=tbank, cwd=work), 1)
    assert "no bank file for gelu float32" in p.stdout and (out / "report.json").is_file()
    tight = work / "repro-budgets.json"
    tight.write_text(json.dumps({"schema": budgets.SCHEMA, "backend": "test", "budgets": {
        "gelu|float32": {"max_ulp": 0.01}, "gelu:approximate=tanh|float32": {"max_ulp": 0.01},
        "addcmul|float32": {"max_ulp": 0.01}}}))
    ok(nbx_cmd("gate", "--report", out, "--budgets", tight, "--no-bank", "--write", "--history",
               work / "no-history", bank_dir=None, cwd=work), 1)
    summary = (out / "summary.md").read_text()
    cmds = re.findall(r"`(nbx repro [^`]*)`", summary)
    gelu = [c for c in cmds if c.startswith("nbx repro gelu:approximate=tanh float32 0x")]
    addcmul = [c for c in cmds if re.fullmatch(r"nbx repro addcmul float32 0x\w+ 0x\w+ 0x\w+", c)]
    assert gelu and addcmul, cmds
    for cmd in (gelu[0], addcmul[0]):
        args = shlex.split(cmd)[1:]
        p = ok(nbx_cmd(*args, bank_dir=None, cwd=work))
        label, dtype, *bits = args[1:]
        assert p.stdout.startswith(f"{label} {dtype} on "), p.stdout
        for i, b in enumerate(bits):
            assert f"input {i}: {b} = " in p.stdout
        # the case scores as the summary says: its ulp error is printed
        assert "ulp error" in p.stdout


def _actions(p: argparse.ArgumentParser, path=("nbx",)):
    for act in p._actions:
        if isinstance(act, argparse._SubParsersAction):
            for name, sub in act.choices.items():
                yield from _actions(sub, (*path, name))
        else:
            yield path, act


def test_every_option_has_help():
    from nbx import cli
    missing = [f"{' '.join(path)} {act.dest}" for path, act in _actions(cli.parser())
               if not (act.help and act.help.strip())]
    assert not missing, missing


def test_profile_names_are_the_harness_profiles():
    from nbx import cli
    from nbx.harness.inputs.cases import PROFILES
    assert cli.PROFILE_NAMES == tuple(PROFILES)


def test_the_parser_imports_no_triton():
    """`nbx --help` must answer at once: importing nbx.cli and building the parser (every
    subcommand's help included) imports neither Triton nor nbx's kernels, ops or harness."""
    code = ("import sys, contextlib, io\n"
            "import nbx.cli\n"
            "p = nbx.cli.parser()\n"
            "for args in ([], ['run'], ['gate'], ['report', 'diff'], ['repro'], ['bank', 'check']):\n"
            "    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
            "        p.parse_args([*args, '--help'])\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('triton', 'mpmath', 'oracles')\n"
            "               or m.startswith(('nbx.kernels', 'nbx.ops', 'nbx.harness', 'nbx.tensor', 'nbx.dtype')))\n"
            "print(heavy)\n")
    # the interpreter backend: the CUDA backend's driver set-up imports Triton at `import nbx`
    env = {**os.environ, "PYTHONPATH": str(REPO), "NBX_BACKEND": "interpreter"}
    p = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]", p.stdout


def test_public_names_load_the_library_on_first_use():
    # the interpreter backend: the CUDA backend's driver set-up imports Triton at `import nbx`
    env = {**os.environ, "PYTHONPATH": str(REPO), "NBX_BACKEND": "interpreter"}
    code = ("import sys, nbx\n"
            "assert 'triton' not in sys.modules\n"
            "x = nbx.tensor([1.0, 2.0])\n"
            "assert 'triton' in sys.modules and nbx.bool is nbx.bool_ and nbx.exp is nbx.FUNCTIONS['exp']\n"
            "print((x + 1).numpy().tolist(), nbx.exp(x).dtype)\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "[2.0, 3.0] float32", p.stderr
