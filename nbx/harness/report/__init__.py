"""The report layer: a run's measurements as JSON, Markdown, JUnit XML, one HTML page, and the
page's overview grid as a PNG image for the Markdown summary.

write_report puts the five files in a run directory, each written atomically, then swings the
`latest` symlink to it, so a reader of reports/latest sees a whole report or the previous one.
"""

from __future__ import annotations

from pathlib import Path

from nbx.harness.records.files import atomic_write_bytes
from nbx.harness.report.diff import Change, ReportDiff, diff_reports, format_diff, incomparable
from nbx.harness.report.html import render_html
from nbx.harness.report.json_report import (LOCK_FILE, REPORT_FILE, DirectoryInUse, Key, Previous,
                                            Report, atomic_symlink, atomic_write_text,
                                            check_writable_dir, claim_dir, find_previous,
                                            load_report, merge_reports, new_run_id, parse_label)
from nbx.harness.report.junit import render_junit
from nbx.harness.report.markdown import OVERVIEW_PNG, render_markdown
from nbx.harness.report.trends import History, format_history, load_history

__all__ = ["LOCK_FILE", "Change", "DirectoryInUse", "History", "Key", "Previous", "Report", "ReportDiff",
           "atomic_symlink", "atomic_write_text", "check_writable_dir", "claim_dir", "diff_reports",
           "find_previous", "format_diff", "format_history", "incomparable",
           "load_history", "load_report", "merge_reports", "new_run_id", "parse_label", "render_html",
           "render_junit", "render_markdown", "write_report"]


def write_overview_png(report: Report, run_dir: Path, *, verdict=None, failures=None,
                       previous: Report | None = None) -> tuple[str | None, str]:
    """Draw the overview grid into run_dir/overview.png (atomically), marking the cells changed
    against `previous` (find_previous's report) as the page does. Returns (its file name, "")
    or, where it could not be drawn, (None, why): matplotlib missing, or the drawing raised (the
    summary says so; the measurements must not be lost over a picture)."""
    try:
        from nbx.harness.report import overview
        budgets = dict(verdict.budgets) if verdict is not None else {}
        ov = overview.build(report, budgets=budgets, verdict=verdict, failures=failures)
        png = overview.overview_png(ov, title=f"nbx {report.backend_id} {report.profile} "
                                              f"{report.run_id} {report.git_commit[:9]}",
                                    changes=overview.change_marks(previous, report) if previous else None)
    except ImportError as e:
        return None, f"overview.png not drawn: {e.name or e} is not installed (pip install matplotlib)."
    except Exception as e:  # noqa: BLE001 (reported in the summary; the rest of the report stands)
        return None, f"overview.png not drawn: {type(e).__name__}: {e}."
    atomic_write_bytes(Path(run_dir) / OVERVIEW_PNG, png)
    return OVERVIEW_PNG, ""


def write_report(report: Report, run_dir: Path, latest: Path | None = None, *,
                 failures: dict[Key, list[str]] | None = None, verdict=None,
                 previous: Previous | None = None) -> dict[str, Path]:
    """Write report.json, summary.md, overview.png, junit.xml and report.html into run_dir, then point
    `latest` (a relative symlink) at run_dir. Returns the written paths by format.
    verdict: verdict.evaluate's result for the report, shown in every file; failures (measurement
    key -> messages) stands in for it where there is none; with neither, only measurements with
    an error are marked as failing. previous: find_previous's result, the report the summary's
    changes (and the page's plots of changed measurements) are against (None: no comparison);
    the directory it searched holds the earlier runs of the trends.
    """
    if verdict is not None and failures is None:
        failures = verdict.by_key()
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    # The earlier runs of the summary's and the page's trends, read once for both.
    history = load_history(report, previous.searched) if previous is not None and previous.searched else None
    image, image_note = write_overview_png(report, run_dir, verdict=verdict, failures=failures,
                                           previous=previous.report if previous is not None else None)
    renderers = {
        "markdown": ("summary.md", lambda: render_markdown(report, failures=failures, verdict=verdict,
                                                           previous=previous, history=history,
                                                           overview_image=image, overview_note=image_note)),
        "junit": ("junit.xml", lambda: render_junit(report, failures=failures)),
        "html": ("report.html", lambda: render_html(report, failures=failures, verdict=verdict,
                                                    previous=previous, history=history)),
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
    paths: dict[str, Path] = {"png": run_dir / image} if image else {}
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
