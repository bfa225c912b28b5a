"""`nbx run` on an executor: a local pool of worker processes (`--jobs N`), Ray (`--executor ray`),
a per-job time limit, a worker lost mid-job, and a run killed and resumed (run/pool.py,
run/ray_executor.py, run/resume.py). Real processes and files on the interpreter backend, on a
few ops so that each run takes seconds; every figure of every measurement is compared with a run
in one process (wall times excepted)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nbx.backend import IS_CUDA
from nbx.harness.records.measurement import Measurement
from nbx.harness.report import load_report
from nbx.harness.report.json_report import INCOMPLETE_FILE
from nbx.harness.run.resume import JOBS_DIR, RECORD_FILE

REPO = Path(__file__).resolve().parents[1]
# 11 jobs: bank, sweep or pairs, and layout (not sigmoid's) of exp, sigmoid, add and add:alpha=2 on float32
SELECT = ["--op", "exp", "--op", "sigmoid", "--op", "add", "--dtype", "float32", "--profile", "ci"]
N_JOBS = 11
TIMED_OUT = "timed out"


def _env() -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    env.pop("NBX_BANK", None)
    return env


def _argv(out: Path, *more: str) -> list:
    return [sys.executable, "-m", "nbx", "run", *SELECT, "--out", str(out), "--history", str(out.parent / "none"),
            "--progress", "lines", *more]


def nbx_run(out: Path, *more: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(_argv(out, *more), cwd=out.parent, env=_env(), capture_output=True, text=True,
                          timeout=timeout)


def figures(m: Measurement) -> dict:
    """Every field of a measurement but its wall time."""
    d = m.to_dict()
    d.pop("wall_s")
    return d


def assert_same_figures(got: Path, want: Path) -> None:
    a, b = load_report(got), load_report(want)
    assert [m.key() for m in a.measurements] == [m.key() for m in b.measurements]
    for x, y in zip(a.measurements, b.measurements):
        assert figures(x) == figures(y), x.key()


@pytest.fixture(scope="module")
def serial(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("serial") / "report"
    p = nbx_run(out)
    assert p.returncode == 0, p.stdout + p.stderr
    rep = load_report(out)
    assert len(rep.measurements) == N_JOBS and not any(m.error for m in rep.measurements)
    assert rep.backend["executor"] == "in-process (--jobs 1)"
    return out


def test_two_workers_give_the_figures_of_one_process(serial, tmp_path):
    out = tmp_path / "pool"
    p = nbx_run(out, "--jobs", "2")
    assert p.returncode == 0, p.stdout + p.stderr
    assert_same_figures(out, serial)
    rep = load_report(out)
    assert rep.backend["executor"].startswith("pool of 2 worker")
    # one progress display over both workers: a line at the start and one at the end
    lines = [x for x in p.stderr.splitlines() if x.startswith("nbx run ci")]
    assert lines[0].endswith(f"0/{N_JOBS} jobs, started") and f"{N_JOBS}/{N_JOBS} jobs (100%)" in lines[-1], p.stderr
    # every job measured: the report holds them all, and the finished jobs' files are gone
    assert not (out / JOBS_DIR).exists()


def _cpu_ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks (0 where it has gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def _children(pid: int) -> list[int]:
    """The pids of pid's child processes that are pool workers (not multiprocessing's resource
    tracker)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == pid and "spawn_main" in cmd:
            out.append(int(d.name))
    return out


def _wait_for(what, timeout: float = 120.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"waited {timeout} s for {what}")


def _finished(out: Path) -> int:
    d = out / JOBS_DIR
    return len([x for x in d.glob("*.json") if x.name != RECORD_FILE]) if d.is_dir() else 0


def test_a_worker_killed_mid_job_is_replaced_and_its_job_runs_again(serial, tmp_path):
    out = tmp_path / "killed-worker"
    p = subprocess.Popen(_argv(out, "--jobs", "2"), cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        # workers take the next job as they finish one (11 jobs for 2): the worker with the most CPU
        # time once a job is done has finished one and holds the next; the other may still be
        # starting under load (killed there, it dies "before its first job")
        _wait_for(lambda: _finished(out) >= 1)
        victim = max(_wait_for(lambda: _children(p.pid)), key=_cpu_ticks)
        os.kill(victim, signal.SIGKILL)
        stdout, stderr = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, stdout + stderr
    assert "runs again on a fresh worker" in stderr, stderr
    assert_same_figures(out, serial)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_run_killed_and_resumed_gives_the_report_of_a_run_never_stopped(serial, tmp_path, jobs):
    out = tmp_path / f"killed-run-{jobs}"
    p = subprocess.Popen(_argv(out, "--jobs", jobs), cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: _finished(out) >= 3)
        workers = _children(p.pid)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    done = _finished(out)
    assert 3 <= done < N_JOBS, done
    names = {x.name for x in out.iterdir()}
    assert INCOMPLETE_FILE in names and "report.json" not in names, names
    # the workers die with the run (no orphan measures on)
    _wait_for(lambda: not [w for w in workers if Path(f"/proc/{w}").exists()
                           and "(Z)" not in Path(f"/proc/{w}/stat").read_text()], timeout=30)
    record = json.loads((out / JOBS_DIR / RECORD_FILE).read_text())
    r = subprocess.run([sys.executable, "-m", "nbx", "run", "--resume", str(out), "--jobs", "2", "--progress",
                        "lines"], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    # only the missing jobs ran
    assert f"0/{N_JOBS - done} jobs, started" in r.stderr, r.stderr
    assert_same_figures(out, serial)
    rep = load_report(out)
    assert rep.run_id == record["run_id"] and rep.option_values("--op") == ["exp", "sigmoid", "add"]
    assert not {INCOMPLETE_FILE, JOBS_DIR} & {x.name for x in out.iterdir()}


def test_a_resume_needs_a_run_that_lacks_jobs(tmp_path, serial):
    r = subprocess.run([sys.executable, "-m", "nbx", "run", "--resume", str(serial)],
                       cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "holds a finished run" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "nbx", "run", "--resume", str(tmp_path)],
                       cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "holds no run to resume" in r.stderr, r.stderr


def test_a_job_over_its_time_limit_is_reported_timed_out_and_fails_the_gate(tmp_path):
    # exp's float64 sweep on 2^22 cases scores each with mpmath: minutes, against a 2 s limit; its
    # bank takes well under a second (on CUDA the worker's first kernel compiles for seconds: 30 s)
    limit = "30" if IS_CUDA else "2"
    out = tmp_path / "timeout"
    p = subprocess.run([sys.executable, "-m", "nbx", "run", "--op", "exp", "--dtype", "float64", "--suite", "bank",
                        "--suite", "sweep", "--float64-cases", "2^22", "--job-timeout", limit, "--out", str(out),
                        "--history", str(tmp_path / "none")], cwd=tmp_path, env=_env(), capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    by_suite = {m.suite: m for m in load_report(out).measurements}
    assert by_suite["sweep"].error.startswith(TIMED_OUT) and f"--job-timeout {limit}" in by_suite["sweep"].error
    assert not by_suite["bank"].error and by_suite["bank"].cases > 0
    assert "exp float64 sweep: timed out" in p.stdout, p.stdout
    failing = [x for x in p.stdout.splitlines() if x.split()[:3] == ["exp", "float64", "sweep"]]
    assert failing and TIMED_OUT in failing[0], p.stdout
    rep = load_report(out)
    assert rep.backend["float64_cases"] == str(1 << 22) and rep.option_values("--float64-cases") == ["2^22"]
    # not saved as finished: the finished jobs stay for a resume, which runs that job alone again
    assert [x.name for x in (out / JOBS_DIR).glob("*.json") if x.name != RECORD_FILE] == \
        [x.name for x in (out / JOBS_DIR).glob("*bank*")]
    r = subprocess.run([sys.executable, "-m", "nbx", "run", "--resume", str(out), "--job-timeout", "1",
                        "--progress", "lines"], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1 and "0/1 jobs, started" in r.stderr, r.stdout + r.stderr
    # what to measure comes from the run being resumed
    r = subprocess.run([sys.executable, "-m", "nbx", "run", "--resume", str(out), "--op", "sin"], cwd=tmp_path,
                       env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--op comes from the run being resumed" in r.stderr, r.stderr
    assert "--job-timeout 1)" in {m.suite: m for m in load_report(out).measurements}["sweep"].error


def test_tuples_sets_the_stratified_sample_of_float32_pairs_jobs(tmp_path):
    out = tmp_path / "tuples"
    p = subprocess.run([sys.executable, "-m", "nbx", "run", "--op", "add", "--dtype", "float32", "--suite", "pairs",
                        "--tuples", "2^10", "--out", str(out), "--history", str(tmp_path / "none"), "--quiet"],
                       cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    rep = load_report(out)
    assert {m.cases for m in rep.measurements} == {1024} and rep.backend["tuples"] == "1024"
    assert all(m.decided_on_device + m.undecided == 1024 for m in rep.measurements)


@pytest.mark.parametrize("args, says", [
    (["--jobs", "0"], "--jobs takes a whole number >= 1"),
    (["--job-timeout", "-1"], "--job-timeout takes seconds > 0"),
    (["--tuples", "2^33"], "need 1 <= N <= 2^32"),
    (["--float64-cases", "many"], "--float64-cases takes a count such as 65536 or 2^16"),
    (["--address", "auto"], "--address: only with --executor ray"),
])
def test_scheduling_options_refuse_what_they_cannot_use(tmp_path, args, says):
    r = subprocess.run([sys.executable, "-m", "nbx", "run", "--op", "exp", "--dtype", "float32", "--out",
                        str(tmp_path / "x"), *args], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_ray_runs_the_jobs_with_the_figures_of_one_process(serial, tmp_path):
    ray = pytest.importorskip("ray")
    from nbx import cli
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False)
    try:
        out = tmp_path / "ray"
        code = cli.main(["run", *SELECT, "--executor", "ray", "--out", str(out), "--history",
                         str(tmp_path / "none"), "--quiet"])
    finally:
        ray.shutdown()
    assert code == 0
    assert_same_figures(out, serial)
    rep = load_report(out)
    assert rep.backend["executor"].startswith("ray") and rep.backend["nodes"] not in ("", "none")



def test_a_send_to_a_dead_workers_pipe_is_a_lost_worker_not_the_end_of_the_run():
    """A worker can die between the run's last read of its pipe and the next job sent down it: the
    send answers False (the loop then retires the worker and gives the job to a fresh one) instead
    of EPIPE ending the run, which test_a_worker_killed_mid_job... met as a SIGPIPE (exit -13)."""
    import multiprocessing

    from nbx.harness.run.pool import _send
    parent, child = multiprocessing.Pipe()
    assert _send(parent, 1) and child.recv() == 1
    child.close()
    assert _send(parent, 2) is False


_CRASH_FIRST_WORKERS = '''
import os, signal
if b"spawn_main" in open("/proc/self/cmdline", "rb").read():
    d = os.environ["NBX_TEST_CRASH_DIR"]
    for i in range(int(os.environ["NBX_TEST_CRASHES"])):
        try:
            os.close(os.open(os.path.join(d, str(i)), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            continue
        os.kill(os.getpid(), signal.SIGSEGV)        # a crash in native code, before the worker is ready
'''


def _crashing_env(tmp_path: Path, crashes: int) -> dict:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_CRASH_FIRST_WORKERS)
    return {**_env(), "PYTHONPATH": f"{site}{os.pathsep}{REPO}", "NBX_TEST_CRASH_DIR": str(site),
            "NBX_TEST_CRASHES": str(crashes)}


@pytest.mark.parametrize("crashes", [2, 3])
def test_workers_that_crash_before_their_first_job_are_replaced_then_the_run_goes_on_with_the_rest(
        serial, tmp_path, crashes):
    """The first `crashes` worker processes die of SIGSEGV while starting: each is named with its own
    exit status, replaced until START_FAILURES (3) have died, and the run ends with every job measured
    by the workers it has (2 crashes: two fresh workers; 3: the one fresh worker left)."""
    out = tmp_path / "crashes"
    p = subprocess.run(_argv(out, "--jobs", "2"), cwd=tmp_path, env=_crashing_env(tmp_path, crashes),
                       capture_output=True, text=True, timeout=300)
    assert p.stderr.count("a worker died before its first job (exit code -11, SIGSEGV)") == crashes, p.stderr
    assert p.returncode == 0, p.stdout + p.stderr
    assert_same_figures(out, serial)


def test_a_run_whose_every_worker_crashes_stops_with_an_environment_failure(tmp_path):
    out = tmp_path / "all-crash"
    p = subprocess.run(_argv(out, "--jobs", "2"), cwd=tmp_path, env=_crashing_env(tmp_path, 99),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 3 and "died before their first job" in p.stderr, p.stdout + p.stderr
    assert "Traceback" not in p.stderr, p.stderr
