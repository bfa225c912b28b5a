"""Report directories are claimed by one run and released with their lock file removed, every
command checks it can write before working, a write the machine refuses (a read-only directory, a
file-size limit) is exit 3 in one line with the report directory complete or marked incomplete,
and budget files are never half-written. Real `nbx` processes throughout (no mocks)."""
from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from nbx.harness.gate import budgets
from nbx.harness.report import LOCK_FILE, DirectoryInUse, claim_dir, load_report
from nbx.harness.report.json_report import INCOMPLETE_FILE

REPO = Path(__file__).resolve().parents[1]
RUN = ["run", "--op", "exp", "--dtype", "float32", "--profile", "ci", "--quiet"]


def _env():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NBX_BANK", None)
    return env


def nbx_popen(*args, cwd):
    return subprocess.Popen([sys.executable, "-m", "nbx", *map(str, args)], cwd=cwd, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def nbx_cmd(*args, cwd, timeout=300, env=None, preexec_fn=None):
    return subprocess.run([sys.executable, "-m", "nbx", *map(str, args)], cwd=cwd, env=env or _env(),
                          capture_output=True, text=True, timeout=timeout, preexec_fn=preexec_fn)


def one_line_exit_3(p, *words):
    """Exit 3 (an environment failure): one line on stderr holding `words`, no traceback."""
    assert p.returncode == 3, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    for w in words:
        assert str(w) in p.stderr, (w, p.stderr)


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("lock") / "run"
    p = nbx_cmd(*RUN, "--out", out, cwd=out.parent)
    assert p.returncode == 0, p.stderr
    return out


def test_a_finished_run_leaves_no_lock_file(report_dir):
    names = {x.name for x in report_dir.iterdir()}
    assert "report.json" in names and LOCK_FILE not in names and INCOMPLETE_FILE not in names, names


def test_a_run_refuses_a_directory_another_process_holds(tmp_path):
    """Another process claims the directory (as a live `nbx run` does) and holds it until told to
    stop: `nbx run` into it exits 2 at once naming that process's pid, and the holder's claim is
    intact. Two real runs racing would depend on which starts first; this does not."""
    out = tmp_path / "same"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            from nbx.harness.report import claim_dir
            with claim_dir({str(out)!r}, command="holder process"):
                print("claimed", flush=True)
                sys.stdin.readline()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    try:
        assert holder.stdout.readline().strip() == "claimed"
        second = nbx_cmd(*RUN, "--out", out, cwd=tmp_path)
        assert second.returncode == 2, second.stderr
        assert "is in use by another run" in second.stderr and f"pid {holder.pid} " in second.stderr, second.stderr
        assert "holder process" in second.stderr and "Traceback" not in second.stderr
        assert not (out / "report.json").exists()
        assert json.loads((out / LOCK_FILE).read_text())["pid"] == holder.pid
    finally:
        holder.communicate("\n", timeout=60)
    assert nbx_cmd(*RUN, "--out", out, cwd=tmp_path).returncode in (0, 1)    # released: a run now proceeds
    assert {m.op for m in load_report(out).measurements} == {"exp"}


def test_a_claimed_directory_refuses_a_run_at_once(tmp_path):
    """Deterministic form of the above: while this process holds the claim, `nbx run` into the
    directory exits 2 naming this process, before measuring anything."""
    out = tmp_path / "held"
    with claim_dir(out, command="pytest holder"):
        t = time.monotonic()
        p = nbx_cmd(*RUN, "--out", out, cwd=tmp_path)
        took = time.monotonic() - t
        assert p.returncode == 2, p.stderr
        assert f"pid {os.getpid()} " in p.stderr and "pytest holder" in p.stderr, p.stderr
        assert not (out / "report.json").exists()
        assert took < 60
        # a second claim in this very process is refused too (flock is per open file)
        with pytest.raises(DirectoryInUse):
            claim_dir(out)
        assert sorted(x.name for x in out.iterdir()) == [LOCK_FILE]
    assert list(out.iterdir()) == []     # released, and its file removed
    with claim_dir(out):
        pass


def test_a_closed_claim_keeps_its_file_and_a_released_one_removes_it(tmp_path):
    """close() drops the lock only (as a killed process does); release() removes the file first.
    Either way the directory can be claimed again, by a fresh lock file."""
    c = claim_dir(tmp_path)
    c.close()
    assert (tmp_path / LOCK_FILE).exists()
    c = claim_dir(tmp_path)
    with pytest.raises(DirectoryInUse):
        claim_dir(tmp_path)
    c.release()
    assert not (tmp_path / LOCK_FILE).exists()
    c.release()                      # twice is harmless
    with claim_dir(tmp_path):
        assert json.loads((tmp_path / LOCK_FILE).read_text())["pid"] == os.getpid()


def test_a_killed_run_releases_its_claim(tmp_path):
    out = tmp_path / "killed"
    p = nbx_popen(*RUN, "--out", out, cwd=tmp_path)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if json.loads((out / LOCK_FILE).read_text()).get("pid") == p.pid:
                break
        except (OSError, ValueError):
            pass
        assert p.poll() is None, p.communicate()
        time.sleep(0.05)
    else:
        pytest.fail("the run never claimed its directory")
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)
    with claim_dir(out):             # the kernel dropped the dead process's flock
        pass


def _file_in_the_way(tmp_path):
    """A path no one (root included) can create a directory at: its parent is a regular file."""
    f = tmp_path / "a-file"
    f.write_text("not a directory\n")
    return f


def test_run_into_an_unwritable_directory_fails_before_measuring(tmp_path):
    blocked = _file_in_the_way(tmp_path) / "out"
    p = nbx_cmd(*RUN, "--out", blocked, cwd=tmp_path)
    one_line_exit_3(p, "cannot write the report", "a-file", "--out DIR")
    assert "measurements" not in p.stdout


def test_gate_update_into_an_unwritable_directory_fails_before_loading(tmp_path, report_dir):
    blocked = _file_in_the_way(tmp_path) / "budgets.json"
    p = nbx_cmd("gate", "--report", report_dir, "--budgets", blocked, "--update", "--no-bank", cwd=tmp_path)
    one_line_exit_3(p, "cannot write the budget file", "a-file")


def _mode_bits_apply():
    """A preexec_fn under which read-only mode bits stop the child: none for a user, and for root
    (whom the bits do not stop) one that drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the
    child's capability bounding set, so that its exec'd root has neither."""
    if os.geteuid() != 0:
        return None
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    pr_capbset_drop, cap_dac_override, cap_dac_read_search = 24, 1, 2

    def drop():
        for cap in (cap_dac_override, cap_dac_read_search):
            if libc.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")
    try:
        subprocess.run(["true"], preexec_fn=drop, check=True)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("root here cannot drop CAP_DAC_OVERRIDE (no CAP_SETPCAP): mode bits do not stop it")
    return drop


def test_read_only_directories_exit_3(tmp_path, report_dir):
    """chmod a-w: run, gate --update, gate --write and report merge exit 3 before any work, in one
    line naming the path and what to do; the report copied into the directory is left as it was."""
    drop = _mode_bits_apply()
    ro = tmp_path / "ro"
    ro.mkdir()
    copy = ro / "report"
    copy.mkdir()
    (copy / "report.json").write_bytes((report_dir / "report.json").read_bytes())
    for d in (copy, ro):
        d.chmod(0o555)
    try:
        p = nbx_cmd(*RUN, "--out", ro / "new", cwd=tmp_path, preexec_fn=drop)
        one_line_exit_3(p, "nbx run: cannot write the report", ro / "new", "Permission denied", "--out DIR")
        assert "measurements" not in p.stdout
        p = nbx_cmd("gate", "--report", copy, "--budgets", ro / "b.json", "--update", "--no-bank",
                    cwd=tmp_path, preexec_fn=drop)
        one_line_exit_3(p, "nbx gate: cannot write the budget file", ro, "--budgets FILE")
        p = nbx_cmd("gate", "--report", copy, "--budgets", ro / "b.json", "--write", "--no-bank",
                    cwd=tmp_path, preexec_fn=drop)
        one_line_exit_3(p, "cannot write the rewritten summary", copy)
        p = nbx_cmd("report", "merge", ro / "merged", copy, cwd=tmp_path, preexec_fn=drop)
        one_line_exit_3(p, "nbx report: cannot write the merged report", ro / "merged")
        assert sorted(x.name for x in copy.iterdir()) == ["report.json"]
        assert sorted(x.name for x in ro.iterdir()) == ["report"]
    finally:
        for d in (ro, copy):
            d.chmod(0o755)


def _file_size_limit(n: int):
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)     # EFBIG from write(), not death by signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
    return limit


def test_a_file_size_limit_exits_3_and_marks_the_report_incomplete(tmp_path):
    """Under `ulimit -f` of 8 KiB the run measures, then cannot write report.html (18 KiB): exit
    3 in one line naming the directory, the directory marked INCOMPLETE and released (no lock
    file), and no reader takes it for a report. Run again without the limit, it is complete."""
    out = tmp_path / "fsize"
    p = nbx_cmd(*RUN, "--suite", "bank", "--out", out, cwd=tmp_path, preexec_fn=_file_size_limit(8192))
    one_line_exit_3(p, "nbx run: cannot write the report", out, "File too large", "ulimit -f",
                    f"{out / INCOMPLETE_FILE} marks the directory incomplete")
    names = {x.name for x in out.iterdir()}
    assert INCOMPLETE_FILE in names and LOCK_FILE not in names, names
    assert not [n for n in names if n.endswith(".tmp")], names
    g = nbx_cmd("gate", "--report", out, "--no-bank", cwd=tmp_path)
    assert g.returncode == 2 and f"{out} is incomplete" in g.stderr and "Traceback" not in g.stderr, g.stderr
    again = nbx_cmd(*RUN, "--suite", "bank", "--out", out, cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    names = {x.name for x in out.iterdir()}
    assert "report.json" in names and not {INCOMPLETE_FILE, LOCK_FILE} & names, names
    assert nbx_cmd("gate", "--report", out, "--no-bank", cwd=tmp_path).returncode == 0


def test_a_file_size_limit_on_gate_update_exits_3_and_keeps_the_old_file(tmp_path, report_dir):
    path = tmp_path / "b.json"
    old = _big_budgets(400)                   # ~20 KiB, over the limit once rewritten
    budgets.save(old, path)
    p = nbx_cmd("gate", "--report", report_dir, "--budgets", path, "--update", "--no-bank", cwd=tmp_path,
                preexec_fn=_file_size_limit(8192))
    one_line_exit_3(p, "nbx gate: cannot write the budget file", path, "ulimit -f", "--budgets FILE")
    assert budgets.load(path) == old
    assert sorted(x.name for x in tmp_path.iterdir()) == ["b.json"]


def _big_budgets(n: int) -> dict:
    return {"schema": budgets.SCHEMA, "backend": "test",
            "budgets": {budgets.key(f"op{i:06d}", "float32"): {"max_ulp": 1.5} for i in range(n)}}


def test_sigkill_of_gate_update_never_truncates_the_budget_file(tmp_path, report_dir):
    """`nbx gate --update` killed at random moments: the budget file is always the old one or
    the new one, whole. A large file makes the write long enough for kills to land in it."""
    path = tmp_path / "budgets" / "b.json"
    old = _big_budgets(60000)
    rng = random.Random(1234)
    for _ in range(6):
        budgets.save(old, path)
        p = nbx_popen("gate", "--report", report_dir, "--budgets", path, "--update", "--no-bank",
                      cwd=tmp_path)
        time.sleep(rng.uniform(0.3, 3.0))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        data = json.loads(path.read_text())            # raises on a partial file
        new = "exp|float32" in data["budgets"]
        assert len(data["budgets"]) == len(old["budgets"]) + new
    assert not [x for x in path.parent.iterdir() if x.name != path.name and not x.name.endswith(".tmp")]


def test_sigkill_during_save_leaves_a_whole_file(tmp_path):
    """A process saving two large versions in turn, SIGKILLed at random: always one of them."""
    path = tmp_path / "b.json"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from nbx.harness.gate import budgets as B
        a = {{"schema": B.SCHEMA, "budgets": {{f"op{{i}}|float32": {{"max_ulp": 1.0}} for i in range(80000)}}}}
        b = {{"schema": B.SCHEMA, "budgets": {{f"op{{i}}|float64": {{"max_ulp": 2.0}} for i in range(90000)}}}}
        B.save(a, {str(path)!r})
        print("ready", flush=True)
        while True:
            B.save(b, {str(path)!r})
            B.save(a, {str(path)!r})
    """)
    rng = random.Random(99)
    for _ in range(5):
        p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 1.0))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        p.stdout.close()
        data = json.loads(path.read_text())
        assert len(data["budgets"]) in (80000, 90000)


def test_budget_update_under_the_lock_is_serialised(tmp_path):
    """budgets.locked excludes a second holder (another open of the directory) until released."""
    import fcntl
    path = tmp_path / "budgets" / "b.json"
    with budgets.locked(path):
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    assert list(path.parent.iterdir()) == []
