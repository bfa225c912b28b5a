"""Trends across nights: per op, dtype and suite, the max ulp, the count misrounded and the wall
time over the last runs of one profile, backend and seed, and where a regression started.

The earlier runs are the report.json files found under a history directory the way find_previous
finds the previous one (its run directories and one level below), comparable to the report as
diff.incomparable decides, lone shards and the report's own shards left out, and a directory
marked incomplete (json_report.incomplete_reason) listed as unreadable. Only the figures of nbx's
measurements are read (a peer's are not nbx's history).

A regression is a figure of the latest run worse than in an earlier run of the window, compared as
the diff compares (max ulp within correct rounding in both is no change). It started at the first
run after the last one that was better: from there on the figure has been at least this bad.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from nbx.harness.records.measurement import decode_float
from nbx.harness.report.diff import CORRECTLY_ROUNDED_ULP, incomparable
from nbx.harness.report.json_report import REPORT_FILE, Key, Report, incomplete_reason, read_header

RUNS = 10                 # the runs a trend shows, the report itself included
FIGURES = ("max_ulp", "not_correctly_rounded", "wall_s")


@dataclass
class Run:
    run_id: str
    created: str
    commit: str
    path: Path | None = None       # None: the report being rendered

    @property
    def short_commit(self) -> str:
        if not self.commit:
            return "?"
        return self.commit[:9] + ("+dirty" if self.commit.endswith("+dirty") else "")


@dataclass
class Regression:
    key: Key
    figure: str                    # max_ulp, not_correctly_rounded, or raised (old: its max ulp)
    old: float                     # the figure before it started
    new: float                     # the latest figure
    since: int                     # index into History.runs of the run where it started


@dataclass
class History:
    """The runs oldest first, the report itself last; per key, each figure per run (None where a
    run has no such measurement)."""
    runs: list[Run]
    series: dict[Key, dict[str, list[float | None]]]
    searched: Path | None = None
    unreadable: list[str] = field(default_factory=list)
    regressions: list[Regression] = field(default_factory=list)

    @property
    def earlier(self) -> int:
        return len(self.runs) - 1


def _head_report(h: dict) -> Report:
    return Report(run_id=str(h.get("run_id", "")), created=str(h.get("created", "")),
                  backend=dict(h.get("backend") or {}), git_commit=str(h.get("git_commit") or ""),
                  profile=str(h.get("profile") or ""), argv=list(h.get("argv") or []),
                  shards=list(h.get("shards") or []))


def earlier_reports(report: Report, history: str | os.PathLike | None, limit: int = RUNS - 1
                    ) -> list[tuple[Report, Path]]:
    """The `limit` most recent reports under `history` created before `report` and comparable with
    it (header only: measurements not loaded), oldest first, with their report.json paths."""
    if history is None or limit <= 0 or not Path(history).is_dir():
        return []
    history = Path(history)
    own = {report.run_id, *report.shards}
    found = []
    for path in sorted([*history.glob(f"*/{REPORT_FILE}"), *history.glob(f"*/*/{REPORT_FILE}")]):
        h = read_header(path)
        if h is None or str(h.get("run_id", "")) in own:
            continue
        head = _head_report(h)
        if (incomparable(head, report) or head.shard is not None or not head.created
                or head.created >= report.created):
            continue
        found.append((head, path))
    found.sort(key=lambda t: (t[0].created, t[0].run_id))
    return found[-limit:]


def _figures(d: dict) -> tuple[Key, dict[str, float | None]] | None:
    """(key, figures) of one measurement as report.json stores it; None for a peer's. A
    measurement that raised has nan figures; one of zero cases none."""
    if (d.get("target") or "nbx") != "nbx":
        return None
    key = (str(d["op"]), str(d["dtype"]), str(d["suite"]))
    if not d.get("error") and not d.get("cases"):
        # nothing measured (the gate fails it): no figure, not a perfect one
        return key, {"max_ulp": None, "not_correctly_rounded": None,
                     "wall_s": decode_float(d.get("wall_s", 0))}
    if d.get("error"):
        return key, {"max_ulp": math.nan, "not_correctly_rounded": math.nan,
                     "wall_s": decode_float(d.get("wall_s", 0))}
    return key, {"max_ulp": decode_float(d.get("max_ulp", 0)),
                 "not_correctly_rounded": float(d.get("not_correctly_rounded", 0)),
                 "wall_s": decode_float(d.get("wall_s", 0))}


def load_history(report: Report, history: str | os.PathLike | None, *, runs: int = RUNS) -> History:
    """The figures of `report` and of up to runs - 1 earlier comparable reports under `history`."""
    earlier = earlier_reports(report, history, runs - 1)
    loaded: list[tuple[Run, dict[Key, dict[str, float]]]] = []
    unreadable = []
    for head, path in earlier:
        why = incomplete_reason(path)
        if why:
            unreadable.append(why)
            continue
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            figs = dict(f for f in map(_figures, d["measurements"]) if f is not None)
        except (OSError, ValueError, KeyError, TypeError) as e:
            unreadable.append(f"{path}: {type(e).__name__}: {e}")
            continue
        loaded.append((Run(head.run_id, head.created, head.git_commit, path.parent), figs))
    own = dict(f for f in (_figures({"op": m.op, "dtype": m.dtype, "suite": m.suite, "target": m.target,
                                      "error": m.error, "max_ulp": m.max_ulp, "wall_s": m.wall_s,
                                      "cases": m.cases,
                                      "not_correctly_rounded": m.not_correctly_rounded})
                           for m in report.measurements) if f is not None)
    loaded.append((Run(report.run_id, report.created, report.git_commit, None), own))
    series: dict[Key, dict[str, list[float | None]]] = {}
    for key in own:
        series[key] = {name: [figs.get(key, {}).get(name) for _, figs in loaded] for name in FIGURES}
    h = History([run for run, _ in loaded], series, Path(history) if history is not None else None,
                unreadable)
    h.regressions = regressions(h)
    return h


def _level(figure: str, v: float) -> float:
    """A figure as the diff ranks it: nan worst, and any max ulp within correct rounding alike."""
    if v != v:
        return math.inf
    if figure == "max_ulp" and v <= CORRECTLY_ROUNDED_ULP:
        return 0.5
    return v


def started(values: list[float | None], figure: str) -> int | None:
    """The index where the latest value's regression started: the first run after the last
    earlier run with a better figure; None if no earlier run was better (or the latest is None)."""
    if not values or values[-1] is None:
        return None
    now = _level(figure, values[-1])
    better = [i for i, v in enumerate(values[:-1]) if v is not None and _level(figure, v) < now]
    if not better:
        return None
    return next(i for i in range(better[-1] + 1, len(values)) if values[i] is not None)


def regressions(h: History) -> list[Regression]:
    out = []
    for key, figs in sorted(h.series.items()):
        raised = figs["max_ulp"][-1] is not None and figs["max_ulp"][-1] != figs["max_ulp"][-1]
        # a measurement that raised has no figure at all: one regression (max ulp nan), not two
        for figure in ("max_ulp",) if raised else ("max_ulp", "not_correctly_rounded"):
            vals = figs[figure]
            i = started(vals, figure)
            if i is not None:
                before = next(v for v in reversed(vals[:i]) if v is not None)
                out.append(Regression(key, "raised" if raised else figure, before, vals[-1], i))
    return out


def format_history(h: History) -> str:
    """The text of `nbx report history`: the runs, then each regression with where it started."""
    lines = [f"nbx report history: {len(h.runs)} run(s) of one profile, backend and seed"
             + (f" under {h.searched}" if h.searched else "")]
    for i, r in enumerate(h.runs):
        lines.append(f"  {i + 1:>2}. {r.run_id}  {r.created}  commit {r.short_commit}"
                     + ("  (this report)" if r.path is None else f"  {r.path}"))
    for u in h.unreadable:
        lines.append(f"  unreadable: {u}")
    if not h.regressions:
        lines.append("no regression in the window: no figure of the latest run is worse than "
                     "in an earlier one")
        return "\n".join(lines) + "\n"
    lines.append(f"{len(h.regressions)} regression(s), each since the run where it started:")
    for g in h.regressions:
        r = h.runs[g.since]
        lines.append(f"  {' '.join(g.key):<40} {g.figure:<22} {fmt_figure(g.old)} -> {fmt_figure(g.new)}  since "
                     f"run {g.since + 1} ({r.run_id}, commit {r.short_commit})")
    return "\n".join(lines) + "\n"


def fmt_figure(v: float) -> str:
    if v != v:
        return "nan"
    return "inf" if math.isinf(v) else f"{v:.6g}"
