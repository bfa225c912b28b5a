"""summary.md: the report as a CI job summary (GitHub/GitLab render this Markdown).

It leads with what a reader of a nightly needs first, so that the first screen answers "did
anything get worse, and where":

1. the status: PASS / FAIL / NOT GATED, backend, profile, run id, the counts, and the change
   counts against the previous report;
2. the gate's failures (verdict.evaluate's Verdict: the gate's own checks, not a re-implementation);
3. the measurements closest to their budgets;
4. the changes since the previous report of the same profile, backend and seed (find_previous),
   naming the report compared with, or saying that none was found;
5. the worst inputs of the measurements above, in decimal and hex, each with a `nbx repro` command;
6. the rest of the failures and changes; the inputs decided on the device; peers side by side
   (`nbx run --target torch`: nbx's and the peer's figures per op and dtype, where they differ); compound ops, their
   gated figure against the documented evaluation order beside the exact one; the budgets that
   carry a written reason; then one table per suite with a budget column.

Decimal values need the operand and result dtypes of each target, which only nbx's ops know: they
are found by running the target on one element (nbx loads then, with Triton). Where that is not
possible (an op this nbx does not have), values are shown in hex alone.
"""
from __future__ import annotations

import dataclasses
import functools
import shlex

from nbx.harness.records.measurement import SUITES, Measurement
from nbx.harness.report import overview, trends
from nbx.harness.report.diff import ReportDiff, diff_reports, newly_measured
from nbx.harness.report.json_report import (Key, Previous, Report, fmt_frac, fmt_ulp,
                                            parse_label, severity)

COLUMNS = ("status", "op", "dtype", "cases", "max ulp", "budget", "vs order", "mean", "p99.9", "not CR",
           "specials", "wrong", "layouts")
# Suites whose worst inputs are operand bit patterns of the target, which `nbx repro` replays.
VALUE_SUITES = ("bank", "exhaustive16", "sweep", "pairs")
# A budget at or below this demands correct rounding: a correctly rounded op sits at it by
# definition, so "closeness" to it says nothing and such measurements are not ranked.
CR_BUDGET = 0.5
HEAD_FAILURES = 10          # rows of each list in the first screen; the rest follow further down
HEAD_CLOSEST = 5
HEAD_CHANGES = 10
HEAD_REGRESSIONS = 10       # regressions over the trend window listed in the summary
OVERVIEW_PNG = "overview.png"
WORST_MEASUREMENTS = 15     # measurements whose worst inputs are shown, and inputs per measurement
WORST_PER_MEASUREMENT = 3


def _cell(text: object, limit: int = 500) -> str:
    """A table cell or list item: pipes and HTML escaped, newlines flattened, long text cut, so
    an exception message can neither break the table nor inject markup. ">" stays as it is: it
    opens no tag, and reasons such as "max ulp 1.5 > budget 0.5" read the same in raw text."""
    text = " ".join(str(text).split())
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    return text.replace("\\", "\\\\").replace("|", "\\|")


def _code(text: str) -> str:
    """Inline code in a table cell (pipes escaped; backticks cannot occur in what we quote)."""
    return "`" + text.replace("|", "\\|") + "`"


def _table(header: tuple, rows: list[tuple], right: tuple = ()) -> list[str]:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if h in right else "---" for h in header) + "|"]
    return lines + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]


def status_of(m: Measurement, failures: dict[Key, list[str]] | None) -> str:
    if m.error:
        return "ERROR"
    if failures is not None:
        return "FAIL" if failures.get(m.key()) else "ok"
    return ""


# ---------------------------------------------------------------------- values in decimal
@functools.lru_cache(maxsize=None)
def case_dtypes(label: str, dtype: str) -> tuple[tuple[str, ...], str] | None:
    """(operand dtype names, result dtype name) of a measured target, or None where this nbx
    cannot say. The result dtype comes from running the target on ones: the op's own rule."""
    try:
        import numpy as np

        from nbx import dtype as D
        from nbx.harness.targets.target import Target
        from nbx.ops import OPS
        op, params = parse_label(label)
        if op not in OPS or dtype not in D.DTYPES:
            return None
        t = Target(op, params, D.DTYPES[dtype])
        ins = t.operand_dtypes()
        got = t.run([np.ones(1, dtype=d.np) for d in ins])
        return tuple(d.name for d in ins), D.from_numpy_dtype(got.dtype).name
    except Exception:  # noqa: BLE001 (a summary must be written whatever the op does)
        return None


def decimal(bits: str, dtype: str | None) -> str | None:
    """The value of a hex bit pattern in dtype, shortest round-trip form; None if not decodable."""
    if dtype is None:
        return None
    try:
        import numpy as np

        from nbx import dtype as D
        d = D.DTYPES[dtype]
        b = int(bits, 16)
        if d.is_bool:
            return str(bool(b))
        text = str(np.array([b], dtype=np.uint64).astype(d.uint_np).view(d.np)[0])
        # ml_dtypes prints an integral bfloat16 as "-20": spell every float as a float
        return text + ".0" if d.is_float and text.lstrip("-").isdigit() else text
    except (KeyError, ValueError, OverflowError, TypeError, ImportError):
        return None


def _both(bits: str, dtype: str | None) -> str:
    """`-20.0 (0xc034000000000000)`, or the text as it is where it is no bit pattern."""
    v = decimal(bits, dtype) if bits.startswith("0x") else None
    return f"{v} ({bits})" if v is not None else bits


def _is_hex(text: str) -> bool:
    try:
        return text.startswith("0x") and int(text, 16) >= 0
    except ValueError:
        return False


def repro_command(m: Measurement, inputs: list[str]) -> str | None:
    """The `nbx repro` command that replays one worst input of m, or None where the suite's
    inputs are no operand bit patterns (layout and intdiv describe structural cases)."""
    if m.suite not in VALUE_SUITES or not inputs or not all(_is_hex(x) for x in inputs):
        return None
    dts = case_dtypes(m.op, m.dtype)
    if dts is not None and len(dts[0]) != len(inputs):
        return None
    return " ".join(["nbx", "repro", shlex.quote(m.op), shlex.quote(m.dtype), *inputs])


def _worst_inputs(m: Measurement, w) -> str:
    dts = case_dtypes(m.op, m.dtype) if m.suite in VALUE_SUITES else None
    ins = dts[0] if dts and len(dts[0]) == len(w.inputs) else [None] * len(w.inputs)
    return ", ".join(_both(x, d) for x, d in zip(w.inputs, ins))


def _worst_result(m: Measurement, bits: str) -> str:
    dts = case_dtypes(m.op, m.dtype) if m.suite in VALUE_SUITES else None
    return _both(bits, dts[1] if dts else None) if bits else ""


# ---------------------------------------------------------------------- sections
def _budget(verdict, m: Measurement) -> float | None:
    return verdict.budget(m.op, m.dtype) if verdict is not None else None


def _fmt_budget(b: float | None) -> str:
    return "-" if b is None else fmt_ulp(b)


def _budget_cell(verdict, m: Measurement) -> str:
    """The budget that gates m: its max ulp, or "order N" for a compound op held to its documented
    order; "*" marks an entry with a written reason (listed under "Budget reasons")."""
    if verdict is None:
        return "-"
    text = (f"order {_fmt_budget(verdict.order_budget(m.op, m.dtype))}" if m.order_cases
            else _fmt_budget(_budget(verdict, m)))
    return text + (" *" if verdict.reason(m.op, m.dtype) else "")


def _vs_order(m: Measurement) -> str:
    return fmt_ulp(m.order_max_ulp) if m.order_cases else "-"


def _status(report: Report, verdict, failures) -> str:
    if verdict is not None:
        return "PASS" if verdict.passed else "FAIL"
    if failures is not None:
        bad = any(failures.values()) or any(m.error for m in report.measurements)
        return "FAIL" if bad else "PASS"
    return "NOT GATED"


def peer_standing(report: Report) -> list[str]:
    """One line per peer for the page's first screen: over the measurements it shares with nbx (same
    op, dtype and suite, neither raised), in how many it misrounds (or gets wrong) results and how many
    results that is, nbx's same two figures, and in how many its max ulp is above nbx's."""
    mine = {m.key(): m for m in report.measurements if m.is_nbx and not m.error}
    by_peer: dict[str, list] = {}
    for m in report.measurements:
        if not m.is_nbx and not m.error and m.key()[:3] in mine:
            by_peer.setdefault(m.target_info or m.target, []).append((m, mine[m.key()[:3]]))
    def bad(m):
        return m.not_correctly_rounded + m.wrong + m.special_mismatches

    lines = []
    for name, pairs in sorted(by_peer.items()):
        theirs = sum(1 for p, _ in pairs if bad(p))
        ours = sum(1 for _, n in pairs if bad(n))
        above = sum(1 for p, n in pairs if p.max_ulp > n.max_ulp + 1e-9)
        lines.append(f"{name}: misrounded, wrong or special results in {theirs:,} of {len(pairs):,} shared measurements "
                     f"({sum(bad(p) for p, _ in pairs):,} results), nbx in {ours:,} "
                     f"({sum(bad(n) for _, n in pairs):,}); max ulp above nbx's in {above:,}")
    return lines


def _head(report: Report, verdict, failures, previous: Previous | None,
          diff: ReportDiff | None) -> list[str]:
    ms = report.measurements
    status = _status(report, verdict, failures)
    lines = [f"# nbx report: {status} | {_cell(report.backend_id or '(unknown backend)')} | "
             f"profile {_cell(report.profile or '?')} | run {_cell(report.run_id)}", ""]
    errors = sum(1 for m in ms if m.error)
    if verdict is not None:
        verdict_text = (f"{len(verdict.failures)} gate failure(s)" if verdict.failures
                        else "every figure within budget")
    elif report.shard is not None:
        i, n = report.shard
        verdict_text = f"a lone shard ({i}/{n}), not gated: its merged report is"
    elif failures is not None:
        verdict_text = f"{sum(1 for v in failures.values() if v)} measurement(s) failing their budgets"
    else:
        verdict_text = "not gated"
    counts = (f"**{status}**: {verdict_text}; {len(ms)} measurements, "
              f"{sum(m.cases for m in ms):,} cases, {errors} raised.")
    if diff is not None:
        counts += (f" Since run {_cell(diff.old_run_id)}: **{len(diff.regressions)} regressions**, "
                   f"{len(diff.improvements)} improvements, {newly_measured(diff)}"
                   f"{len(diff.added)} added, {len(diff.removed)} removed.")
    elif previous is not None and previous.searched is not None:
        counts += " No earlier report to compare with."
    lines.append(counts)
    meta = [f"commit {report.git_commit or '(unknown)'}"]
    if report.backend.get("device"):
        meta.append(f"device {report.backend['device']}")
    meta.append(f"created {report.created}")
    if report.seed:
        meta.append(f"seed {report.seed}")
    if verdict is not None:
        meta.append(f"budgets {verdict.budgets_path.name}"
                    + ("" if verdict.bank_checked else " (bank not checked)"))
    if report.shards:
        meta.append(f"merged from {len(report.shards)} shards")
    lines += ["", _cell("; ".join(meta)) + ".", ""]
    return lines


def _overview(report: Report, verdict, failures, image: str | None, note: str) -> list[str]:
    """The overview image (report.html's first screen, drawn by overview.overview_png) and its
    cells counted by status."""
    budgets = dict(verdict.budgets) if verdict is not None else {}
    counts = overview.build(report, budgets=budgets, verdict=verdict, failures=failures).counts()
    text = ", ".join(f"{counts[s]:,} {overview.STATUS_TEXT[s]}" for s in overview.STATUSES)
    out = []
    if image:
        out += [f"![Overview: ops (rows) by dtype and suite (columns), colored by status]({image})", ""]
    out += [f"Overview (op x dtype x suite): {text}." + (f" {_cell(note)}" if note else ""), ""]
    return out


def _trends(h: trends.History | None) -> list[str]:
    """The regressions over the last runs, each with the run and commit where it started."""
    if h is None or not h.earlier:
        return []
    out = [f"## Trends over the last {len(h.runs)} runs", ""]
    first, last = h.runs[0], h.runs[-1]
    out.append(f"From run {_cell(first.run_id)} (commit {_cell(first.short_commit)}, {_cell(first.created)}) "
               f"to this one, under `{_cell(h.searched)}`: **{len(h.regressions)} regression(s)**, each a "
               "figure of this run worse than in an earlier run, since the first run after the last "
               "better one (report.html draws every measurement's trend).")
    out.append("")
    if h.regressions:
        rows = []
        for g in h.regressions[:HEAD_REGRESSIONS]:
            r = h.runs[g.since]
            rows.append((*(_cell(k) for k in g.key), g.figure, trends.fmt_figure(g.old), trends.fmt_figure(g.new),
                         f"{g.since + 1}: {_cell(r.run_id)}", _cell(r.short_commit)))
        out += _table(("op", "dtype", "suite", "figure", "before", "now", "since run", "commit"), rows,
                      right=("before", "now"))
        if len(h.regressions) > HEAD_REGRESSIONS:
            out.append(f"\n... and {len(h.regressions) - HEAD_REGRESSIONS} more (`nbx report history`).")
        out.append("")
    return out


def _failure_row(f, by_key: dict[Key, Measurement]) -> tuple:
    op, dt, suite = (list(f.key) + ["", "", ""])[:3]
    m = by_key.get(tuple(f.key))
    worst = ""
    if m is not None and f.worst:
        w = f.worst[0]
        worst = _worst_inputs(m, w) if w.inputs else w.note
    return (_cell(op), _cell(dt), _cell(suite), _cell(f.reason, 200), _cell(worst, 200))


def _failures(verdict, failures, by_key) -> list[str]:
    if verdict is None:
        if failures:
            rows = [(_cell(k[0]), _cell(k[1]), _cell(k[2]), _cell("; ".join(v), 200), "")
                    for k, v in sorted(failures.items()) if v]
            return [f"## Budget failures ({len(rows)})", "",
                    *_table(("op", "dtype", "suite", "reason", "worst input"), rows), ""]
        return []
    fails = verdict.failures
    if not fails:
        return ["## Gate failures: none", ""]
    rows = [_failure_row(f, by_key) for f in fails]
    out = [f"## Gate failures ({len(fails)})", "",
           *_table(("op", "dtype", "suite", "reason", "worst input"), rows[:HEAD_FAILURES])]
    if len(rows) > HEAD_FAILURES:
        out.append(f"\n... and {len(rows) - HEAD_FAILURES} more: [all gate failures](#all-gate-failures)")
    return out + [""]


def _closest(report: Report, verdict, failing: set) -> tuple[list[str], list[Measurement]]:
    """The ranking of budget use (max ulp / budget), per op and dtype (a budget covers every value
    suite), of the measurements that pass; budgets that demand correct rounding are not ranked."""
    if verdict is None:
        return [], []
    best: dict[tuple, tuple[float, Measurement, float]] = {}
    at_cr = exact = 0
    for m in report.measurements:
        b = _budget(verdict, m)
        if m.error or m.key() in failing or b is None or m.max_ulp != m.max_ulp:
            continue
        if b <= CR_BUDGET:
            at_cr += 1
            continue
        if m.max_ulp == 0 and b == 0:
            exact += 1
            continue
        use = m.max_ulp / b
        k = (m.op, m.dtype)
        if k not in best or use > best[k][0]:
            best[k] = (use, m, b)
    ranked = sorted(best.values(), key=lambda t: (-t[0], t[1].key()))[:HEAD_CLOSEST]
    out = ["## Closest to budget", ""]
    if ranked:
        out += _table(("op", "dtype", "suite", "max ulp", "budget", "used"),
                      [(_cell(m.op), _cell(m.dtype), _cell(m.suite), fmt_ulp(m.max_ulp), fmt_ulp(b),
                        f"{100 * use:.0f}%") for use, m, b in ranked],
                      right=("max ulp", "budget", "used"))
    else:
        out.append("No passing measurement has a budget above 0.5 ulp.")
    out.append("")
    if at_cr:
        out += [f"Not ranked: {at_cr} passing measurements whose budget is correct rounding "
                f"(<= {CR_BUDGET} ulp), which they meet at 0.5 or not at all.", ""]
    return out, [m for _, m, _ in ranked]


def _change_rows(changes) -> list[tuple]:
    return [(*(_cell(k) for k in c.key), *(_cell(x) for x in c.describe())) for c in changes]


def _changes(report: Report, previous: Previous | None, diff: ReportDiff | None) -> list[str]:
    what = (f"profile {_cell(report.profile or '?')}, backend {_cell(report.backend_id or '?')}, "
            f"seed {report.seed}")
    out = ["## Changes since the previous report", ""]
    if previous is None or previous.searched is None:
        return out + ["Not compared: no directory of earlier reports was given.", ""]
    if diff is None:
        return out + [f"None found: no report under `{_cell(previous.searched)}` created before this "
                      f"one has {what} (lone shards are skipped).", ""]
    old = previous.report
    out.append(f"Against run {_cell(old.run_id)} (`{_cell(previous.path)}`, created {_cell(old.created)}, "
               f"commit {_cell(old.git_commit or '?')}): the most recent earlier report under "
               f"`{_cell(previous.searched)}` with {what}.")
    out += ["", f"**{len(diff.regressions)} regressions**, {len(diff.improvements)} improvements, "
                f"{newly_measured(diff)}{len(diff.added)} added, {len(diff.removed)} removed. Correctly "
                "rounded measurements (max ulp <= 0.5 in both) are compared by their count not "
                "correctly rounded; one that raised or counted zero cases has no figures to "
                "compare (gaining them is newly measured, losing them a regression).", ""]
    if diff.regressions:
        out += _table(("op", "dtype", "suite", "figure", "old", "new"),
                      _change_rows(diff.regressions[:HEAD_CHANGES]), right=("old", "new"))
        if len(diff.regressions) > HEAD_CHANGES:
            out.append(f"\n... and {len(diff.regressions) - HEAD_CHANGES} more: "
                       "[all changes](#all-changes)")
        out.append("")
    if diff.improvements or diff.measured or diff.added or diff.removed:
        out += ["Improvements, newly measured, added and removed measurements: "
                "[all changes](#all-changes).", ""]
    return out


def _worst_section(picked: list[tuple[Measurement, str]], verdict) -> list[str]:
    if not picked:
        return []
    out = ["## Worst inputs", "",
           "Values in decimal (hex); each repro command scores that case again.", ""]
    for m, why in picked:
        b = _budget(verdict, m)
        out += [f"### {_cell(m.op)} {_cell(m.dtype)} {_cell(m.suite)}: max {fmt_ulp(m.max_ulp)} ulp, "
                f"budget {_fmt_budget(b)} ({why})", ""]
        rows = []
        # the worst list also keeps the largest errors of correct results: show those only
        # where nothing worse was recorded
        shown = [w for w in m.worst if w.ulp != 0 or w.note] or m.worst
        for w in shown[:WORST_PER_MEASUREMENT]:
            cmd = repro_command(m, w.inputs)
            rows.append((_cell(_worst_inputs(m, w)) if w.inputs else "", _cell(_worst_result(m, w.got)),
                         _cell(_worst_result(m, w.expected)), fmt_ulp(w.ulp), _cell(w.note, 300),
                         _code(cmd) if cmd else ""))
        out += _table(("inputs", "got", "expected", "ulp", "note", "repro"), rows, right=("ulp",))
        out.append("")
    return out


def _pick_worst(verdict, failures, diff, closest, by_key) -> list[tuple[Measurement, str]]:
    picked: dict[Key, tuple[Measurement, str]] = {}

    def take(m, why):
        if m is not None and m.worst and not m.error and m.key() not in picked:
            picked[m.key()] = (m, why)
    if verdict is not None:
        for f in verdict.failures:
            take(by_key.get(tuple(f.key)), "gate failure")
    elif failures:
        for k in sorted(k for k, v in failures.items() if v):
            take(by_key.get(k), "budget failure")
    if diff is not None:
        for c in diff.regressions:
            take(by_key.get(c.key), "regression")
    for m in closest:
        take(m, "closest to budget")
    if verdict is None:                       # no budgets to rank by: the largest errors
        for m in sorted(by_key.values(), key=severity)[:5]:
            take(m, "largest error")
    return list(picked.values())[:WORST_MEASUREMENTS]


def _rest(verdict, diff, by_key) -> list[str]:
    out = []
    if verdict is not None and len(verdict.failures) > HEAD_FAILURES:
        out += [f"## All gate failures ({len(verdict.failures)})", "",
                *_table(("op", "dtype", "suite", "reason", "worst input"),
                        [_failure_row(f, by_key) for f in verdict.failures]), ""]
    more = diff is not None and len(diff.regressions) > HEAD_CHANGES
    if diff is not None and (more or diff.improvements or diff.measured or diff.added or diff.removed):
        out += ["## All changes", ""]
        head = ("op", "dtype", "suite", "figure", "old", "new")
        for title, changes in (("Regressions", diff.regressions if more else []),
                               ("Improvements", diff.improvements),
                               ("Newly measured (zero cases or raised before)", diff.measured)):
            if changes:
                out += [f"{title} ({len(changes)}):", "", *_table(head, _change_rows(changes)), ""]
        for title, keys in (("Added", diff.added), ("Removed", diff.removed)):
            if keys:
                out += [f"{title} ({len(keys)}): " + ", ".join(_code(" ".join(k)) for k in keys), ""]
    return out


def _suite_order(suites: set[str]) -> list[str]:
    return [s for s in SUITES if s in suites] + sorted(suites - set(SUITES))


def _tables(report: Report, verdict, failures) -> list[str]:
    ms = report.measurements
    out = ["## All measurements", "", "One table per suite, by op and dtype; max ulp: against the exact "
           "value; budget: the max ulp allowed for the op and dtype over every value suite, or, for a "
           "compound op (order N), the ulps allowed from its documented evaluation order, whose figure "
           "is under vs order; * marks a budget with a written reason.", ""]
    marks = verdict.by_key() if verdict is not None else failures
    if ms:
        out += ["Time per suite (the jobs' wall seconds, summed over shards): " + ", ".join(
            f"{_cell(s)} {sum(m.wall_s for m in ms if m.suite == s):.0f} s"
            for s in _suite_order({m.suite for m in ms})) + ".", ""]
    for suite in _suite_order({m.suite for m in ms}):
        rows = sorted((m for m in ms if m.suite == suite), key=Measurement.key)
        out += [f"<details><summary>{_cell(suite)} ({len(rows)})</summary>", ""]
        out += _table(COLUMNS, [(status_of(m, marks), _cell(m.op), _cell(m.dtype), m.cases,
                                 fmt_ulp(m.max_ulp), _budget_cell(verdict, m), _vs_order(m),
                                 fmt_ulp(m.mean_ulp), fmt_ulp(m.p999_ulp),
                                 fmt_frac(m.frac_not_correctly_rounded), m.special_mismatches,
                                 m.wrong, m.layouts) for m in rows],
                      right=tuple(c for c in COLUMNS if c not in ("status", "op", "dtype")))
        out += ["", "</details>", ""]
    errors = [m for m in ms if m.error]
    if errors:
        out += ["## Errors", ""]
        out += [f"- `{'-'.join(m.key())}`: {_cell(m.error)}" for m in sorted(errors, key=Measurement.key)]
        out.append("")
    return out


def _every_input(report: Report) -> list[str]:
    """The measurements decided on the device: every input of a range (exhaustive.py)."""
    ms = [m for m in report.measurements if m.decided_on_device]
    if not ms:
        return []
    header = ("op", "dtype", "suite", "inputs", "misrounded", "max ulp", "to mpmath", "left out", "s")
    rows = [(_cell(m.op), _cell(m.dtype), _cell(m.suite), f"{m.cases:,}", f"{m.not_correctly_rounded:,}",
             fmt_ulp(m.max_ulp), f"{m.undecided:,}", f"{m.left_out:,}", f"{m.wall_s:.1f}")
            for m in sorted(ms, key=Measurement.key)]
    return (["## Every input, decided on the device", "",
             "Inputs covered, misrounded results, max ulp, inputs the device could not decide (sent to "
             "mpmath), undecided inputs left out beyond the host's quota (in no figure) and seconds, for "
             "the jobs that covered a whole range of inputs or a stratified sample of operand tuples.", ""]
            + _table(header, rows, right=header[3:]) + [""])


def _compound(report: Report, verdict) -> list[str]:
    """Compound ops: the gated figure against the documented order beside the exact one."""
    ms = sorted((m for m in report.measurements if m.order_cases), key=Measurement.key)
    if not ms:
        return []
    header = ("op", "dtype", "suite", "cases", "vs order", "differ", "order budget", "vs exact", "not CR",
              "specials")
    rows = [(_cell(m.op), _cell(m.dtype), _cell(m.suite), f"{m.cases:,}", fmt_ulp(m.order_max_ulp),
             f"{m.order_differ:,}", _fmt_budget(verdict.order_budget(m.op, m.dtype) if verdict else None),
             fmt_ulp(m.max_ulp), fmt_frac(m.frac_not_correctly_rounded), m.special_mismatches) for m in ms]
    return (["## Compound ops: against their documented order", "",
             "Each result compared with the op's documented evaluation order (each step rounded as "
             "docs/OPS.md states it), run on the same backend: that figure is gated. Beside it, the "
             "error against the exact value, which the order itself decides (cancellation, a rounded "
             "argument) and which is reported, not gated.", ""]
            + _table(header, rows, right=header[3:]) + [""])


def _reasons(report: Report, verdict) -> list[str]:
    """The budget entries of this report's ops and dtypes that carry a written reason."""
    if verdict is None:
        return []
    keys = sorted({(m.op, m.dtype) for m in report.measurements if verdict.reason(m.op, m.dtype)})
    if not keys:
        return []
    rows = []
    for op, dt in keys:
        entry = verdict.budgets.get(f"{op}|{dt}", {})
        what = ", ".join(f"{k} {v:g}" for k, v in sorted(entry.items()) if k != "reason")
        rows.append((_cell(op), _cell(dt), _cell(what), _cell(verdict.reason(op, dt), 400)))
    return ["## Budget reasons", "", *_table(("op", "dtype", "budget", "reason"), rows), ""]


PEER_ROWS = 60              # rows of the side-by-side table; the rest are counted


def peer_figures(ms: list[Measurement]) -> dict:
    """One target's figures for an op and dtype over its value suites: cases, max_ulp, bad
    (misrounded or wrong results), specials and the first error."""
    # nan (a figure that could not be computed) outranks any number, whichever suite comes first
    return {"cases": sum(m.cases for m in ms),
            "max_ulp": max((m.max_ulp for m in ms), key=lambda u: (u != u, u if u == u else 0.0),
                           default=0.0),
            "bad": sum(m.not_correctly_rounded + m.wrong for m in ms),
            "specials": sum(m.special_mismatches for m in ms),
            "error": next((m.error for m in ms if m.error), "")}


def _rank(a: dict) -> tuple:
    ulp = a["max_ulp"]
    return (1 if a["error"] else 0, a["specials"], float("inf") if ulp != ulp else ulp, a["bad"])


def _peer_cells(a: dict | None) -> tuple:
    if a is None:
        return ("-", "-", "-")
    if a["error"] and not a["cases"]:
        return ("error", "-", "-")
    frac = a["bad"] / a["cases"] if a["cases"] else 0.0
    mark = " (error)" if a["error"] else ""
    return (fmt_ulp(a["max_ulp"]) + mark, f"{a['bad']:,} ({fmt_frac(frac)})", f"{a['specials']:,}")


def peer_groups(report: Report) -> dict[tuple[str, str], dict[str, dict]]:
    """Per op and dtype that a peer measured: each target's peer_figures over the value suites."""
    groups: dict = {}
    for m in report.measurements:
        if m.suite in VALUE_SUITES:
            groups.setdefault((m.op, m.dtype), {}).setdefault(m.target, []).append(m)
    return {k: {n: peer_figures(v) for n, v in by.items()} for k, by in groups.items()
            if any(n != "nbx" for n in by)}


def _peers(report: Report) -> list[str]:
    """nbx and each peer (`nbx run --target torch`) side by side per op and dtype over the value
    suites: max ulp, results misrounded (or wrong, for integer and bool results) and special
    mismatches; the rows where the targets differ, worst first, and a count of identical ones."""
    from nbx.harness.targets import peers as P
    others = [m for m in report.measurements if not m.is_nbx]
    if not others:
        return []
    names = sorted({m.target for m in others})
    infos = sorted({m.target_info or m.target for m in others})
    value = [m for m in report.measurements if m.suite in VALUE_SUITES]
    rows, same = [], 0
    for (op, dt), aggs in peer_groups(report).items():
        figures = {n: (a["max_ulp"], a["bad"], a["specials"], bool(a["error"]), a["cases"]) for n, a in aggs.items()}
        if len(set(figures.values())) == 1 and len(figures) == len(names) + 1:
            same += 1
            continue
        order = sorted(aggs, key=lambda n: _rank(aggs[n]), reverse=True)
        worst = order[0] if len(order) > 1 and _rank(aggs[order[0]]) != _rank(aggs[order[-1]]) else "="
        rows.append((_rank(aggs[order[0]]), op, dt, worst, aggs))
    rows.sort(key=lambda r: (tuple(-x if isinstance(x, (int, float)) else x for x in r[0]), r[1], r[2]))
    targets = ["nbx"] + names
    header = ("op", "dtype", "worse") + tuple(f"{n} {h}" for n in targets
                                               for h in ("max ulp", "misrounded", "specials"))
    table = [(_cell(op), _cell(dt), worst) + tuple(c for n in targets for c in _peer_cells(aggs.get(n)))
             for _, op, dt, worst, aggs in rows[:PEER_ROWS]]
    out = ["## Peers side by side", "",
           f"Peers measured on the same inputs as nbx (the same seed, suites and cases) and scored the "
           f"same way, reported and never gated: {_cell('; '.join(infos))}. Per op and dtype, over the "
           f"value suites (bank, exhaustive16, sweep, pairs; the structural suites layout and intdiv are "
           f"nbx's alone): max ulp against the exact value, results misrounded (integer and bool results: "
           f"wrong) with their fraction of the cases, special mismatches. Rows where the targets differ, "
           f"the worst first (worse: the target with the worse figures; = when they only differ in "
           f"cases); {same} op and dtype pair(s) identical.", ""]
    if table:
        out += _table(header, table, right=header[3:])
        if len(rows) > PEER_ROWS:
            out.append(f"\n... and {len(rows) - PEER_ROWS} more rows (report.json, report.html).")
        out.append("")
    ops = sorted({m.op.split(":")[0] for m in value})
    for n in names:
        composed = {o: why for o, why in P.COMPOSED.get(n, {}).items() if o in ops}
        lacking = {o: why for o, why in P.LACKING.get(n, {}).items() if o in ops}
        if composed:
            out.append(f"- {n}, composed: " + "; ".join(f"{_cell(o)} ({_cell(w)})" for o, w in composed.items()))
        if lacking:
            out.append(f"- {n}, not measured: " + "; ".join(f"{_cell(o)} ({_cell(w)})" for o, w in lacking.items()))
        errs = [m for m in others if m.target == n and m.error]
        if errs:
            out.append(f"- {n} raised in {len(errs)} measurement(s) (not gated), e.g. "
                       + "; ".join(f"`{_cell(m.op)} {_cell(m.dtype)} {_cell(m.suite)}`: {_cell(m.error, 160)}"
                                   for m in sorted(errs, key=Measurement.key)[:5]))
    out.append("")
    return out


def render_markdown(report: Report, *, failures: dict[Key, list[str]] | None = None,
                    verdict=None, previous: Previous | None = None,
                    history: trends.History | None = None, overview_image: str | None = None,
                    overview_note: str = "") -> str:
    """The summary (module docstring). verdict: verdict.evaluate's result for this report (None: not
    gated; `failures`, measurement key -> messages, then marks what it names). previous:
    find_previous's result, the report the changes are against (None: not searched). history:
    trends.load_history's result (default: loaded from the directory previous searched).
    overview_image: the file name of the overview PNG beside the summary, linked at the top
    (None: none was drawn; overview_note says why). Peers' measurements (`nbx run --target
    torch`) appear in their own section only."""
    if history is None and previous is not None and previous.searched is not None:
        history = trends.load_history(report, previous.searched)
    full = report
    if any(not m.is_nbx for m in report.measurements):
        report = dataclasses.replace(report, measurements=[m for m in report.measurements if m.is_nbx])
    by_key = report.by_key()
    diff = diff_reports(previous.report, report) if previous is not None and previous.report else None
    failing = set(verdict.by_key()) if verdict is not None else \
        {k for k, v in (failures or {}).items() if v}
    closest_lines, closest = _closest(report, verdict, failing)
    lines = _head(report, verdict, failures, previous, diff)
    lines += _overview(report, verdict, failures, overview_image, overview_note)
    standing = peer_standing(full)
    if standing:
        lines += ["Against its peers, on the same inputs: " + _cell("; ".join(standing)) + ".", ""]
    lines += _failures(verdict, failures, by_key)
    lines += closest_lines
    lines += _changes(report, previous, diff)
    lines += _trends(history)
    lines += _worst_section(_pick_worst(verdict, failures, diff, closest, by_key), verdict)
    lines += _rest(verdict, diff, by_key)
    lines += _every_input(report)
    lines += _peers(full)
    lines += _compound(report, verdict)
    lines += _reasons(report, verdict)
    lines += _tables(report, verdict, failures)
    return "\n".join(lines).rstrip("\n") + "\n"
