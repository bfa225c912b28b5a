"""`Verification`: what nbx.verify returns. One Measurement per suite, the criteria it was held to,
and its renderings: text (`str()`), Markdown (`.markdown()`) and nbx's report files (`.write(dir)`,
read by `nbx report diff`, `nbx report history` and report.html like any run's)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nbx.dtype import DTYPES
from nbx.harness.records.measurement import Measurement


@dataclass
class Verification:
    """name: the callable's label (its measurements' `target`); op, dtype, params: the row it was
    measured on; reference: what the truth was ("nbx's oracle for exp", "the mpmath reference of
    quick_gelu"); measurements: suite -> Measurement, in the order run; max_ulp, correctly_rounded:
    the criteria verify was given (None / False: not asked)."""
    name: str
    op: str
    dtype: str
    params: dict
    reference: str
    backend: str
    profile: str
    seed: int
    measurements: dict = field(default_factory=dict)
    max_ulp: float | None = None
    correctly_rounded: bool = False
    operand_dtypes: tuple = ()        # dtype names of the oracle's operands (the worst inputs' formats)
    out_dtype: str = ""
    repro: dict = field(default_factory=dict)   # suite -> a Python line that measures its worst input alone

    def __getitem__(self, suite: str) -> Measurement:
        return self.measurements[suite]

    @property
    def suites(self) -> tuple:
        return tuple(self.measurements)

    @property
    def cases(self) -> int:
        return sum(m.cases for m in self.measurements.values())

    @property
    def worst_ulp(self) -> float:
        """The largest ulp error over every suite (inf: a special mismatch)."""
        return max((m.max_ulp for m in self.measurements.values()), default=0.0)

    @property
    def misrounded(self) -> int:
        return sum(m.not_correctly_rounded + m.wrong for m in self.measurements.values())

    @property
    def special_mismatches(self) -> int:
        return sum(m.special_mismatches for m in self.measurements.values())

    @property
    def failures(self) -> list[str]:
        """Why the verification fails, one line each (empty: it passes)."""
        out = []
        for suite, m in self.measurements.items():
            if m.error:
                out.append(f"{suite}: raised: {m.error}")
                continue
            if m.special_mismatches:
                out.append(f"{suite}: {m.special_mismatches} special mismatch(es) (NaN, inf sign or zero sign)")
            if m.wrong:
                out.append(f"{suite}: {m.wrong} wrong result(s)")
            if m.unresolved:
                out.append(f"{suite}: {m.unresolved} case(s) mpmath could not decide")
            if self.max_ulp is not None and m.max_ulp > self.max_ulp:
                out.append(f"{suite}: max {m.max_ulp:.4g} ulp over max_ulp={self.max_ulp:g}")
            if self.correctly_rounded and m.not_correctly_rounded:
                out.append(f"{suite}: {m.not_correctly_rounded} of {m.cases} not correctly rounded "
                           f"(correctly_rounded=True)")
        return out

    @property
    def passed(self) -> bool:
        """No special mismatch, wrong result or undecided case, no suite that raised, and the criteria
        asked for (max_ulp=, correctly_rounded=True) met."""
        return not self.failures

    def __bool__(self) -> bool:
        return self.passed

    # ------------------------------------------------------------------ rendering
    def _title(self) -> str:
        params = "" if not self.params else " (" + ", ".join(f"{k}={v!r}" for k, v in sorted(self.params.items())) + ")"
        return (f"{self.name}: {self.op}{params} on {self.dtype}, against {self.reference}; "
                f"{self.backend}, profile {self.profile}, seed {self.seed}")

    def _criteria(self) -> str:
        asked = ["no special mismatch"]
        if self.max_ulp is not None:
            asked.append(f"max ulp <= {self.max_ulp:g}")
        if self.correctly_rounded:
            asked.append("correctly rounded")
        return ", ".join(asked)

    def _rows(self) -> list[list[str]]:
        rows = []
        for suite, m in self.measurements.items():
            if m.error:
                rows.append([suite, str(m.cases), "raised", "", "", "", "", ""])
                continue
            cr = "yes" if m.cases and not (m.not_correctly_rounded or m.special_mismatches or m.wrong) else "no"
            rows.append([suite, f"{m.cases:,}", _num(m.max_ulp), _num(m.mean_ulp), _num(m.p999_ulp),
                         f"{m.not_correctly_rounded + m.wrong:,}", f"{m.special_mismatches:,}", cr])
        return rows

    def _worst_lines(self, suite: str, m: Measurement, limit: int = 5) -> list[str]:
        out = []
        for w in m.worst[:limit]:
            ins = ", ".join(f"{h} ({_decimal(h, d)})" for h, d in zip(w.inputs, self._operand_names(len(w.inputs))))
            out.append(f"{ins} -> got {w.got} ({_decimal(w.got, self.out_dtype)}), expected {w.expected} "
                       f"({_decimal(w.expected, self.out_dtype)}): {_num(w.ulp)} ulp"
                       + (f" [{w.note}]" if w.note else ""))
        return out

    def _operand_names(self, n: int) -> list[str]:
        names = list(self.operand_dtypes) or [self.dtype]
        return (names + [names[-1]] * n)[:n]

    def __str__(self) -> str:
        head = ["suite", "cases", "max ulp", "mean ulp", "p99.9 ulp", "misrounded", "special", "CR"]
        rows = self._rows()
        widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
        def line(r):
            return "  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
        out = [self._title(), line(head)] + [line(r) for r in rows]
        for suite, m in self.measurements.items():
            if m.error:
                out.append(f"  {suite} raised: {m.error}")
                continue
            worst = self._worst_lines(suite, m)
            if worst:
                out.append(f"  worst inputs ({suite}):")
                out += [f"    {w}" for w in worst]
            if suite in self.repro:
                out.append(f"  repro: {self.repro[suite]}")
        verdict = "PASS" if self.passed else "FAIL"
        out.append(f"{verdict} ({self._criteria()})" + "".join(f"\n  {f}" for f in self.failures))
        return "\n".join(out)

    def markdown(self) -> str:
        head = ["suite", "cases", "max ulp", "mean ulp", "p99.9 ulp", "misrounded", "special", "CR"]
        out = [f"### {'PASS' if self.passed else 'FAIL'}: {self._title()}", "",
               f"Criteria: {self._criteria()}.", "",
               "| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in self._rows()]
        for f in self.failures:
            out.append(f"\n- {f}" if f is self.failures[0] else f"- {f}")
        for suite, m in self.measurements.items():
            if m.error:
                out += ["", f"**{suite}** raised: `{m.error}`"]
                continue
            worst = self._worst_lines(suite, m)
            if worst:
                out += ["", f"Worst inputs ({suite}):", ""] + [f"- `{w}`" for w in worst]
            if suite in self.repro:
                out += ["", f"Repro: `{self.repro[suite]}`"]
        return "\n".join(out) + "\n"

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def write(self, directory) -> dict:
        """report.json, summary.md, junit.xml, report.html (and overview.png) into `directory`, through
        nbx's report writer: the directory is marked incomplete until every file is in, each file
        written atomically. Measurements that fail the criteria are marked failing. Returns the
        written paths by format."""
        from nbx.backend import backend_info
        from nbx.harness.report import Report, write_report
        from nbx.harness.report.json_report import mark_complete, mark_incomplete
        run_dir = Path(directory)
        argv = ["verify", "--op", self.op, "--dtype", self.dtype, "--profile", self.profile,
                "--seed", str(self.seed), "--target", self.name]
        for s in self.measurements:
            argv += ["--suite", s]
        rep = Report(backend=backend_info(), profile=self.profile, argv=argv,
                     measurements=list(self.measurements.values()))
        failures = {}
        for suite, m in self.measurements.items():
            why = [f.split(": ", 1)[1] for f in self.failures if f.startswith(f"{suite}: ")]
            if why:
                failures[m.key()] = why
        run_dir.mkdir(parents=True, exist_ok=True)
        mark_incomplete(run_dir, run_id=rep.run_id)
        paths = write_report(rep, run_dir, None, failures=failures)
        mark_complete(run_dir)
        return paths


def _num(v: float) -> str:
    if math.isinf(v):
        return "inf"
    if math.isnan(v):
        return "nan"
    return f"{v:.4g}"


def _decimal(hexbits: str, dtype: str) -> str:
    """A hex bit pattern as a value of dtype, in the shortest decimal that reads back the same."""
    try:
        d = DTYPES[dtype]
        bits = np.array([int(hexbits, 16)], dtype=np.uint64).astype(d.uint_np if d.itemsize > 1 or d.is_bool
                                                                    else np.uint8)
        value = bits.view(d.np)[0] if not d.is_bool else bool(bits[0])
    except (KeyError, ValueError, TypeError, OverflowError):
        return "?"
    return str(value)
