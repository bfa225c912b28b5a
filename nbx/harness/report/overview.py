"""The overview: every op (rows) against every (dtype, suite) measured (columns), each cell one
status, its max ulp and its count of misrounded (or, for exact results, wrong) results.

A cell's status is one of STATUSES, decided from the measurement and the gate's verdict:
- "correct": every case measured is correctly rounded (within half an ulp; exact results exact),
  with no special mismatch, wrong result, unresolved case or undecided input left out;
- "within": passing, with a budget above correct rounding that it uses less than NEAR_BUDGET of;
- "near": passing, at NEAR_BUDGET of its budget or more;
- "failing": the gate failed it (or, with no verdict, it raised or is over its budget);
- "missing": no measurement where the gate asked for one (it fails the gate too).
A cell of an op on a dtype or suite it does not have is blank.
A compound op held to its documented evaluation order (order_cases) is near or within by its
figure against that order, the one the gate holds; its correct rounding is against the exact value.

The page (html.py) draws the grid as a table; overview_png draws it with matplotlib for summary.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from nbx.dtype import DTYPES
from nbx.harness.gate import budgets as B
from nbx.harness.records.measurement import SUITES, Measurement
from nbx.harness.report.diff import CORRECTLY_ROUNDED_ULP, diff_reports
from nbx.harness.report.json_report import Key, Report, fmt_ulp

STATUSES = ("correct", "within", "near", "failing", "missing")
STATUS_TEXT = {
    "correct": "correctly rounded (exact) on every case measured",
    "within": "within budget",
    "near": "near its budget",
    "failing": "failing",
    "missing": "not measured (the gate asks for it)",
}
# The color of each status, shared by the page and the PNG: a diverging green-to-red scale
# (ColorBrewer RdYlGn), grey for a measurement the gate asks for and the run lacks.
COLORS = {"correct": "#1a9850", "within": "#a6d96a", "near": "#fdae61", "failing": "#d73027",
          "missing": "#9e9e9e"}
BLANK = "#ffffff"
# A passing figure at this fraction of its budget or more is "near": one more case drawn, or a
# change of libm, and it fails.
NEAR_BUDGET = 0.8
# Suites that cover every input of their dtype (all 65,536 of a 16-bit unary op).
EVERY_INPUT_SUITES = ("exhaustive16",)
SUITE_ABBREV = {"bank": "bank", "exhaustive16": "all16", "sweep": "sweep", "pairs": "pairs",
                "layout": "lay", "intdiv": "idiv"}


@dataclass
class Cell:
    op: str
    dtype: str
    suite: str
    status: str
    measurement: Measurement | None = None
    budget: float | None = None          # the figure's budget: max ulp, or the order's for a compound op
    reasons: list[str] = field(default_factory=list)     # the gate's messages, or why it is failing

    @property
    def key(self) -> Key:
        return (self.op, self.dtype, self.suite)

    @property
    def every_input(self) -> bool:
        return self.suite in EVERY_INPUT_SUITES

    @property
    def label(self) -> tuple[str, str]:
        """(max ulp, misrounded count) as the cell prints them; wrong results where results are
        exact (integers, bools, layouts), where nothing is rounded."""
        m = self.measurement
        if m is None:
            return ("-", "")
        if m.error:
            return ("err", "")
        bad = m.not_correctly_rounded if m.not_correctly_rounded or not m.wrong else m.wrong
        return (short_ulp(m.max_ulp), short_count(bad + m.special_mismatches))

    def describe(self) -> str:
        """The figures in words: what hovering a cell shows."""
        m = self.measurement
        head = f"{self.op} {self.dtype} {self.suite}: {STATUS_TEXT[self.status]}"
        if m is None:
            return "; ".join([head, *self.reasons])
        if m.error:
            return "; ".join([head, f"raised: {m.error.splitlines()[0][:160]}"]
                             + [r for r in self.reasons if not r.startswith("raised")])
        parts = [head, f"max {fmt_ulp(m.max_ulp)} ulp" + ("" if self.budget is None or m.order_cases
                                                      else f" of budget {fmt_ulp(self.budget)}"),
                 f"{m.not_correctly_rounded:,} of {m.cases:,} misrounded"]
        if m.order_cases:
            parts.append(f"{fmt_ulp(m.order_max_ulp)} ulp from its documented order"
                         + ("" if self.budget is None else f" (order budget {fmt_ulp(self.budget)})"))
        if m.special_mismatches:
            parts.append(f"{m.special_mismatches:,} special mismatches")
        if m.wrong:
            parts.append(f"{m.wrong:,} wrong")
        if m.left_out:
            parts.append(f"{m.left_out:,} undecided inputs left out")
        if self.every_input:
            parts.append("every input")
        return "; ".join(parts + self.reasons)


@dataclass
class Overview:
    ops: list[str]                               # row labels, as the report labels targets
    columns: list[tuple[str, str]]               # (dtype, suite), floats first
    cells: dict[Key, Cell]
    other_failures: list[str] = field(default_factory=list)   # gate failures of no cell (budgets, bank)

    def counts(self) -> dict[str, int]:
        """Cells per status (blank cells are none)."""
        out = {s: 0 for s in STATUSES}
        for c in self.cells.values():
            out[c.status] += 1
        return out

    def cell(self, op: str, dtype: str, suite: str) -> Cell | None:
        return self.cells.get((op, dtype, suite))


def short_ulp(v: float) -> str:
    """At most four characters: 0, .49, .5, >.5, 1.2, 12, 845, 2e6, inf. Below 1 the digits are
    cut, never rounded: 0.4987 (correctly rounded) reads .49, and 0.5000001 (not) reads >.5."""
    if v != v:
        return "nan"
    if math.isinf(v):
        return "inf"
    if v == 0:
        return "0"
    if v < 0.01:
        return "<.01"
    if 0.5 < v < 0.51:
        return ">.5"
    if v < 1:
        return "." + f"{math.floor(v * 100):02d}".rstrip("0")
    if v < 10:
        return f"{v:.2g}"
    if v < 1000:
        return f"{v:.0f}"
    return f"{v:.0e}".replace("e+0", "e").replace("e+", "e")


def short_count(n: int) -> str:
    """At most four characters: 0, 12, 999, 12k, 8.4M."""
    if n < 1000:
        return str(n)
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            v = n / div
            return (f"{v:.1f}" if v < 10 else f"{v:.0f}") + unit
    return str(n)


def change_marks(previous: Report | None, report: Report) -> dict[Key, str]:
    """Per measurement changed against the previous report (diff_reports): "worse" where any
    figure regressed, else "better"."""
    if previous is None:
        return {}
    d = diff_reports(previous, report)
    out = {c.key: "better" for c in d.improvements}
    out.update({c.key: "worse" for c in d.regressions})
    return out


def failure_map(verdict=None, failures: dict | None = None) -> dict[tuple, list[str]] | None:
    """The gate's messages by key: the given map, else the verdict's failures; None when the
    report was not gated (write_report passes both, the map made from the verdict)."""
    if failures is not None:
        return failures
    if verdict is not None:
        out: dict[tuple, list[str]] = {}
        for f in verdict.failures:
            out.setdefault(tuple(f.key), []).append(f.reason)
        return out
    return None


def status(m: Measurement, budget: float | None, gated: bool, reasons: list[str]) -> str:
    """The status of one measurement (module docstring): `budget` is the one its gated figure is
    held to, `reasons` the gate's messages for it."""
    if m.error or reasons:
        return "failing"
    figure = m.order_max_ulp if m.order_cases else m.max_ulp
    if not gated and budget is not None and not figure <= budget + 1e-9:
        return "failing"
    if (m.max_ulp <= CORRECTLY_ROUNDED_ULP and not m.not_correctly_rounded
            and not m.special_mismatches and not m.wrong and not m.unresolved and not m.left_out):
        return "correct"
    if budget is not None and budget > CORRECTLY_ROUNDED_ULP and math.isfinite(budget) \
            and figure >= NEAR_BUDGET * budget:
        return "near"
    return "within"


def budget_of(m: Measurement, budgets: dict) -> float | None:
    """The budget of m's gated figure from a budget table ("op|dtype" -> entry)."""
    entry = budgets.get(B.key(m.op, m.dtype)) or {}
    name = "order_max_ulp" if m.order_cases else "max_ulp"
    return float(entry[name]) if name in entry else None


def dtype_rank(name: str) -> tuple:
    order = list(DTYPES)
    d = DTYPES.get(name)
    return (0 if d is not None and d.is_float else 1, order.index(name) if name in order else len(order),
            name)


def suite_rank(name: str) -> tuple:
    return (SUITES.index(name) if name in SUITES else len(SUITES), name)


def build(report: Report, *, budgets: dict, verdict=None, failures: dict | None = None) -> Overview:
    """The grid of nbx's measurements of `report` (peers have their own charts). budgets: the
    budget entries ("op|dtype" -> entry) the report is judged by; verdict: verdict.evaluate's result
    (its failures decide what fails), else failures (key -> messages) where given."""
    fails = failure_map(verdict, failures)
    gated = fails is not None
    fails = fails or {}
    ms = [m for m in report.measurements if m.is_nbx]
    columns = sorted({(m.dtype, m.suite) for m in ms}, key=lambda c: (dtype_rank(c[0]), suite_rank(c[1])))
    ops = {m.op for m in ms}
    cells: dict[Key, Cell] = {}
    for m in ms:
        b = budget_of(m, budgets)
        reasons = list(fails.get(m.key()) or [])
        cells[m.key()] = Cell(m.op, m.dtype, m.suite, status(m, b, gated, reasons), m, b, reasons)
    other: list[str] = []
    colset = set(columns)
    for key, reasons in fails.items():
        if not reasons or tuple(key) in cells:
            continue
        op, dtype, suite = (list(key) + ["", "", ""])[:3]
        if suite:
            hit = [(dtype, suite)]
        else:
            # "no measurement for this op and dtype": the op's suites (as it has them in other
            # dtypes) in this dtype's columns; the cells it has there already carry the reason
            suites = {m.suite for m in ms if m.op == op} or {s for _, s in columns}
            hit = [c for c in columns if c[0] == dtype and c[1] in suites]
        hit = [c for c in hit if c in colset]
        if not hit:
            other.append(" ".join(x for x in (op, dtype, suite) if x) + ": " + "; ".join(reasons))
        for dt, s in hit:
            if (op, dt, s) in cells:
                cells[(op, dt, s)].reasons += reasons
            else:
                cells[(op, dt, s)] = Cell(op, dt, s, "missing", None, None, list(reasons))
            ops.add(op)
    return Overview(sorted(ops), columns, cells, other)


# ---------------------------------------------------------------------- the PNG

def overview_png(ov: Overview, *, title: str = "", changes: dict[Key, str] | None = None,
                 dpi: int = 100) -> bytes:
    """The grid drawn by matplotlib (Agg, no display), as PNG bytes: one square per cell in its
    status color, labelled with max ulp over the misrounded count; dtype groups along the top.
    changes (change_marks): a black corner on each cell worse than in the previous report, a
    white one on each only better, as the page marks them."""
    import io

    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Polygon

    nrow, ncol = max(len(ov.ops), 1), max(len(ov.columns), 1)
    cw, rh = 0.36, 0.2                       # inches per cell: two lines of 4.5 pt text fit
    left, top, bottom = 1.5, 1.1, 0.35
    fig = Figure(figsize=(left + ncol * cw + 0.2, top + nrow * rh + bottom), dpi=dpi)
    FigureCanvasAgg(fig)
    W, H = fig.get_size_inches()
    ax = fig.add_axes((left / W, bottom / H, ncol * cw / W, nrow * rh / H))
    grid = np.full((nrow, ncol), len(STATUSES))          # blank
    row = {op: i for i, op in enumerate(ov.ops)}
    col = {c: j for j, c in enumerate(ov.columns)}
    for c in ov.cells.values():
        if c.op in row and (c.dtype, c.suite) in col:
            grid[row[c.op], col[(c.dtype, c.suite)]] = STATUSES.index(c.status)
    cmap = ListedColormap([COLORS[s] for s in STATUSES] + [BLANK])
    ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(STATUSES) + 0.5, aspect="auto",
              interpolation="nearest")
    for c in ov.cells.values():
        if c.op not in row or (c.dtype, c.suite) not in col:
            continue
        a, b = c.label
        dark = c.status in ("correct", "failing")
        ax.text(col[(c.dtype, c.suite)], row[c.op], f"{a}\n{b}" if b else a, ha="center", va="center",
                fontsize=4.5, linespacing=0.95, color="white" if dark else "#222")
    for key, how in (changes or {}).items():
        if key[0] in row and key[1:] in col:
            y, x = row[key[0]], col[key[1:]]
            ax.add_patch(Polygon([(x + 0.5, y - 0.5), (x + 0.12, y - 0.5), (x + 0.5, y - 0.12)],
                                 closed=True, linewidth=0, color="black" if how == "worse" else "white"))
    ax.set_yticks(range(len(ov.ops)), ov.ops, fontsize=6)
    ax.set_xticks(range(len(ov.columns)), [SUITE_ABBREV.get(s, s) for _, s in ov.columns],
                  fontsize=5, rotation=90)
    ax.xaxis.tick_top()
    ax.tick_params(length=0, pad=1)
    ax.set_xticks(np.arange(-0.5, ncol, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, nrow, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    # dtype groups: a label above each run of columns, a thicker line between groups
    start = 0
    for j in range(1, ncol + 1):
        if j == ncol or ov.columns[j][0] != ov.columns[start][0]:
            ax.text((start + j - 1) / 2, -0.5 - 2.6 / rh * 0.1, ov.columns[start][0], ha="center",
                    va="bottom", fontsize=6.5, fontweight="bold")
            if j < ncol:
                ax.axvline(j - 0.5, color="#333", linewidth=0.8)
            start = j
    counts = ov.counts()
    handles = [Patch(color=COLORS[s], label=f"{STATUS_TEXT[s]} ({counts[s]:,})") for s in STATUSES]
    if changes is not None:
        worse = sum(1 for v in changes.values() if v == "worse")
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="////",
                             label=f"corner: worse than the previous report ({worse:,}; white: only better)"))
    fig.legend(handles=handles,
               loc="upper left", bbox_to_anchor=(0.005, 0.999), ncol=3, fontsize=6.5,
               frameon=False, handlelength=1.2, columnspacing=1.2)
    if title:
        fig.text(0.995, 0.995, title, ha="right", va="top", fontsize=6.5, color="#444")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()
