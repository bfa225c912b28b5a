"""The README's figures are tools/readme_figures.py's output from the committed H200 reports it names:
a hand edit of the table, or a new report without regenerating the README, fails here."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "readme_figures.py"


def _tool(*args):
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


def test_readme_figures_are_the_tools_output():
    r = _tool()
    assert r.returncode == 0, r.stderr[-2000:]
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Figures\n\n", 1)[1].split("\n## ", 1)[0]
    assert section.rstrip("\n") + "\n" == r.stdout
    assert _tool("--check", str(ROOT / "README.md")).returncode == 0


def test_the_heading_names_each_report_with_machine_commit_and_date():
    heading = _tool().stdout.splitlines()[0]
    for part in ("NVIDIA H200", "cuda-sm90-triton3.6.0", "reports/h200/exhaustive-20261206.md",
                 "reports/h200/gpu-check-20261204.md", "commit 547c92e", "commit 531da7e", "2026-12-06",
                 "torch: `reports/h200/exhaustive-20261204.md` (commit 5adb55b, 2026-12-04, the same inputs)"):
        assert part in heading


def test_a_changed_table_fails_the_check(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text((ROOT / "README.md").read_text().replace("| compare (6) |", "| compare (7) |"))
    r = _tool("--check", str(readme))
    assert r.returncode == 1 and "differ" in r.stdout
