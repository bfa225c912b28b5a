"""Compare two reports: what regressed, what improved, what appeared and disappeared.

Figures are compared only where both reports measured something: a measurement with cases and no
error. One that raised or counted zero cases has no figures (its max ulp of 0 is no perfect
result), so a measurement that gains figures is newly measured, neither better nor worse, and one
that loses them regressed by that alone (an error, or zero cases), whatever its figures read.

Figures are like for like only between runs of one profile, seed and backend (another profile or
seed draws other cases, another backend runs other code): `incomparable` says why two reports are
not, and `nbx report diff` refuses such a pair unless forced.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from nbx.harness.records.measurement import Measurement
from nbx.harness.report.json_report import Key, Report, fmt_frac, fmt_ulp

# Figures where more is worse. max_ulp honours the tolerance; the others are counts whose
# budget is 0 and where any increase matters.
COUNT_FIELDS = ("special_mismatches", "wrong", "not_correctly_rounded", "order_differ")
# A correctly rounded result is within half an ulp (plus the gate's 1e-9 of float noise). Where
# both reports are within it, max ulp only moves with the cases drawn, within [0, 0.5]: the count
# not correctly rounded is the figure that says whether the op got worse.
CORRECTLY_ROUNDED_ULP = 0.5 + 1e-9


@dataclass
class Change:
    key: Key
    field: str
    old: float | str
    new: float | str

    def describe(self) -> tuple[str, str, str]:
        if self.field == "error":
            first = lambda text: (str(text).strip().splitlines() or ["-"])[0][:60]
            return (self.field, first(self.old), first(self.new))
        if self.field == "cases":
            return (self.field, f"{int(self.old):,}", f"{int(self.new):,}")
        old, new = float(self.old), float(self.new)
        if self.field == "frac_not_correctly_rounded":
            return (self.field, fmt_frac(old), fmt_frac(new))
        if math.isfinite(old) and math.isfinite(new):
            # as many digits as tell the two apart: 0.5000000000008527 -> 0.5000000020954758 is
            # a change (beyond the 1e-9 of correct rounding), not "0.5 -> 0.5"
            for digits in (4, 7, 10, 13, 17):
                a, b = f"{old:.{digits}g}", f"{new:.{digits}g}"
                if a != b:
                    return (self.field, a, b)
        return (self.field, fmt_ulp(old), fmt_ulp(new))


@dataclass
class ReportDiff:
    old_run_id: str
    new_run_id: str
    old_backend: str
    new_backend: str
    regressions: list[Change] = field(default_factory=list)
    improvements: list[Change] = field(default_factory=list)
    # in both reports, without figures in the old (zero cases, or raised) and with them in the new:
    # a "cases" change (0 -> n) or an "error" change (the old error -> "")
    measured: list[Change] = field(default_factory=list)
    added: list[Key] = field(default_factory=list)
    removed: list[Key] = field(default_factory=list)
    incomparable: list[str] = field(default_factory=list)    # why the figures are not like for like
    peers_ignored: int = 0      # peer measurements (`nbx run --target torch`) left out: not nbx's figures

    @property
    def same_backend(self) -> bool:
        return self.old_backend == self.new_backend

    @property
    def has_regressions(self) -> bool:
        return bool(self.regressions)


def _rank(value: float) -> float:
    """nan is worse than any number, inf included: it means the figure could not be computed."""
    return math.inf if value != value else value


def has_figures(m: Measurement) -> bool:
    """Whether m measured something: cases, and no error."""
    return bool(m.cases) and not m.error


def _figures_change(old: Measurement, new: Measurement) -> Change:
    """The change of a key whose figures came or went: the error of the one that raised, else
    the case counts (one of them 0)."""
    if old.error or new.error:
        return Change(new.key(), "error", old.error, new.error)
    return Change(new.key(), "cases", old.cases, new.cases)


def _compare(old: Measurement, new: Measurement, tolerance: float
             ) -> tuple[list[Change], list[Change], list[Change]]:
    """(regressions, improvements, newly measured) of one key in both reports."""
    if has_figures(old) != has_figures(new):
        change = _figures_change(old, new)
        return ([], [], [change]) if has_figures(new) else ([change], [], [])
    if not has_figures(old):
        # neither has figures: an error that appears is a regression, one that goes an improvement
        if bool(new.error) == bool(old.error):
            return [], [], []
        change = Change(new.key(), "error", old.error, new.error)
        return ([change], [], []) if new.error else ([], [change], [])
    worse: list[Change] = []
    better: list[Change] = []
    key = new.key()
    o, n = old.max_ulp, new.max_ulp
    if o <= CORRECTLY_ROUNDED_ULP and n <= CORRECTLY_ROUNDED_ULP:
        pass                         # correctly rounded in both: not_correctly_rounded decides below
    elif (n != n) != (o != o):
        (worse if n != n else better).append(Change(key, "max_ulp", o, n))
    elif o == o and n != o:
        # inf == inf is no change; inf - inf would be nan, hence the explicit equality test.
        if _rank(n) > _rank(o) + tolerance:
            worse.append(Change(key, "max_ulp", o, n))
        elif _rank(n) < _rank(o) - tolerance:
            better.append(Change(key, "max_ulp", o, n))
    if old.order_cases and new.order_cases:
        # a compound op's gated figure: any move away from its documented order is a change
        o, n = _rank(old.order_max_ulp), _rank(new.order_max_ulp)
        if n != o:
            (worse if n > o else better).append(Change(key, "order_max_ulp", old.order_max_ulp, new.order_max_ulp))
    for name in COUNT_FIELDS:
        if name == "not_correctly_rounded" and old.cases != new.cases:
            # Different case counts (another profile or sample size): compare the fraction.
            ov, nv, name = old.frac_not_correctly_rounded, new.frac_not_correctly_rounded, \
                "frac_not_correctly_rounded"
        else:
            ov, nv = getattr(old, name), getattr(new, name)
        if nv > ov:
            worse.append(Change(key, name, ov, nv))
        elif nv < ov:
            better.append(Change(key, name, ov, nv))
    return worse, better, []


def incomparable(old: Report, new: Report) -> list[str]:
    """Why the figures of two reports are not like for like (empty: they are)."""
    out = []
    if old.profile != new.profile:
        out.append(f"profiles differ ({old.profile or '?'} vs {new.profile or '?'}): other case "
                   "counts and samples")
    if old.seed != new.seed:
        out.append(f"seeds differ ({old.seed} vs {new.seed}): other sampled cases")
    if old.backend_id != new.backend_id:
        out.append(f"backends differ ({old.backend_id or '?'} vs {new.backend_id or '?'}): other "
                   "code and libm")
    return out


def diff_reports(old: Report, new: Report, *, tolerance: float = 0.0) -> ReportDiff:
    """Per key in both reports, the figures that went up (regressions) or down (improvements).

    tolerance, in ulp (units in the last place of the measurement's result dtype): max ulp
    changes of at most this much are ignored. For one profile, seed and backend the figures are
    deterministic and 0 is right; between seeds a sampled sweep moves by a few hundredths.
    A measurement correctly rounded in both reports (max ulp <= 0.5) is compared by its count
    not correctly rounded alone. A measurement with figures in one report only (the other raised
    or counted zero cases) is compared by that alone: newly measured (ReportDiff.measured) or a
    regression ("error", "cases"). Incomparable reports are still compared; the diff lists why
    they should not have been (ReportDiff.incomparable). Only nbx's measurements are compared: a
    peer's (target other than "nbx") is neither a regression nor an improvement of nbx's.
    """
    if not (tolerance >= 0):
        raise ValueError(f"diff_reports: tolerance must be a number >= 0, got {tolerance!r}")
    old_by = {k: m for k, m in old.by_key().items() if m.target == "nbx"}
    new_by = {k: m for k, m in new.by_key().items() if m.target == "nbx"}
    peers = sum(1 for r in (old, new) for m in r.measurements if m.target != "nbx")
    d = ReportDiff(old_run_id=old.run_id, new_run_id=new.run_id,
                   old_backend=old.backend_id, new_backend=new.backend_id,
                   added=sorted(set(new_by) - set(old_by)),
                   removed=sorted(set(old_by) - set(new_by)),
                   incomparable=incomparable(old, new), peers_ignored=peers)
    for key in sorted(set(old_by) & set(new_by)):
        worse, better, measured = _compare(old_by[key], new_by[key], tolerance)
        d.regressions += worse
        d.improvements += better
        d.measured += measured
    return d


def newly_measured(d: ReportDiff) -> str:
    """The text "N newly measured, " where there are any, for the lines counting a diff's changes."""
    return f"{len(d.measured)} newly measured, " if d.measured else ""


def _table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
    return [line(header), line(tuple("-" * w for w in widths))] + [line(r) for r in rows]


def format_diff(d: ReportDiff) -> str:
    """A plain-text summary: header, then regressions, improvements, the newly measured, added and
    removed keys."""
    lines = [f"nbx report diff: {d.old_run_id} ({d.old_backend or '?'}) -> "
             f"{d.new_run_id} ({d.new_backend or '?'})"]
    for why in d.incomparable:
        lines.append(f"NOTE: {why}; figures compared anyway")
    if d.peers_ignored:
        lines.append(f"NOTE: {d.peers_ignored} peer measurement(s) (--target) not compared: nbx's figures only")
    lines.append(f"{len(d.regressions)} regressions, {len(d.improvements)} improvements, "
                 f"{newly_measured(d)}{len(d.added)} added, {len(d.removed)} removed")
    header = ("op", "dtype", "suite", "figure", "old", "new")
    for title, changes in (("Regressions", d.regressions), ("Improvements", d.improvements),
                           ("Newly measured (zero cases or raised before)", d.measured)):
        if changes:
            lines += ["", f"{title} ({len(changes)}):"]
            lines += _table([(*c.key, *c.describe()) for c in changes], header)
    for title, keys in (("Added", d.added), ("Removed", d.removed)):
        if keys:
            lines += ["", f"{title} ({len(keys)}):"]
            lines += _table([tuple(k) for k in keys], ("op", "dtype", "suite"))
    return "\n".join(lines) + "\n"
