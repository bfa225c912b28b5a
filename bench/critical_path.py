"""How long a finished run's jobs would take on G GPUs of W workers each: the run's per-job wall
times (report.json's `wall_s`, measured with the run's own sharing of its GPU) scheduled as `nbx
run` schedules them, costliest first onto the next free worker (LPT list scheduling), for each G.
Prints, per G, the estimate, the lower bound max(longest job, total / (G W)) and the job on the
critical path. An estimate, not a measurement: jobs are assumed to keep their measured times
(the same sharing of a GPU, W workers on each), and set-up per worker is not counted.

Usage: python3 bench/critical_path.py REPORT_DIR [--workers 15] [--gpus 1,2,4,8]
"""
from __future__ import annotations

import argparse
import heapq
import json
import sys
from pathlib import Path


def schedule(times: list[float], slots: int) -> float:
    """The makespan of LPT: each job, longest first, onto the slot that frees first."""
    free = [0.0] * slots
    for t in sorted(times, reverse=True):
        heapq.heapreplace(free, free[0] + t)
    return max(free)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--workers", type=int, default=15, help="workers sharing each GPU (default 15)")
    ap.add_argument("--gpus", default="1,2,4,8")
    a = ap.parse_args(argv)
    ms = json.loads((a.report / "report.json").read_text())["measurements"]
    times = [float(m.get("wall_s") or 0.0) for m in ms]
    longest = max(ms, key=lambda m: m.get("wall_s") or 0.0)
    total = sum(times)
    print(f"{a.report}: {len(ms)} jobs, {total:.0f} s of job time, longest {longest['wall_s']:.1f} s "
          f"({longest['op']} {longest['dtype']} {longest['suite']}); {a.workers} workers a GPU")
    print(f"{'GPUs':>5} {'estimate s':>11} {'lower bound s':>14}")
    for g in (int(x) for x in a.gpus.split(",")):
        slots = g * a.workers
        print(f"{g:>5} {schedule(times, slots):>11.1f} {max(longest['wall_s'], total / slots):>14.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
