"""bench/executor.py one way at a time: --only/--keep keep a real run's report, --compare sets the
kept ways side by side and fails where a figure differs."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = [sys.executable, str(ROOT / "bench" / "executor.py")]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def test_a_kept_way_compares_with_itself_and_a_changed_figure_is_found(tmp_path):
    r = subprocess.run(BENCH + ["--profile", "ci", "--op", "neg", "--jobs", "2", "--only", "pool", "--keep", str(tmp_path)],
                       capture_output=True, text=True, timeout=300, env=ENV)
    assert r.returncode == 0, r.stdout + r.stderr
    kept = tmp_path / "pool"
    assert {"report.json", "wall.json", "summary.md"} <= {p.name for p in kept.iterdir()}
    assert json.loads((kept / "wall.json").read_text())["processes"] == 2

    twin = tmp_path / "ray"
    shutil.copytree(kept, twin)
    r = subprocess.run(BENCH + ["--compare", str(kept), str(twin)], capture_output=True, text=True, timeout=60, env=ENV)
    assert r.returncode == 0 and r.stdout.count("figures identical") == 2, r.stdout

    report = json.loads((twin / "report.json").read_text())
    report["measurements"][0]["cases"] += 1
    (twin / "report.json").write_text(json.dumps(report))
    r = subprocess.run(BENCH + ["--compare", str(kept), str(twin)], capture_output=True, text=True, timeout=60, env=ENV)
    assert r.returncode == 1 and "ray" in r.stdout and "DIFFER" in r.stdout, r.stdout


def test_only_wants_keep():
    r = subprocess.run(BENCH + ["--only", "pool"], capture_output=True, text=True, timeout=60, env=ENV)
    assert r.returncode == 2 and "--only and --keep go together" in r.stderr
