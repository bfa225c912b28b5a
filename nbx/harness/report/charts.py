"""Charts of report.html drawn here as inline SVG: nbx beside its peers per dtype, and the trend
of the whole set of measurements across runs. Plain SVG elements with <title>s to hover, no script
and no URL, so they show in any browser, scripts off included.

Counts are drawn on log10(1 + n) and ulps on log10(1 + ulp): 0 sits on the axis, and 1 beside
8 million both stay visible.
"""
from __future__ import annotations

import math
from html import escape

from nbx.harness.report.trends import History

PEER_COLORS = ("#1f5fbf", "#e6550d", "#31a354", "#756bb1")     # nbx first, then each peer
GROUP_W = 13                      # px per op on the peers chart


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _fmt(v: float) -> str:
    if v != v:
        return "nan"
    if math.isinf(v):
        return "inf"
    return f"{v:.4g}"


def _log(v: float) -> float:
    return math.log10(1.0 + v)


def _ticks(top: float, steps: tuple = (1,)) -> list[float]:
    """Values 0, then m * 10^e for m in steps, whose log10(1 + v) is within top; thinned to at most
    6 by keeping powers of ten where there are more."""
    vals = [0.0] + [m * 10.0 ** e for e in range(-1, 20) for m in steps
                    if m * 10.0 ** e >= 0.5 and _log(m * 10.0 ** e) <= top + 1e-9]
    if len(vals) > 6:
        vals = [v for v in vals if v == 0 or math.log10(v) == round(math.log10(v))]
    stride = max(1, math.ceil((len(vals) - 1) / 5))
    return [vals[0]] + vals[1::stride]


def _tick_label(v: float) -> str:
    if v == 0:
        return "0"
    return f"{v:g}" if v < 1e4 else f"{v:.0e}".replace("e+0", "e").replace("e+", "e")


def _axis(out: list[str], x0: float, y0: float, w: float, h: float, top: float, name: str,
          steps: tuple = (1,)) -> None:
    out.append(f'<rect class="ax" x="{x0}" y="{y0}" width="{_num(w)}" height="{h}"/>')
    for v in _ticks(top, steps):
        y = y0 + h - _log(v) / top * h
        out.append(f'<line class="grid" x1="{x0}" y1="{_num(y)}" x2="{_num(x0 + w)}" y2="{_num(y)}"/>'
                   f'<text x="{x0 - 3}" y="{_num(y + 3)}" text-anchor="end">{_tick_label(v)}</text>')
    out.append(f'<text x="{x0 - 34}" y="{y0 + h / 2}" transform="rotate(-90 {x0 - 34} {y0 + h / 2})" '
               f'text-anchor="middle">{escape(name)}</text>')


def peers_svg(dtype: str, rows: list[tuple[str, dict[str, dict]]], targets: list[str]) -> str:
    """One dtype's chart: per op (rows: op -> target -> peer figures, as markdown.peer_figures
    aggregates a target's value suites), each target's misrounded count (top) and max ulp
    (bottom), nbx first. A missing bar is a target without the op."""
    L, T, PH, GAP, BOT = 48, 18, 90, 14, 112
    n = max(len(rows), 1)
    w = n * GROUP_W
    width, height = L + w + 10, T + 2 * PH + GAP + BOT
    bw = max(2.0, (GROUP_W - 3) / len(targets))
    bad_top = max([_log(a["bad"]) for _, by in rows for a in by.values()] + [_log(10)])
    ulps = [a["max_ulp"] for _, by in rows for a in by.values()]
    ulp_top = max([_log(u) for u in ulps if math.isfinite(u)] + [_log(1)]) * 1.15
    out = [f'<svg class="peers" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'role="img" aria-label="nbx and peers, {escape(dtype)}: misrounded and max ulp per op">']
    y1 = T + PH + GAP
    _axis(out, L, T, w, PH, bad_top, "misrounded")
    _axis(out, L, y1, w, PH, ulp_top, "max ulp", (1, 2, 5))
    bars = {t: [] for t in targets}
    marks = {t: [] for t in targets}
    hover = []
    for i, (op, by) in enumerate(rows):
        gx = L + i * GROUP_W
        for j, t in enumerate(targets):
            a = by.get(t)
            if a is None:
                continue
            x = gx + 1.5 + (j + 0.5) * bw
            if a["bad"] > 0:
                bars[t].append(f"M{_num(x)} {T + PH}V{_num(T + PH - _log(a['bad']) / bad_top * PH)}")
            u = a["max_ulp"]
            if u == u:
                y = y1 + 2 if math.isinf(u) else y1 + PH - min(_log(u), ulp_top) / ulp_top * PH
                marks[t].append(f"M{_num(x)} {_num(y)}h0")
        figures = "; ".join(f"{t}: {a['bad']:,} misrounded of {a['cases']:,}, max {_fmt(a['max_ulp'])} ulp"
                            + (", raised" if a["error"] else "") for t, a in by.items())
        hover.append(f'<rect class="hit" x="{gx}" y="{T}" width="{GROUP_W}" height="{2 * PH + GAP}">'
                     f'<title>{escape(op)} {escape(dtype)}: {escape(figures)}</title></rect>')
        lx, ly = gx + GROUP_W / 2 + 3, y1 + PH + 6
        out.append(f'<text x="{_num(lx)}" y="{ly}" transform="rotate(-60 {_num(lx)} {ly})" '
                   f'text-anchor="end">{escape(op[:22])}</text>')
    for j, t in enumerate(targets):
        color = PEER_COLORS[j % len(PEER_COLORS)]
        if bars[t]:
            out.append(f'<path d="{"".join(bars[t])}" stroke="{color}" stroke-width="{_num(bw)}"/>')
        if marks[t]:
            out.append(f'<path d="{"".join(marks[t])}" stroke="{color}" stroke-width="{_num(bw + 1)}" '
                       'stroke-linecap="round"/>')
        lx = L + j * 70
        out.append(f'<rect x="{lx}" y="4" width="10" height="9" fill="{color}"/>'
                   f'<text x="{lx + 13}" y="12">{escape(t)}</text>')
    out.append(f'<text x="{L + 4}" y="{y1 + 10}">inf at the top</text>')
    out += hover
    out.append("</svg>")
    return "".join(out)


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
