"""The reference bank: text format, refresh (atomic, with a change summary), check, load, and what a
broken bank does to the `bank` suite and the gate.

Every test works on a bank under tmp_path (NBX_BANK), never on the committed reference_bank/.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from nbx.dtype import bfloat16, bool_, float16, float32, int8, int32
from nbx.harness.suites import bank
from nbx.harness.gate import verdict as gate
from nbx.harness import api
from nbx.harness.records.measurement import Measurement
from nbx.harness.targets.target import Target

REPO = Path(__file__).resolve().parents[1]
OPS2 = ["exp", "add"]
DTYPES2 = ["float32", "float16"]


def _quiet(*_a, **_k):
    pass


@pytest.fixture
def tmp_bank(tmp_path, monkeypatch):
    """An empty bank directory that nbx uses (NBX_BANK), with the manifest cache cleared."""
    base = tmp_path / "bank"
    base.mkdir()
    monkeypatch.setenv("NBX_BANK", str(base))
    bank._MANIFEST.clear()
    assert bank.root() == base != bank.ROOT
    yield base
    bank._MANIFEST.clear()


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory):
    """A bank refreshed once for OPS2 x DTYPES2 (copied by the tests that modify it)."""
    base = tmp_path_factory.mktemp("refreshed")
    bank.refresh(OPS2, DTYPES2, base=base, progress=False, log=_quiet)
    return base


@pytest.fixture
def bank_copy(refreshed, tmp_bank):
    shutil.rmtree(tmp_bank)
    shutil.copytree(refreshed, tmp_bank)
    bank._MANIFEST.clear()
    return tmp_bank


def _bits(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _snapshot(base: Path) -> dict[str, bytes]:
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def _assert_matches_manifest(base: Path) -> None:
    manifest = json.loads((base / bank.MANIFEST).read_text())
    for rel, entry in manifest["files"].items():
        data = (base / rel).read_bytes()
        assert bank.sha256(data) == entry["sha256"], f"{rel}: hash differs from the manifest"
    # and no file that looks like a bank file is outside the manifest
    for p in base.rglob("*.txt"):
        rel = str(p.relative_to(base))
        assert rel in manifest["files"], f"{rel}: a bank file the manifest does not list"


# ---------------------------------------------------------------- the text format
ROUND_TRIP = [
    Target("exp", {}, float32),                        # float unary
    Target("exp", {}, bfloat16),                       # float unary, ml_dtypes format
    Target("bitwise_not", {}, int8),                   # integer unary, 1-byte operands
    Target("add", {}, int32),                          # integer binary
    Target("add", {"alpha": 2}, float32),              # a parameter variant (label add:alpha=2)
    Target("eq", {}, float32),                         # binary with a bool output
    Target("logical_not", {}, bool_),                  # bool in, bool out
    Target("where", {}, float16),                      # ternary with a bool operand
]


@pytest.mark.parametrize("t", ROUND_TRIP, ids=lambda t: f"{t.label}-{t.dtype.name}")
def test_render_parse_round_trip(t):
    out = bank.out_dtype(t)
    arrays, tags = bank.bank_inputs(t)
    bits, ok = bank.expected_bits(t, arrays, out)
    assert ok.any()
    text = bank.render(t, arrays, tags, bits, ok, out)
    bf = bank.parse(text, "mem")
    assert [d.name for d in bf.operands] == [d.name for d in t.operand_dtypes()]
    assert bf.out is out
    assert len(bf.inputs) == len(arrays)
    for a, b in zip(arrays, bf.inputs):
        assert b.dtype == a.dtype
        np.testing.assert_array_equal(_bits(b), _bits(a[ok]))
    np.testing.assert_array_equal(bf.expected, bits[ok])
    assert bf.tags == [g for g, k in zip(tags, ok) if k]
    assert set(bf.tags) <= {"special", "random"}
    # rendering what was parsed gives the same text: the format loses nothing
    again = bank.render(t, bf.inputs, bf.tags, bf.expected, np.ones(len(bf.expected), bool), out)
    assert again.splitlines()[3:] == text.splitlines()[3:]


def test_bool_output_values_are_0_or_1():
    t = Target("eq", {}, float32)
    out = bank.out_dtype(t)
    assert out is bool_
    arrays, tags = bank.bank_inputs(t)
    bits, ok = bank.expected_bits(t, arrays, out)
    assert set(np.unique(bits[ok]).tolist()) <= {0, 1}
    assert set(np.unique(bits[ok]).tolist()) == {0, 1}         # the specials include equal pairs


def test_parse_rejects_malformed_lines_and_missing_header():
    t = Target("exp", {}, float32)
    out = bank.out_dtype(t)
    arrays, tags = bank.bank_inputs(t)
    bits, ok = bank.expected_bits(t, arrays, out)
    text = bank.render(t, arrays, tags, bits, ok, out)
    lines = text.splitlines()
    lines[3] = lines[3].replace(" -> ", " => ")         # the first case line
    bad = "\n".join(lines) + "\n"
    with pytest.raises(bank.BankError, match=r"some/file\.txt:4: malformed"):
        bank.parse(bad, "some/file.txt")
    with pytest.raises(bank.BankError, match=r"x\.txt:1: malformed bank header '0x0 -> "):
        bank.parse("\n".join(text.splitlines()[3:]), "x.txt")
    lines = text.splitlines()
    for k, line in ((4, "# a comment between cases"), (4, ""), (5, "0x0 -> unresolved   # special")):
        bad = "\n".join(lines[:k - 1] + [line] + lines[k - 1:]) + "\n"
        with pytest.raises(bank.BankError, match=rf"x\.txt:{k}: malformed bank line"):
            bank.parse(bad, "x.txt")


def test_bank_file_is_reviewable_text(refreshed):
    text = (refreshed / "exp" / "float32.txt").read_text()
    lines = text.splitlines()
    assert lines[0].startswith("# nbx reference bank: op=exp")
    assert "operands=float32 out=float32" in lines[0]
    assert f"generator={bank.GENERATOR_VERSION}" in lines[1]
    assert "0x3f800000 -> 0x402df854   # special" in lines      # exp(1) = e, correctly rounded
    assert (refreshed / "add@alpha=2" / "float16.txt").exists()


# ---------------------------------------------------------------- refresh and check
def test_refresh_then_check_is_clean(refreshed):
    manifest = bank.load_manifest(refreshed)
    assert manifest["generator_version"] == bank.GENERATOR_VERSION
    assert manifest["seed"] == bank.SEED
    assert manifest["mpmath"]
    expected = {"exp/float32.txt", "exp/float16.txt", "add/float32.txt", "add/float16.txt",
                "add@alpha=2/float32.txt", "add@alpha=2/float16.txt"}
    assert set(manifest["files"]) == expected
    for rel, e in manifest["files"].items():
        data = (refreshed / rel).read_bytes()
        assert e["sha256"] == bank.sha256(data)
        assert e["cases"] == len(data.decode().splitlines()) - 3 > 0
    assert bank.check(refreshed, ops=OPS2, dtypes=DTYPES2, sample=64) == []
    _assert_matches_manifest(refreshed)


def test_check_covers_every_dtype_of_the_op(refreshed):
    """Without a dtype filter every dtype of OPS counts: the float32/float16-only bank is incomplete."""
    problems = bank.check(refreshed, ops=["exp"], verify=False)
    assert any("exp/float64.txt" in p and "no bank file" in p for p in problems), problems
    assert any("exp/int32.txt" in p for p in problems), problems


def test_refresh_prints_summary_and_second_run_is_unchanged(tmp_bank, monkeypatch):
    logs: list[str] = []
    s1 = bank.refresh(["exp"], ["float32", "float16"], progress=False, log=logs.append)
    assert sorted(s1["added"]) == ["exp/float16.txt", "exp/float32.txt"]
    assert s1["changed"] == [] and s1["unchanged"] == []
    assert "added 2" in logs[0] and "unchanged 0" in logs[0]

    logs.clear()
    before = _snapshot(tmp_bank)
    s2 = bank.refresh(["exp"], ["float32", "float16"], progress=False, log=logs.append)
    assert s2["added"] == [] and s2["changed"] == []
    assert sorted(s2["unchanged"]) == ["exp/float16.txt", "exp/float32.txt"]
    assert "added 0" in logs[0] and "changed 0" in logs[0] and "unchanged 2" in logs[0]
    after = _snapshot(tmp_bank)
    assert {k: v for k, v in after.items() if k != bank.MANIFEST} == \
        {k: v for k, v in before.items() if k != bank.MANIFEST}

    # a generator change (here: fewer random cases) shows up as changed files and case lines
    logs.clear()
    monkeypatch.setattr(bank.generate, "N_RANDOM", 40)
    s3 = bank.refresh(["exp"], ["float32"], progress=False, log=logs.append)
    assert s3["changed"] == ["exp/float32.txt"] and s3["changed_cases"] > 0
    assert "changed 1" in logs[0]
    assert any("changed: exp/float32.txt" in line for line in logs[1:])
    assert bank.check(ops=["exp"], dtypes=["float32"]) == []
    # the file not refreshed holds the old generator's inputs: the check says so
    problems = bank.check(ops=["exp"], dtypes=["float16"], verify=False)
    assert len(problems) == 1 and "exp/float16.txt" in problems[0] and "generator" in problems[0]


def test_refresh_keeps_other_entries(bank_copy):
    """A partial refresh rewrites its own files and keeps the manifest entries of the others."""
    bank.refresh(["exp"], ["float32"], progress=False, log=_quiet)
    files = bank.load_manifest()["files"]
    assert "add/float16.txt" in files and "exp/float16.txt" in files
    assert bank.check(ops=OPS2, dtypes=DTYPES2) == []


def test_corrupted_file_is_detected_by_check_load_and_the_gate(bank_copy):
    p = bank_copy / "exp" / "float32.txt"
    lines = p.read_text().splitlines(keepends=True)
    i = 10                                              # a case line, not the header
    body, arrow, rest = lines[i].partition(" -> ")
    digit = rest[2]                                     # first hex digit after 0x
    flipped = "1" if digit != "1" else "2"
    lines[i] = body + arrow + rest[:2] + flipped + rest[3:]
    assert lines[i] != p.read_text().splitlines(keepends=True)[i]
    p.write_text("".join(lines))

    problems = bank.check(ops=OPS2, dtypes=DTYPES2, verify=False)
    assert len(problems) == 1 and str(p) in problems[0] and "sha256" in problems[0], problems

    t = Target("exp", {}, float32)
    with pytest.raises(bank.BankError, match=r"exp/float32\.txt.*sha256"):
        bank.load(t)

    bank._MANIFEST.clear()
    m = api.measure(t, "bank", backend="test-backend")
    assert m.error.startswith("BankError") and "float32.txt" in m.error
    fails = gate.decide([m], {"budgets": {"exp|float32": {"max_ulp": 10.0}}}, ops=["exp"],
                        dtypes=["float32"], bank_problems=problems)
    reasons = [f.reason for f in fails]
    assert any(r.startswith("raised: BankError") for r in reasons), reasons
    assert any(f.key == ("bank", "", "") for f in fails)

    # an intact neighbour still measures
    m2 = api.measure(Target("exp", {}, float16), "bank", backend="test-backend")
    assert m2.error == "" and m2.cases > 0


def test_wrong_expected_values_with_a_consistent_hash_fail_the_mpmath_sample(bank_copy):
    """Someone 'fixes' the expected values and the manifest hash: the re-verified sample catches it."""
    rel = "exp/float32.txt"
    p = bank_copy / rel
    out = []
    for line in p.read_text().splitlines():
        if line.startswith("#"):
            out.append(line)
            continue
        body, _, tag = line.partition("   # ")
        left, right = body.split(" -> ")
        out.append(f"{left} -> {hex(int(right, 16) ^ 1)}   # {tag}")   # off by one ulp everywhere
    p.write_text("\n".join(out) + "\n")
    man = json.loads((bank_copy / bank.MANIFEST).read_text())
    man["files"][rel]["sha256"] = bank.sha256(p.read_bytes())
    (bank_copy / bank.MANIFEST).write_text(json.dumps(man))
    problems = bank.check(ops=["exp"], dtypes=["float32"], sample=8)
    assert any(rel in q and "mpmath gives" in q for q in problems), problems


def test_missing_file_is_reported(bank_copy):
    (bank_copy / "add" / "float16.txt").unlink()
    problems = bank.check(ops=OPS2, dtypes=DTYPES2, verify=False)
    assert any("add/float16.txt" in q and "no bank file" in q for q in problems), problems
    assert any("add/float16.txt" in q and "listed in the manifest but missing" in q for q in problems)
    with pytest.raises(bank.BankError, match="no bank file for add float16"):
        bank.load(Target("add", {}, float16))


def test_target_absent_from_manifest_is_reported(bank_copy):
    problems = bank.check(ops=["exp"], dtypes=["float32", "bfloat16"], verify=False)
    assert len(problems) == 1 and "exp/bfloat16.txt" in problems[0], problems


def test_missing_or_corrupt_manifest_is_reported(bank_copy):
    (bank_copy / bank.MANIFEST).write_text("{not json")
    problems = bank.check(ops=OPS2, dtypes=DTYPES2)
    assert len(problems) == 1 and "corrupted manifest" in problems[0]
    (bank_copy / bank.MANIFEST).unlink()
    problems = bank.check(ops=OPS2, dtypes=DTYPES2)
    assert len(problems) == 1 and "no bank manifest" in problems[0]
    with pytest.raises(bank.BankError, match="no bank manifest"):
        bank.load(Target("exp", {}, float32))


def test_wrong_generator_version_is_stale(bank_copy):
    man = json.loads((bank_copy / bank.MANIFEST).read_text())
    man["generator_version"] = bank.GENERATOR_VERSION - 1
    (bank_copy / bank.MANIFEST).write_text(json.dumps(man))
    problems = bank.check(ops=OPS2, dtypes=DTYPES2, verify=False)
    assert any("stale" in q and "generator version" in q for q in problems), problems
    good = Measurement("exp", "float32", "bank", "test", cases=10, max_ulp=0.5)
    budget = {"budgets": {"exp|float32": {"max_ulp": 0.5}}}
    assert gate.decide([good], budget, ops=["exp"], dtypes=["float32"], suites=["bank"]) == []
    fails = gate.decide([good], budget, ops=["exp"], dtypes=["float32"], suites=["bank"],
                        bank_problems=problems)
    assert fails and all(f.key == ("bank", "", "") and "stale" in f.reason for f in fails)


def test_partial_refresh_of_a_stale_bank_does_not_relabel_the_rest(bank_copy):
    """Refreshing one file of a stale bank must not declare the untouched files current."""
    man = json.loads((bank_copy / bank.MANIFEST).read_text())
    man["generator_version"] = bank.GENERATOR_VERSION - 1
    (bank_copy / bank.MANIFEST).write_text(json.dumps(man))
    logs: list[str] = []
    bank.refresh(["exp"], ["float32"], progress=False, log=logs.append)
    assert any("dropping" in line for line in logs)
    # the refreshed file is current; the others are no longer in the manifest: strays, whatever is asked
    problems = bank.check(ops=["exp"], dtypes=["float32"], verify=False)
    assert len(problems) == 5 and all("stray file" in q and "exp/float32.txt" not in q for q in problems)
    problems = bank.check(ops=OPS2, dtypes=DTYPES2, verify=False)
    assert any("add/float16.txt" in q for q in problems), problems


def test_check_reports_leftover_temp_files(bank_copy):
    """Temp files of an interrupted refresh (.<name>.tmp-<pid>) are reported, named, with the fix."""
    (bank_copy / "exp" / ".float32.txt.tmp-12345").write_text("half a file")
    (bank_copy / f".{bank.MANIFEST}.tmp-12345").write_text("{")
    problems = bank.check(ops=OPS2, dtypes=DTYPES2, verify=False)
    assert len(problems) == 2, problems
    assert any("exp/.float32.txt.tmp-12345" in q for q in problems)
    assert all("leftover temp file" in q and "nbx bank finish" in q for q in problems)
    bank.finish()
    assert bank.check(ops=OPS2, dtypes=DTYPES2) == []


def test_killed_refresh_subprocess_leaves_old_bank_whole(tmp_path, monkeypatch):
    """SIGKILL a real `python -m nbx bank refresh` while it computes: the old bank stays whole."""
    old = tmp_path / "old"
    old.mkdir()
    with monkeypatch.context() as mp:
        mp.setattr(bank.generate, "N_RANDOM", 40)              # the old bank differs from what refresh writes
        bank.refresh(OPS2, DTYPES2, base=old, progress=False, log=_quiet)
    work = tmp_path / "work"
    shutil.copytree(old, work)
    before = _snapshot(work)

    env = {**os.environ, "NBX_BANK": str(work), "PYTHONPATH": str(REPO)}
    # exp/add first (they hold files to overwrite), then slower ops so the kill lands mid-compute
    args = [sys.executable, "-m", "nbx", "bank", "refresh", "--op", "exp", "--op", "add",
            "--op", "pow", "--op", "atan2", "--op", "hypot", "--op", "to"]
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline:          # the progress bar's first line: computing now
            line = proc.stderr.readline()
            if "nbx bank refresh:" in line or not line:
                break
        assert "nbx bank refresh:" in line, f"no progress line; stderr: {line!r}"
        time.sleep(0.2)
        assert proc.poll() is None, "refresh finished before it could be killed: pick slower ops"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    after = _snapshot(work)
    assert after == before, f"files changed or appeared: {sorted(set(after) ^ set(before))}"
    _assert_matches_manifest(work)
    with monkeypatch.context() as mp:
        mp.setattr(bank.generate, "N_RANDOM", 40)              # the old bank is the patched generator's
        assert bank.check(work, ops=OPS2, dtypes=DTYPES2) == []


# ---------------------------------------------------------------- check: metadata, strays, journal
def _edit_manifest(base: Path, fn) -> None:
    man = json.loads((base / bank.MANIFEST).read_text())
    fn(man)
    (base / bank.MANIFEST).write_text(json.dumps(man, indent=1))


def _edit_file(base: Path, rel: str, fn) -> None:
    """Edit a bank file and update its manifest hash to match, as a careful forger would."""
    p = base / rel
    p.write_text(fn(p.read_text()))
    _edit_manifest(base, lambda m: m["files"][rel].update(sha256=bank.sha256(p.read_bytes())))


def _del_line(text: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:10] + lines[11:])


def _flip_input(text: str) -> str:
    lines = text.splitlines(keepends=True)
    first, _, rest = lines[10].partition(" ")
    lines[10] = hex(int(first, 16) ^ 1) + " " + rest
    return "".join(lines)


REL = "add@alpha=2/float32.txt"
METADATA_EDITS = {
    "entry cases": (lambda b: _edit_manifest(b, lambda m: m["files"][REL].update(cases=7)), "cases is 7"),
    "entry op": (lambda b: _edit_manifest(b, lambda m: m["files"][REL].update(op="sub")), "op is 'sub'"),
    "entry params": (lambda b: _edit_manifest(b, lambda m: m["files"][REL].update(params={"alpha": 3})),
                     "params is {'alpha': 3}"),
    "entry dtype": (lambda b: _edit_manifest(b, lambda m: m["files"][REL].update(dtype="float16")),
                    "dtype is 'float16'"),
    "entry out": (lambda b: _edit_manifest(b, lambda m: m["files"][REL].update(out="float64")),
                  "out is 'float64'"),
    "manifest seed": (lambda b: _edit_manifest(b, lambda m: m.update(seed=bank.SEED + 1)), "seed"),
    "manifest mpmath": (lambda b: _edit_manifest(b, lambda m: m.update(mpmath="0.17")), "mpmath '0.17'"),
    "manifest generator": (lambda b: _edit_manifest(b, lambda m: m.update(generator_version=99)),
                           "generator"),
    "header mpmath": (lambda b: _edit_file(b, REL, lambda t: t.replace("mpmath=", "mpmath=0.", 1)),
                      "mpmath"),
    "header out": (lambda b: _edit_file(b, REL, lambda t: t.replace("out=float32", "out=float16", 1)),
                   "header says 'float16'"),
    "header seed": (lambda b: _edit_file(b, REL, lambda t: t.replace(f"seed={bank.SEED}", "seed=1", 1)),
                    "seed"),
    "header rounding": (lambda b: _edit_file(b, REL, lambda t: t.replace("rounding=ziv(p+32 .. 1024",
                                                                           "rounding=ziv(p+32 .. 512", 1)),
                        "rounding=ziv(p+32 .. 512 bits)"),
    "header unresolved": (lambda b: _edit_file(b, REL, lambda t: t.replace("unresolved=0", "unresolved=2", 1)),
                          "unresolved=2"),
    "header columns": (lambda b: _edit_file(b, REL, lambda t: t.replace("# tag\n", "# note\n", 1)),
                       "malformed bank header"),
    "manifest rounding": (lambda b: _edit_manifest(b, lambda m: m.update(rounding="ziv(p+32 .. 512 bits)")),
                          "rounding 'ziv(p+32 .. 512 bits)'"),
    "manifest unknown field": (lambda b: _edit_manifest(b, lambda m: m.update(precision="anything")),
                               "field 'precision' is not one nbx writes"),
    "entry unknown field": (lambda b: _edit_manifest(b, lambda m: m["files"][REL].update(note="x")),
                            "field 'note' is not one nbx writes"),
    "case line deleted": (lambda b: _edit_file(b, REL, _del_line), "case lines"),
    "input edited": (lambda b: _edit_file(b, REL, _flip_input), "generator"),
}


@pytest.mark.parametrize("edit", list(METADATA_EDITS))
def test_check_catches_metadata_edits_with_consistent_hashes(bank_copy, edit):
    fn, words = METADATA_EDITS[edit]
    fn(bank_copy)
    problems = bank.check(ops=OPS2, dtypes=DTYPES2, verify=False)
    assert problems, f"{edit}: passed"
    assert any(words in q for q in problems), problems
    assert all("sha256 does not match" not in q for q in problems), problems   # hashes kept consistent


STRAYS = ["add/float128.txt", "notanop/float32.txt", "exp/float32.txt.orig", "exp/float64.txt"]


@pytest.mark.parametrize("rel", STRAYS)
def test_check_reports_stray_files(bank_copy, rel):
    p = bank_copy / rel
    p.parent.mkdir(exist_ok=True)
    p.write_text((bank_copy / "exp" / "float32.txt").read_text())
    for ops, dtypes in ((OPS2, DTYPES2), (None, None)):
        problems = bank.check(ops=ops, dtypes=dtypes, verify=False)
        assert any(str(p) in q and "stray file" in q for q in problems), problems
    if rel != "exp/float64.txt":
        assert any("no target of the registry" in q for q in problems if str(p) in q)


def test_manifest_entry_for_no_registry_target_is_reported(bank_copy):
    shutil.copy(bank_copy / "exp" / "float32.txt", bank_copy / "exp" / "float128.txt")
    _edit_manifest(bank_copy, lambda m: m["files"].__setitem__(
        "exp/float128.txt", dict(m["files"]["exp/float32.txt"], dtype="float128")))
    problems = bank.check(ops=OPS2, dtypes=DTYPES2, verify=False)
    assert len(problems) == 1 and "exp/float128.txt" in problems[0] and "registry" in problems[0]


def test_malformed_journal_is_reported_with_the_fix(bank_copy):
    j = bank_copy / bank.JOURNAL
    for bad, why in (("{not json", "not JSON"), ('{"renames": 3}', "no list of renames"),
                     ('{"renames": [["exp/.float32.txt.tmp-1", "exp/float32.txt"]]}', "rename 0"),
                     ('{"renames": [{"from": "../.x.tmp-1", "dest": "/etc/passwd", "sha256": "0"}]}',
                      "rename 0")):
        j.write_text(bad)
        problems = bank.check(ops=OPS2, dtypes=DTYPES2)
        assert len(problems) == 1 and str(j) in problems[0] and "malformed refresh journal" in problems[0]
        assert why in problems[0] and "git checkout reference_bank" in problems[0], problems
        with pytest.raises(bank.BankError, match=r"\.refresh-journal\.json: malformed refresh journal"):
            bank.load_manifest()
    j.unlink()
    assert bank.check(ops=OPS2, dtypes=DTYPES2) == []


def test_sample_seed_is_fresh_each_run_printed_and_repeatable(bank_copy):
    logs: list[str] = []
    for _ in range(2):
        assert bank.check(ops=OPS2, dtypes=DTYPES2, sample=5, log=logs.append) == []
    seeds = [int(re.search(r"--seed (\d+)", line).group(1)) for line in logs]
    assert len(seeds) == 2 and seeds[0] != seeds[1], logs
    # one wrong expected value with a consistent hash: a sample that draws it names the seed
    _edit_file(bank_copy, "exp/float32.txt", lambda t: t.replace("-> 0x402df854", "-> 0x402df855"))
    logs.clear()
    problems = bank.check(ops=["exp"], dtypes=["float32"], sample=10_000, seed=7, log=logs.append)
    assert problems and all("mpmath gives 0x402df854" in q and "seed 7" in q for q in problems), problems
    assert "--seed 7" in logs[0]


# ---------------------------------------------------------------- check --full
def test_full_check_of_the_committed_bank_passes(tmp_path, monkeypatch, capsys):
    """Every case of the committed bank recomputed with mpmath (`nbx bank check --full`), on a copy."""
    from nbx import cli
    base = tmp_path / "bank"
    shutil.copytree(bank.ROOT, base)
    monkeypatch.setenv("NBX_BANK", str(base))
    bank._MANIFEST.clear()
    t0 = time.monotonic()
    rc = cli.main(["bank", "check", "--full", "--quiet"])
    took = time.monotonic() - t0
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "every case agrees with mpmath" in out
    timing = [line for line in out.splitlines() if "recomputed with mpmath in" in line]
    assert timing, out
    with capsys.disabled():
        print(f"\n[{timing[0]}; the whole command took {took:.1f} s]")
    bank._MANIFEST.clear()


def test_full_check_catches_an_oracle_whose_forms_share_a_wrong_constant(bank_copy, monkeypatch):
    """An mp form off by 1e-6 relative (as a wrong constant shared with the float64 form would be):
    the sample may miss it, --full names the op's files and no other."""
    import dataclasses

    import mpmath
    from nbx.oracles import ORACLES
    good = ORACLES["exp"]
    bad = dataclasses.replace(good, mp=lambda x, **k: good.mp(x, **k) * (1 + mpmath.mpf("1e-6")))
    monkeypatch.setitem(ORACLES, "exp", bad)
    logs: list[str] = []
    problems = bank.check(ops=OPS2, dtypes=DTYPES2, full=True, log=logs.append)
    assert any(q.startswith("exp/float32.txt:") and "disagree with mpmath" in q for q in problems), problems
    assert all(q.startswith("exp/") for q in problems), problems
    assert any("recomputed with mpmath in" in line for line in logs), logs
    monkeypatch.setitem(ORACLES, "exp", good)
    assert bank.check(ops=OPS2, dtypes=DTYPES2, full=True) == []


# ---------------------------------------------------------------- interrupted refresh, real processes
_KILLED_REFRESH = """
import os, signal, sys
from nbx.harness.suites.bank import generate, refresh, storage

# SIGKILL this process at the n-th call of a step of the refresh: "stage" (writing a temp file,
# before the journal, the commit point, exists) or "rename" (publishing, after it).
ops, dtypes, point, n = sys.argv[1].split(","), sys.argv[2].split(","), sys.argv[3], int(sys.argv[4])
calls = 0

def step():
    global calls
    calls += 1
    if calls == n:
        os.kill(os.getpid(), signal.SIGKILL)

if point == "stage":
    stage = storage.stage
    def staging(path, data):
        step()
        return stage(path, data)
    storage.stage = staging
else:
    class Os:
        def __getattr__(self, name):
            return getattr(os, name)
        def replace(self, a, b):
            step()
            os.replace(a, b)
    storage.os = Os()
generate.N_RANDOM = 40                      # every file changes
refresh(ops, dtypes, progress=False, log=lambda *a: None)
"""


def _kill_refresh(base: Path, point: str, n: int) -> None:
    """A real refresh of OPS2 x DTYPES2 into `base`, SIGKILLed at the n-th `point` ("stage" or
    "rename")."""
    env = {**os.environ, "NBX_BANK": str(base), "PYTHONPATH": str(REPO)}
    p = subprocess.run([sys.executable, "-c", _KILLED_REFRESH, ",".join(OPS2), ",".join(DTYPES2), point,
                        str(n)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == -signal.SIGKILL, p.stderr
    bank._MANIFEST.clear()


_READER = """
import sys, time
from nbx.harness.suites import bank
from nbx.harness.targets.target import targets
while time.time() < float(sys.argv[1]):     # the readers start together
    pass
m = bank.load_manifest()
for t in targets(sys.argv[2].split(","), sys.argv[3].split(",")):
    bank.load(t, manifest=m)
print("read", len(m["files"]))
"""


def test_refresh_killed_after_its_commit_point_then_three_readers_at_once(bank_copy, monkeypatch):
    env = {**os.environ, "NBX_BANK": str(bank_copy), "PYTHONPATH": str(REPO)}
    ops, dts = ",".join(OPS2), ",".join(DTYPES2)
    _kill_refresh(bank_copy, "rename", 2)
    assert (bank_copy / bank.JOURNAL).exists()
    assert [q for q in bank_copy.rglob(".*.tmp-*")], "no temp files left: killed too late"
    problems = bank.check(ops=OPS2, dtypes=DTYPES2, verify=False)
    assert len(problems) == 1 and "nbx bank finish" in problems[0]

    start = time.time() + 3.0                   # past every reader's imports
    readers = [subprocess.Popen([sys.executable, "-c", _READER, str(start), ops, dts], cwd=REPO, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(3)]
    results = [(r.wait(timeout=300), *r.communicate()) for r in readers]
    for rc, out, err in results:
        assert rc == 0 and out.startswith("read 6"), f"a reader crashed (rc {rc}): {err[-2000:]}"

    assert not (bank_copy / bank.JOURNAL).exists()
    left = [q.name for q in bank_copy.rglob("*") if ".tmp-" in q.name or q.name == bank.LOCK]
    assert not left, left
    _assert_matches_manifest(bank_copy)
    bank._MANIFEST.clear()
    with monkeypatch.context() as mp:
        mp.setattr(bank.generate, "N_RANDOM", 40)        # the bank is now wholly the killed refresh's
        assert bank.check(ops=OPS2, dtypes=DTYPES2) == []


# ---------------------------------------------------------------- a complete bank
def _drop_cases(base: Path, rel: str, tag: str, *, unresolved: int = 0) -> list[str]:
    """Delete every case line tagged `tag`, then fix up the header's counts (raising `unresolved=` by
    `unresolved`) and the manifest's count and hash, as a careful forger would. Returns the deleted
    lines' inputs."""
    p = base / rel
    lines = p.read_text().splitlines(keepends=True)
    gone = [ln.split(" -> ")[0] for ln in lines[3:] if ln.rstrip().endswith(f"# {tag}")]
    keep = lines[:3] + [ln for ln in lines[3:] if not ln.rstrip().endswith(f"# {tag}")]
    n = len(keep) - 3
    keep[1] = re.sub(r"cases=\d+ unresolved=(\d+)",
                     lambda m: f"cases={n} unresolved={int(m.group(1)) + unresolved}", keep[1])
    p.write_text("".join(keep))
    _edit_manifest(base, lambda m: m["files"][rel].update(cases=n, sha256=bank.sha256(p.read_bytes())))
    return gone


@pytest.mark.parametrize("raise_unresolved", [False, True], ids=["counts", "counts-and-unresolved"])
def test_deleted_cases_with_fixed_counts_and_hashes_fail_both_check_modes(bank_copy, capsys,
                                                                           raise_unresolved):
    from nbx import cli
    rel = "exp/float32.txt"
    gone = _drop_cases(bank_copy, rel, "special", unresolved=59 if raise_unresolved else 0)
    assert len(gone) == 59
    for mode in ([], ["--full", "--quiet"]):
        rc = cli.main(["bank", "check", "--op", "exp", "--dtype", "float32", *mode])
        out = capsys.readouterr().out
        assert rc == 1, out
        missing = [ln for ln in out.splitlines() if "inputs are missing" in ln]
        assert len(missing) == 1 and rel in missing[0], out
        assert f"59 of the generator's {59 + 96} inputs are missing" in missing[0]
        assert ", ".join(f"{x} (special)" for x in gone[:4]) + ", ..." in missing[0], missing[0]
        if raise_unresolved:
            assert f"header unresolved={len(gone)} but the file lists 0" in out, out


def test_a_wrong_expected_value_with_its_hash_updated_is_caught_by_full(bank_copy):
    rel = "exp/float32.txt"
    lines = (bank_copy / rel).read_text().splitlines(keepends=True)
    i = next(k for k, ln in enumerate(lines) if ln.rstrip().endswith("# random"))
    body, _, tag = lines[i].partition("   # ")
    left, right = body.split(" -> ")
    lines[i] = f"{left} -> {hex(int(right, 16) ^ 1)}   # {tag}"
    _edit_file(bank_copy, rel, lambda _t: "".join(lines))
    assert bank.check(ops=OPS2, dtypes=DTYPES2, verify=False) == []      # consistent but for mpmath
    problems = bank.check(ops=OPS2, dtypes=DTYPES2, full=True)
    assert len(problems) == 1 and problems[0].startswith(f"{rel}: 1 of 155 cases disagree"), problems
    assert f"inputs {left}" in problems[0]
    # a sample of every case is the same check
    problems = bank.check(ops=["exp"], dtypes=["float32"], sample=155, seed=1)
    assert len(problems) == 1 and f"case {i - 3}" in problems[0], problems


def _undecidable(monkeypatch, xs) -> None:
    """Patch exp's mpmath form to sit within the working precision of a float32 midpoint at `xs`
    (1 + 2^-24, nudged by 2^-(prec-4): a different value at each precision, never clear of the
    boundary), so that Ziv's loop cannot decide them and they are not exact."""
    import dataclasses

    import mpmath
    from nbx.oracles import ORACLES
    good = ORACLES["exp"]
    bad = {mpmath.mpf(float(x)) for x in xs}

    def mp(x, **k):
        if x in bad:
            return mpmath.mpf(1) + mpmath.ldexp(1, -24) + mpmath.ldexp(1, 4 - mpmath.mp.prec)
        return good.mp(x, **k)
    monkeypatch.setitem(ORACLES, "exp", dataclasses.replace(good, mp=mp))


def test_unresolved_inputs_are_listed_bounded_and_retried_by_full(bank_copy, monkeypatch):
    rel = "exp/float32.txt"
    t = Target("exp", {}, float32)
    arrays, tags = bank.bank_inputs(t)
    xs = arrays[0][-2:]                                  # the last two random inputs
    with monkeypatch.context() as mp:
        _undecidable(mp, xs)
        bank.refresh(["exp"], ["float32"], progress=False, log=_quiet)
        text = (bank_copy / rel).read_text()
        assert "cases=153 unresolved=2" in text.splitlines()[1]
        listed = [ln for ln in text.splitlines() if "-> unresolved" in ln]
        assert [ln.split(" ")[0] for ln in listed] == [hex(int(b)) for b in _bits(xs)]
        assert all("# random; Ziv undecided at 1024 bits, not exact" in ln for ln in listed), listed
        assert bank.check(ops=["exp"], dtypes=["float32"], full=True) == []     # still undecided
        bf = bank.load(t)
        assert len(bf.expected) == 153 and [u.tag for u in bf.unresolved] == ["random", "random"]

        # more than MAX_UNRESOLVED: refresh refuses and writes nothing
        before = _snapshot(bank_copy)
        _undecidable(mp, arrays[0][-(bank.MAX_UNRESOLVED + 1):])
        with pytest.raises(bank.BankError, match=rf"more than {bank.MAX_UNRESOLVED} inputs.*exp/float32"):
            bank.refresh(["exp"], ["float32"], progress=False, log=_quiet)
        assert _snapshot(bank_copy) == before

    # with the real oracle, --full decides them again: the bank is stale
    problems = bank.check(ops=["exp"], dtypes=["float32"], full=True)
    assert len(problems) == 2 and all("listed unresolved, but mpmath now decides" in q for q in problems)
    assert all(f"{rel}:{3 + 154}" in q or f"{rel}:{3 + 155}" in q for q in problems), problems

    # an unresolved line deleted (counts fixed) is a missing input; more than the bound fails
    _edit_file(bank_copy, rel, lambda s: s.replace(listed[0] + "\n", "").replace("unresolved=2", "unresolved=1"))
    problems = bank.check(ops=["exp"], dtypes=["float32"], verify=False)
    assert len(problems) == 1 and "1 of the generator's 155 inputs are missing" in problems[0], problems
    assert f"unresolved): {listed[0].split()[0]} (random) (edited" in problems[0], problems
    lines = (bank_copy / rel).read_text().splitlines(keepends=True)
    for k in range(3, 3 + bank.MAX_UNRESOLVED + 1):
        lines[k] = lines[k].split(" -> ")[0] + " -> unresolved   # special; forged\n"
    lines[1] = lines[1].replace("cases=153 unresolved=1", f"cases={153 - bank.MAX_UNRESOLVED - 1} "
                                f"unresolved={bank.MAX_UNRESOLVED + 2}")
    _edit_file(bank_copy, rel, lambda _t: "".join(lines))
    _edit_manifest(bank_copy, lambda m: m["files"][rel].update(cases=153 - bank.MAX_UNRESOLVED - 1))
    problems = bank.check(ops=["exp"], dtypes=["float32"], verify=False)
    assert any(f"{bank.MAX_UNRESOLVED + 2} unresolved inputs, more than the {bank.MAX_UNRESOLVED} allowed"
               in q for q in problems), problems


# ---------------------------------------------------------------- leftovers, killed refreshes, finish
def test_leftover_temp_and_lock_files_are_reported_and_finish_cleans_them(bank_copy, capsys):
    from nbx import cli
    before = _snapshot(bank_copy)
    (bank_copy / bank.LOCK).write_text("")                          # nobody holds it
    (bank_copy / "exp" / ".float32.txt.tmp-12345").write_text("half a file")
    (bank_copy / ".refresh-journal.json.k2j4x9.tmp").write_text("{")
    problems = bank.check(ops=OPS2, dtypes=DTYPES2)
    assert len(problems) == 3, problems
    assert any(str(bank_copy / bank.LOCK) in q and "no process holds it" in q for q in problems)
    assert sum("leftover temp file" in q for q in problems) == 2
    assert all("`nbx bank finish` removes it" in q for q in problems), problems

    assert cli.main(["bank", "finish"]) == 0
    out = capsys.readouterr().out
    assert "no refresh pending, 2 leftover temp file(s) and 1 leftover lock file removed" in out, out
    assert "removed exp/.float32.txt.tmp-12345" in out
    assert _snapshot(bank_copy) == before and not (bank_copy / bank.LOCK).exists()
    assert bank.check(ops=OPS2, dtypes=DTYPES2) == []


def test_check_reports_a_lock_held_by_a_running_writer(bank_copy):
    with bank.storage.lock(bank_copy):
        problems = bank.check(ops=OPS2, dtypes=DTYPES2, verify=False)
    assert len(problems) == 1 and "a refresh or finish is running now" in problems[0], problems
    assert bank.check(ops=OPS2, dtypes=DTYPES2, verify=False) == []


def _dotfiles(base: Path) -> list[str]:
    return sorted(p.relative_to(base).as_posix() for p in base.rglob(".*"))


@pytest.mark.parametrize("point,n", [("stage", 3), ("rename", 2), ("rename", 7)],
                         ids=["while-staging", "after-one-rename", "before-the-manifest-rename"])
def test_killed_refresh_is_restored_by_finish(bank_copy, monkeypatch, capsys, point, n):
    """A real refresh SIGKILLed while staging (before the journal) or while renaming (after it; the
    7th rename is the manifest's): `nbx bank finish` leaves a whole bank that passes the check."""
    from nbx import cli
    before = _snapshot(bank_copy)
    _kill_refresh(bank_copy, point, n)
    left = _dotfiles(bank_copy)
    assert bank.LOCK in left and any(bank.is_temp(Path(x).name) for x in left), left
    after = _snapshot(bank_copy)
    renamed = sorted(k for k in before if after.get(k) != before[k])
    if point == "stage":
        assert bank.JOURNAL not in left and renamed == []            # the old bank, whole
    else:
        assert bank.JOURNAL in left and len(renamed) == n - 1 and bank.MANIFEST not in renamed
    problems = bank.check(ops=OPS2, dtypes=DTYPES2, verify=False)
    assert problems and all("nbx bank finish" in q for q in problems), problems

    assert cli.main(["bank", "finish"]) == 0
    out = capsys.readouterr().out
    assert ("completed an interrupted refresh" if point == "rename" else "no refresh pending") in out, out
    assert "1 leftover lock file removed" in out
    assert _dotfiles(bank_copy) == []
    _assert_matches_manifest(bank_copy)
    with monkeypatch.context() as mp:
        if point == "rename":
            mp.setattr(bank.generate, "N_RANDOM", 40)     # the bank is now wholly the killed refresh's
        else:
            assert _snapshot(bank_copy) == before
        assert bank.check(ops=OPS2, dtypes=DTYPES2) == []


def _tamper_temp(base: Path, journal: dict) -> str:
    r = journal["renames"][2]                    # a file not yet renamed
    (base / r["from"]).write_text((base / r["from"]).read_text().replace("0x", "0X", 1))
    return "has sha256"


def _tamper_temp_and_its_hash(base: Path, journal: dict) -> str:
    r = journal["renames"][2]
    p = base / r["from"]
    p.write_text(p.read_text().replace("# random", "# special", 1))
    r["sha256"] = bank.sha256(p.read_bytes())
    return "the staged manifest does not list"


def _not_a_bank_file(base: Path, journal: dict) -> str:
    r = journal["renames"][2]
    new = str(Path(r["dest"]).with_name("float128.txt"))
    (base / r["from"]).rename(base / Path(r["from"]).with_name(f".float128.txt.tmp-{r['from'].rsplit('-', 1)[1]}"))
    r["from"] = str(Path(r["from"]).with_name(f".float128.txt.tmp-{r['from'].rsplit('-', 1)[1]}"))
    r["dest"] = new
    return "is not the bank file of any target"


def _outside_the_bank(base: Path, journal: dict) -> str:
    r = journal["renames"][2]
    top = Path(r["dest"]).parts[0]
    outside = base.parent / "outside"
    shutil.move(base / top, outside)
    (base / top).symlink_to(outside)
    return "outside the bank"


def _a_path_escape(base: Path, journal: dict) -> str:
    journal["renames"][2]["dest"] = "../" + journal["renames"][2]["dest"]
    return "malformed refresh journal, rename 2"


TAMPERS = [_tamper_temp, _tamper_temp_and_its_hash, _not_a_bank_file, _outside_the_bank, _a_path_escape]


@pytest.mark.parametrize("tamper", TAMPERS, ids=lambda f: f.__name__.strip("_"))
def test_finish_refuses_a_tampered_journal_and_changes_nothing(bank_copy, capsys, tamper):
    from nbx import cli
    _kill_refresh(bank_copy, "rename", 2)
    j = bank_copy / bank.JOURNAL
    journal = json.loads(j.read_text())
    words = tamper(bank_copy, journal)
    j.write_text(json.dumps(journal))
    before = {k: v for k, v in _snapshot(bank_copy).items() if k != bank.LOCK}
    assert cli.main(["bank", "finish"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"nbx bank finish: {j}") and words in out, out
    assert "nothing was changed" in out and "git checkout reference_bank" in out
    assert {k: v for k, v in _snapshot(bank_copy).items() if k != bank.LOCK} == before
    problems = bank.check(ops=OPS2, dtypes=DTYPES2)
    assert len(problems) == 1 and words in problems[0], problems
    with pytest.raises(bank.BankError, match=re.escape(words)):
        bank.load_manifest()                               # a reader does not apply it either


def test_refresh_of_a_read_only_bank_exits_3_before_computing(tmp_path):
    """A bank directory the user cannot write. Root writes anywhere, so a root test runs the command
    without the capabilities that allow it (setpriv), as any other user would run it."""
    base = tmp_path / "bank"
    base.mkdir()
    shutil.copy(REPO / "reference_bank" / bank.MANIFEST, base / bank.MANIFEST)
    prefix = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: no directory is read-only to root")
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]
    os.chmod(base, 0o555)
    try:
        env = {**os.environ, "NBX_BANK": str(base), "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
        p = subprocess.run([*prefix, sys.executable, "-m", "nbx", "bank", "refresh", "--op", "exp",
                            "--progress", "lines"], cwd=REPO, env=env, capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 3, (p.stdout, p.stderr)
        assert p.stdout == "" and len(p.stderr.splitlines()) == 1, p.stderr   # no progress: nothing computed
        assert p.stderr.startswith(f"nbx bank refresh: cannot write to {base} (Permission denied)"), p.stderr
        assert sorted(x.name for x in base.iterdir()) == [bank.MANIFEST]
    finally:
        os.chmod(base, 0o755)
