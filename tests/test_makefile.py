"""The nightlies' command lines as make expands them (`make -n`, nothing runs): the GPU's, one
`nbx run` of the exhaustive profile on GPU_JOBS workers with a job time limit, the peers of
GPU_TARGETS (torch where GPU_PY imports it) and the suites of GPU_SUITES, or the resume of a stopped
one; `make report`'s, one `nbx run` on NBX_JOBS workers. The GPU machine runs the GPU's; here only
its wiring is checked. `make report`'s last line is run for real, with a stand-in for Python that
exits as told: the nightly fails when its run, its fuzz test or its gate fails, and not otherwise."""
import os
import shutil
import subprocess

import pytest

from helpers import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make")


def _expand(target: str, *assignments: str) -> str:
    r = subprocess.run(["make", "-n", "-C", str(REPO), target, *assignments],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_gpu_exhaustive_is_one_run_on_a_pool_with_its_peers_and_suites():
    out = _expand("gpu-exhaustive", "GPU_PY=python3", "GPU_JOBS=4", "GPU_TARGETS=torch", "GPU_SUITES=bank sweep",
                  "GPU_OUT=/tmp/nbx-make-n", "GPU_JOB_S=300")
    assert out.count("-m nbx run") == 1 and "--shard" not in out and "seq " not in out
    run = out[out.index("timeout"):]
    assert run.startswith("timeout --preserve-status 3600 ")
    assert "--profile exhaustive" in run and "--jobs 4 --job-timeout 300" in run
    assert "--target torch" in run and "--suite bank --suite sweep" in run
    assert "--out /tmp/nbx-make-n/exhaustive" in run and "report merge" not in out


def test_gpu_exhaustive_measures_no_peer_where_torch_does_not_import():
    # GPU_TARGETS defaults to torch only where `GPU_PY -c "import torch"` succeeds
    out = _expand("gpu-exhaustive", "GPU_PY=/bin/false", "GPU_JOBS=2")
    assert "--target" not in out and "--suite" not in out
    assert "--profile exhaustive" in out and "--jobs 2" in out


def test_gpu_resume_finishes_the_stopped_run_with_its_own_options():
    out = _expand("gpu-nightly", "GPU_PY=python3", "GPU_RESUME=1", "GPU_OUT=/tmp/nbx-make-n", "GPU_TARGETS=torch")
    run = out[out.index("timeout"):]
    assert run.startswith("timeout --preserve-status 470 ")
    assert "--resume /tmp/nbx-make-n/nightly" in run and "--jobs 16" in run
    assert "--profile" not in run and "--target" not in run and "--out" not in run


def test_report_is_one_run_on_nbx_jobs_workers_then_the_fuzz_and_the_gate():
    out = _expand("report", "NBX_JOBS=3", f"STAMP={REPO / 'Makefile'}")
    assert out.count("-m nbx run ") == 1 and "--shard" not in out and "report merge" not in out
    assert "-m nbx run --profile nightly --jobs 3 --progress lines" in out
    assert out.index("-m nbx run ") < out.index("test_fuzz_bad_arguments") < out.index("-m nbx gate")


FAKE_PY = """#!/bin/sh
echo "$*" >> "$NIGHTLY_LOG"
case "$*" in
  *"nbx run"*) exit "$RUN_RC" ;;
  *pytest*) exit "$FUZZ_RC" ;;
  *"nbx gate"*) exit "$GATE_RC" ;;
esac
exit 0
"""


@pytest.mark.parametrize("run, fuzz, gate, passes", [
    (0, 0, 0, True), (1, 0, 1, False), (0, 1, 0, False), (3, 0, 0, False), (0, 0, 1, False)])
def test_the_nightly_fails_when_its_run_fuzz_or_gate_fails(tmp_path, run, fuzz, gate, passes):
    py = tmp_path / "python"
    py.write_text(FAKE_PY)
    py.chmod(0o755)
    stamp = tmp_path / "stamp"
    stamp.touch()
    log = tmp_path / "log"
    env = {**os.environ, "NIGHTLY_LOG": str(log), "RUN_RC": str(run), "FUZZ_RC": str(fuzz), "GATE_RC": str(gate)}
    # PYTHON and VENV point nowhere: a stale stamp would fail the set-up here, not rebuild .venv
    r = subprocess.run(["make", "-s", "-C", str(REPO), "report", f"PY={py}", f"STAMP={stamp}", "PYTHON=/bin/false",
                        f"VENV={tmp_path / 'venv'}", f"NBX_NIGHTLY_DIR={tmp_path}"],
                       capture_output=True, text=True, timeout=60, env=env)
    calls = log.read_text().splitlines()
    # every step runs whatever the run's status: the gate and the fuzz test still report
    assert [c.split()[1] for c in calls] == ["nbx", "nbx", "pytest", "nbx"], calls
    assert (r.returncode == 0) == passes, r.stdout + r.stderr
    assert ("nbx run failed" in r.stdout) == (run != 0) and ("fuzz failed" in r.stdout) == (fuzz != 0)
