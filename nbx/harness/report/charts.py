"""The charts of report.html: the trend of the whole set of measurements across runs, drawn here
as inline SVG (plain elements with <title>s to hover, no script and no URL: they show with scripts
off), and the data of nbx beside its peers, which the page's script draws per dtype and into each
op's detail (the figures of a few thousand peer measurements as inline SVG would take a fifth of
the page's 2 MB; as data they take a fortieth, and the page's table of peer measurements holds
them for a reader without scripts).

Counts are drawn on log10(1 + n) and ulps on log10(1 + ulp): 0 sits on the axis, and 1 beside
8 million both stay visible.
"""
from __future__ import annotations

import math
from html import escape

from nbx.harness.records.measurement import encode_float
from nbx.harness.report.json_report import Key, Report, fmt_ulp
from nbx.harness.report.markdown import VALUE_SUITES, peer_groups
from nbx.harness.report.overview import dtype_rank, suite_rank
from nbx.harness.report.trends import History

PEER_COLORS = ("#1f5fbf", "#e6550d", "#31a354", "#756bb1")     # nbx first, then each peer


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _log(v: float) -> float:
    return math.log10(1.0 + v)


def _ticks(top: float) -> list[float]:
    """Values 0, then the powers of ten from 1 whose log10(1 + v) is within top, at most 6."""
    vals = [0.0] + [10.0 ** e for e in range(20) if _log(10.0 ** e) <= top + 1e-9]
    stride = max(1, math.ceil((len(vals) - 1) / 5))
    return [vals[0]] + vals[1::stride]


def _tick_label(v: float) -> str:
    if v == 0:
        return "0"
    return f"{v:g}" if v < 1e4 else f"{v:.0e}".replace("e+0", "e").replace("e+", "e")


def _compact_ulp(v: float) -> float | str:
    return encode_float(float(f"{v:.4g}")) if math.isfinite(v) else encode_float(v)


def peers_data(report: Report, index: dict[Key, int]) -> dict | None:
    """nbx beside its peers, as the page's script draws it (one chart per dtype, and each op's
    figures in its grid detail); None where the report holds no peer's measurement.

    {"t": the targets, nbx first; "c": their colors; "vs": the value suites; "d": per dtype, in
    the grid's order, [dtype, ops]: per op [op, the page index of nbx's measurement a click opens
    (its value suite of most cases; null if nbx has none), then per target [misrounded (or wrong,
    for exact results), max ulp, cases, special mismatches, 1 if it raised] over the value suites
    (markdown.peer_figures), or 0 where the target lacks the op]}. Per peer measurement, the rows
    of the page's peer table: peer_rows."""
    groups = peer_groups(report)
    if not groups:
        return None
    targets = ["nbx"] + sorted({m.target for m in report.measurements if not m.is_nbx})
    opened: dict[tuple[str, str], tuple[int, int]] = {}
    for m in report.measurements:
        i = index.get(m.key())
        if m.is_nbx and i is not None and m.suite in VALUE_SUITES:
            best = opened.get((m.op, m.dtype))
            if best is None or m.cases > best[0]:
                opened[(m.op, m.dtype)] = (m.cases, i)
    by_dtype: dict[str, list] = {}
    for (op, dtype), by in sorted(groups.items()):
        figures = [[a["bad"], _compact_ulp(a["max_ulp"]), a["cases"], a["specials"], int(bool(a["error"]))]
                   if (a := by.get(t)) is not None else 0 for t in targets]
        by_dtype.setdefault(dtype, []).append([op, opened.get((op, dtype), (0, None))[1], *figures])
    return {"t": targets, "c": [PEER_COLORS[j % len(PEER_COLORS)] for j in range(len(targets))],
            "vs": list(VALUE_SUITES),
            "d": [[dt, by_dtype[dt]] for dt in sorted(by_dtype, key=dtype_rank)]}


def peer_rows(report: Report) -> list[list[str]]:
    """The page's peer table: per peer measurement, by op, dtype, suite and target, its cells op,
    dtype, suite, target, cases, max ulp, misrounded, special mismatches, wrong, and what it raised
    (its first line)."""
    ms = sorted((m for m in report.measurements if not m.is_nbx),
                key=lambda m: (m.op, dtype_rank(m.dtype), suite_rank(m.suite), m.target))
    return [[m.op, m.dtype, m.suite, m.target, str(m.cases), fmt_ulp(m.max_ulp), str(m.not_correctly_rounded),
             str(m.special_mismatches), str(m.wrong), (m.error.strip().splitlines() or [""])[0][:200]]
            for m in ms]


def trend_svg(h: History) -> str:
    """The whole set over the runs of `h`, oldest first: measurements not correctly rounded,
    results misrounded (summed) and wall seconds (summed), each run a point whose <title> names its
    run id, commit and the regressions that started there (those runs are ringed in red)."""
    n = len(h.runs)
    per_run = []
    for i in range(n):
        not_cr = bad = wall = 0.0
        for figs in h.series.values():
            u, c, s = figs["max_ulp"][i], figs["not_correctly_rounded"][i], figs["wall_s"][i]
            if u is None:
                continue
            not_cr += 1 if (u != u or u > 0.5 + 1e-9 or (c or 0) > 0) else 0
            bad += c if c is not None and c == c else 0
            wall += s or 0.0
        per_run.append((not_cr, bad, wall))
    started: dict[int, list[str]] = {}
    for g in h.regressions:
        started.setdefault(g.since, []).append(f"{' '.join(g.key)} {g.figure}")
    PW, PH, L, T, GAP = 240, 100, 48, 22, 62
    width, height = 3 * (L + PW) + GAP, T + PH + 44
    out = [f'<svg class="trend" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'role="img" aria-label="the whole set over {n} runs">']
    panels = (("measurements not correctly rounded", 0, False), ("results misrounded (sum)", 1, True),
              ("wall seconds (sum)", 2, False))
    for p, (name, k, log) in enumerate(panels):
        x0 = p * (L + PW + GAP // 2) + L
        vals = [r[k] for r in per_run]
        f = _log if log else (lambda v: v)
        top = max(f(v) for v in vals) * 1.1 or 1.0
        out.append(f'<rect class="ax" x="{x0}" y="{T}" width="{PW}" height="{PH}"/>'
                   f'<text x="{x0}" y="{T - 6}">{escape(name)}</text>')
        for v in (_ticks(top) if log else [0.0, top / 1.1 / 2, top / 1.1]):
            y = T + PH - f(v) / top * PH
            out.append(f'<line class="grid" x1="{x0}" y1="{_num(y)}" x2="{x0 + PW}" y2="{_num(y)}"/>'
                       f'<text x="{x0 - 3}" y="{_num(y + 3)}" text-anchor="end">'
                       f'{_tick_label(v) if log else f"{v:.3g}"}</text>')
        xs = [x0 + (PW / 2 if n == 1 else 8 + i * (PW - 16) / (n - 1)) for i in range(n)]
        ys = [T + PH - f(v) / top * PH for v in vals]
        out.append('<path class="line" d="' + "".join(
            f"{'M' if i == 0 else 'L'}{_num(x)} {_num(y)}" for i, (x, y) in enumerate(zip(xs, ys))) + '"/>')
        for i, (x, y) in enumerate(zip(xs, ys)):
            run = h.runs[i]
            why = started.get(i, [])
            text = (f"run {i + 1}: {run.run_id}, commit {run.short_commit}, {run.created}: {name} "
                    f"{vals[i]:,.4g}" + (f"; {len(why)} regression(s) started here: " + ", ".join(why[:8])
                                         + (" ..." if len(why) > 8 else "") if why else ""))
            out.append(f'<circle class="{"start" if why else "pt"}" cx="{_num(x)}" cy="{_num(y)}" '
                       f'r="{4.5 if why else 3}"><title>{escape(text)}</title></circle>')
            if p == 0 or n <= 12:
                out.append(f'<text x="{_num(x)}" y="{T + PH + 12}" text-anchor="middle">{i + 1}</text>')
        out.append(f'<text x="{x0 + PW / 2}" y="{T + PH + 28}" text-anchor="middle">run (oldest first; '
                   f'{n} = this report)</text>')
    out.append("</svg>")
    return "".join(out)
