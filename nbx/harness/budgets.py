"""Ulp budgets per backend: reports/budgets/<backend-id>.json, reviewed data like glibc's libm-test-ulps.

One entry per op (variant) and dtype: the max ulp allowed over every value suite. Special
mismatches, integer errors and layout/intdiv mismatches have a budget of 0 and are not stored.
`update` writes the measured maxima rounded UP to a tenth of an ulp, for improvements and new
entries only unless told otherwise, and returns the diff for review.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

SCHEMA = 1
ROOT = Path(__file__).resolve().parents[2] / "reports" / "budgets"


def path_for(backend_id: str, base: Path | None = None) -> Path:
    return (base or ROOT) / f"{backend_id}.json"


def key(op: str, dtype: str) -> str:
    return f"{op}|{dtype}"


def load(path: Path) -> dict:
    if not path.exists():
        return {"schema": SCHEMA, "backend": path.stem, "budgets": {}}
    data = json.loads(path.read_text())
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: budget schema {data.get('schema')!r}, this nbx reads {SCHEMA}")
    return data


def save(data: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n"   # fails before any file
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def round_up_tenth(x: float) -> float:
    """Up to the next tenth (0.40000000000000568, float noise of a 0.4 ulp figure, gives 0.4; the gate
    allows 1e-9 over); never clearly below x (9.007e15 ulp: x * 10 / 10 no longer round-trips)."""
    r = math.ceil(x * 10 - 1e-9) / 10
    return r if x - r <= 1e-9 else float(math.ceil(x))


def measured_maxima(measurements) -> dict[str, float]:
    out: dict[str, float] = {}
    for m in measurements:
        if m.error or not m.cases or not math.isfinite(m.max_ulp):
            continue
        k = key(m.op, m.dtype)
        out[k] = max(out.get(k, 0.0), m.max_ulp)
    return out


def update(data: dict, measurements, *, everything: bool = False, raise_only: bool = False,
           source: dict | None = None):
    """New budgets from a run; returns (new data, list of (key, old, new)).

    Default: improvements and new entries. everything: the measured values, up or down.
    raise_only: entries measured higher and new entries (to take the max over several runs)."""
    budgets = dict(data.get("budgets", {}))
    changes = []
    for k, v in sorted(measured_maxima(measurements).items()):
        new = round_up_tenth(v)
        old = budgets.get(k, {}).get("max_ulp")
        if raise_only:
            take = old is None or new > old
        else:
            take = old is None or new < old or (everything and new != old)
        if take:
            budgets[k] = {**budgets.get(k, {}), "max_ulp": new}
            changes.append((k, old, new))
    out = {**data, "schema": SCHEMA, "budgets": budgets}
    if source:
        out["source"] = source
    return out, changes
