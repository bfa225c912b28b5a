"""junit.xml: one testcase per measurement, for CI test-result views."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from nbx.harness.measurement import SUITES, Measurement
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
    suites = sorted({m.suite for m in report.measurements},
                    key=lambda s: (SUITES.index(s) if s in SUITES else len(SUITES), s))
    root = ET.Element("testsuites", name="nbx")
    totals = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
    for suite in suites:
        ms = sorted((m for m in report.measurements if m.suite == suite), key=Measurement.key)
        n_err = sum(1 for m in ms if m.error)
        n_fail = sum(1 for m in ms if not m.error and failures.get(m.key()))
        time = sum(m.wall_s for m in ms if m.wall_s == m.wall_s)
        ts = ET.SubElement(root, "testsuite", name=_x(f"nbx.{suite}"), tests=str(len(ms)),
                           failures=str(n_fail), errors=str(n_err), skipped="0",
                           time=f"{time:.3f}", timestamp=_x(report.created))
        _properties(ts, [("backend", report.backend_id), ("git_commit", report.git_commit),
                         ("profile", report.profile), ("run_id", report.run_id)])
        for m in ms:
            tc = ET.SubElement(ts, "testcase", classname=_x(f"nbx.{m.suite}"),
                               name=_x(f"{m.op}-{m.dtype}-{m.suite}"),
                               time=f"{m.wall_s if m.wall_s == m.wall_s else 0.0:.3f}")
            _properties(tc, _figures(m))
            if m.error:
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
