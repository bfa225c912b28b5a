"""report.html: one self-contained page (inline CSS, JS and SVG; no external resources)."""

from __future__ import annotations

import math
from html import escape

from nbx.harness.measurement import Measurement
from nbx.harness.report.json_report import Key, Report, fmt_frac, fmt_ulp, severity

# Plot geometry, in SVG user units. Point coordinates are written as integers: one unit is below
# what a reader can resolve at this size, and it keeps a 400-point scatter near 3 kB.
PLOT_W, PLOT_H = 360, 170
MARGIN_L, MARGIN_T, MARGIN_B = 52, 14, 40
PANEL_GAP = 70
SVG_W = MARGIN_L + PLOT_W + PANEL_GAP + PLOT_W + 16
SVG_H = MARGIN_T + PLOT_H + MARGIN_B
HIST_X0 = MARGIN_L + PLOT_W + PANEL_GAP
MAX_BIN_TITLES = 64

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .4em} h2{font-size:1.15em;margin:1.4em 0 .4em}
h3{font-size:1em;margin:1em 0 .2em}
.meta td{padding:0 1em 0 0} .meta td:first-child{color:#666}
table.m{border-collapse:collapse;font-variant-numeric:tabular-nums}
table.m th,table.m td{border:1px solid #ddd;padding:2px 6px}
table.m th{background:#f3f3f3;cursor:pointer;user-select:none;position:sticky;top:0}
table.m th[data-dir=asc]::after{content:" \\25B2"} table.m th[data-dir=desc]::after{content:" \\25BC"}
table.m td.n{text-align:right}
tr.fail td{background:#fde2e2} tr.error td{background:#fff0c2}
.err{color:#a00;font-family:monospace;font-size:12px;max-width:40em;overflow-wrap:anywhere}
svg{display:block;margin:.2em 0 1em} svg text{font:10px sans-serif;fill:#333}
.ax{stroke:#888;fill:none} .grid{stroke:#eee} .half{stroke:#2a7;stroke-dasharray:4 3}
.pts{stroke:#1f5fbf;stroke-width:3;stroke-linecap:round;fill:none;opacity:.6}
.infpts{stroke:#d22;stroke-width:4;stroke-linecap:round;fill:none}
.bar{fill:#1f5fbf;opacity:.75}
#filter{margin:.3em 0 .6em;padding:2px 4px;width:20em}
"""

JS = """
document.querySelectorAll('table.m th').forEach(function(th,i){th.addEventListener('click',function(){
 var t=th.closest('table'),b=t.tBodies[0],num=th.dataset.type==='num';
 var dir=th.dataset.dir?(th.dataset.dir==='desc'?'asc':'desc'):(num?'desc':'asc');
 t.querySelectorAll('th').forEach(function(h){delete h.dataset.dir});th.dataset.dir=dir;
 function v(r){var c=r.cells[i];if(!num)return c.textContent;var x=parseFloat(c.dataset.v);
  return isNaN(x)?Infinity:x}
 var rows=Array.prototype.slice.call(b.rows);
 rows.sort(function(p,q){var x=v(p),y=v(q),s=num?((x-y)||0):x.localeCompare(y);
  return dir==='asc'?s:-s});
 rows.forEach(function(r){b.appendChild(r)})})});
document.getElementById('filter').addEventListener('input',function(e){
 var q=e.target.value.toLowerCase();
 document.querySelectorAll('table.m tbody tr').forEach(function(r){
  r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':''})});
"""


def _num_attr(value: float) -> str:
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return f"{value:.4g}"


def _anchor(key: Key) -> str:
    return "p-" + "-".join("".join(c if c.isalnum() or c in "._" else "_" for c in part)
                           for part in key)


def _symlog(x: float) -> float:
    return math.copysign(math.log2(1.0 + abs(x)), x)


def _ulp_scale(u: float) -> float:
    return math.log10(1.0 + u)


def _fmt_tick(x: float) -> str:
    return "0" if x == 0 else f"{x:.3g}"


def _x_ticks(lo: float, hi: float) -> list[float]:
    """Ticks in symlog units at multiples of a power-of-two step, at most about 7 of them."""
    span = hi - lo
    step = 1.0
    while span / step > 8:
        step *= 2
    start = math.ceil(lo / step) * step
    return [start + k * step for k in range(int((hi - start) / step) + 1)]


def _y_ticks(top: float) -> list[float]:
    """ulp values to label: 0, 0.5, then 1-2-5 steps, or powers of ten thinned to about 7."""
    steps = [m * 10.0 ** k for k in range(0, 40) for m in (1, 2, 5)]
    values = [0.0, 0.5] + [u for u in steps if _ulp_scale(u) <= top]
    if len(values) > 7:
        powers = [u for u in values[2:] if u == 10.0 ** round(math.log10(u))]
        stride = math.ceil(len(powers) / 5)
        values = values[:2] + powers[::stride]
    return values


def _fmt_x_tick(t: float) -> str:
    """The input value at symlog position t; far out, as the power of two it approximates
    (2^|t| - 1 differs from 2^|t| by under 0.4% once |t| >= 8)."""
    if abs(t) >= 8 and t == int(t):
        return ("-" if t < 0 else "") + f"2^{int(abs(t))}"
    return _fmt_tick(math.copysign(2.0 ** abs(t) - 1.0, t))


def _scatter(plot: dict, x0: int) -> list[str]:
    xs, us = plot.get("x") or [], plot.get("ulp") or []
    pairs = [(float(x), float(u)) for x, u in zip(xs, us) if math.isfinite(float(x))
             and float(u) == float(u)]
    out = [f'<rect class="ax" x="{x0}" y="{MARGIN_T}" width="{PLOT_W}" height="{PLOT_H}"/>']
    if not pairs:
        out.append(f'<text x="{x0 + PLOT_W / 2}" y="{MARGIN_T + PLOT_H / 2}" '
                   f'text-anchor="middle">no finite points</text>')
        return out
    txs = [_symlog(x) for x, _ in pairs]
    lo, hi = min(txs), max(txs)
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    finite_u = [_ulp_scale(u) for _, u in pairs if math.isfinite(u)]
    top = max(finite_u + [_ulp_scale(1.0)]) * 1.08

    def px(t: float) -> int:
        return round(x0 + (t - lo) / (hi - lo) * PLOT_W)

    def py(s: float) -> int:
        return round(MARGIN_T + PLOT_H - s / top * PLOT_H)

    for t in _x_ticks(lo, hi):
        out.append(f'<line class="grid" x1="{px(t)}" y1="{MARGIN_T}" x2="{px(t)}" '
                   f'y2="{MARGIN_T + PLOT_H}"/><text x="{px(t)}" y="{MARGIN_T + PLOT_H + 12}" '
                   f'text-anchor="middle">{_fmt_x_tick(t)}</text>')
    for u in _y_ticks(top):
        y = py(_ulp_scale(u))
        out.append(f'<line class="grid" x1="{x0}" y1="{y}" x2="{x0 + PLOT_W}" y2="{y}"/>'
                   f'<text x="{x0 - 4}" y="{y + 3}" text-anchor="end">{_fmt_tick(u)}</text>')
    half = py(_ulp_scale(0.5))
    out.append(f'<line class="half" x1="{x0}" y1="{half}" x2="{x0 + PLOT_W}" y2="{half}">'
               f'<title>0.5 ulp: the correctly rounded bound</title></line>')
    finite_pts: dict[tuple[int, int], None] = {}
    inf_pts: dict[tuple[int, int], None] = {}
    for t, (_, u) in zip(txs, pairs):
        if math.isfinite(u):
            finite_pts[(px(t), py(_ulp_scale(u)))] = None
        else:
            inf_pts[(px(t), MARGIN_T + 2)] = None
    if finite_pts:
        out.append('<path class="pts" d="' + "".join(f"M{a} {b}h0" for a, b in finite_pts) + '"/>')
    if inf_pts:
        out.append('<path class="infpts" d="' + "".join(f"M{a} {b}h0" for a, b in inf_pts)
                   + '"><title>inf ulp (special mismatch)</title></path>')
        out.append(f'<text x="{x0 - 4}" y="{MARGIN_T + 5}" text-anchor="end" fill="#d22">inf</text>')
    out.append(f'<text x="{x0 + PLOT_W / 2}" y="{SVG_H - 6}" text-anchor="middle">'
               f'input x (first operand), axis sign(x)&#183;log2(1+|x|)</text>')
    out.append(f'<text transform="translate(12 {MARGIN_T + PLOT_H / 2}) rotate(-90)" '
               f'text-anchor="middle">ulp error, axis log10(1+ulp)</text>')
    return out


def _histogram(hist: dict, x0: int) -> list[str]:
    edges = [float(e) for e in hist.get("edges") or []]
    counts = [int(c) for c in hist.get("counts") or []]
    out = [f'<rect class="ax" x="{x0}" y="{MARGIN_T}" width="{PLOT_W}" height="{PLOT_H}"/>']
    if not counts:
        out.append(f'<text x="{x0 + PLOT_W / 2}" y="{MARGIN_T + PLOT_H / 2}" '
                   f'text-anchor="middle">no histogram</text>')
        return out
    n = len(counts)
    top = math.log10(1 + max(max(counts), 1))
    width = PLOT_W / n
    titles = n <= MAX_BIN_TITLES and len(edges) == n + 1
    for i, c in enumerate(counts):
        if c <= 0:
            continue
        h = math.log10(1 + c) / top * PLOT_H
        rect = (f'<rect class="bar" x="{x0 + i * width:.1f}" y="{MARGIN_T + PLOT_H - h:.1f}" '
                f'width="{max(width - 1, 0.5):.1f}" height="{h:.1f}"')
        if titles:
            rect += (f'><title>[{fmt_ulp(edges[i])}, {fmt_ulp(edges[i + 1])}) ulp: '
                     f'{c} cases</title></rect>')
        else:
            rect += "/>"
        out.append(rect)
    if len(edges) == n + 1:
        stride = max(1, math.ceil(n / 6))
        for i in list(range(0, n + 1, stride)) + ([n] if n % stride else []):
            out.append(f'<text x="{x0 + i * width:.1f}" y="{MARGIN_T + PLOT_H + 12}" '
                       f'text-anchor="middle">{fmt_ulp(edges[i])}</text>')
    for c in sorted({0, max(counts)}):
        y = MARGIN_T + PLOT_H - math.log10(1 + c) / top * PLOT_H
        out.append(f'<text x="{x0 - 4}" y="{y + 3:.1f}" text-anchor="end">{c}</text>')
    out.append(f'<text x="{x0 + PLOT_W / 2}" y="{SVG_H - 6}" text-anchor="middle">'
               f'ulp error bins (edges, equal-width bars); height log10(1+count)</text>')
    return out


def render_plot_svg(m: Measurement) -> str:
    """One <svg> per measurement: the scatter on the left, the histogram on the right."""
    parts = [f'<svg width="{SVG_W}" height="{SVG_H}" viewBox="0 0 {SVG_W} {SVG_H}" role="img" '
             f'aria-label="{escape(" ".join(m.key()))} ulp error">']
    parts += _scatter(m.plot, MARGIN_L) if m.plot else []
    parts += _histogram(m.hist, HIST_X0) if m.hist else []
    parts.append("</svg>")
    return "".join(parts)


_TABLE_COLS = (  # header, type, cell value
    ("op", "str", lambda m: m.op), ("dtype", "str", lambda m: m.dtype),
    ("suite", "str", lambda m: m.suite), ("cases", "num", lambda m: m.cases),
    ("max ulp", "num", lambda m: m.max_ulp), ("mean ulp", "num", lambda m: m.mean_ulp),
    ("p99.9 ulp", "num", lambda m: m.p999_ulp),
    ("not CR", "num", lambda m: m.frac_not_correctly_rounded),
    ("specials", "num", lambda m: m.special_mismatches), ("wrong", "num", lambda m: m.wrong),
    ("close calls", "num", lambda m: m.close_calls), ("unresolved", "num", lambda m: m.unresolved),
    ("layouts", "num", lambda m: m.layouts), ("wall s", "num", lambda m: m.wall_s),
)


def _table(report: Report, failures: dict[Key, list[str]] | None) -> list[str]:
    head = "".join(f'<th data-type="{t}">{escape(h)}</th>' for h, t, _ in _TABLE_COLS)
    out = ['<table class="m"><thead><tr>' + head + "<th>status</th></tr></thead><tbody>"]
    for m in sorted(report.measurements, key=severity):
        msgs = (failures or {}).get(m.key()) or []
        cls = "error" if m.error else ("fail" if msgs else "")
        cells = []
        for header, typ, get in _TABLE_COLS:
            v = get(m)
            if header == "op" and (m.plot or m.hist):
                cells.append(f'<td><a href="#{_anchor(m.key())}">{escape(v)}</a></td>')
            elif typ == "str":
                cells.append(f"<td>{escape(v)}</td>")
            else:
                shown = (fmt_frac(v) if header == "not CR" else
                         str(v) if isinstance(v, int) else
                         f"{v:.3g}" if header == "wall s" else fmt_ulp(v))
                cells.append(f'<td class="n" data-v="{_num_attr(float(v))}">{escape(shown)}</td>')
        status = (f'<td class="err">{escape(m.error)}</td>' if m.error else
                  f'<td class="err">{escape("; ".join(msgs))}</td>' if msgs else
                  f"<td>{'ok' if failures is not None else ''}</td>")
        out.append(f'<tr class="{cls}">' + "".join(cells) + status + "</tr>")
    out.append("</tbody></table>")
    return out


def render_html(report: Report, *, failures: dict[Key, list[str]] | None = None) -> str:
    """The whole page. With failures given, failing rows are highlighted and carry the messages."""
    ms = report.measurements
    meta = [("backend", report.backend_id)] + [
        (k, v) for k, v in sorted(report.backend.items()) if k != "id"] + [
        ("commit", report.git_commit or "(unknown)"), ("profile", report.profile),
        ("run id", report.run_id), ("created", report.created)]
    if report.shards:
        meta.append(("merged from", ", ".join(report.shards)))
    n_fail = sum(1 for m in ms if (failures or {}).get(m.key()))
    n_err = sum(1 for m in ms if m.error)
    counts = f"{len(ms)} measurements, {sum(m.cases for m in ms):,} cases, {n_err} errors"
    if failures is not None:
        counts += f", {n_fail} failing their budgets"
    title = f"nbx report {report.backend_id} {report.run_id}"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
           f"<h1>nbx report: {escape(report.backend_id or '(unknown backend)')}</h1>",
           '<table class="meta">' + "".join(f"<tr><td>{escape(str(k))}</td><td>{escape(str(v))}"
                                            f"</td></tr>" for k, v in meta) + "</table>",
           f"<p>{escape(counts)}. Click a column header to sort.</p>",
           '<input id="filter" placeholder="filter rows (op, dtype, suite...)">']
    out += _table(report, failures)
    plotted = sorted((m for m in ms if m.plot or m.hist), key=Measurement.key)
    if plotted:
        out.append("<h2>ulp error against input, and its histogram</h2>")
    for m in plotted:
        out.append(f'<h3 id="{_anchor(m.key())}">{escape(m.op)} {escape(m.dtype)} '
                   f"({escape(m.suite)}): max {escape(fmt_ulp(m.max_ulp))} ulp, "
                   f"{m.cases:,} cases</h3>")
        out.append(render_plot_svg(m))
    out.append(f"<script>{JS}</script></body></html>")
    return "\n".join(out) + "\n"
