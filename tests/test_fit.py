"""The fast paths' coefficients are data (nbx/kernels/fast32/coefficients.json), and they are what
tools/fit_fast32.py computes: a hand edit of the file, or a change of the fit without --write,
fails here. The fits run in mpmath (about 20 s)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_committed_coefficients_are_the_fitting_programs_output():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "fit_fast32.py"), "--check"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "the same as" in r.stdout
