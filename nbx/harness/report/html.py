"""report.html: one self-contained page, rendered by jinja2 from templates/report.html.j2.

The page opens on the overview (overview.py): ops against (dtype, suite), each cell colored by its
status and labelled with max ulp and the count misrounded; hovering names the figures, a click
draws that measurement's detail under the grid: its figures beside each peer's on the same inputs
(a cell a peer measured too has a purple foot), its trend over the earlier runs (trends.py), its
plots and worst inputs. Then nbx beside its peers per dtype (charts.peers_data, drawn by the script)
and the table of the peers' measurements, the trend of the whole set and the regressions, the plots
that matter, the table of nbx's measurements (sort by any column; filter by words) and the run's
details. It makes no network request: CSS, script and data are inline and it names no URL.

Drawn when the page opens ("what matters"): measurements that fail (the gate's verdict when given,
else a max ulp over the budget), those closest to their budget, and those changed against a
previous report. Every other measurement draws its plot when opened. Each plot holds the
measurement's worst inputs (its `worst` entries, ringed) besides the sampled points, and the budget
line; its histogram splits a lone bin in tenths from the sampled points (_split_bin).

Plot data, per measurement: the axis ranges, then each point as a cell of a 180 x 85 grid over
the plot area (a cell is two pixels of the drawn plot; a point is drawn three wide), the distinct
cells sorted and written as deltas in a base-32 varint over the 64 URL-safe base64 digits
(`encode_cells`): about one character a point. Plots not drawn up front fall back to coarser grids
while their points exceed POINTS_BUDGET characters, less what the trends and the peers take, and
embed only their worst input's row (their plot still rings every worst input). A peer's
measurements have no plot on the page (report.json keeps them): a row of the peer table each, and
their figures per op in the charts' data. A nightly report of ~2,400 measurements stays under
2 MB even with 400 scattered points in every plot, ten runs of trends and a peer beside nbx on
2,280 of them (1.95 MB; tests/test_report_html.py). The 3,264 measurements of a ci run on the
interpreter make a page of 1.31 MB; 1.42 MB with ten earlier runs (1.67 MB where every figure
moves across them), and 1.69 MB (1.94 MB) with a peer's 2,300 value-suite measurements beside.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import numpy as np

from nbx.dtype import DTYPES
from nbx.harness.gate import budgets as B
from nbx.harness.records.measurement import Measurement, encode_float
from nbx.harness.report import charts, markdown, overview, trends
from nbx.harness.report.diff import diff_reports
from nbx.harness.report.json_report import Key, Report, fmt_frac, fmt_ulp, severity

# The plot grid (cells) over the template's 360 x 170 px plot area, then the coarser grids that
# the plots not drawn up front fall back to while their points exceed POINTS_BUDGET characters.
GRIDS = ((180, 85), (90, 43), (45, 22))
POINTS_BUDGET = 900_000
DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

FAILING_PLOTS = 24               # at most this many of each group are drawn when the page opens
CLOSEST_PLOTS = 8
CHANGED_PLOTS = 12
WORST_ROWS_FEATURED = 8          # worst-input rows embedded for a drawn or failing measurement
WORST_ROWS_OTHER = 1             # and for any other (the plot still rings all of them)
SPLIT_BINS = 10                  # a histogram of one bin is drawn as this many from its sample
# a sweep's error-by-input-range chart: at most this many bars (adjacent bins of Measurement.bins
# merged), ~1 KB of page per sweep, which a nightly of hundreds of sweeps keeps under its 2 MB
PAGE_BINS = 128
PEER_ROW_CHARS = 50              # the markup of a row of the peer table, besides its cells' text

COLUMNS = (  # header, "num" or "str"
    ("op", "str"), ("dtype", "str"), ("suite", "str"), ("cases", "num"), ("max ulp", "num"),
    ("budget", "num"), ("vs order", "num"), ("mean ulp", "num"), ("p99.9 ulp", "num"), ("not CR", "num"),
    ("specials", "num"), ("wrong", "num"), ("close calls", "num"), ("unresolved", "num"),
    ("layouts", "num"), ("wall s", "num"))


def encode_cells(values: Iterable[int]) -> str:
    """Distinct non-negative ints, sorted, as deltas from the previous one (the first from 0), each
    a little-endian base-32 varint in DIGITS: a digit's low 5 bits are data, bit 5 says that
    another digit of the same number follows. The template's `cells` decodes it."""
    v = np.unique(np.fromiter(values, dtype=np.int64))
    if v.size and v[0] < 0:
        raise ValueError(f"encode_cells: negative value {v[0]}")
    out: list[str] = []
    for d in np.diff(v, prepend=0).tolist():
        while d >= 32:
            out.append(DIGITS[32 | (d & 31)])
            d >>= 5
        out.append(DIGITS[d])
    return "".join(out)


def decode_cells(text: str) -> list[int]:
    """The inverse of encode_cells (the template's `cells`, in Python for the tests)."""
    out, v, shift, prev = [], 0, 0, 0
    for ch in text:
        c = DIGITS.index(ch)
        v |= (c & 31) << shift
        if c & 32:
            shift += 5
        else:
            prev += v
            out.append(prev)
            v, shift = 0, 0
    return out


def symlog(x: float) -> float:
    """The x axis: sign(x) log2(1 + |x|), linear near 0 and logarithmic far out."""
    return math.copysign(math.log2(1.0 + abs(x)), x)


def _symlog(x: np.ndarray) -> np.ndarray:
    return np.copysign(np.log2(1.0 + np.abs(x)), x)


def ulp_scale(u: float) -> float:
    """The y axis: log10(1 + ulp), so 0 ulp sits on the axis and 1225 ulp still fits."""
    return math.log10(1.0 + u)


def _sig(x: float, digits: int = 6) -> float:
    return float(f"{x:.{digits}g}")


def operand_value(bits: str, dtype: str) -> float | None:
    """The value of an operand from its hex bit pattern (a Worst input) in the measurement's dtype,
    as float64: the plot's x. None where the bits do not parse or do not fit the dtype.

    A boolean operand 0 (where's condition), which the accumulator plots at x = 0, holds 0 or 1:
    as a float dtype that is 0 or the smallest subnormal, the same column of the plot."""
    d = DTYPES.get(dtype)
    try:
        u = int(bits, 16)
    except ValueError:
        return None
    if d is None or u < 0 or u >> d.bits:
        return None
    if d.is_bool:
        return float(u != 0)
    a = np.array([u], dtype=d.uint_np).view(d.np)
    with np.errstate(all="ignore"):
        return float(a.astype(np.float64)[0])


def _value_text(bits: str, dtype: str) -> str:
    """An input's value as its dtype prints it (numpy's shortest round trip), or "" if unknown."""
    d = DTYPES.get(dtype)
    try:
        u = int(bits, 16)
    except ValueError:
        return ""
    if d is None or u < 0 or u >> d.bits:
        return ""
    if d.is_bool:
        return str(bool(u))
    return str(np.array([u], dtype=d.uint_np).view(d.np)[0])


def plot_data(m: Measurement, budget: float | None, grid: tuple[int, int] = GRIDS[0]) -> dict:
    """The plot of one measurement as the template draws it: {"r": [lo, hi, top], "p": finite
    point cells, "n": columns of infinite-error points, "w"/"wn": the same for the worst inputs,
    "h": histogram counts, "he": histogram edges, "rg": a sweep's error by input range
    (region_data)}; empty keys left out. A cell is
    column * rows + row of `grid` (columns, rows), row 0 at the bottom.

    The ranges cover the sampled points, every worst input with a finite operand, 1 ulp and the
    budget (unless it is far above the data), so the largest error is always inside the plot."""
    out: dict = {}
    plot = m.plot or {}
    n = min(len(plot.get("x") or []), len(plot.get("ulp") or []))
    px = np.asarray((plot.get("x") or [])[:n], dtype=np.float64)
    pu = np.asarray((plot.get("ulp") or [])[:n], dtype=np.float64)
    worst = []
    # Exact (integer, bool) results have no plot and their worst entries' ulp is 1 for "wrong":
    # a scatter there would draw a flag as an error. Special mismatches plot on the inf row.
    if m.plot or m.hist or any(w.note == "special mismatch" for w in m.worst):
        for w in m.worst:
            x = operand_value(w.inputs[0], m.dtype) if w.inputs else None
            if x is not None:
                worst.append((x, float(w.ulp)))
    wx = np.array([x for x, _ in worst], dtype=np.float64)
    wu = np.array([u for _, u in worst], dtype=np.float64)
    ax, au = np.concatenate([px, wx]), np.concatenate([pu, wu])
    with np.errstate(all="ignore"):
        keep = np.isfinite(ax) & (au >= 0)                  # a nan ulp fails >= 0
        if keep.any():
            ts = _symlog(ax[keep])
            lo, hi = _sig(float(ts.min()), 4), _sig(float(ts.max()), 4)
            if hi - lo < 1e-9:
                lo, hi = lo - 1, hi + 1
            fu = au[keep & np.isfinite(au)]
            data_top = max(float(np.log10(1.0 + fu).max()) if fu.size else 0.0, ulp_scale(1.0))
            # The budget line is drawn inside the plot unless it lies more than 3 decades above
            # the data (9e15 ulp, "no bound"), which would squash the points to the axis; the
            # template then notes the budget above the plot.
            if budget is not None and math.isfinite(budget) and ulp_scale(budget) <= data_top + 3:
                data_top = max(data_top, ulp_scale(budget))
            top = _sig(data_top * 1.08, 3)
            nx, ny = grid

            def cells(x: np.ndarray, u: np.ndarray) -> tuple[str, str]:
                ok = np.isfinite(x) & (u >= 0)
                col = np.clip(np.rint((_symlog(x) - lo) / (hi - lo) * (nx - 1)), 0, nx - 1)
                row = np.minimum(ny - 1, np.rint(np.log10(1.0 + u) / top * (ny - 1)))
                fin = ok & np.isfinite(u)
                finite = (col[fin] * ny + row[fin]).astype(np.int64)
                infinite = col[ok & np.isinf(u)].astype(np.int64)
                return encode_cells(finite), encode_cells(infinite)

            out["r"] = [lo, hi, top]
            out["p"], out["n"] = cells(px, pu)
            out["w"], out["wn"] = cells(wx, wu)
    if m.hist:
        out["h"] = [int(c) for c in m.hist.get("counts") or []]
        out["he"] = [encode_float(e) for e in m.hist.get("edges") or []]
        out["hs"] = _split_bin(out["h"], m.hist.get("edges") or [], pu)
    if m.bins and m.bins.get("count"):
        out["rg"] = region_data(m)
    return {k: v for k, v in out.items() if v not in ("", [], None)}


def _bit_text(u: int, dtype: str) -> str:
    """The value of bit pattern u of dtype, short: an axis label."""
    v = operand_value(f"{u:x}", dtype)
    return "" if v is None else f"{v:.3g}"


def region_data(m: Measurement) -> dict:
    """A sweep's bins as the template draws them: {"lo", "w": a bar's width in bit patterns, "u":
    largest ulp error per bar, "m"/"s": misrounded results and special mismatches per bar (left out
    where none), "t": [bar index, the input's value there] axis labels}. Adjacent bins are merged
    down to PAGE_BINS bars."""
    b = m.bins
    k = len(b["count"])
    f = -(-k // PAGE_BINS)
    groups = [slice(i, min(i + f, k)) for i in range(0, k, f)]
    lo, hi, width = int(b["lo"]), int(b["hi"]), int(b["width"]) * f
    ulp = [max(b["max_ulp"][g]) for g in groups]
    out: dict = {"lo": lo, "w": width, "u": [encode_float(_sig(u, 3)) if math.isfinite(u) else encode_float(u)
                                            for u in ulp]}
    for key, name in (("m", "misrounded"), ("s", "special")):
        per = [int(sum((b.get(name) or [0] * k)[g])) for g in groups]
        if any(per):
            out[key] = per
    n = len(groups)
    # a power of two, so a whole float range is labelled at sign and exponent boundaries
    stride = 1
    while stride * 6 < n:
        stride *= 2
    ticks = sorted(set(range(0, n, stride)) | {n})
    # the right end is hi, one past the range: its label is the last input's value
    out["t"] = [[i, _bit_text(min(lo + i * width, hi - 1), m.dtype)] for i in ticks]
    return out


def _split_bin(counts: list[int], edges: list[float], sample: np.ndarray) -> list | None:
    """Where every case lies in one bin of the scorer's histogram (a correctly rounded op: all in
    [0, 0.5)), that bin in SPLIT_BINS equal parts up to the largest sampled error, counted over the
    sampled cases: [lo, hi, counts, the bin's upper edge]; None where the histogram has two bins
    or more, or no sample to split by."""
    full = [i for i, c in enumerate(counts) if c]
    if len(full) != 1 or len(edges) != len(counts) + 1:
        return None
    lo, top = float(edges[full[0]]), float(edges[full[0] + 1])
    s = sample[np.isfinite(sample) & (sample >= lo) & (sample < top)]
    if not s.size:
        return None
    hi = float(s.max())
    if hi <= lo:
        hi = lo + (min(top, lo + 1.0) - lo) / SPLIT_BINS
    parts = np.histogram(s, bins=SPLIT_BINS, range=(lo, hi))[0]
    return [_sig(lo), _sig(hi), [int(c) for c in parts], encode_float(top)]


def _worst_rows(m: Measurement, limit: int) -> list[list]:
    """[inputs (hex), their values, got, expected, ulp, note] for the first `limit` worst inputs."""
    return [[list(w.inputs), [_value_text(b, m.dtype) for b in w.inputs], w.got, w.expected,
             fmt_ulp(w.ulp), w.note] for w in m.worst[:limit]]


def load_budgets(backend_id: str) -> tuple[dict[str, dict], str]:
    """The committed budget entries of a backend (op[:params]|dtype -> entry) and the file's name;
    ({}, "") where there is none."""
    if not backend_id:
        return {}, ""
    path = B.path_for(backend_id)
    if not path.is_file():
        return {}, ""
    name = _shown_path(path)
    try:
        data = B.load(path)
    except (OSError, ValueError) as e:      # the page is still written, without budgets
        return {}, f"{name} unreadable: {e}"
    return dict(data.get("budgets") or {}), name


def _shown_path(path) -> str:
    """A budget file's path as the page shows it: relative to the repository where it is inside."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(B.ROOT.parents[1]))
    except ValueError:
        return str(path)


def _budget_table(data: dict) -> dict[str, float]:
    return {k: float(v["max_ulp"]) for k, v in (data.get("budgets") or {}).items()
            if isinstance(v, dict) and "max_ulp" in v}


def _num(v: float) -> str:
    """A cell as the template's sort parses it back: plain digits, fmt_ulp's "inf"/"nan"."""
    return str(v) if isinstance(v, int) else fmt_ulp(v)


def _sort_value(v: float) -> str:
    """The value the template sorts a max / p99.9 ulp cell by, where the 4 digits shown lose the
    order that matters (0.5000281 shows as 0.5, yet is not correctly rounded); else ""."""
    if not math.isfinite(v) or float(fmt_ulp(v)) == v:
        return ""
    return f"{v:.10g}"


@dataclass
class _Row:
    i: int
    m: Measurement
    cls: str
    status: str
    budget: float | None
    cells: list[str]
    sort_values: list[str]      # per cell: the value to sort by where the text is not exact, or ""
    change: str = ""
    reasons: list[str] = field(default_factory=list)


def _row(i: int, m: Measurement, msgs: list[str], gated: bool, budget: float | None) -> _Row:
    cells = [m.op, m.dtype, m.suite, _num(m.cases), _num(m.max_ulp),
             "" if budget is None else fmt_ulp(budget), _num(m.order_max_ulp) if m.order_cases else "",
             _num(m.mean_ulp), _num(m.p999_ulp),
             fmt_frac(m.frac_not_correctly_rounded), _num(m.special_mismatches), _num(m.wrong),
             _num(m.close_calls), _num(m.unresolved), _num(m.layouts), f"{m.wall_s:.3g}"]
    exact = {4: _sort_value(m.max_ulp), 8: _sort_value(m.p999_ulp)}
    if m.order_cases:
        exact[6] = _sort_value(m.order_max_ulp)
    status = m.error or "; ".join(msgs) or ("ok" if gated else "")
    cls = "error" if m.error else ("fail" if msgs else "")
    return _Row(i, m, cls, status, budget, cells, [exact.get(k, "") for k in range(len(cells))])


def _anchor(key: Key) -> str:
    return "p-" + "-".join("".join(c if c.isalnum() or c in "._" else "_" for c in part)
                           for part in key)


def _over_budget(m: Measurement, budget: float | None) -> bool:
    return budget is not None and not m.error and (m.max_ulp != m.max_ulp
                                                   or m.max_ulp > budget + 1e-9)


def _featured(rows: list[_Row], gated: bool, changes: dict[Key, list[str]]):
    """The groups drawn when the page opens, as (title, note, candidates, rows drawn): each row
    in its first group only, at most the group's limit. Rows with nothing to draw are left out
    (an error row has only its message)."""
    plotted = [r for r in rows if r.m.plot or r.m.hist or r.m.worst]
    taken: set[int] = set()

    def take(cands, limit):
        out = [r for r in cands if r.i not in taken][:limit]
        taken.update(r.i for r in out)
        return out

    groups = []
    if gated:
        failing = [r for r in plotted if r.cls == "fail"]
        fail_note = "the gate's verdict"
        for r in failing:
            r.reasons.append(r.status)
    else:
        failing = [r for r in plotted if _over_budget(r.m, r.budget)]
        fail_note = "max ulp over the budget (the gate was not run on this report)"
        for r in failing:
            r.reasons.append(f"max ulp {fmt_ulp(r.m.max_ulp)} > budget {fmt_ulp(r.budget)}")
    groups.append(("Failing", fail_note, len(failing), take(failing, FAILING_PLOTS)))

    def ratio(r: _Row) -> float:
        return r.m.max_ulp / r.budget
    close = [r for r in plotted if r.budget and r.budget > 0 and math.isfinite(r.m.max_ulp)
             and r.m.max_ulp > 0 and r.cls == "" and not _over_budget(r.m, r.budget)]
    close.sort(key=lambda r: (-ratio(r), -r.m.max_ulp, r.m.key()))
    shown = take(close, CLOSEST_PLOTS)
    for r in shown:
        r.reasons.append(f"max ulp {fmt_ulp(r.m.max_ulp)} of budget {fmt_ulp(r.budget)} "
                         f"({100 * ratio(r):.0f}%)")
    groups.append(("Closest to budget", "max ulp / budget, highest first", len(close), shown))

    if changes:
        changed = [r for r in plotted if r.m.key() in changes]
        for r in changed:
            r.reasons.append(r.change)
        groups.append(("Changed", "against the previous report", len(changed),
                       take(changed, CHANGED_PLOTS)))
    return groups


def _changes(previous: Report | None, report: Report) -> dict[Key, list[str]]:
    if previous is None:
        return {}
    d = diff_reports(previous, report)
    out: dict[Key, list[str]] = {}
    for kind, changes in (("worse", d.regressions), ("better", d.improvements), ("newly measured", d.measured)):
        for c in changes:
            name, old, new = c.describe()
            out.setdefault(c.key, []).append(f"{kind}: {name} {old} -> {new}")
    return out


@lru_cache(maxsize=1)
def _template():
    import jinja2
    env = jinja2.Environment(loader=jinja2.PackageLoader("nbx.harness.report", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    # Compact, strict JSON: the page's data is most of its size, and a stray inf/nan is a bug.
    env.policies["json.dumps_kwargs"] = {"separators": (",", ":"), "allow_nan": False}
    return env.get_template("report.html.j2")


def _compact(values: list, digits: int) -> object:
    """A trend series for the page: one value where every run has the same, else the list;
    numbers to `digits` significant digits, inf/nan as strings, a run without the figure null."""
    out = [None if v is None else encode_float(float(f"{v:.{digits}g}")) if math.isfinite(v)
           else encode_float(v) for v in values]
    return out[0] if len(set(map(str, out))) == 1 else out


# Wall seconds in a trend: one digit of DIGITS per run, WALL_STEPS steps per doubling from 1 ms
# (a step is 26%, the top 2^21 ms, 35 minutes), "." for a run without the measurement: a tenth of
# the text of the decimal figures, which would take a nightly page with ten runs over 2 MB.
WALL_STEPS = 3


def encode_wall(values: list) -> str:
    out = []
    for v in values:
        if v is None or v != v:
            out.append(".")
        else:
            q = round(WALL_STEPS * math.log2(max(v, 1e-3) / 1e-3))
            out.append(DIGITS[min(max(q, 0), len(DIGITS) - 1)])
    return "".join(out)


def _trend_data(h: trends.History, index: dict[Key, int]) -> dict:
    """The runs, and per measurement index: [max ulp, misrounded, wall s (encode_wall)] series
    and the regressions as [figure, index of the run where it started]."""
    series = {}
    for key, figs in h.series.items():
        i = index.get(key)
        if i is not None:
            series[i] = [_compact(figs["max_ulp"], 4), _compact(figs["not_correctly_rounded"], 15),
                         encode_wall(figs["wall_s"])]
    started: dict[int, list] = {}
    for g in h.regressions:
        if g.key in index:
            started.setdefault(index[g.key], []).append([g.figure, g.since])
    return {"runs": [[r.run_id, r.short_commit, r.created] for r in h.runs], "s": series,
            "g": started, "ws": WALL_STEPS}


def _history_of(report: Report, previous, history) -> trends.History | None:
    if history is not None:
        return history
    searched = getattr(previous, "searched", None)
    return trends.load_history(report, searched) if searched is not None else None


GRID_STATUS = {s: f"c{i}" for i, s in enumerate(overview.STATUSES)}      # the cells' classes
REGRESSION_ROWS = 40


def _grid(ov: overview.Overview, index: dict[Key, int], marks: dict[Key, str], peered: set[Key]) -> dict:
    """The overview as the template writes it: dtype groups, suite columns, and per op its
    cells as (classes, measurement index or None, label lines, hover text for cells with none).
    A cell whose figures got worse against the previous report (overview.change_marks) has the
    class "cw", one that only got better "cb" (a corner mark); one that a peer measured too (its
    key in `peered`) "pp" (a bar along its foot)."""
    groups: list[list] = []
    for dtype, suite in ov.columns:
        if groups and groups[-1][0] == dtype:
            groups[-1][1] += 1
        else:
            groups.append([dtype, 1])
    rows = []
    for op in ov.ops:
        cells = []
        for dtype, suite in ov.columns:
            c = ov.cell(op, dtype, suite)
            if c is None:
                cells.append(None)
                continue
            i = index.get(c.key) if c.measurement is not None else None
            mark = {"worse": " cw", "better": " cb"}.get(marks.get(c.key, ""), "")
            if c.key in peered:
                mark += " pp"
            cells.append((GRID_STATUS[c.status] + mark, i, c.label, "" if i is not None else c.describe()))
        rows.append((op, cells))
    counts = ov.counts()
    starts = [j > 0 and ov.columns[j][0] != ov.columns[j - 1][0] for j in range(len(ov.columns))]
    return {"groups": groups, "starts": starts, "suites": [(s, overview.SUITE_ABBREV.get(s, s)) for _, s in ov.columns],
            "rows": rows, "legend": [(GRID_STATUS[s], overview.COLORS[s], overview.STATUS_TEXT[s], counts[s])
                                     for s in overview.STATUSES],
            "other": ov.other_failures}


def render_html(report: Report, *, failures: dict[Key, list[str]] | None = None, verdict=None,
                previous=None, budgets: dict | None = None, history: trends.History | None = None) -> str:
    """The whole page.

    failures: the gate's messages by measurement key; with it, failing rows are highlighted and
    carry the messages, and the rest read "ok" (write_report takes them from the verdict).
    verdict: verdict.evaluate's result, whose budgets (the file it gated with) and failures the page
    shows. previous: an earlier Report, or find_previous's result; measurements that regressed or
    improved against it are drawn up front and their changes shown, and the directory
    find_previous searched gives the trends. budgets: a budget file's data (budgets.load), where
    there is no verdict; by default the committed reports/budgets/<backend-id>.json where it
    exists. history: trends.load_history's result (default: loaded from previous.searched)."""
    if verdict is not None:
        entries = dict(verdict.budgets)
        budget_source = _shown_path(verdict.budgets_path)
    elif budgets is not None:
        entries, budget_source = dict(budgets.get("budgets") or {}), "given by the caller"
    else:
        entries, budget_source = load_budgets(report.backend_id)
    table = _budget_table({"budgets": entries})
    hist = _history_of(report, previous, history)
    if previous is not None and not isinstance(previous, Report):
        previous = getattr(previous, "report", None)
    fails = overview.failure_map(verdict, failures)
    gated = fails is not None
    changes = _changes(previous, report)
    # the table, the grid and the plots are nbx's; a peer's measurements are its own table and charts
    ms = sorted((m for m in report.measurements if m.is_nbx), key=severity)
    theirs = [m for m in report.measurements if not m.is_nbx]
    peers = sorted({m.target_info or m.target for m in theirs})
    rows = []
    for i, m in enumerate(ms):
        row = _row(i, m, (fails or {}).get(m.key()) or [], gated, table.get(B.key(m.op, m.dtype)))
        row.change = "; ".join(changes.get(m.key(), []))
        rows.append(row)
    groups = _featured(rows, gated, changes)
    featured = {r.i for _, _, _, shown in groups for r in shown}
    index = {r.m.key(): r.i for r in rows}
    ov = overview.build(report, budgets=entries, verdict=verdict, failures=failures)
    marks = overview.change_marks(previous, report)

    edges = Counter(tuple(encode_float(e) for e in (m.hist or {}).get("edges") or [])
                    for m in ms if m.hist)
    common_edges = list(edges.most_common(1)[0][0]) if edges else []
    trend = hist if hist is not None and hist.earlier else None
    trend_data = _trend_data(trend, index) if trend is not None else None
    peer_data = charts.peers_data(report, index)
    peer_rows = charts.peer_rows(report)
    # the trends and the peers share the page's budget with the points
    points_budget = (POINTS_BUDGET - (len(json.dumps(trend_data, separators=(",", ":"))) if trend_data else 0)
                     - (len(json.dumps(peer_data, separators=(",", ":"))) if peer_data else 0)
                     - sum(PEER_ROW_CHARS + sum(map(len, r)) for r in peer_rows))
    data = [plot_data(r.m, r.budget) for r in rows]
    for grid in GRIDS[1:]:
        rest = [r.i for r in rows if r.i not in featured and "p" in data[r.i]]
        if sum(len(data[i]["p"]) + len(data[i].get("n", "")) for i in rest) <= points_budget:
            break
        for i in rest:
            data[i] = {**plot_data(rows[i].m, rows[i].budget, grid), "g": list(grid)}
    for r, d in zip(rows, data):
        if d.get("he") == common_edges:
            del d["he"]
        limit = WORST_ROWS_FEATURED if (r.i in featured or r.cls) else WORST_ROWS_OTHER
        if r.m.worst:
            d["W"] = _worst_rows(r.m, limit)
            if len(r.m.worst) > limit:
                d["nw"] = len(r.m.worst)
        if r.m.not_correctly_rounded:
            d["b"] = r.m.not_correctly_rounded
        c = ov.cells.get(r.m.key())
        if c is not None:
            d["s"] = GRID_STATUS[c.status]

    n_fail = sum(1 for r in rows if r.cls == "fail")
    n_err = sum(1 for r in rows if r.m.error)
    meta = [("backend id", report.backend_id or "(unknown)")] + [
        (k, str(v)) for k, v in sorted(report.backend.items()) if k != "id"] + [
        ("commit", report.git_commit or "(unknown)"), ("profile", report.profile),
        ("run id", report.run_id), ("created", report.created)]
    if report.shards:
        meta.append(("merged from", ", ".join(report.shards)))
    meta.append(("budgets", budget_source or "none found for this backend"))
    if peers:
        meta.append(("peers (reported, not gated)", "; ".join(peers)))
    if previous is not None:
        meta.append(("compared with", f"{previous.run_id} ({previous.backend_id})"))
    if hist is not None and hist.searched is not None:
        meta.append(("history", f"{hist.earlier} earlier report(s) under {hist.searched}"))
    n_gate = sum(len(v) for v in (fails or {}).values())
    if gated:
        verdict_text = f"FAIL ({n_gate} gate failures)" if n_gate or n_err else "PASS"
    else:
        verdict_text = "NOT GATED"
    regressions = []
    if trend is not None:
        for g in trend.regressions[:REGRESSION_ROWS]:
            run = trend.runs[g.since]
            regressions.append((g.key, index.get(g.key), g.figure, trends.fmt_figure(g.old), trends.fmt_figure(g.new),
                                g.since + 1, run))
    return _template().render(
        title=f"nbx report {report.backend_id} {report.run_id}",
        backend=report.backend_id or "(unknown backend)", verdict=verdict_text,
        report=report, meta=meta, columns=COLUMNS, budget_col=[h for h, _ in COLUMNS].index("budget"),
        rows=rows, groups=groups, anchor=_anchor, compared=previous is not None, gated=gated,
        counts=dict(measurements=len(ms), cases=sum(m.cases for m in ms), errors=n_err,
                    failing=n_fail, peer_measurements=len(theirs)),
        grid=_grid(ov, index, marks, {(m.op, m.dtype, m.suite) for m in theirs}), near=overview.NEAR_BUDGET,
        trend=trend,
        changed=(sum(1 for v in marks.values() if v == "worse"), sum(1 for v in marks.values() if v == "better")),
        trend_svg=charts.trend_svg(trend) if trend is not None else "",
        regressions=regressions, n_regressions=len(trend.regressions) if trend is not None else 0,
        history_note=_history_note(hist), peers=peers, peer_rows=peer_rows,
        peer_standing=markdown.peer_standing(report),
        peer_dtypes=[dt for dt, _ in peer_data["d"]] if peer_data else [],
        data={"grid": list(GRIDS[0]), "edges": common_edges, "digits": DIGITS, "m": data,
              "st": {GRID_STATUS[s]: overview.STATUS_TEXT[s] for s in overview.STATUSES},
              "t": trend_data, "pc": peer_data})


def _history_note(h: trends.History | None) -> str:
    if h is None or h.searched is None:
        return "no directory of earlier reports was given (nbx run --history DIR)"
    if not h.earlier:
        return f"no earlier report of this profile, backend and seed under {h.searched}"
    return ""
