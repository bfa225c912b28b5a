"""The command line: `nbx run | gate | bank refresh | bank check | report merge | report diff | ops |
where | repro`.

`python -m nbx ...` is the same program. Exit codes: 0 success; 1 a failing gate, bank check or
diff (a regression); 2 a usage error or input that cannot be used (argparse's convention); 3 an
environment failure (a full disk or file-size limit, a read-only or unwritable path, a missing
optional dependency), said in one line on stderr with the path and what to do. `nbx run` and
`nbx report merge` exit with the verdict of the gate they print.

Building the parser imports nothing beyond the standard library (and nbx's backend choice, which
the package makes on import), so that `nbx --help` answers at once: each command imports Triton,
the kernels and the harness inside its function.
"""
from __future__ import annotations

import argparse
import errno
import itertools
import os
import sys
from pathlib import Path

from nbx.paths import reports_root

REPO = Path(__file__).resolve().parents[1]
REPORTS = reports_root()
HISTORY = REPORTS / "runs"
# The names of harness.cases.PROFILES, listed here so that the parser needs no import of the
# harness; tests/test_cli.py checks that the two agree.
PROFILE_NAMES = ("ci", "nightly", "exhaustive")
# harness.peers.TARGETS, likewise (tests/test_peers.py checks that the two agree)
TARGET_NAMES = ("nbx", "torch")
EXIT_TEXT = ("exit status: 0 success (a gate passed); 1 a failing gate, bank check or diff; 2 a usage "
             "error or input that cannot be used; 3 an environment failure: a full disk or file-size "
             "limit, a read-only or unwritable path, a missing optional dependency")
EXIT_ENVIRONMENT = 3


class UsageError(Exception):
    pass


class EnvironmentFailure(Exception):
    """Exit 3: the machine, not the arguments or the library, stops the command (a full disk, a
    file-size limit, a read-only or unwritable path, a missing optional dependency). The message is
    one line naming the path and what to do."""


# What to do about a write that failed, by errno; "{elsewhere}" names the option that writes
# somewhere else.
_ADVICE = {
    errno.ENOSPC: "the disk is full: free space, or write elsewhere ({elsewhere})",
    errno.EDQUOT: "the disk quota is used up: free space, or write elsewhere ({elsewhere})",
    errno.EFBIG: "a file would pass the file-size limit (`ulimit -f`): raise it, or write elsewhere ({elsewhere})",
    errno.EROFS: "the file system is read-only: write elsewhere ({elsewhere})",
    errno.EACCES: "no permission: make it writable, or write elsewhere ({elsewhere})",
    errno.EPERM: "no permission: make it writable, or write elsewhere ({elsewhere})",
    errno.ENOTDIR: "a file is in the way of the directory: move it, or write elsewhere ({elsewhere})",
    errno.EEXIST: "a file is in the way of the directory: move it, or write elsewhere ({elsewhere})",
}


def _cannot_write(e: OSError, what: str, where, elsewhere: str, note: str = "") -> EnvironmentFailure:
    """The exit-3 failure of a write of `what` to `where` that raised `e`, in one line."""
    name = errno.errorcode.get(e.errno, "") if e.errno else ""
    why = f"{e.strerror or e}" + (f" ({name})" if name else "")
    advice = _ADVICE.get(e.errno, "check the path, or write elsewhere ({elsewhere})").format(elsewhere=elsewhere)
    return EnvironmentFailure(f"cannot write {what} to {where}: {why}; {advice}{note}")


def _git_commit() -> str:
    """HEAD, with "+dirty" when tracked files differ from it (a copied working tree, as the GPU
    machine gets, carries an older .git: its HEAD alone would name code that did not run)."""
    import subprocess
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "nbx", "oracles"], cwd=REPO,
                               capture_output=True, timeout=10).returncode == 1
    except (OSError, subprocess.SubprocessError):
        return ""
    return head + "+dirty" if head and dirty else head


def _shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard must look like i/n, got {text!r}") from None
    if not (n >= 1 and 0 <= i < n):
        raise argparse.ArgumentTypeError(f"--shard {text}: need 0 <= i < n")
    return i, n


def _bits(text: str) -> tuple[int, int]:
    """--bits LO:HI, hex or decimal bit patterns, LO < HI <= 2^32."""
    try:
        lo, hi = (int(x, 0) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--bits must look like LO:HI (e.g. 0x3f800000:0x3f900000), "
                                         f"got {text!r}") from None
    if not 0 <= lo < hi <= 1 << 32:
        raise argparse.ArgumentTypeError(f"--bits {text}: need 0 <= LO < HI <= 2^32")
    return lo, hi


def _positive_int(flag: str):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} takes a whole number >= 1, got {text!r}") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{flag} takes a whole number >= 1, got {text!r}")
        return v
    return parse


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--job-timeout takes seconds > 0, got {text!r}") from None
    if not 0 < v < float("inf"):
        raise argparse.ArgumentTypeError(f"--job-timeout takes seconds > 0, got {text!r}")
    return v


def _count(flag: str, most: int):
    """A case count: a whole number or 2^k, 1 .. most."""
    def parse(text: str) -> int:
        t = text.strip().replace("**", "^")
        try:
            v = 2 ** int(t[2:]) if t.startswith("2^") else int(t, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} takes a count such as 65536 or 2^16, got {text!r}") from None
        if not 1 <= v <= most:
            raise argparse.ArgumentTypeError(f"{flag} {text}: need 1 <= N <= 2^{most.bit_length() - 1}")
        return v
    return parse


def _ulp(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of ulp, got {text!r}") from None
    if not v >= 0:
        raise argparse.ArgumentTypeError(f"expected a number of ulp >= 0, got {text!r}")
    return v


def _check_names(ops, dtypes):
    import nbx
    for o in ops or []:
        if o not in nbx.OPS:
            raise UsageError(f"unknown op {o!r}; `nbx ops` lists them")
    for d in dtypes or []:
        if d not in nbx.DTYPES:
            raise UsageError(f"unknown dtype {d!r}; allowed: {', '.join(nbx.DTYPES)}")


def _load_report(path, what: str = "report"):
    """A report from a path the user gave: a missing or unreadable one, or one whose directory is
    marked incomplete (a run stopped while writing it), is a usage error."""
    from nbx.harness.report import load_report
    from nbx.harness.report.json_report import incomplete_reason
    p = Path(path) if path else REPORTS / "latest"
    if not p.exists():
        raise UsageError(f"no {what} at {p}" + ("; run `nbx run` first" if not path else ""))
    why = incomplete_reason(p)
    if why:
        raise UsageError(f"cannot use the {what} at {p}: {why}")
    try:
        return load_report(p)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read the {what} at {p}: {e}") from None


def _gate_of(rep, **kw):
    """The gate's verdict for a report's summary; None for a lone shard, which is incomplete by
    construction (its merged report is gated)."""
    from nbx.harness.gate import verdict as gate
    return None if rep.shard is not None else gate.evaluate(rep, **kw)


def _exit_of(verdict, measurements, stopped: bool) -> int:
    """The exit status of a command that gated (or, for a lone shard, could not): the verdict's;
    a lone shard fails on what fails any gate of it, a job that raised or a stopped run."""
    if verdict is not None:
        return 0 if verdict.passed else 1
    return 1 if stopped or any(m.error for m in measurements if m.is_nbx) else 0


def _print_verdict(verdict, indent: str = "  ") -> None:
    """The verdict line, and the failures of a failing gate."""
    from nbx.harness.gate import verdict as gate
    print(f"{indent}{_verdict_line(verdict)}")
    if verdict is not None and not verdict.passed:
        for line in gate.format_failures(verdict.failures, limit=20).splitlines()[1:]:
            print(f"{indent}  {line}")


def _verdict_line(verdict) -> str:
    if verdict is None:
        return "gate: not evaluated (a lone shard; gate the merged report)"
    return "gate: PASS" if verdict.passed else f"gate: FAIL ({len(verdict.failures)} failure(s))"


def _writable(directory: Path, what: str, elsewhere: str) -> None:
    """Check, before any work, that `what` can be written into `directory` (made if missing):
    a command that measures for an hour and then cannot save fails at once instead (exit 3)."""
    from nbx.harness.report import check_writable_dir
    try:
        check_writable_dir(directory)
    except OSError as e:
        raise _cannot_write(e, what, directory, elsewhere) from None


def _claim(directory: Path, what: str, elsewhere: str):
    """The claim of `directory` (report.json_report.claim_dir, a DirClaim) after checking it can be
    written: another process's claim is a usage error, a directory that cannot be written an
    environment failure. Leaving its `with` block releases it and removes the lock file."""
    from nbx.harness.report import DirectoryInUse, claim_dir
    try:
        claim = claim_dir(directory)
    except DirectoryInUse as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise _cannot_write(e, what, directory, elsewhere) from None
    try:
        _writable(directory, what, elsewhere)
    except BaseException:
        claim.release()
        raise
    return claim


def _publish(rep, run_dir: Path, latest: Path | None, *, verdict, previous, what: str,
             elsewhere: str) -> None:
    """Write the report files into run_dir, complete or marked incomplete: the INCOMPLETE marker
    goes in first and comes out once every file is written, and only then does `latest` move to
    run_dir. A write that fails (a full disk, a file-size limit) is an environment failure whose
    message says the directory is marked incomplete."""
    from nbx.harness.report import atomic_symlink, write_report
    from nbx.harness.report.json_report import INCOMPLETE_FILE, mark_complete, mark_incomplete
    try:
        mark_incomplete(run_dir, run_id=rep.run_id)
        write_report(rep, run_dir, None, verdict=verdict, previous=previous)
        mark_complete(run_dir)
    except OSError as e:
        marker = run_dir / INCOMPLETE_FILE
        note = (f" ({marker} marks the directory incomplete)" if marker.exists() else
                " (nothing was written)")
        raise _cannot_write(e, what, run_dir, elsewhere, note) from None
    if latest is not None:
        try:
            atomic_symlink(run_dir, latest)
        except OSError as e:
            raise _cannot_write(e, "the `latest` link", latest.parent, "--out, which moves no link",
                                f" (the report in {run_dir} is complete)") from None


# ---------------------------------------------------------------------- commands
def cmd_run(a) -> int:
    import signal
    import socket

    import nbx
    from nbx.harness import progress
    from nbx.harness.run import runner
    from nbx.harness.report import Report, find_previous, new_run_id
    from nbx.harness.report.json_report import mark_incomplete
    from nbx.harness.run.resume import JobStore
    argv, run_id = list(a.argv), new_run_id()
    resume_dir = Path(a.resume) if a.resume else None
    if resume_dir is not None:
        a, argv, run_id = _resumed(a, resume_dir)
    _check_names(a.op, a.dtype)
    names = _targets(a.target, a.target_as, a.target_arrays)
    # callables and no --op: the ops they implement (written into argv, so the gate asks for those)
    implied = [] if a.op else list(dict.fromkeys(n.partition("=")[2].partition("@")[0]
                                                 for n in names if ":" in n))
    ops = a.op or implied or None
    # The report's directory is claimed and known writable before any measuring: a second run
    # into it fails here with exit 2, a directory that cannot be written with exit 3, and neither
    # after the work.
    executor, sizes = _executor(a), _sizes(a)
    run_dir = resume_dir or (Path(a.out) if a.out else HISTORY / run_id)
    latest = None if a.out else REPORTS / "latest"
    budgets = Path(a.budgets) if a.budgets else None
    with _claim(run_dir, "the report", "--out DIR"):
        if latest is not None:
            _writable(latest.parent, "the `latest` link", "--out DIR, which moves no link")
        i, n = a.shard
        progress.configure(mode=a.progress, tag=f"shard {i}/{n}" if n > 1 else "")
        plan = runner.Plan.of(ops, a.dtype, a.suite, a.profile, a.seed, a.shard, a.bits, names, sizes,
                              nbx.backend_id())
        store = JobStore(run_dir)
        # Marked incomplete from the start: a run killed while measuring leaves a directory that no
        # reader takes for a report, and whose finished jobs `--resume` keeps.
        mark_incomplete(run_dir, run_id=run_id)
        if resume_dir is None:
            store.start(run_id=run_id, argv=argv, plan=plan)

        def _stop(*_):
            raise KeyboardInterrupt
        handler = signal.getsignal(signal.SIGTERM)
        runner.INTERRUPTED.clear()
        try:
            # a time limit (timeout, a scheduler) stops the measuring and still gets a report
            signal.signal(signal.SIGTERM, _stop)
            try:
                ms = runner.execute(plan, progress=not a.quiet, executor=executor, store=store)
            except runner.ExecutorFailed as e:
                raise EnvironmentFailure(f"{_scheduling(a)}: {e}; the jobs finished so far are in {store.dir}: "
                                         f"`nbx run --resume {run_dir}` runs the rest") from None
            # what was measured is written whole: a SIGTERM from here on waits for it
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            info = nbx.backend_info()
            ran_on = executor.describe() if executor is not None else {
                "executor": "in-process (--jobs 1)", "nodes": socket.gethostname(),
                "gpus": info["device"] if info.get("backend") == "cuda" else "none"}
            info.update(ran_on)
            info.update({k: str(v) for k, v in (("tuples", a.tuples), ("float64_cases", a.float64_cases)) if v})
            argv = argv + [f"--op={o}" for o in implied] + [f"--interrupted={d}/{t}" for d, t in
                                                                     runner.INTERRUPTED]
            rep = Report(run_id=run_id, backend=info, git_commit=_git_commit(), profile=a.profile,
                         argv=argv, measurements=ms)
            verdict = _gate_of(rep, budgets_path=budgets)
            previous = find_previous(rep, a.history)
            _publish(rep, run_dir, latest, verdict=verdict, previous=previous, what="the report",
                     elsewhere="--out DIR")
            if not runner.INTERRUPTED and store.holds_all(plan.jobs()):
                # the report holds every job: DIR/jobs/ stays only while a job is missing (--resume)
                try:
                    store.remove()
                except OSError:
                    pass
        finally:
            signal.signal(signal.SIGTERM, handler)
    own = [m for m in ms if m.is_nbx]
    errors = sum(1 for m in own if m.error)
    print(f"nbx run: {len(own)} measurements on {info['id']} ({info['device']}), profile {a.profile}; "
          f"{errors} raised; report in {run_dir}")
    print(f"  ran on: {ran_on['executor']}; nodes {ran_on['nodes']}; GPUs {ran_on['gpus']}")
    for name in names[1:]:
        who = name.partition("=")[0]
        peer = [m for m in ms if m.target == who]
        where = peer[0].target_info if peer else who
        print(f"  peer {where}: {len(peer)} measurements, {sum(1 for m in peer if m.error)} raised "
              f"(reported, not gated)")
    for d, t in runner.INTERRUPTED:
        print(f"  stopped after {d} of {t} jobs (SIGTERM or SIGINT): the rest were not measured; "
              f"`nbx run --resume {run_dir}` runs them")
    for m in [m for m in own if m.error][:10]:
        print(f"  {m.op} {m.dtype} {m.suite}: {m.error}")
    _print_verdict(verdict)
    print(f"  summary: {run_dir / 'summary.md'}")
    return _exit_of(verdict, ms, bool(runner.INTERRUPTED))


# `nbx run`'s options that say how and where a run executes, not what it measures: a resumed run
# takes these from its own command line and every other option from the run it resumes.
SCHEDULING_OPTIONS = ("jobs", "job_timeout", "executor", "address", "resume", "out", "progress", "quiet",
                      "history", "budgets")


def _resumed(a, directory: Path):
    """The options of the run recorded in directory (run/resume.py) with this command's scheduling
    options, its argv and its run id. An option of what to measure given here that differs from
    the recorded one is a usage error: the resumed report must be the run's."""
    from nbx.harness.run.resume import JobStore
    if a.out and Path(a.out).resolve() != directory.resolve():
        raise UsageError(f"nbx run --resume {directory}: the report goes into {directory}; leave out --out")
    try:
        record = JobStore(directory).record()
    except ValueError as e:
        raise UsageError(f"nbx run --resume {directory}: {e}") from None
    argv = [str(x) for x in record["argv"]]
    try:
        b = parser().parse_args(argv)
    except SystemExit:
        raise UsageError(f"nbx run --resume {directory}: its recorded command line no longer parses: "
                         f"nbx {' '.join(argv)}") from None
    if b.cmd != "run":
        raise UsageError(f"nbx run --resume {directory}: its record is not of `nbx run`: nbx {' '.join(argv)}")
    default = parser().parse_args(["run"])
    for k, v in vars(a).items():
        if k in SCHEDULING_OPTIONS or k in ("fn", "cmd", "argv"):
            continue
        if v != getattr(default, k, None) and v != getattr(b, k, None):
            raise UsageError(f"nbx run --resume {directory}: --{k.replace('_', '-')} comes from the run being "
                             f"resumed (nbx {' '.join(argv)}); leave it out")
    for k in SCHEDULING_OPTIONS:
        setattr(b, k, getattr(a, k))
    # the report goes where the run's went: `latest` moves only if the run moved it
    b.out = str(directory) if any(x == "--out" or x.startswith("--out=") for x in argv) else None
    b.argv = argv
    return b, argv, str(record["run_id"])


def _scheduling(a) -> str:
    return f"--executor {a.executor}" if a.executor != "pool" else f"--jobs {a.jobs}"


def _executor(a):
    """The executor of `nbx run`'s scheduling options (run/pool.py, run/ray_executor.py), or None
    for the in-process path (`--jobs 1` without a time limit). Ray not installed: exit 3."""
    if a.address is not None and a.executor != "ray":
        raise UsageError("nbx run --address: only with --executor ray (the pool runs on this machine)")
    if a.executor == "ray":
        from nbx.harness.run import ray_executor
        try:
            ray_executor.import_ray()
        except ray_executor.RayUnavailable as e:
            raise EnvironmentFailure(f"--executor ray: {e}") from None
        return ray_executor.RayExecutor(a.address, jobs_per_gpu=a.jobs, job_timeout=a.job_timeout)
    if a.jobs > 1 or a.job_timeout is not None:     # a time limit needs a worker it can kill
        from nbx.harness.run.pool import LocalPool
        return LocalPool(a.jobs, a.job_timeout)
    return None


def _sizes(a) -> dict:
    """values.profile_sizes's overrides from --tuples and --float64-cases."""
    sizes = {}
    if a.tuples:
        sizes.update(pairs32=a.tuples, pairs32_interpreter=a.tuples)
    if a.float64_cases:
        sizes.update(sweep64=a.float64_cases, pairs64=a.float64_cases)
    return sizes


def _targets(given, ops_as=None, arrays=None) -> tuple:
    """The targets of `nbx run --target ...`: nbx first, always (it is what the run measures and
    the gate judges), then each peer asked for, whose library must import (else an environment
    failure that names the option and how to install it), and each callable `module:function`, with
    the op of its --as (default: the function's name) and the arrays of its --target-arrays, which
    must import and name an op (else a usage error naming it)."""
    from nbx.harness.targets import callables
    from nbx.harness.targets import peers
    given = list(given or [])
    for i, n in enumerate(given):
        if callables.is_callable_name(n):
            path = n.partition("=")[0].partition("@")[0]
            fn = path.rpartition(":")[2].rpartition(".")[2]
            given[i] = callables.callable_name(path, (ops_as or {}).get(i, fn), (arrays or {}).get(i, "numpy"))
            try:
                callables.load(given[i])
            except ValueError as e:
                raise UsageError(str(e)) from None
            except ImportError as e:            # the array library of --target-arrays
                raise EnvironmentFailure(f"--target {path}: --target-arrays needs {e.name or e}, which cannot be "
                                         f"imported here ({e})") from None
    names = [peers.NBX] + [n for n in dict.fromkeys(given) if n != peers.NBX]
    for n in names[1:]:
        try:
            peers.load(n)
        except peers.PeerUnavailable as e:     # an optional dependency missing: exit 3
            raise EnvironmentFailure(str(e)) from None
    return tuple(names)


def cmd_gate(a) -> int:
    import contextlib

    from nbx.harness.gate import verdict as gate
    from nbx.harness.report import find_previous
    _check_names(a.op, a.dtype)
    rep = _load_report(a.report)
    if a.update:
        return _update_budgets(a, rep)
    claim = contextlib.nullcontext()
    if a.write:
        target = Path(a.report) if a.report else REPORTS / "latest"
        run_dir = target if target.is_dir() else target.parent
        claim = _claim(run_dir, "the rewritten summary", "nothing: gate without --write")
    with claim:
        verdict = gate.evaluate(rep, budgets_path=Path(a.budgets) if a.budgets else None, ops=a.op,
                                dtypes=a.dtype, check_bank=not a.no_bank)
        print(f"nbx gate: report {rep.run_id} ({verdict.backend_id}, profile {rep.profile}) against "
              f"{verdict.budgets_path}")
        print(gate.format_failures(verdict.failures))
        if a.write:
            _publish(rep, run_dir, None, verdict=verdict, previous=find_previous(rep, a.history),
                     what="the rewritten summary", elsewhere="nothing: gate without --write")
            print(f"nbx gate: rewrote the summary, junit.xml and report.html in {run_dir}")
    return 1 if verdict.failures else 0


def _update_budgets(a, rep) -> int:
    """`nbx gate --update`: new budget entries from a report, into the budget file (created when
    there is none: how a new backend starts). It writes and gates nothing else, and says so, with
    the measurements that got no entry (the gate fails on those)."""
    import math

    from nbx.harness.gate import budgets
    bid = rep.backend_id
    if not bid:
        import nbx
        bid = nbx.backend_id()
    bpath = Path(a.budgets) if a.budgets else budgets.path_for(bid)
    _writable(bpath.parent, "the budget file", "--budgets FILE")
    src = {"run_id": rep.run_id, "profile": rep.profile, "commit": rep.git_commit, "backend": bid}
    # load, update and save under one lock: a concurrent --update is applied after this one,
    # not overwritten by it (budgets.save alone is atomic but not a read-modify-write)
    try:
        with budgets.locked(bpath):
            new, changes = budgets.update(budgets.load(bpath, missing_ok=True), rep.measurements, everything=a.all,
                                    raise_only=a.raise_only, source=src)
            new["backend"] = bid
            budgets.save(new, bpath)
    except OSError as e:
        raise _cannot_write(e, "the budget file", bpath, "--budgets FILE") from None
    print(f"budgets {bpath}: {len(changes)} change(s)")
    for k, old, v in changes:
        print(f"  {k:<40} {old if old is not None else '(new)'} -> {v}")
    for _, why in budgets.unexplained(new):
        print(f"  needs a reason: {why}; add \"reason\" to the entry (the gate fails until it has one)")
    skipped = [m for m in rep.measurements if m.is_nbx and (m.error or not m.cases or not math.isfinite(
        m.order_max_ulp if m.order_cases else m.max_ulp))]
    for m in skipped[:20]:
        why = f"raised: {m.error}" if m.error else "no cases" if not m.cases else "a figure that is not finite"
        print(f"  no entry from {m.op} {m.dtype} {m.suite} ({why}); the gate fails on it")
    for s in rep.option_values("--interrupted") or ():
        print(f"  the run was stopped after {s} jobs: the jobs it did not measure have no entries")
    print("gate: not evaluated (--update writes budgets only); review the diff, then run `nbx gate`")
    return 0


def cmd_bank(a) -> int:
    """Exit 1 for a bank that fails its check or a refresh or finish that refuses, 3 (one line on
    stderr naming the path) for a bank directory that cannot be written."""
    from nbx.harness.suites import bank
    from nbx.harness import progress
    def cannot_write(e: Exception) -> int:
        if isinstance(e, OSError):
            e = f"cannot write to {e.filename or bank.root()} ({e.strerror or e})"
        print(f"nbx bank {a.bank_cmd}: {e}", file=sys.stderr)
        return 3

    if a.bank_cmd == "finish":
        try:
            r = bank.finish()
        except (bank.BankNotWritable, OSError) as e:
            return cannot_write(e)
        except bank.BankError as e:
            print(f"nbx bank finish: {e}")
            return 1
        print(f"nbx bank finish: {'completed an interrupted refresh' if r['rolled_forward'] else 'no refresh pending'}"
              f", {len(r['temps'])} leftover temp file(s) and {int(r['lock'])} leftover lock file removed")
        for rel in r["temps"]:
            print(f"  removed {rel}")
        return 0
    _check_names(a.op, a.dtype)
    if a.bank_cmd == "refresh":
        progress.configure(mode=a.progress)
        try:
            bank.refresh(a.op, a.dtype, progress=not a.quiet)
        except (bank.BankNotWritable, OSError) as e:
            return cannot_write(e)
        except bank.BankError as e:
            print(f"nbx bank refresh: {e}")
            return 1
        return 0
    if a.sample < 0:
        raise UsageError(f"--sample must be >= 0, not {a.sample}")
    problems = bank.check(sample=a.sample, ops=a.op, dtypes=a.dtype, seed=a.seed, full=a.full,
                          log=print, progress=a.full and not a.quiet)
    if problems:
        print(f"nbx bank check: {len(problems)} problem(s)")
        for p in problems[:50]:
            print(f"  {p}")
        if len(problems) > 50:
            print(f"  ... and {len(problems) - 50} more")
        return 1
    m = bank.load_manifest()
    verified = ("every case agrees with mpmath (exhaustive)" if a.full else
                f"{a.sample} sampled cases agree with mpmath (`--full` checks every case)")
    print(f"nbx bank check: {len(m['files'])} files, hashes match, every manifest and header field agrees "
          f"with the files and the registry, every input the generator draws is present, no stray or "
          f"leftover files, every op and dtype present, {verified}")
    return 0


def cmd_report(a) -> int:
    from nbx.harness.report import diff_reports, find_previous, format_diff, merge_reports
    from nbx.harness.report.diff import incomparable
    if a.report_cmd == "history":
        from nbx.harness.report import format_history, load_history
        if a.runs < 2:
            raise UsageError(f"--runs must be at least 2 (this report and one earlier), not {a.runs}")
        rep = _load_report(a.report or REPORTS / "latest")
        h = load_history(rep, a.history, runs=a.runs)
        print(format_history(h), end="")
        return 1 if h.regressions else 0
    if a.report_cmd == "merge":
        shards = [_load_report(p, "shard report") for p in a.shards]
        try:
            merged = merge_reports(shards)
        except ValueError as e:
            raise UsageError(str(e)) from None
        # the merged report keeps the first shard's argv: every shard's stop goes with it, so that
        # the gate names the jobs a time limit cut from any shard
        merged.argv = list(merged.argv) + [f"--interrupted={v}" for r in shards[1:]
                                           for v in r.option_values("--interrupted") or ()]
        out = Path(a.out)
        latest = REPORTS / "latest" if a.latest else None
        if latest is not None:
            _writable(latest.parent, "the `latest` link", "no --latest")
        with _claim(out, "the merged report", "another OUT"):
            verdict = _gate_of(merged, budgets_path=Path(a.budgets) if a.budgets else None)
            _publish(merged, out, latest, verdict=verdict, previous=find_previous(merged, a.history),
                     what="the merged report", elsewhere="another OUT")
        print(f"merged {len(a.shards)} shards ({len(merged.measurements)} measurements) into {a.out}")
        _print_verdict(verdict)
        print(f"  summary: {out / 'summary.md'}")
        return _exit_of(verdict, merged.measurements, bool(merged.option_values("--interrupted")))
    old, new = _load_report(a.old, "old report"), _load_report(a.new, "new report")
    why = incomparable(old, new)
    if why and not a.force:
        raise UsageError(f"report diff: {old.run_id} and {new.run_id} are not comparable: "
                         + "; ".join(why) + " (--force compares them anyway)")
    d = diff_reports(old, new, tolerance=a.tolerance)
    print(format_diff(d), end="")
    return 1 if d.has_regressions else 0


def cmd_ops(a) -> int:
    import json

    import nbx
    from nbx.harness.gate import budgets
    data = budgets.load(budgets.path_for(nbx.backend_id()), missing_ok=True)["budgets"]     # none yet: no column
    rows = []
    for name, spec in nbx.OPS.items():
        bud = [f"{d.name}:{budgets.describe(data[budgets.key(name, d.name)])}" for d in spec.dtypes
               if budgets.key(name, d.name) in data]
        rows.append((name, spec.family, spec.arity, ",".join(spec.dtype_names), " ".join(bud)))
    if a.json:
        print(json.dumps([dict(zip(("op", "family", "arity", "dtypes", "budgets"), r)) for r in rows], indent=1))
        return 0
    print(f"{len(rows)} ops; budgets for {nbx.backend_id()}")
    print(f"{'op':<22} {'family':<12} {'n':<2} {'dtypes':<70} budgets (max ulp)")
    for r in rows:
        print(f"{r[0]:<22} {r[1]:<12} {r[2]:<2} {r[3]:<70} {r[4]}")
    return 0


def _where(fn) -> str:
    """path:line of a function (a @triton.jit one through its .fn), relative to the checkout."""
    import inspect
    fn = getattr(fn, "fn", fn)
    try:
        path, line = inspect.getsourcefile(fn), inspect.getsourcelines(fn)[1]
    except (TypeError, OSError):
        return repr(fn)
    return f"{_rel(path)}:{line} ({fn.__name__})"


def _rel(path) -> str:
    p = Path(str(path).split(":")[0]).resolve()
    rest = str(path)[len(str(path).split(":")[0]):]
    return (str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p)) + rest


def p_default(spec, name: str):
    return next(p.default for p in spec.params if p.name == name)


def cmd_where(a) -> int:
    """Where an op lives: its spec, body, fast path, oracle, bank files and budgets."""
    import math

    import nbx
    from nbx.oracles import ORACLES
    from nbx.harness.suites import bank
    from nbx.harness.gate import budgets
    _check_names([a.op], None)
    spec = nbx.OPS[a.op]
    print(f"{spec.name}: family {spec.family}, {spec.arity} operand(s), dtypes {', '.join(spec.dtype_names)}")
    print(f"  spec     {_rel(spec.declared_at)}")
    from nbx.ops.registry import Choices, Select
    if isinstance(spec.body, Choices):        # one row per value of the choice parameter
        for value, body in spec.body.table.items():
            print(f"  body     {spec.body.param}={value!r} {_where(body.pick if isinstance(body, Select) else body)}")
    else:
        print(f"  body     {_where(spec.body.pick if isinstance(spec.body, Select) else spec.body)}")
    for params, fast, _ in spec.fast32_variants():
        label = "".join(f" {k}={v}" for k, v in params.items())
        e = f"2^{math.log2(fast.bound):g}" if fast.k else "exact values"
        hints = [f"window k={fast.k} (E = {e})"]
        if fast.table is not None:
            hints.append(f"table of {len(fast.table)}")
        hints += [h for h, on in (("piece mask", fast.pieces), (f"tile {fast.block}", fast.block),
                                  (f"at most {fast.max_registers} registers", fast.max_registers)) if on]
        print(f"  fast32  {label} {_where(fast.evaluate)}: {', '.join(hints)}")
    from nbx.kernels import hard32
    for path in sorted(hard32.CASES_DIR.glob(f"{spec.name}*.json")):
        if path.stem == spec.name or path.stem.startswith(spec.name + "@"):
            hard = hard32.cases(path.stem)
            print(f"  hard32   {_rel(path)}: {hard.n} float32 inputs within {hard.k + 1} float64 ulps of a "
                  f"midpoint, with their correctly rounded results (tools/hard_cases.py)")
    o = ORACLES[spec.name]
    print(f"  oracle   {_rel(o.declared_at) if getattr(o, 'declared_at', '') else 'nbx/oracles/'} "
          f"(ORACLES[{spec.name!r}])")
    v = spec.verify
    declared = [d.name for d in v.correctly_rounded if d in spec.dtypes]
    if declared:
        print(f"  rounding correctly rounded on {', '.join(declared)} (the gate allows 0 misrounded)")
    if v.not_cr:
        print(f"  rounding not declared correctly rounded on float32: {v.not_cr}")
    from nbx.oracles.device import DEVICE_ORACLES
    for label, d in sorted(DEVICE_ORACLES.items()):
        if label == spec.name or label.startswith(spec.name + ":"):
            extra = "".join(f", {k}" for k, on in (("EXACT_AT", d.exact_at), ("residual", d.residual)) if on)
            print(f"  device   {label} {_where(d.fn)}: k = {d.k:g}{extra}")
    from nbx.oracles.order import ORDER_ORACLES
    choices = [p for p in spec.params if p.kind == "choice"]
    for values in itertools.product(*[p.choices for p in choices]):
        params = {p.name: v for p, v in zip(choices, values)}
        label = spec.name + "".join(f":{k}={v}" for k, v in params.items() if v != p_default(spec, k))
        order = spec.order(params) if callable(spec.order) else spec.order
        if order is not None:
            oo = ORDER_ORACLES.get(label) or ORDER_ORACLES[spec.name]
            print(f"  order    {label} on {', '.join(d.name for d in order.dtypes)}: {order.steps}; "
                  f"oracle {_where(oo.fn)}")
    root = bank.root()
    dirs = sorted(d for d in root.glob(f"{spec.name}*") if d.name == spec.name or d.name.startswith(spec.name + "@"))
    for d in dirs:
        print(f"  bank     {_rel(d)}/: {', '.join(sorted(f.stem for f in d.glob('*.txt')))}")
    for path in sorted(budgets.ROOT.glob("*.json")):
        data = budgets.load(path)["budgets"]
        keys = [k for k in data if k.split("|")[0].split(":")[0] == spec.name]
        labels = sorted({k.split("|")[0] for k in keys})
        for label in labels:
            row = ", ".join(f"{k.split('|')[1]} {budgets.describe(data[k])}" for k in keys if k.split("|")[0] == label)
            print(f"  budgets  {_rel(path)} \"{label}|<dtype>\": {row}")
    print(f"  docs     docs/OPS.md ({spec.family})")
    return 0


def _repro_target(a):
    """The Target of `nbx repro OP DTYPE`: OP as a report labels it (`gelu:approximate=tanh`),
    plus any --param k=v (values parsed as the label prints them: 2, 0.5, tanh, None)."""
    import nbx
    from nbx.harness.report.json_report import parse_label, parse_param_value
    from nbx.harness.targets.target import Target
    try:
        op, params = parse_label(a.op)
    except ValueError as e:
        raise UsageError(str(e)) from None
    for kv in a.param:
        k, eq, v = kv.partition("=")
        if not eq or not k:
            raise UsageError(f"--param {kv!r}: expected name=value")
        params[k] = parse_param_value(v)
    _check_names([op], [a.dtype])
    known = [p.name for p in nbx.OPS[op].params]
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise UsageError(f"{op} has no parameter {', '.join(unknown)} (parameters: {', '.join(known) or 'none'})")
    return Target(op, params, nbx.DTYPES[a.dtype])


def _operand(text: str, d):
    """One operand of the dtype d from its bit pattern in hex."""
    import numpy as np
    try:
        bits = int(text, 16)
    except ValueError:
        raise UsageError(f"{text!r} is not a bit pattern in hex (e.g. 0x3f800000)") from None
    width = 1 if d.is_bool else 8 * d.itemsize
    if not 0 <= bits < (1 << width):
        raise UsageError(f"{text} does not fit the {width} bits of {d.name}")
    u = np.array([bits], dtype=np.uint64)
    if d.is_bool:
        return u.astype(bool)
    return u.astype(d.uint_np).view(d.np)


def cmd_repro(a) -> int:
    import numpy as np

    import nbx
    from nbx.harness.scoring.host import score
    t = _repro_target(a)
    dts = t.operand_dtypes()
    if len(a.bits) != len(dts):
        raise UsageError(f"{t.label} takes {len(dts)} operand(s) ({', '.join(d.name for d in dts)}), "
                         f"got {len(a.bits)}")
    arrays = [_operand(b, d) for b, d in zip(a.bits, dts)]
    try:
        got = t.run(arrays)
    except (TypeError, ValueError) as e:      # the op refused its parameters or operands
        raise UsageError(f"{t.label} {a.dtype}: {e}") from None
    s = score(t, arrays, got)
    print(f"{t.label} {a.dtype} on {nbx.backend_id()}")
    for i, (b, arr) in enumerate(zip(a.bits, arrays)):
        print(f"  input {i}: {b} = {arr[0]!r}")
    out = nbx.DTYPES[got.dtype.name] if got.dtype.name in nbx.DTYPES else None
    gbits = int(got.view(np.uint8 if got.itemsize == 1 else f"u{got.itemsize}")[0])
    print(f"  got      {hex(gbits)} = {got[0]!r}")
    exp = int(s.expected_bits[0])
    shown = ""
    if out is not None and not out.is_bool:
        shown = f" = {np.array([exp], dtype=np.uint64).astype(out.uint_np).view(out.np)[0]!r}"
    elif out is not None:
        shown = f" = {bool(exp)!r}"
    print(f"  expected {hex(exp)}{shown}")
    if s.exact:                               # an integer or bool result is right or wrong
        print(f"  {'right' if not s.not_cr[0] else 'WRONG'} (an exact result)")
    else:
        print(f"  ulp error {s.err[0]:.6g}{' (special mismatch)' if s.special[0] else ''}; "
              f"{'correctly rounded' if not s.not_cr[0] else 'NOT correctly rounded'}")
    if s.order is not None:                   # a compound op: the gated figure, against its order
        err, bits = s.order
        value = np.array([int(bits[0])], dtype=np.uint64).view(np.float64)[0] if got.itemsize == 8 else ""
        print(f"  order    {hex(int(bits[0]))} = {value!r}: {err[0]:.6g} ulp from the documented evaluation "
              f"order ({t.order.steps})")
    return 0


# ---------------------------------------------------------------------- parser
def _target(text: str) -> str:
    """--target: a peer's name, or package.module:function."""
    if text in TARGET_NAMES or ":" in text:
        return text
    raise argparse.ArgumentTypeError(f"--target {text!r}: allowed {', '.join(TARGET_NAMES)} or "
                                     f"package.module:function")


class _AfterTarget(argparse.Action):
    """--as and --target-arrays: a value for the --target module:function given before it, kept
    by that --target's position."""

    def __call__(self, parser, namespace, value, option_string=None):
        given = getattr(namespace, "target", None) or []
        if not given or ":" not in given[-1]:
            parser.error(f"{option_string} {value}: give it after the --target package.module:function it "
                         f"applies to")
        by_target = dict(getattr(namespace, self.dest, None) or {})
        if len(given) - 1 in by_target:
            parser.error(f"{option_string} given twice for --target {given[-1]}")
        by_target[len(given) - 1] = value
        setattr(namespace, self.dest, by_target)


def _sub(sub, name: str, help_text: str, **kw) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help_text, description=help_text, allow_abbrev=False,
                          epilog=EXIT_TEXT, **kw)


def parser() -> argparse.ArgumentParser:
    """The argument parser. Imports nothing: see the module docstring."""
    p = argparse.ArgumentParser(prog="nbx", description="nbx: element-wise Triton ops and their "
                                "precision harness", epilog=EXIT_TEXT, allow_abbrev=False)
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    history_help = ("where to look for the previous report of the same profile, backend and seed, "
                    "which the summary's changes are against (default: reports/runs)")
    budgets_help = ("the budget file the report is gated with (default: reports/budgets/<backend-id>.json); "
                    "a missing one fails the gate")

    r = _sub(sub, "run", "measure op x dtype x suite and write a report (report.json, summary.md, "
             "junit.xml, report.html)")
    r.add_argument("--op", action="append", metavar="OP",
                   help="an op name (repeatable); default: every op")
    r.add_argument("--dtype", action="append", metavar="DTYPE",
                   help="a dtype name (repeatable); default: every dtype of each op")
    r.add_argument("--suite", action="append", metavar="SUITE",
                   help="bank, exhaustive16, sweep, pairs, layout or intdiv (repeatable); default: all")
    r.add_argument("--profile", default="ci", choices=PROFILE_NAMES,
                   help="how many cases: ci (default), nightly or exhaustive (docs/PRECISION.md)")
    r.add_argument("--out", metavar="DIR",
                   help="report directory (default: reports/runs/<run-id>, and reports/latest points at it)")
    r.add_argument("--shard", type=_shard, default=(0, 1), metavar="I/N",
                   help="run every N-th job starting at I (merge the shards with `nbx report merge`)")
    r.add_argument("--seed", type=int, default=0, help="seed of the sampled cases (default 0)")
    r.add_argument("--bits", type=_bits, metavar="LO:HI",
                   help="unary float32 sweeps and 16-bit exhaustive16 jobs take only the bit patterns "
                        "LO..HI-1, float32 binary/ternary pairs jobs only the stratified tuples LO..HI-1 "
                        "(to reproduce a range or split an exhaustive run; decided on the device where "
                        "the op has a device oracle)")
    r.add_argument("--history", default=str(HISTORY), metavar="DIR", help=history_help)
    r.add_argument("--budgets", metavar="FILE", help=budgets_help)
    r.add_argument("--progress", choices=("auto", "bar", "lines"), default="auto",
                   help="progress on stderr: a bar with rate and ETA (on a terminal, the auto "
                        "default), or a plain line every 30 s (lines: logs, parallel shards)")
    r.add_argument("--quiet", action="store_true", help="no progress output")
    r.add_argument("--target", action="append", type=_target, metavar="TARGET",
                   help="also measure a peer's op of the same name on the same inputs and value suites: "
                        "torch (needs the optional extra: see README.md), or a function of yours, "
                        "package.module:function, imported by that path (repeatable; nbx, the default, "
                        "is always measured and alone is gated; with callables and no --op, the ops they "
                        "implement are measured)")
    r.add_argument("--as", dest="target_as", action=_AfterTarget, metavar="OP",
                   help="the op the --target module:function before it implements (default: the "
                        "function's name)")
    r.add_argument("--target-arrays", action=_AfterTarget, metavar="LIB",
                   choices=("numpy", "torch", "cupy", "jax", "nbx"),
                   help="the arrays the --target module:function before it takes and returns: numpy "
                        "(default), torch, cupy, jax or nbx (operands cross by DLPack)")
    r.add_argument("--jobs", type=_positive_int("--jobs"), default=1, metavar="N",
                   help="run the jobs on N local worker processes, each taking the next job (costliest "
                        "first) as it finishes one (default 1: in this process); with --executor ray, "
                        "the jobs that share one GPU on the CUDA backend")
    r.add_argument("--job-timeout", type=_seconds, metavar="S",
                   help="a job still running after S seconds has its worker killed and is reported as "
                        "timed out, which fails the gate (the jobs then run in worker processes)")
    r.add_argument("--executor", choices=("pool", "ray"), default="pool",
                   help="where the jobs run: pool (local worker processes, the default) or ray (Ray tasks "
                        "on a cluster: pip install -e .[ray]; README.md)")
    r.add_argument("--address", metavar="ADDR",
                   help="with --executor ray: the cluster's address (auto, host:port, ray://host:10001; "
                        "default: a local cluster started for the run)")
    r.add_argument("--resume", metavar="DIR",
                   help="finish the run whose report directory is DIR: only the jobs it lacks run, with "
                        "its options (the scheduling options may differ), and its report goes into DIR")
    r.add_argument("--tuples", type=_count("--tuples", 1 << 32), metavar="N",
                   help="stratified operand tuples of each float32 binary and ternary pairs job, decided "
                        "on the device (N or 2^k; default: the profile's, 2^32 in exhaustive on CUDA)")
    r.add_argument("--float64-cases", type=_count("--float64-cases", 1 << 32), metavar="N",
                   help="host-decided cases of each float64 sweep and pairs job (N or 2^k; default: the "
                        "profile's, 2^14 sweep and 2^12 pairs in exhaustive)")
    r.set_defaults(fn=cmd_run)

    g = _sub(sub, "gate", "compare a report with the budgets; exit 1 on any failure (reads the "
             "report, writes nothing unless --write or --update)")
    g.add_argument("--report", metavar="PATH", help="report.json or its directory (default: reports/latest)")
    g.add_argument("--budgets", metavar="FILE",
                   help="budget file (default: reports/budgets/<backend-id>.json); a missing one fails "
                        "the gate, and --update creates it")
    g.add_argument("--op", action="append", metavar="OP",
                   help="gate only this op (repeatable; default: the ops the run was asked for)")
    g.add_argument("--dtype", action="append", metavar="DTYPE",
                   help="gate only this dtype (repeatable; default: the run's dtypes)")
    g.add_argument("--write", action="store_true",
                   help="rewrite the report's summary.md, junit.xml and report.html with this "
                        "verdict (these budgets and selection)")
    g.add_argument("--history", default=str(HISTORY), metavar="DIR", help="with --write: " + history_help)
    g.add_argument("--update", action="store_true",
                   help="write new budgets for improvements and new entries, creating the file if "
                        "there is none (gates nothing: review the diff, then run `nbx gate`)")
    g.add_argument("--all", action="store_true", help="with --update: also raise budgets (review the diff!)")
    g.add_argument("--raise-only", action="store_true",
                   help="with --update: only raise budgets and add new ones (the max over several runs)")
    g.add_argument("--no-bank", action="store_true", help="skip the bank staleness check")
    g.set_defaults(fn=cmd_gate)

    b = _sub(sub, "bank", "the reference bank of correctly rounded cases")
    bs = b.add_subparsers(dest="bank_cmd", required=True, metavar="SUBCOMMAND")
    br = _sub(bs, "refresh", "regenerate bank files with mpmath (atomic); exit 3 if the bank cannot "
              "be written (checked before computing)")
    br.add_argument("--op", action="append", metavar="OP", help="only this op (repeatable; default: all)")
    br.add_argument("--dtype", action="append", metavar="DTYPE", help="only this dtype (repeatable)")
    br.add_argument("--progress", choices=("auto", "bar", "lines"), default="auto",
                    help="progress on stderr: bar (a terminal, the auto default) or plain lines")
    br.add_argument("--quiet", action="store_true", help="no progress output")
    bc = _sub(bs, "check", "every generator input present, manifest and headers against files and "
              "registry, stray and leftover files, and cases re-verified with mpmath (a fresh sample "
              "each run, or every case with --full); exit 1 on a problem")
    bc.add_argument("--op", action="append", metavar="OP", help="only this op (repeatable; default: all)")
    bc.add_argument("--dtype", action="append", metavar="DTYPE", help="only this dtype (repeatable)")
    bc.add_argument("--sample", type=int, default=64, metavar="N",
                    help="how many cases to re-verify with mpmath (default 64), drawn afresh each run: "
                    "one wrong case among the bank's M is drawn with probability N/M")
    bc.add_argument("--seed", type=int, metavar="S", help="draw the sample with this seed (printed by "
                    "every check) to repeat a run")
    bc.add_argument("--full", action="store_true",
                    help="recompute every case with mpmath and retry unresolved inputs (about as long as "
                    "a refresh) and print the time")
    bc.add_argument("--quiet", action="store_true", help="no progress output with --full")
    _sub(bs, "finish", "validate and complete a refresh interrupted after its commit point, and "
         "remove the temp and lock files killed writers left (under the bank's lock)")
    b.set_defaults(fn=cmd_bank)

    rp = _sub(sub, "report", "merge shard reports, diff two reports, a report's history")
    rs = rp.add_subparsers(dest="report_cmd", required=True, metavar="SUBCOMMAND")
    rm = _sub(rs, "merge", "join the shard reports of one run into one report, gated in its summary")
    rm.add_argument("out", help="directory of the merged report")
    rm.add_argument("shards", nargs="+", help="shard report directories (or report.json files)")
    rm.add_argument("--latest", action="store_true", help="point reports/latest at the merged report")
    rm.add_argument("--history", default=str(HISTORY), metavar="DIR", help=history_help)
    rm.add_argument("--budgets", metavar="FILE", help=budgets_help)
    rd = _sub(rs, "diff", "regressions and improvements from OLD to NEW; exit 1 on a regression. "
              "Refuses (exit 2) reports of different profiles, seeds or backends unless --force. "
              "An op correctly rounded in both (max ulp <= 0.5) is compared by its count not "
              "correctly rounded, not by max ulp.")
    rd.add_argument("old", help="the earlier report (directory or report.json)")
    rd.add_argument("new", help="the later report (directory or report.json)")
    rd.add_argument("--tolerance", type=_ulp, default=0.0, metavar="ULP",
                    help="ignore max-ulp changes of at most this many ulp (units in the last place "
                         "of the result dtype; default 0: one profile, seed and backend give the "
                         "same figures)")
    rd.add_argument("--force", action="store_true",
                    help="compare reports of different profiles, seeds or backends anyway")
    rh = _sub(rs, "history", "a report's figures across the earlier runs of its profile, backend and seed "
              "under --history: the runs, and each regression (a figure worse than in an earlier run) "
              "with the run and commit where it started; exit 1 on a regression")
    rh.add_argument("report", nargs="?", help="report.json or its directory (default: reports/latest)")
    rh.add_argument("--history", default=str(HISTORY), metavar="DIR",
                    help="where the earlier reports are: run directories, and one level below them "
                         "(default: reports/runs)")
    rh.add_argument("--runs", type=int, default=10, metavar="N",
                    help="the last N runs, the report included (default 10, as report.html draws)")
    rp.set_defaults(fn=cmd_report)

    o = _sub(sub, "ops", "the op table with dtypes and current budgets")
    o.add_argument("--json", action="store_true", help="print JSON instead of a table")
    o.set_defaults(fn=cmd_ops)

    w = _sub(sub, "where", "where an op lives: spec, body, fast path, oracle, bank, budgets")
    w.add_argument("op", help="an op name (`nbx ops` lists them)")
    w.set_defaults(fn=cmd_where)

    x = _sub(sub, "repro", "score one case: inputs, got, expected, ulp error (the summary's worst "
             "inputs print ready-made repro commands)")
    x.add_argument("op", help="an op, or an op variant as reports label it: gelu:approximate=tanh, "
                              "clamp:max=2.5,min=-1.5")
    x.add_argument("dtype", help="the dtype measured (the report's dtype column)")
    x.add_argument("bits", nargs="+", help="each operand's bit pattern in hex, e.g. 0x3f800000")
    x.add_argument("--param", action="append", default=[], metavar="K=V",
                   help="a parameter (repeatable): 2 and 0.5 are numbers, None/True/False those "
                        "values, anything else a string (approximate=tanh)")
    x.set_defaults(fn=cmd_repro)
    return p


def main(argv=None) -> int:
    p = parser()
    a = p.parse_args(argv)
    a.argv = list(argv) if argv is not None else sys.argv[1:]     # as the report records it
    try:
        return a.fn(a)
    except BrokenPipeError:
        # `nbx ... | head` closed our stdout: end quietly. SIGPIPE keeps Python's SIG_IGN, since a
        # run writes to its workers' pipes too and one that died must not end the run.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except EnvironmentFailure as e:
        p.exit(EXIT_ENVIRONMENT, f"nbx {a.cmd}: {e}\n")
    except (UsageError, FileNotFoundError, ValueError) as e:
        # A usage error, or input that cannot be used (a missing file, a report of another
        # schema, a budget file that does not parse): exit 2, as argparse does for bad arguments.
        p.exit(2, f"nbx: error: {e}\n")
    except OSError as e:
        # A write or read the commands above do not name themselves: still an environment
        # failure, in one line. The bank's commands keep their own handling (harness/suites/bank/).
        if a.cmd == "bank":
            raise
        where = e.filename or "a file"
        advice = _ADVICE.get(e.errno, "check the path").format(elsewhere="another path")
        p.exit(EXIT_ENVIRONMENT, f"nbx {a.cmd}: {where}: {e.strerror or e}; {advice}\n")


if __name__ == "__main__":
    sys.exit(main())
