"""Shared test helpers beyond nbx.testing (which has the special values, random values, bit patterns
and bit-for-bit assertion): an independent rounding to a format and ulp distance in numpy, the
cases the host's mpmath cannot decide; running the CLI in a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

from nbx.dtype import DType, bfloat16

# (precision p including the implicit bit, smallest normal exponent) per float format
FORMAT = {"float16": (11, -14), "bfloat16": (8, -126), "float32": (24, -126), "float64": (53, -1022)}


def dt_id(d) -> str:
    return d.name


def round_to(x: np.ndarray, d: DType) -> np.ndarray:
    """float64 values correctly rounded (nearest even) to float dtype d.

    numpy rounds float64 -> float16/float32 once. For bfloat16 the float64 is first rounded to
    float32 with round-to-odd, which makes the following float32 -> bfloat16 rounding a single
    correct rounding (8 <= 24 - 2 bits)."""
    x = np.asarray(x, dtype=np.float64)
    if d is not bfloat16:
        with np.errstate(over="ignore"):
            return x.astype(d.np)
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(np.float32)
    back = r.astype(np.float64)
    b = r.view(np.uint32).copy()
    finite = np.isfinite(x) & np.isfinite(back)
    over = finite & (np.abs(back) > np.abs(x))
    b = np.where(over, b - 1, b)
    inexact = finite & (back != x)
    b = np.where(inexact, b | 1, b).astype(np.uint32)
    return b.view(np.float32).astype(ml_dtypes.bfloat16)


def ulp(y: np.ndarray, d: DType) -> np.ndarray:
    """ulp of the format d at float64 values y (subnormals: the fixed quantum; 0: the quantum)."""
    p, emin = FORMAT[d.name]
    y = np.abs(np.asarray(y, dtype=np.float64))
    _, e = np.frexp(y)                      # y = m 2^e, m in [0.5, 1): floor(log2 y) = e - 1
    e = np.where(y == 0, emin, e - 1)
    return np.ldexp(1.0, np.maximum(e, emin) - p + 1)


def ulp_distance(got: np.ndarray, ref: np.ndarray, d: DType) -> np.ndarray:
    """|got - ref| in ulps of d at the reference (both finite); float64 arithmetic."""
    g = np.asarray(got).astype(np.float64)
    r = np.asarray(ref).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.abs(g - r) / ulp(r, d)


# ---------------------------------------------------------------------- the CLI in a subprocess
REPO = Path(__file__).resolve().parents[1]


def nbx_cmd(*args, cwd: Path, bank_dir: Path | None = None, pre: str | None = None,
            timeout=300) -> subprocess.CompletedProcess:
    """`python -m nbx ARGS` in a subprocess of this checkout, with NBX_BANK = bank_dir (None: the
    committed bank); pre: Python run first in that process (then the CLI runs through nbx.cli.main)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NBX_BANK", None)
    if bank_dir is not None:
        env["NBX_BANK"] = str(bank_dir)
    head = ["-m", "nbx"] if pre is None else \
        ["-c", f"import sys; {pre}; from nbx.cli import main; sys.argv[0] = 'nbx'; sys.exit(main(sys.argv[1:]))"]
    return subprocess.run([sys.executable, *head, *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def ok(p: subprocess.CompletedProcess, code=0) -> subprocess.CompletedProcess:
    assert p.returncode == code, f"exit {p.returncode} (wanted {code})\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p



# The head of a script that compiles nbx's kernels for sm_90 on this machine, without a GPU: Triton's
# own toolchain in a process where nbx's backend is a stand-in that says "cuda" (its submodules, such
# as dlpack, import as they are). Triton reads a kernel's source, so the script is a file.
SM90_STANDIN = r'''
import os, sys, types, importlib
os.environ.pop("TRITON_INTERPRET", None)
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
root = sys.argv[1]
sys.path.insert(0, root)
pkg = types.ModuleType("nbx"); pkg.__path__ = [os.path.join(root, "nbx")]; sys.modules["nbx"] = pkg
be = types.ModuleType("nbx.backend"); be.IS_CUDA, be.active = True, types.SimpleNamespace(install_triton_driver=lambda: None); sys.modules["nbx.backend"] = be
be.__path__ = [os.path.join(root, "nbx", "backend")]
'''


def run_sm90_script(tmp_path: Path, body: str, timeout: int = 1200, args=()) -> subprocess.CompletedProcess:
    """SM90_STANDIN + body as a script in tmp_path, run with the checkout's root as its first
    argument (sys.argv[1]) and args after it."""
    script = tmp_path / "compile_sm90.py"
    script.write_text(SM90_STANDIN + body)
    return subprocess.run([sys.executable, str(script), str(REPO), *args], capture_output=True, text=True,
                          timeout=timeout)
