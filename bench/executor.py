"""The nightly's measuring two ways, in the same session on the same machine: the shell loop that
`make report` ran before (N background `nbx run --shard i/N` processes, each a static slice of the
job list, then `nbx report merge`) against one `nbx run --jobs N` (a pool taking the next job,
costliest first), and with --ray one `nbx run --executor ray --jobs N` too (a local Ray cluster;
on CUDA each task takes 1/N of the GPU). Prints the wall time of each, their ratio, and whether
every figure of every measurement agrees (wall times aside). Neither the bank check nor the fuzz
test is timed: both are the same either way.

Usage: PYTHONPATH=$PWD python3 bench/executor.py [--jobs 2] [--profile nightly] [--op OP ...] [--full] [--ray]
       [--only loop|pool|ray --keep DIR]
       python3 bench/executor.py --compare DIR DIR ...
(default: the nightly on the ops of OPS, a tenth of its jobs; --full: every op). A run longer than
one sitting (the exhaustive profile on one GPU, ~8 min a way) goes one way at a time: --only runs
one of them and --keep writes its report and wall time under DIR/<way>; --compare then prints the
kept ways side by side and whether their figures agree.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
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


WAYS = ("loop", "pool", "ray")


def run_one(way: str, n: int, select: list, keep: Path) -> float:
    """One way into keep/<way> (the report, and wall.json with its wall time)."""
    keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="nbx-bench-executor-") as tmp:
        work = Path(tmp)
        secs = shell_loop(n, select, work) if way == "loop" else pool(n, select, work, way)
        src = work / ("merged" if way == "loop" else way)
        dest = keep / way
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("jobs", "*.png", "*.html"))
    (keep / way / "wall.json").write_text(json.dumps({"wall_s": secs, "processes": n, "cores": os.cpu_count()}))
    return secs


def compare(dirs: list[Path]) -> int:
    """The kept ways side by side (each DIR/<way>, as --keep wrote them): wall times and whether
    every figure of every measurement agrees with the first's."""
    ways = [d for d in dirs if (d / "report.json").exists()]
    if not ways:
        raise SystemExit(f"bench/executor.py --compare: no report.json under {', '.join(map(str, dirs))}")
    first = _figures(ways[0])
    base = json.loads((ways[0] / "wall.json").read_text())["wall_s"]
    same = True
    print(f"{len(first)} jobs each")
    for d in ways:
        secs = json.loads((d / "wall.json").read_text())["wall_s"]
        agree = _figures(d) == first
        same &= agree
        print(f"  {d.name:5s} {secs:7.1f} s  ({secs / base:.2f} of {ways[0].name}'s)  figures "
              f"{'identical' if agree else 'DIFFER'}")
    return 0 if same else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="shards of the loop, workers of the pool (default 2)")
    ap.add_argument("--profile", default="nightly")
    ap.add_argument("--op", action="append", help="the ops (default: OPS; --full: every op)")
    ap.add_argument("--full", action="store_true", help="every op: the whole nightly")
    ap.add_argument("--ray", action="store_true", help="also through --executor ray (needs nbx[ray])")
    ap.add_argument("--only", choices=WAYS, help="run this way alone (with --keep)")
    ap.add_argument("--keep", type=Path, help="with --only: keep its report and wall time under KEEP/<way>")
    ap.add_argument("--compare", type=Path, nargs="+", metavar="DIR", help="compare kept ways (DIR/<way>)")
    a = ap.parse_args()
    if a.compare:
        return compare(a.compare)
    ops = [] if a.full else (a.op or list(OPS))
    select = ["--profile", a.profile, "--history", "/nonexistent"] + [x for o in ops for x in ("--op", o)]
    if a.only or a.keep:
        if not (a.only and a.keep):
            ap.error("--only and --keep go together")
        secs = run_one(a.only, a.jobs, select, a.keep)
        print(f"{a.only}: {secs:.1f} s, {a.jobs} processes, kept in {a.keep / a.only}")
        return 0
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
