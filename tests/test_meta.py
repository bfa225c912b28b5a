"""Completeness of the tables: every op has an oracle, every measured target has a committed bank
file and a committed interpreter budget (or is exact). Layout: an op's spec and its oracle live in
modules of the same family name, nbx/ops/<family>.py and nbx/oracles/<family>.py. Per-op verification
facts live with the op (OpSpec.verify) and agree with its spec and oracle; nbx/harness/ names no op.

The last two read the COMMITTED reference_bank/ and reports/budgets/ (never NBX_BANK): they fail
until the full bank (`nbx bank refresh`) and the interpreter budgets (`nbx run` then
`nbx gate --update`) are committed, and they fail again whenever an op, variant or dtype is added
without them.
"""
from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import numpy as np
import pytest

import nbx
import nbx.ops
from nbx import oracles
from nbx.harness.suites import bank
from nbx.harness.gate import budgets
from nbx.harness.targets.target import targets
from nbx.ops import verify
from nbx.oracles import ORACLES

OPS = list(nbx.OPS)


def _interpreter_backend_id() -> str:
    """The budgets of the backend under test (the interpreter's in CI, cuda-... on a GPU)."""
    return nbx.backend_id()


@pytest.mark.parametrize("op", OPS)
def test_every_op_has_an_oracle_of_the_right_arity(op):
    assert op in ORACLES, f"op {op!r} is in nbx.OPS but has no oracle in oracles.ORACLES"
    o = ORACLES[op]
    spec = nbx.OPS[op]
    # a split op's oracle takes the two halves; parameter operands (clamp's bounds) follow the tensors
    param_operands = spec.verify.param_operands
    want = (2 if spec.verify.split is not None else spec.arity) + len(param_operands)
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
ORACLE_HELPERS = {"__init__", "base", "formats", "rounding", "order"}


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
            module = importlib.import_module(f"nbx.oracles.{spec.family}")
        except ImportError:
            wrong.append(f"{op}: no oracles module nbx/oracles/{spec.family}.py")
            continue
        if not any(o is ORACLES.get(op) for o in module.ORACLES):
            wrong.append(f"{op}: oracles.ORACLES[{op!r}] is not declared in nbx/oracles/{spec.family}.py")
    assert not wrong, "\n".join(wrong)


def test_every_family_module_oracle_is_registered():
    for family in _families(ORACLES_DIR, ORACLE_HELPERS):
        module = importlib.import_module(f"nbx.oracles.{family}")
        stray = [o.name for o in module.ORACLES if ORACLES.get(o.name) is not o]
        assert not stray, f"nbx/oracles/{family}.py declares oracles missing from oracles.ORACLES: {stray}"


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
    """Every float target has an entry: max_ulp, or order_max_ulp where the op has a documented
    evaluation order on that dtype (and only there)."""
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
    ordered = {budgets.key(t.label, t.dtype.name) for t in targets() if t.order is not None}
    for k, v in table.items():
        name = "order_max_ulp" if k in ordered else "max_ulp"
        assert set(v) & {"max_ulp", "order_max_ulp"} == {name}, f"{k}: the entry holds {sorted(v)}, not {name}"
        assert isinstance(v[name], (int, float)) and v[name] >= 0, f"{k}: bad entry {v!r}"
        assert v[name] == budgets.round_up_tenth(v[name]), f"{k}: not a tenth of an ulp"


# ---------------------------------------------------------------------- verification facts with the op
HARNESS_DIR = Path(nbx.__file__).resolve().parent / "harness"


def op_names_in(directory: Path) -> list[str]:
    """'file:line: name' for every string constant of a .py file under `directory` that is an op name
    of nbx.OPS (docstrings excluded; comments are no constants)."""
    found = []
    for path in sorted(directory.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        found += [f"{path.relative_to(directory)}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and node.value in nbx.OPS and id(node) not in docstrings]
    return found


def test_harness_names_no_op():
    """What the harness must know of an op is declared with the op (OpSpec.verify, nbx/ops/verify.py,
    or its Oracle): an op name in nbx/harness/ is a per-op fact in the wrong place."""
    found = [f for f in op_names_in(HARNESS_DIR) if not f.startswith(PEER_TABLE)]
    assert not found, "op names in nbx/harness/ (declare the fact in the op's Verify):\n" + "\n".join(found)


# The one exemption: the peer table maps nbx's op names to another library's functions, a fact about
# that library (which torch function, which composition), not about nbx's op.
PEER_TABLE = "targets/peers.py:"


def test_op_name_scan_sees_strings_but_not_docstrings(tmp_path):
    (tmp_path / "m.py").write_text('"""exp and add."""\nX = {"add": 1}\n\n\ndef f(t):\n    """copy"""\n'
                                   '    return t.op == "copy"  # "neg"\n')
    assert op_names_in(tmp_path) == ["m.py:2: 'add'", "m.py:7: 'copy'"]


@pytest.mark.parametrize("op", OPS)
def test_verify_facts_agree_with_spec_and_oracle(op):
    problems = verify.check(nbx.OPS[op], ORACLES[op].arity)
    assert not problems, f"{op}: " + "; ".join(problems)


def test_every_variant_is_measured_somewhere():
    measured = {(t.op, tuple(sorted(t.params.items()))) for t in targets()}
    missing = [f"{op} {v.params}" for op, spec in nbx.OPS.items() for v in spec.verify.variants
               if (op, tuple(sorted(v.params.items()))) not in measured]
    assert not missing, f"variants that apply to none of their op's dtypes: {missing}"


def test_ci_rank8_sample_covers_every_kernel_path():
    """The ci layout suite's rank-8 groups go to a sample of ops (Verify.ci_rank8); the sample holds
    every arity and every launch feature: the fault flag, a compose over views (split), a compose,
    a bool result, a result dtype chosen by a parameter, a scalar kernel parameter."""
    sample = [spec for spec in nbx.OPS.values() if spec.verify.ci_rank8]
    assert {s.arity for s in sample} == {s.arity for s in nbx.OPS.values()}
    assert any(s.fault is not None for s in sample)
    assert any(s.verify.split is not None for s in sample)
    assert any(s.compose is not None and s.verify.split is None for s in sample)
    assert any(s.rule == "B" for s in sample)
    assert any(any(p.kind == "dtype" for p in s.params) for s in sample)
    assert any(any(p.kind == "number" for p in s.params) for s in sample)


@pytest.mark.parametrize("op", [op for op, spec in nbx.OPS.items() if spec.verify.big is not None])
def test_big_case_reference_agrees_with_the_op(op):
    """A BigCase runs on the GPU only (> 2^31 elements); its call and its numpy reference are checked
    here on a small array, so a wrong reference cannot pass for a 64-bit offset bug."""
    big = nbx.OPS[op].verify.big
    host = ((np.arange(4099, dtype=np.int64) % 251) - 125).astype(big.dtype.np)
    got = nbx.FUNCTIONS[op](nbx.from_numpy(host)[::3], *big.scalars).numpy()
    want = big.reference(host[::3], *big.scalars)
    assert got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_verify_check_reports_inconsistent_facts():
    import dataclasses
    div = nbx.OPS["div"]
    wrong = verify.Verify(variants=(verify.Variant({"alpha": 2}),), roles={5: verify.MASK},
                          split=verify.Split(), exact_float=True)
    problems = verify.check(dataclasses.replace(div, verify=wrong), ORACLES["div"].arity)
    assert any("names no parameter" in p for p in problems)
    assert any("role of operand 5" in p for p in problems)
    assert any("split op" in p for p in problems)
    assert any("fault predicate" in p for p in problems)
    assert any("exact float" in p for p in problems)


def _rounding_undeclared(spec) -> bool:
    """An op with a float dtype that declares neither the dtypes it rounds correctly nor why not."""
    v = spec.verify
    return any(d.is_float for d in spec.dtypes) and not v.correctly_rounded and not v.not_cr.strip()


@pytest.mark.parametrize("op", OPS)
def test_every_float_op_declares_its_rounding(op):
    """Correct rounding is no default (Verify.correctly_rounded is () unless given): every op with a
    float dtype says on its own declaration where it is correctly rounded (verify.F32, CR16,
    CR_NARROW) or why not (not_cr, with its measured figure)."""
    assert not _rounding_undeclared(nbx.OPS[op]), (
        f"{op} ({nbx.OPS[op].declared_at}): declare correctly_rounded=F32 | CR16 | CR_NARROW, or not_cr=why")


def test_an_undeclared_float_op_is_caught():
    import dataclasses
    exp = nbx.OPS["exp"]
    assert _rounding_undeclared(dataclasses.replace(exp, verify=verify.Verify()))
    assert not _rounding_undeclared(dataclasses.replace(exp, verify=verify.Verify(correctly_rounded=verify.F32)))
    assert not _rounding_undeclared(dataclasses.replace(nbx.OPS["bitwise_and"], verify=verify.Verify()))


def test_the_readme_lists_every_op_not_declared_correctly_rounded_on_float32():
    """README's gate section names the ops whose spec withdraws float32 correct rounding, all of them
    and no other."""
    import re
    from nbx.ops import OPS
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    withdrawn = {name for name, spec in OPS.items() if spec.verify.not_cr}
    if not withdrawn:
        assert "Every float op\n  declares float32 (" in text
        return
    para = re.sub(r"`[^`]*`", "", text[text.index("Not declared on\n  float32 today"):].split("\n- ")[0])
    named = set(re.findall(r"\b([a-z][a-z0-9_]+)\b", para)) & set(OPS)
    assert named == withdrawn, named
