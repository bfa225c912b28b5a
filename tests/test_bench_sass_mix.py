"""bench/sass_mix.py compiles a fast path's flat kernel for sm_90 here, without a GPU, and prints its
registers and instruction mix (it had stopped importing once nbx's backend grew submodules)."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_sass_mix_of_one_fast_path():
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "sass_mix.py"), "rsqrt"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    line = next(x for x in r.stdout.splitlines() if x.startswith("rsqrt"))
    m = re.search(r"registers\s+(\d+).*fast part\s+([\d.]+) instructions/element, float64\s+([\d.]+)", line)
    assert m and 0 < int(m.group(1)) <= 255 and float(m.group(2)) > float(m.group(3)) > 0, line
