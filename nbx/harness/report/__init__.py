"""The report layer: a run's measurements as JSON, Markdown, JUnit XML and one HTML page.

write_report puts the four files in a run directory, each written atomically, then swings the
`latest` symlink to it, so a reader of reports/latest sees a whole report or the previous one.
"""

from __future__ import annotations

from pathlib import Path

from nbx.harness.report.diff import Change, ReportDiff, diff_reports, format_diff, incomparable
from nbx.harness.report.html import render_html
from nbx.harness.report.json_report import (LOCK_FILE, REPORT_FILE, DirectoryInUse, Key, Previous,
                                            Report, atomic_symlink, atomic_write_text,
                                            check_writable_dir, claim_dir, find_previous,
                                            load_report, merge_reports, new_run_id, parse_label)
from nbx.harness.report.junit import render_junit
from nbx.harness.report.markdown import render_markdown

__all__ = ["LOCK_FILE", "Change", "DirectoryInUse", "Key", "Previous", "Report", "ReportDiff",
           "atomic_symlink", "atomic_write_text", "check_writable_dir", "claim_dir", "diff_reports",
           "find_previous", "format_diff", "incomparable",
           "load_report", "merge_reports", "new_run_id", "parse_label", "render_html",
           "render_junit", "render_markdown", "write_report"]


def write_report(report: Report, run_dir: Path, latest: Path | None = None, *,
                 failures: dict[Key, list[str]] | None = None, verdict=None,
                 previous: Previous | None = None) -> dict[str, Path]:
    """Write report.json, summary.md, junit.xml and report.html into run_dir, then point
    `latest` (a relative symlink) at run_dir. Returns the written paths by format.
    verdict: gate.evaluate's result for the report, shown in every file; failures (measurement
    key -> messages) stands in for it where there is none; with neither, only measurements with
    an error are marked as failing. previous: find_previous's result, the report the summary's
    changes (and the page's plots of changed measurements) are against (None: no comparison).
    """
    if verdict is not None and failures is None:
        failures = verdict.by_key()
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    renderers = {
        "markdown": ("summary.md", lambda: render_markdown(report, failures=failures, verdict=verdict,
                                                           previous=previous)),
        "junit": ("junit.xml", lambda: render_junit(report, failures=failures)),
        "html": ("report.html", lambda: render_html(report, failures=failures, verdict=verdict,
                                                    previous=previous)),
    }
    # A renderer that raises must not lose the measurements (an hour of a nightly): its file says
    # what failed, report.json is still written, and the error is raised after every file.
    rendered, broken = {}, []
    for fmt, (name, render) in renderers.items():
        try:
            rendered[fmt] = (name, render())
        except Exception as e:  # noqa: BLE001 (re-raised below, after report.json is safe)
            broken.append((name, e))
            rendered[fmt] = (name, f"{name} could not be rendered: {type(e).__name__}: {e}\n"
                                   f"The measurements are in {REPORT_FILE}.\n")
    # report.json last: its presence means the other three are written too.
    rendered["json"] = (REPORT_FILE, report.to_json())
    paths: dict[str, Path] = {}
    for fmt, (name, text) in rendered.items():
        paths[fmt] = run_dir / name
        atomic_write_text(paths[fmt], text)
    if broken:
        name, e = broken[0]
        raise RuntimeError(f"{run_dir}: {REPORT_FILE} written, but "
                           + ", ".join(n for n, _ in broken) + f" could not be rendered ({name}: "
                           f"{type(e).__name__}: {e}); `latest` not moved") from e
    if latest is not None:
        atomic_symlink(run_dir, Path(latest))
    return paths
