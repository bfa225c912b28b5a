"""bench/critical_path.py: LPT scheduling of a finished run's job times, on a real report directory."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import critical_path  # noqa: E402


def test_lpt_takes_the_longest_job_first_onto_the_slot_that_frees_first():
    # 5 | 4, then 3 after the 4 (7), 3 after the 5 (8), 3 after the 7: 10 (the optimum is 9: LPT,
    # as nbx run schedules, not the best packing)
    assert critical_path.schedule([5, 4, 3, 3, 3], 2) == 10.0
    assert critical_path.schedule([7, 1, 1, 1], 3) == 7.0           # the longest job bounds it
    assert critical_path.schedule([2, 2, 2, 2], 4) == 2.0


def test_the_estimate_of_a_report(tmp_path):
    ms = [{"op": f"op{i}", "dtype": "float32", "suite": "sweep", "wall_s": float(t)} for i, t in enumerate([8, 4, 4, 2, 2])]
    (tmp_path / "report.json").write_text(json.dumps({"measurements": ms}))
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "critical_path.py"), str(tmp_path), "--workers", "1",
                        "--gpus", "1,2,4"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = {int(line.split()[0]): line.split()[1:] for line in r.stdout.splitlines()[2:]}
    assert rows[1] == ["20.0", "20.0"] and rows[2] == ["10.0", "10.0"] and rows[4] == ["8.0", "8.0"]
    assert "longest 8.0 s (op0 float32 sweep)" in r.stdout
