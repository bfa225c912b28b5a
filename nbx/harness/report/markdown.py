"""summary.md: the report as a CI job summary (GitHub/GitLab render this Markdown)."""

from __future__ import annotations

from nbx.harness.measurement import SUITES, Measurement
from nbx.harness.report.json_report import Key, Report, fmt_frac, fmt_ulp, severity

COLUMNS = ("status", "op", "dtype", "cases", "max ulp", "mean", "p99.9", "not CR",
           "specials", "wrong", "layouts")


def _cell(text: object, limit: int = 500) -> str:
    """A table cell or list item: pipes and HTML escaped, newlines flattened, long text cut, so
    an exception message can neither break the table nor inject markup."""
    text = " ".join(str(text).split())
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\\", "\\\\").replace("|", "\\|")


def status_of(m: Measurement, failures: dict[Key, list[str]] | None) -> str:
    if m.error:
        return "ERROR"
    if failures is not None:
        return "FAIL" if failures.get(m.key()) else "ok"
    return ""


def _row(m: Measurement, failures: dict[Key, list[str]] | None) -> str:
    cells = (status_of(m, failures), m.op, m.dtype, m.cases, fmt_ulp(m.max_ulp),
             fmt_ulp(m.mean_ulp), fmt_ulp(m.p999_ulp), fmt_frac(m.frac_not_correctly_rounded),
             m.special_mismatches, m.wrong, m.layouts)
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _suite_order(suites: set[str]) -> list[str]:
    return [s for s in SUITES if s in suites] + sorted(suites - set(SUITES))


def render_markdown(report: Report, *, failures: dict[Key, list[str]] | None = None,
                    top: int = 5, worst_per_measurement: int = 5) -> str:
    """The summary: header, counts, one table per suite sorted by max ulp descending, failure
    messages, errors, and the worst inputs of the `top` worst measurements."""
    ms = report.measurements
    lines = [f"# nbx report: {_cell(report.backend_id or '(unknown backend)')}", ""]
    lines += ["| | |", "|---|---|"]
    header = [("backend", report.backend_id), ("device", report.backend.get("device", "")),
              ("commit", report.git_commit or "(unknown)"), ("profile", report.profile),
              ("run id", report.run_id), ("created", report.created)]
    if report.shards:
        header.append(("merged from", ", ".join(report.shards)))
    lines += [f"| {k} | {_cell(v)} |" for k, v in header if v != ""]
    lines.append("")

    errors = [m for m in ms if m.error]
    counts = f"**{len(ms)}** measurements, **{sum(m.cases for m in ms):,}** cases"
    if failures is not None:
        failing = [m for m in ms if failures.get(m.key())]
        counts += f", **{len(failing)}** failing their budgets"
    counts += f", **{len(errors)}** errors."
    lines += [counts, ""]

    for suite in _suite_order({m.suite for m in ms}):
        rows = sorted((m for m in ms if m.suite == suite), key=severity)
        lines += [f"## {_cell(suite)} ({len(rows)})", "",
                  "| " + " | ".join(COLUMNS) + " |",
                  "|" + "|".join("---" if c in ("status", "op", "dtype") else "---:"
                                 for c in COLUMNS) + "|"]
        lines += [_row(m, failures) for m in rows]
        lines.append("")

    if failures:
        lines += ["## Budget failures", ""]
        for key in sorted(k for k, msgs in failures.items() if msgs):
            for msg in failures[key]:
                lines.append(f"- `{'-'.join(key)}`: {_cell(msg)}")
        lines.append("")

    if errors:
        lines += ["## Errors", ""]
        for m in sorted(errors, key=Measurement.key):
            lines.append(f"- `{'-'.join(m.key())}`: {_cell(m.error)}")
        lines.append("")

    offenders = [m for m in sorted(ms, key=severity) if m.worst and not m.error]
    if failures is not None:
        # Measurements that fail their budgets come first; the rest follow by severity.
        offenders.sort(key=lambda m: 0 if failures.get(m.key()) else 1)
    offenders = offenders[:top]
    if offenders:
        lines += ["## Worst inputs of the top offenders", ""]
        for m in offenders:
            lines += [f"### {_cell(m.op)} {_cell(m.dtype)} ({_cell(m.suite)}): "
                      f"max {fmt_ulp(m.max_ulp)} ulp", "",
                      "| inputs | got | expected | ulp | note |", "|---|---|---|---:|---|"]
            for w in m.worst[:worst_per_measurement]:
                lines.append(f"| {_cell(', '.join(w.inputs))} | {_cell(w.got)} | "
                             f"{_cell(w.expected)} | {fmt_ulp(w.ulp)} | {_cell(w.note)} |")
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
