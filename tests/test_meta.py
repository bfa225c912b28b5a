"""Completeness of the tables: every op has an oracle, every measured target has a committed bank
file and a committed interpreter budget (or is exact). Layout: an op's spec and its oracle live in
modules of the same family name, nbx/ops/<family>.py and oracles/<family>.py.

The last two read the COMMITTED reference_bank/ and reports/budgets/ (never NBX_BANK): they fail
until the full bank (`nbx bank refresh`) and the interpreter budgets (`nbx run` then
`nbx gate --update`) are committed, and they fail again whenever an op, variant or dtype is added
without them.
"""
from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np
import pytest

import nbx
import nbx.ops
import oracles
from nbx.harness import bank, budgets
from nbx.harness import targets as T
from nbx.harness.targets import SPLIT_OPS, targets
from oracles import ORACLES

OPS = list(nbx.OPS)


def _interpreter_backend_id() -> str:
    """The budgets of the backend under test (the interpreter's in CI, cuda-... on a GPU)."""
    return nbx.backend_id()


def test_split_ops_are_the_gated_pair():
    assert set(SPLIT_OPS) == {"glu", "silu_and_mul"}


@pytest.mark.parametrize("op", OPS)
def test_every_op_has_an_oracle_of_the_right_arity(op):
    assert op in ORACLES, f"op {op!r} is in nbx.OPS but has no oracle in oracles.ORACLES"
    o = ORACLES[op]
    spec = nbx.OPS[op]
    # glu / silu_and_mul: the oracle takes the two halves; clamp: its scalar bounds are oracle operands
    param_operands = getattr(T, "PARAM_OPERANDS", {}).get(op, ())
    want = 2 if op in SPLIT_OPS else spec.arity + len(param_operands)
    assert o.arity == want, (f"{op}: oracle arity {o.arity}, op arity {spec.arity} + parameter operands "
                             f"{param_operands} (expected {want})")
    assert len(o.domain) == o.arity, f"{op}: domain has {len(o.domain)} intervals for arity {o.arity}"
    for iv in o.domain:
        assert len(iv) == 2 and iv[0] <= iv[1], f"{op}: bad domain interval {iv!r}"
    assert callable(o.f64), f"{op}: no float64 oracle"
    if any(d.is_float for d in spec.dtypes):
        assert o.mp is not None, f"{op}: float dtypes but no mpmath oracle (the bank needs it)"


def test_no_oracle_without_an_op():
    extra = set(ORACLES) - set(nbx.OPS)
    assert not extra, f"oracles without an op in nbx.OPS: {sorted(extra)}"


# Modules that declare no op: the registry and the Tensor methods; the Oracle record and the
# float-format and rounding helpers. Every other module of either package is one family.
OPS_DIR = Path(nbx.ops.__file__).resolve().parent
ORACLES_DIR = Path(oracles.__file__).resolve().parent
OPS_HELPERS = {"__init__", "registry", "methods", "verify"}
ORACLE_HELPERS = {"__init__", "base", "formats", "rounding"}


def _families(directory: Path, helpers: set) -> list[str]:
    return sorted(p.stem for p in directory.glob("*.py") if p.stem not in helpers)


def test_ops_and_oracles_have_the_same_family_modules():
    assert _families(OPS_DIR, OPS_HELPERS) == _families(ORACLES_DIR, ORACLE_HELPERS)


def test_spec_and_oracle_are_declared_in_the_module_named_for_the_family():
    wrong = []
    for op, spec in nbx.OPS.items():
        path = Path(spec.declared_at.rsplit(":", 1)[0]).resolve()
        if path.parent != OPS_DIR or path.stem != spec.family:
            wrong.append(f"{op}: family {spec.family!r} but declared in {spec.declared_at}")
        try:
            module = importlib.import_module(f"oracles.{spec.family}")
        except ImportError:
            wrong.append(f"{op}: no oracles module oracles/{spec.family}.py")
            continue
        if not any(o is ORACLES.get(op) for o in module.ORACLES):
            wrong.append(f"{op}: oracles.ORACLES[{op!r}] is not declared in oracles/{spec.family}.py")
    assert not wrong, "\n".join(wrong)


def test_every_family_module_oracle_is_registered():
    for family in _families(ORACLES_DIR, ORACLE_HELPERS):
        module = importlib.import_module(f"oracles.{family}")
        stray = [o.name for o in module.ORACLES if ORACLES.get(o.name) is not o]
        assert not stray, f"oracles/{family}.py declares oracles missing from oracles.ORACLES: {stray}"


def test_committed_bank_covers_every_target():
    """EXPECTED TO FAIL until the lead commits the full reference bank (`nbx bank refresh`)."""
    base = bank.ROOT
    assert (base / bank.MANIFEST).exists(), f"no committed bank manifest at {base / bank.MANIFEST}"
    manifest = json.loads((base / bank.MANIFEST).read_text())
    files = manifest.get("files", {})
    missing = [f"{t.label} {t.dtype.name} ({bank.relpath(t)})" for t in targets()
               if bank.relpath(t) not in files]
    assert not missing, (f"the committed bank lacks {len(missing)} of {len(targets())} targets; run "
                         f"`nbx bank refresh` and commit reference_bank/. First missing: {missing[:15]}")
    problems = bank.check(base, verify=False)
    assert not problems, (f"the committed bank has {len(problems)} problem(s) (hash, stale generator, "
                          f"missing file): {problems[:10]}")


def test_committed_interpreter_budgets_cover_every_inexact_target():
    """EXPECTED TO FAIL until the lead commits reports/budgets/<interpreter id>.json."""
    bid = _interpreter_backend_id()
    path = budgets.path_for(bid)
    assert path.exists(), (f"no committed interpreter budgets at {path}; run `nbx run --profile ci` "
                           "then `nbx gate --update` and commit the file")
    table = budgets.load(path)["budgets"]
    missing = []
    for t in targets():
        if not bank.out_dtype(t).is_float:           # integer/bool results are exact: budget 0, not stored
            continue
        if budgets.key(t.label, t.dtype.name) not in table:
            missing.append(budgets.key(t.label, t.dtype.name))
    assert not missing, (f"{path.name} has no budget for {len(missing)} inexact target(s); run the ci "
                         f"profile and `nbx gate --update`. First missing: {missing[:15]}")
    for k, v in table.items():
        assert isinstance(v.get("max_ulp"), (int, float)) and v["max_ulp"] >= 0, f"{k}: bad entry {v!r}"
        assert v["max_ulp"] == budgets.round_up_tenth(v["max_ulp"]), f"{k}: not a tenth of an ulp"
