"""The gate: a report against the committed budgets. Exit 1 on any regression, 0 otherwise.

It fails closed: whatever it cannot vouch for is a named failure. It fails on: a missing or
unreadable budget file (budgets.BudgetFileError); a measurement with no budget entry, exact or
not; a max ulp over budget; any special mismatch, wrong integer/bool result, layout or
integer-division mismatch (budget 0); an op variant or dtype of OPS with no measurement or zero
cases; a run stopped before its last job (a time limit's SIGTERM, or SIGINT), and each
measurement it did not make; a NaN metric; a measurement that raised; a stale bank; a budget
entry that needs a written reason and has none (budgets.unexplained); a result not correctly
rounded on a dtype its op declares correctly rounded (Verify.correctly_rounded).

A compound op on a dtype with a documented evaluation order (nbx.ops.verify.Order) is held to its
figure against that order (order_max_ulp, budget key of the same name); its figures against the
exact value are reported beside and not gated.

Only nbx's own measurements (target "nbx") are judged: a peer's (`nbx run --target torch`) are
reported beside them and never gated, whatever their errors or figures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from nbx.backend import backend_id as current_backend_id
from nbx.harness.suites import bank
from nbx.harness.gate import budgets
from nbx.harness.api import suites_for
from nbx.harness.targets.target import targets


@dataclass
class Failure:
    key: tuple            # (op, dtype, suite) or (op, dtype, "") for coverage
    reason: str
    worst: list


def decide(measurements, budget_data: dict, *, ops=None, dtypes=None, bank_problems=(),
           suites=None, budget_problem: str | None = None, interrupted=()) -> list[Failure]:
    """suites: the suites the run was asked for (None: all); each target must have a measurement
    of each of its suites among them (a lone shard of a sharded run is incomplete).
    budget_problem: why the budget file could not be read (budgets.BudgetFileError), one failure
    standing for every entry missing with it. interrupted: "done/total" of each run (or shard)
    stopped before its last job, as `nbx run` records it (`--interrupted=` in its argv)."""
    fails: list[Failure] = []
    if budget_problem:
        fails.append(Failure(("budgets", "", ""), budget_problem, []))
    stopped = ", ".join(interrupted)
    for s in interrupted:
        fails.append(Failure(("run", "", ""), f"the run was stopped (a time limit's SIGTERM, or SIGINT) after {s} "
                                              "jobs; the jobs after those were not measured", []))
    measurements = [m for m in measurements if getattr(m, "target", "nbx") == "nbx"]     # peers: not gated
    table = budget_data.get("budgets", {})
    # (label, dtype) of the targets whose op declares that dtype correctly rounded
    declared_cr = {(t.label, t.dtype.name) for t in targets(ops, dtypes) if t.dtype in t.verify.correctly_rounded}
    seen: dict[tuple, int] = {}
    seen_suites: set[tuple] = set()
    for m in measurements:
        k = (m.op, m.dtype, m.suite)
        seen[(m.op, m.dtype)] = seen.get((m.op, m.dtype), 0) + m.cases
        seen_suites.add(k)
        if m.error:
            fails.append(Failure(k, f"raised: {m.error}", []))
            continue
        if m.cases == 0:
            fails.append(Failure(k, "zero cases measured", []))
            continue
        metrics = (m.max_ulp, m.mean_ulp, m.p999_ulp)
        if any(isinstance(x, float) and math.isnan(x) for x in metrics):
            fails.append(Failure(k, "a metric is NaN", m.worst))
            continue
        b = table.get(budgets.key(m.op, m.dtype))
        if m.not_correctly_rounded and (m.op, m.dtype) in declared_cr:
            fails.append(Failure(k, f"{m.not_correctly_rounded} results not correctly rounded; the op declares "
                                    f"{m.dtype} correctly rounded (budget 0)", m.worst))
        if m.left_out and (m.op, m.dtype) in declared_cr:
            fails.append(Failure(k, f"{m.left_out} undecided inputs left out (beyond the host's quota): the "
                                    f"declared correct rounding of {m.dtype} is unproven there", m.worst))
        if m.order_cases:
            if m.wrong or m.unresolved:
                fails.append(Failure(k, f"{m.wrong} wrong, {m.unresolved} unresolved results", m.worst))
            allowed = (b or {}).get("order_max_ulp")
            if allowed is None and budget_problem:
                pass                                 # the file's failure stands for its entries
            elif allowed is None:
                fails.append(Failure(k, f"no order budget for {m.op} {m.dtype} (measured {m.order_max_ulp:.3g} ulp "
                                        "from the documented order); review and run `nbx gate --update`", m.worst))
            elif not m.order_max_ulp <= allowed + 1e-9:
                fails.append(Failure(k, f"{m.order_differ} results differ from the documented evaluation order: "
                                        f"max {m.order_max_ulp:.4g} ulp > order budget {allowed}", m.worst))
            continue
        allowed = (b or {}).get("special_mismatches", 0)    # an exception carries its reason
        if m.special_mismatches > allowed:
            fails.append(Failure(k, f"{m.special_mismatches} special mismatches (budget {allowed})", m.worst))
        if m.wrong:
            fails.append(Failure(k, f"{m.wrong} wrong results (budget 0)", m.worst))
        if m.unresolved:
            fails.append(Failure(k, f"{m.unresolved} cases unresolved by the Ziv loop", m.worst))
        if b is None:
            # an exact result needs its entry too: an entry is the reviewed promise that the gate
            # holds later runs to, and without one a regression of this op would pass unseen
            if not budget_problem:
                fails.append(Failure(k, f"no budget for {m.op} {m.dtype} (measured {m.max_ulp:.3g} ulp); "
                                        "review the report and run `nbx gate --update`", m.worst))
            continue
        if "max_ulp" not in b:
            fails.append(Failure(k, f"the budget of {m.op} {m.dtype} has no max_ulp (measured {m.max_ulp:.3g} ulp)",
                                 m.worst))
        elif m.max_ulp > b["max_ulp"] + 1e-9:
            fails.append(Failure(k, f"max ulp {m.max_ulp:.4g} > budget {b['max_ulp']}", m.worst))
    for t in targets(ops, dtypes):
        if seen.get((t.label, t.dtype.name), 0) == 0:
            why = (f"not measured: the run was stopped (after {stopped} jobs)" if stopped else
                   "no measurement (or zero cases) for this op and dtype")
            fails.append(Failure((t.label, t.dtype.name, ""), why, []))
            continue
        for s in suites_for(t, suites):
            if (t.label, t.dtype.name, s) not in seen_suites:
                why = (f"the {s} suite not measured: the run was stopped (after {stopped} jobs)" if stopped
                       else f"no measurement of the {s} suite (a partial run or a lone shard?)")
                fails.append(Failure((t.label, t.dtype.name, s), why, []))
    for bk, why in budgets.unexplained(budget_data):
        fails.append(Failure(("budgets", bk, ""), why, []))
    for p in bank_problems:
        fails.append(Failure(("bank", "", ""), f"stale or corrupted bank: {p}", []))
    return fails


def format_failures(fails: list[Failure], limit: int = 60) -> str:
    if not fails:
        return "gate: every figure within budget"
    rows = [f"gate: {len(fails)} failure(s)", f"{'op':<28} {'dtype':<9} {'suite':<13} reason"]
    for f in fails[:limit]:
        op, dt, suite = (list(f.key) + ["", "", ""])[:3]
        rows.append(f"{op:<28} {dt:<9} {suite:<13} {f.reason}")
        for w in f.worst[:3]:
            rows.append(f"{'':<28} worst: inputs {' '.join(w.inputs)} got {w.got} expected {w.expected} "
                        f"({w.ulp:.4g} ulp) {w.note}")
    if len(fails) > limit:
        rows.append(f"... and {len(fails) - limit} more")
    return "\n".join(rows)


def failures_by_key(fails: list[Failure]) -> dict:
    out: dict = {}
    for f in fails:
        out.setdefault(tuple(f.key), []).append(f.reason)
    return out


@dataclass
class Verdict:
    """A report gated: its failures, and the budgets and selection it was gated with (what the
    summary shows next to each figure)."""
    failures: list[Failure]
    budgets: dict                     # "op|dtype" -> budget entry, from budgets_path
    budgets_path: Path
    backend_id: str
    ops: list | None = None           # the ops and dtypes gated (None: every one)
    dtypes: list | None = None
    bank_checked: bool = True
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def by_key(self) -> dict:
        return failures_by_key(self.failures)

    def budget(self, op: str, dtype: str) -> float | None:
        """The max-ulp budget against the exact value (None: none, or a compound op's order budget
        alone)."""
        entry = self.budgets.get(budgets.key(op, dtype)) or {}
        return None if "max_ulp" not in entry else float(entry["max_ulp"])

    def order_budget(self, op: str, dtype: str) -> float | None:
        entry = self.budgets.get(budgets.key(op, dtype)) or {}
        return None if "order_max_ulp" not in entry else float(entry["order_max_ulp"])

    def reason(self, op: str, dtype: str) -> str:
        return (self.budgets.get(budgets.key(op, dtype)) or {}).get("reason", "")


def evaluate(report, *, budgets_path: Path | None = None, ops=None, dtypes=None,
             check_bank: bool = True) -> Verdict:
    """Gate a report as `nbx gate` does: against budgets_path (default: the committed file of the
    report's backend), on the given ops and dtypes (default: those the run was asked for, from
    its argv, so a partial run is gated on its own targets), with the bank's staleness check."""
    bid = report.backend_id or current_backend_id()
    path = Path(budgets_path) if budgets_path else budgets.path_for(bid)
    try:
        data, problem = budgets.load(path), None
    except budgets.BudgetFileError as e:       # fails closed: never an empty table that passes
        data, problem = budgets.empty(path), str(e)
    sel_ops = list(ops) if ops else report.option_values("--op")
    sel_dtypes = list(dtypes) if dtypes else report.option_values("--dtype")
    problems = bank.check(ops=sel_ops, dtypes=sel_dtypes, verify=False) if check_bank else []
    ms = [m for m in report.measurements if (not ops or m.op.split(":")[0] in ops)
          and (not dtypes or m.dtype in dtypes)]
    fails = decide(ms, data, ops=sel_ops, dtypes=sel_dtypes, bank_problems=problems,
                   suites=report.option_values("--suite"), budget_problem=problem,
                   interrupted=report.option_values("--interrupted") or ())
    return Verdict(fails, data.get("budgets", {}), path, bid, sel_ops, sel_dtypes, check_bank)
