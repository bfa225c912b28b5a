"""The nightly's measuring two ways, in the same session on the same machine: the shell loop that
`make report` ran before (N background `nbx run --shard i/N` processes, each a static slice of the
job list, then `nbx report merge`) against one `nbx run --jobs N` (a pool taking the next job,
costliest first), and with --ray one `nbx run --executor ray --jobs N` too (a local Ray cluster;
on CUDA each task takes 1/N of the GPU). Prints the wall time of each, their ratio, and whether
every figure of every measurement agrees (wall times aside). Neither the bank check nor the fuzz
test is timed: both are the same either way.

Usage: PYTHONPATH=$PWD python3 bench/executor.py [--jobs 2] [--profile nightly] [--op OP ...] [--full] [--ray]
(default: the nightly on the ops of OPS, a tenth of its jobs; --full: every op)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Unary, activation, binary, ternary, comparison, bitwise and integer-division ops, on every dtype
# each has: 310 of the nightly's 3264 jobs.
OPS = ("exp", "sin", "sigmoid", "add", "div", "lerp", "eq", "bitwise_and", "remainder")


def _nbx(*args: str, log: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    with open(log, "w") as f:
        return subprocess.Popen([sys.executable, "-m", "nbx", *args], cwd=REPO, env=env, stdout=f,
                                stderr=subprocess.STDOUT)


def _wait(procs: list, what: str) -> None:
    codes = [p.wait() for p in procs]
    if any(c not in (0, 1) for c in codes):        # 1: a failing gate is still a report
        raise SystemExit(f"bench/executor.py: {what} exited {codes}; see the logs")


def shell_loop(n: int, select: list, work: Path) -> float:
    """make report's former loop: n shards in the background, wait, merge."""
    start = time.perf_counter()
    shards = [_nbx("run", *select, "--shard", f"{i}/{n}", "--out", str(work / f"shard{i}"), "--progress", "lines",
                   log=work / f"shard{i}.log") for i in range(n)]
    _wait(shards, "a shard")
    _wait([_nbx("report", "merge", str(work / "merged"), *[str(work / f"shard{i}") for i in range(n)],
                "--history", str(work / "none"), log=work / "merge.log")], "the merge")
    return time.perf_counter() - start


def pool(n: int, select: list, work: Path, executor: str = "pool") -> float:
    """One nbx run on n workers of the executor; its report in work/<executor>."""
    start = time.perf_counter()
    _wait([_nbx("run", *select, "--jobs", str(n), "--executor", executor, "--out", str(work / executor),
                "--progress", "lines", log=work / f"{executor}.log")], f"nbx run --executor {executor}")
    return time.perf_counter() - start


def _figures(path: Path) -> list:
    ms = json.loads((path / "report.json").read_text())["measurements"]
    for m in ms:
        m.pop("wall_s")
    return sorted(ms, key=lambda m: (m["op"], m["dtype"], m["suite"], m["target"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="shards of the loop, workers of the pool (default 2)")
    ap.add_argument("--profile", default="nightly")
    ap.add_argument("--op", action="append", help="the ops (default: OPS; --full: every op)")
    ap.add_argument("--full", action="store_true", help="every op: the whole nightly")
    ap.add_argument("--ray", action="store_true", help="also through --executor ray (needs nbx[ray])")
    a = ap.parse_args()
    ops = [] if a.full else (a.op or list(OPS))
    select = ["--profile", a.profile, "--history", "/nonexistent"] + [x for o in ops for x in ("--op", o)]
    with tempfile.TemporaryDirectory(prefix="nbx-bench-executor-") as tmp:
        work = Path(tmp)
        loop_s = shell_loop(a.jobs, select, work)
        pool_s = pool(a.jobs, select, work)
        same = _figures(work / "merged") == _figures(work / "pool")
        ray_s = pool(a.jobs, select, work, "ray") if a.ray else None
        same_ray = ray_s is None or _figures(work / "ray") == _figures(work / "pool")
        jobs = len(json.loads((work / "pool" / "report.json").read_text())["measurements"])
    what = "every op" if a.full else f"{len(ops)} ops"
    print(f"nbx run --profile {a.profile}, {what} ({jobs} jobs), {os.cpu_count()} cores, {a.jobs} processes:")
    print(f"  shell loop ({a.jobs} shards + merge): {loop_s:7.1f} s")
    print(f"  nbx run --jobs {a.jobs}:               {pool_s:7.1f} s   ({pool_s / loop_s:.2f} of the loop's time)")
    if ray_s is not None:
        print(f"  nbx run --executor ray --jobs {a.jobs}: {ray_s:7.1f} s   ({ray_s / loop_s:.2f} of the loop's time)")
    print(f"  figures identical: {'yes' if same and same_ray else 'NO'}")
    return 0 if same and same_ray else 1


if __name__ == "__main__":
    sys.exit(main())
