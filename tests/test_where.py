"""`nbx where OP`: one command from an op's name to its spec, body, fast path, oracle, bank files and
budgets, each a path that exists."""
import re
from pathlib import Path

import pytest

import nbx
from nbx.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("op", sorted(nbx.OPS))
def test_where_names_existing_places(op, capsys):
    assert main(["where", op]) == 0
    out = capsys.readouterr().out
    spec = nbx.OPS[op]
    lines = {ln.split()[0]: ln for ln in out.splitlines()[1:]}
    path, line = re.match(r"\s*spec\s+(\S+):(\d+)", lines["spec"]).groups()
    assert path.startswith("nbx/ops/") and int(line) <= len((ROOT / path).read_text().splitlines())
    for ln in out.splitlines():
        m = re.match(r"\s*(body|fast32)\s.*?(nbx/[\w./]+):\d+", ln) or re.match(r"\s*(bank)\s+(\S+)/:", ln)
        if m:
            assert (ROOT / m.group(2)).exists(), ln
    assert re.match(rf"\s*oracle\s+nbx/oracles/{spec.family}\.py:\d+", lines["oracle"]), lines["oracle"]
    assert ("fast32" in lines) == (spec.fast32 is not None)
    from nbx.kernels import hard32
    tables = [ln for ln in out.splitlines() if ln.lstrip().startswith("hard32 ")]
    for ln in tables:                     # the op's float32 hard cases (each variant's), files that exist
        m = re.match(r"\s*hard32\s+nbx/kernels/hard32_cases/([\w@=.,]+)\.json: (\d+) float32", ln)
        assert m and hard32.path(m.group(1)).exists() and int(m.group(2)) == hard32.cases(m.group(1)).n, ln
    assert bool(tables) == hard32.path(op).exists()
    assert ("order" in lines) == (spec.order is not None)
    from nbx.oracles.device import DEVICE_ORACLES
    if op in DEVICE_ORACLES:                # the device oracle and its bound, at a path that exists
        m = re.match(r"\s*device\s+\S+ (nbx/oracles/device/\w+\.py):\d+ .*: k = ", lines["device"])
        assert m and (ROOT / m.group(1)).exists(), lines["device"]
    if nbx.float32 in spec.dtypes:        # correctly rounded, or why not
        assert ("rounding not declared" in lines["rounding"]) == bool(spec.verify.not_cr), lines["rounding"]
    for ln in out.splitlines():
        m = re.match(r"\s*order\s.*oracle (nbx/oracles/order\.py):\d+", ln)
        assert m or not ln.lstrip().startswith("order "), ln
    assert "bank" in lines and "budgets" in lines


def test_where_refuses_an_unknown_op(capsys):
    with pytest.raises(SystemExit) as e:
        main(["where", "notanop"])
    assert e.value.code == 2
    assert "notanop" in capsys.readouterr().err


def test_every_family_has_its_section_in_the_ops_doc():
    text = (ROOT / "docs" / "OPS.md").read_text()
    for family in {spec.family for spec in nbx.OPS.values()}:
        assert f"(family `{family}`, `nbx/ops/{family}.py`; oracles in `nbx/oracles/{family}.py`)" in text, family
