"""Ulp budgets per backend: reports/budgets/<backend-id>.json, reviewed data like glibc's libm-test-ulps.

One entry per op (variant) and dtype: the max ulp allowed over every value suite against the exact
value (max_ulp), or, for a compound op on a dtype with a documented evaluation order, against that
order (order_max_ulp). Special mismatches, integer errors and layout/intdiv mismatches have a budget
of 0 and are stored only as exceptions. A budget is a reviewed promise: an entry above REASON_ULP
(order: above ORDER_REASON_ULP), or any special-mismatch or wrong-result exception, carries its
written reason, which the report shows beside the figure; the gate fails on one without. In the file
the figures are one line per entry under "budgets" and the reasons one line per entry under
"reasons" (the map from an entry's key to its reason); in memory each entry holds its `reason`.
`update` writes the measured maxima rounded UP to a tenth of an ulp, for improvements and new
entries only unless told otherwise, and returns the diff for review.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
from pathlib import Path

from nbx.harness.records.files import DATA, atomic_write_text

SCHEMA = 2     # 2: reasons in their own map, keyed like the budgets
ROOT = DATA / "reports" / "budgets"


REASON_ULP = 4.0          # a max_ulp budget above this needs a written reason
ORDER_REASON_ULP = 0.5    # an order budget above this does (a faithful kernel sits at 0)


def unexplained(data: dict) -> list[tuple[str, str]]:
    """(key, why) for each entry that needs a written reason and has none."""
    out = []
    for k, e in sorted(data.get("budgets", {}).items()):
        if str(e.get("reason", "")).strip():
            continue
        needs = []
        if e.get("max_ulp", 0) > REASON_ULP:
            needs.append(f"max_ulp {e['max_ulp']:g} > {REASON_ULP:g}")
        if e.get("order_max_ulp", 0) > ORDER_REASON_ULP:
            needs.append(f"order_max_ulp {e['order_max_ulp']:g} > {ORDER_REASON_ULP:g}")
        for name in ("special_mismatches", "wrong"):
            if e.get(name, 0):
                needs.append(f"{name} {e[name]} > 0")
        if needs:
            out.append((k, f"budget {k}: {', '.join(needs)} and no written reason in the budget file"))
    return out


def describe(entry: dict) -> str:
    """An entry in a few characters: "0.5", or "order 0" for a compound op's order budget."""
    if "max_ulp" in entry:
        return f"{entry['max_ulp']:g}"
    return f"order {entry.get('order_max_ulp', 0):g}"


def path_for(backend_id: str, base: Path | None = None) -> Path:
    return (base or ROOT) / f"{backend_id}.json"


def key(op: str, dtype: str) -> str:
    return f"{op}|{dtype}"


class BudgetFileError(ValueError):
    """A budget file that is missing, unreadable or not a budget file: the message names the path
    and what to do. The gate fails on it (verdict.evaluate); it is never read as an empty table."""

    def __init__(self, path: Path, problem: str):
        self.path = Path(path)
        super().__init__(f"{self.path}: {problem}")


def empty(path: Path) -> dict:
    """The table a new backend starts from (`nbx gate --update` with no file yet)."""
    return {"schema": SCHEMA, "backend": Path(path).stem, "budgets": {}}


def load(path: Path, *, missing_ok: bool = False) -> dict:
    """The budget file at `path`. A missing file raises BudgetFileError unless missing_ok (the
    update path, which creates the file, and listings), which gives empty(path); an unreadable
    file, invalid JSON or another schema raises BudgetFileError always."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return empty(path)
        raise BudgetFileError(path, "no budget file here (a new backend starts one): review a report of "
                                    "this backend, create the file with `nbx gate --update --report DIR` "
                                    "and commit it, or name another with --budgets") from None
    except (OSError, UnicodeDecodeError) as e:
        raise BudgetFileError(path, f"cannot read the budget file ({getattr(e, 'strerror', None) or e}); "
                                    "make it readable or give another with --budgets") from None
    try:
        data = json.loads(text)
    except ValueError as e:
        raise BudgetFileError(path, f"not a budget file: invalid JSON ({e}); restore it from git") from None
    if not isinstance(data, dict) or not isinstance(data.get("budgets"), dict):
        raise BudgetFileError(path, "not a budget file: expected a JSON object with a 'budgets' object; "
                                    "restore it from git")
    if data.get("schema") != SCHEMA:
        raise BudgetFileError(path, f"budget schema {data.get('schema')!r}, this nbx reads {SCHEMA}")
    return _with_reasons(data, path)


def _with_reasons(data: dict, path: Path) -> dict:
    """The file's "reasons" map folded into its entries; a reason naming no entry, a reason that is
    not text, or a reason written inside an entry is a BudgetFileError (a stale or misplaced reason
    would otherwise explain nothing, silently)."""
    reasons = data.get("reasons", {})
    if not isinstance(reasons, dict):
        raise BudgetFileError(path, "'reasons' must be an object mapping a budget key to its reason")
    entries = {}
    for k, e in data["budgets"].items():
        if not isinstance(e, dict):
            raise BudgetFileError(path, f"budget {k}: expected an object of figures, got {e!r}")
        if "reason" in e:
            raise BudgetFileError(path, f"budget {k}: its reason belongs in the 'reasons' map, not in the entry")
        entries[k] = dict(e)
    for k, r in reasons.items():
        if k not in entries:
            raise BudgetFileError(path, f"reason for {k!r} names no budget entry; remove it or add the entry")
        if not isinstance(r, str) or not r.strip():
            raise BudgetFileError(path, f"reason for {k!r}: expected non-empty text, got {r!r}")
        entries[k]["reason"] = r
    out = {k: v for k, v in data.items() if k != "reasons"}
    out["budgets"] = entries
    return out


def save(data: dict, path: Path) -> None:
    """Write `data` to `path` so that a reader, or a process killed at any instant (SIGKILL
    included), sees the old file or the whole new one, never a part: the text is made first, then
    written to a fresh temp file in the same directory, fsynced, renamed over the target with
    os.replace (atomic within a file system) and the rename made durable by fsyncing the directory.
    A kill before the rename leaves the target as it was (and at worst a stray .tmp file)."""
    path = Path(path)
    text = dumps(data)                                                          # fails before any file
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)


def dumps(data: dict) -> str:
    """The file's text: sorted keys, one line per budget entry's figures and one per reason under
    "reasons" (a review's diff is one line an entry), no NaN."""
    figures, reasons = {}, {}
    for k, e in data.get("budgets", {}).items():
        figures[k] = {n: v for n, v in e.items() if n != "reason"}
        if "reason" in e:
            reasons[k] = e["reason"]
    fields = {k: json.dumps(v, sort_keys=True, allow_nan=False)
              for k, v in data.items() if k not in ("budgets", "reasons")}
    fields["budgets"] = _lines(figures)
    fields["reasons"] = _lines(reasons)
    return "{\n" + ",\n".join(f" {json.dumps(k)}: {v}" for k, v in sorted(fields.items())) + "\n}\n"


def _lines(table: dict) -> str:
    rows = [f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True, allow_nan=False)}" for k, v in sorted(table.items())]
    return "{\n" + ",\n".join(rows) + "\n }" if rows else "{}"


@contextlib.contextmanager
def locked(path: Path):
    """Hold an exclusive flock on the directory of the budget file `path` (made if missing) for a
    load-update-save: two `gate --update` runs (--raise-only over several reports) then apply one
    after the other instead of the later save dropping the earlier's entries. The directory, not a
    lock file, is locked, so the budget directory holds budget files only."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.parent, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)       # drops the lock


def round_up_tenth(x: float) -> float:
    """Up to the next tenth (0.40000000000000568, float noise of a 0.4 ulp figure, gives 0.4; the gate
    allows 1e-9 over); never clearly below x (9.007e15 ulp: x * 10 / 10 no longer round-trips)."""
    r = math.ceil(x * 10 - 1e-9) / 10
    return r if x - r <= 1e-9 else float(math.ceil(x))


def measured_maxima(measurements) -> dict[tuple[str, str], float]:
    """(key, field) -> the largest figure measured: max_ulp, or order_max_ulp for a measurement
    against a documented evaluation order. nbx's measurements only: a peer's figures
    (`nbx run --target torch`) never become a budget."""
    out: dict[tuple[str, str], float] = {}
    for m in measurements:
        if getattr(m, "target", "nbx") != "nbx":
            continue
        field, v = ("order_max_ulp", m.order_max_ulp) if m.order_cases else ("max_ulp", m.max_ulp)
        if m.error or not m.cases or not math.isfinite(v):
            continue
        k = (key(m.op, m.dtype), field)
        out[k] = max(out.get(k, 0.0), v)
    return out


def update(data: dict, measurements, *, everything: bool = False, raise_only: bool = False,
           source: dict | None = None):
    """New budgets from a run; returns (new data, list of (key, old, new)).

    Default: improvements and new entries. everything: the measured values, up or down.
    raise_only: entries measured higher and new entries (to take the max over several runs)."""
    budgets = dict(data.get("budgets", {}))
    changes = []
    for (k, name), v in sorted(measured_maxima(measurements).items()):
        new = round_up_tenth(v)
        old = budgets.get(k, {}).get(name)
        if raise_only:
            take = old is None or new > old
        else:
            take = old is None or new < old or (everything and new != old)
        if take:
            budgets[k] = {**budgets.get(k, {}), name: new}
            changes.append((k if name == "max_ulp" else f"{k} ({name})", old, new))
    out = {**data, "schema": SCHEMA, "budgets": budgets}
    if source:
        out["source"] = source
    return out, changes
