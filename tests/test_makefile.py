"""The GPU nightly's command line as make expands it (`make -n`, nothing runs): the exhaustive
profile in GPU_JOBS shards, the peers of GPU_TARGETS (torch where GPU_PY imports it), the suites of
GPU_SUITES, then the merge and the gate. The GPU machine runs it; here only its wiring is checked."""
import shutil
import subprocess

import pytest

from helpers import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make")


def _expand(*assignments: str) -> str:
    r = subprocess.run(["make", "-n", "-C", str(REPO), "gpu-exhaustive", *assignments],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_gpu_exhaustive_runs_the_profile_with_its_peers_and_suites_then_gates():
    out = _expand("GPU_PY=python3", "GPU_JOBS=4", "GPU_TARGETS=torch", "GPU_SUITES=bank sweep",
                  "GPU_OUT=/tmp/nbx-make-n")
    run = next(line for line in out.splitlines() if "-m nbx run" in line)
    assert "--profile exhaustive" in run and "--shard $i/4" in run and "timeout 3600" in run
    body = out[out.index("-m nbx run"):]
    assert "--target torch" in body and "--suite bank --suite sweep" in body
    assert "seq 0 $((4 - 1))" in out
    assert "-m nbx report merge /tmp/nbx-make-n/exhaustive" in out
    assert "-m nbx gate --report /tmp/nbx-make-n/exhaustive" in out


def test_gpu_exhaustive_measures_no_peer_where_torch_does_not_import():
    # GPU_TARGETS defaults to torch only where `GPU_PY -c "import torch"` succeeds
    out = _expand("GPU_PY=/bin/false", "GPU_JOBS=2")
    assert "--target" not in out and "--suite" not in out
    assert "--profile exhaustive" in out
