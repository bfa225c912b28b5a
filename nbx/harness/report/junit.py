"""junit.xml: one testcase per measurement, for CI test-result views.

A peer's measurements (`nbx run --target torch`) go in their own test suites, nbx.<target>.<suite>,
as passed, informational testcases (their figures, and an error as system-out): peers are
reported, never gated."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from nbx.harness.records.measurement import SUITES, Measurement
from nbx.harness.report.json_report import Key, Report, fmt_frac, fmt_ulp

# XML 1.0 cannot carry most control characters even escaped; ElementTree writes them raw and
# the file then fails to parse. Exception text from a crashed measurement can contain them.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _x(text: object) -> str:
    return _NOT_XML.sub("\ufffd", str(text))


def _properties(parent: ET.Element, items: list[tuple[str, object]]) -> None:
    props = ET.SubElement(parent, "properties")
    for name, value in items:
        ET.SubElement(props, "property", name=_x(name), value=_x(value))


def _figures(m: Measurement) -> list[tuple[str, object]]:
    return [("backend", m.backend), ("cases", m.cases), ("max_ulp", fmt_ulp(m.max_ulp)),
            ("mean_ulp", fmt_ulp(m.mean_ulp)), ("p999_ulp", fmt_ulp(m.p999_ulp)),
            ("not_correctly_rounded", m.not_correctly_rounded),
            ("frac_not_correctly_rounded", fmt_frac(m.frac_not_correctly_rounded)),
            ("special_mismatches", m.special_mismatches), ("wrong", m.wrong),
            ("close_calls", m.close_calls), ("unresolved", m.unresolved),
            ("layouts", m.layouts)]


def _worst_text(m: Measurement, limit: int = 5) -> str:
    return "\n".join(f"  inputs {', '.join(w.inputs)}: got {w.got}, expected {w.expected}, "
                     f"{fmt_ulp(w.ulp)} ulp{' ' + w.note if w.note else ''}"
                     for w in m.worst[:limit])


def render_junit(report: Report, *, failures: dict[Key, list[str]] | None = None) -> str:
    """JUnit XML. A measurement with `error` set is an <error>; with failures given, a key with
    messages is a <failure>; without failures nothing but errors fails."""
    failures = failures or {}
    groups = sorted({(m.target, m.suite) for m in report.measurements},
                    key=lambda g: (g[0] != "nbx", g[0], SUITES.index(g[1]) if g[1] in SUITES else len(SUITES), g[1]))
    root = ET.Element("testsuites", name="nbx")
    totals = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
    for target, suite in groups:
        ms = sorted((m for m in report.measurements if m.suite == suite and m.target == target),
                    key=Measurement.key)
        peer = target != "nbx"
        name = f"nbx.{target}.{suite}" if peer else f"nbx.{suite}"
        n_err = 0 if peer else sum(1 for m in ms if m.error)
        n_fail = 0 if peer else sum(1 for m in ms if not m.error and failures.get(m.key()))
        time = sum(m.wall_s for m in ms if m.wall_s == m.wall_s)
        ts = ET.SubElement(root, "testsuite", name=_x(name), tests=str(len(ms)),
                           failures=str(n_fail), errors=str(n_err), skipped="0",
                           time=f"{time:.3f}", timestamp=_x(report.created))
        _properties(ts, [("backend", report.backend_id), ("git_commit", report.git_commit),
                         ("profile", report.profile), ("run_id", report.run_id)])
        for m in ms:
            tc = ET.SubElement(ts, "testcase", classname=_x(name),
                               name=_x(f"{m.op}-{m.dtype}-{m.suite}" + (f"-{target}" if peer else "")),
                               time=f"{m.wall_s if m.wall_s == m.wall_s else 0.0:.3f}")
            _properties(tc, _figures(m) + ([("target", m.target), ("target_info", m.target_info),
                                            ("gated", "no (a peer: reported, not gated)")] if peer else []))
            if peer:
                if m.error:
                    ET.SubElement(tc, "system-out").text = _x(f"{target} raised (not gated): {m.error}")
            elif m.error:
                first = m.error.strip().splitlines()[0] if m.error.strip() else "error"
                el = ET.SubElement(tc, "error", message=_x(first), type="MeasurementError")
                el.text = _x(m.error)
            elif failures.get(m.key()):
                msgs = failures[m.key()]
                el = ET.SubElement(tc, "failure", message=_x("; ".join(msgs)), type="BudgetExceeded")
                worst = _worst_text(m)
                el.text = _x("\n".join(msgs) + ("\nworst inputs:\n" + worst if worst else ""))
        for k, v in (("tests", len(ms)), ("failures", n_fail), ("errors", n_err), ("time", time)):
            totals[k] += v
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", str(totals["errors"]))
    root.set("time", f"{totals['time']:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
