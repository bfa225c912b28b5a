"""The reference bank: text format, refresh (atomic, with a change summary), check, load, and what a
broken bank does to the `bank` suite and the gate.

Every test works on a bank under tmp_path (NBX_BANK), never on the committed reference_bank/.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from nbx import dtype as D
from nbx.harness import bank, gate, runner
from nbx.harness.measurement import Measurement
from nbx.harness.targets import Target

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
    Target("exp", {}, D.float32),                      # float unary
    Target("exp", {}, D.bfloat16),                     # float unary, ml_dtypes format
    Target("bitwise_not", {}, D.int8),                 # integer unary, 1-byte operands
    Target("add", {}, D.int32),                        # integer binary
    Target("add", {"alpha": 2}, D.float32),            # a parameter variant (label add:alpha=2)
    Target("eq", {}, D.float32),                       # binary with a bool output
    Target("logical_not", {}, D.bool_),                # bool in, bool out
    Target("where", {}, D.float16),                    # ternary with a bool operand
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
    t = Target("eq", {}, D.float32)
    out = bank.out_dtype(t)
    assert out is D.bool_
    arrays, tags = bank.bank_inputs(t)
    bits, ok = bank.expected_bits(t, arrays, out)
    assert set(np.unique(bits[ok]).tolist()) <= {0, 1}
    assert set(np.unique(bits[ok]).tolist()) == {0, 1}         # the specials include equal pairs


def test_parse_rejects_malformed_lines_and_missing_header():
    t = Target("exp", {}, D.float32)
    out = bank.out_dtype(t)
    arrays, tags = bank.bank_inputs(t)
    bits, ok = bank.expected_bits(t, arrays, out)
    text = bank.render(t, arrays, tags, bits, ok, out)
    lines = text.splitlines()
    lines[3] = lines[3].replace(" -> ", " => ")         # the first case line
    bad = "\n".join(lines) + "\n"
    with pytest.raises(bank.BankError, match=r"some/file\.txt:4: malformed"):
        bank.parse(bad, "some/file.txt")
    with pytest.raises(bank.BankError, match="no header"):
        bank.parse("\n".join(text.splitlines()[3:]), "x.txt")


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
    monkeypatch.setattr(bank, "N_RANDOM", 40)
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

    t = Target("exp", {}, D.float32)
    with pytest.raises(bank.BankError, match=r"exp/float32\.txt.*sha256"):
        bank.load(t)

    bank._MANIFEST.clear()
    m = runner.measure(t, "bank", "ci", 0, "test-backend")
    assert m.error.startswith("BankError") and "float32.txt" in m.error
    fails = gate.decide([m], {"budgets": {"exp|float32": {"max_ulp": 10.0}}}, ops=["exp"],
                        dtypes=["float32"], bank_problems=problems)
    reasons = [f.reason for f in fails]
    assert any(r.startswith("raised: BankError") for r in reasons), reasons
    assert any(f.key == ("bank", "", "") for f in fails)

    # an intact neighbour still measures
    m2 = runner.measure(Target("exp", {}, D.float16), "bank", "ci", 0, "test-backend")
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
        bank.load(Target("add", {}, D.float16))


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
        bank.load(Target("exp", {}, D.float32))


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


def test_refresh_interrupted_while_writing_temps_leaves_old_bank_whole(bank_copy, monkeypatch):
    before = _snapshot(bank_copy)
    real = bank._atomic_write_bytes
    calls = []

    def dies_on_second(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt("killed while writing temp files")
        return real(path, data)

    with monkeypatch.context() as mp, pytest.raises(KeyboardInterrupt):
        mp.setattr(bank, "N_RANDOM", 40)               # the refresh would change every file
        mp.setattr(bank, "_atomic_write_bytes", dies_on_second)
        bank.refresh(OPS2, DTYPES2, progress=False, log=_quiet)
    after = _snapshot(bank_copy)
    left = {k for k in after if k not in before}
    assert left and all(Path(k).name.startswith(".") and ".tmp-" in k for k in left), left
    assert {k: after[k] for k in before} == before     # every bank file and the manifest unchanged
    _assert_matches_manifest(bank_copy)
    bank._MANIFEST.clear()
    # the leftovers are reported (the bank itself is whole) and `nbx bank finish` removes them
    problems = bank.check(ops=OPS2, dtypes=DTYPES2)
    assert len(problems) == len(left) and all("leftover temp file" in q and "nbx bank finish" in q
                                              for q in problems), problems
    assert bank.finish() == {"rolled_forward": False, "temps": len(left)}
    assert _snapshot(bank_copy) == before
    assert bank.check(ops=OPS2, dtypes=DTYPES2) == []


def test_refresh_interrupted_while_renaming_is_rolled_forward(bank_copy, monkeypatch):
    """Killed between renames (after the journal, the commit point): the next reader of the bank
    finishes the refresh, and the bank is whole again (the new one)."""

    class OsDiesOnSecondReplace:
        n = 0

        def __getattr__(self, name):
            return getattr(os, name)

        def replace(self, a, b):
            type(self).n += 1
            if type(self).n == 3:           # 1: the journal itself, 2: the first bank file
                raise KeyboardInterrupt("killed between renames")
            return os.replace(a, b)

    with monkeypatch.context() as mp, pytest.raises(KeyboardInterrupt):
        mp.setattr(bank, "N_RANDOM", 40)
        mp.setattr(bank, "os", OsDiesOnSecondReplace())
        bank.refresh(OPS2, DTYPES2, progress=False, log=_quiet)
    assert bank.os is os
    assert (bank_copy / bank.JOURNAL).exists()
    assert not (bank_copy / bank.LOCK).exists()        # released (and unlinked) on the way out
    bank._MANIFEST.clear()
    # check reports the pending journal and the command that finishes it; it changes nothing
    problems = bank.check(ops=OPS2, dtypes=DTYPES2, verify=False)
    assert len(problems) == 1 and bank.JOURNAL in problems[0] and "nbx bank finish" in problems[0]
    assert (bank_copy / bank.JOURNAL).exists()
    bank.load_manifest()                               # a reader finishes it
    assert not (bank_copy / bank.JOURNAL).exists()
    _assert_matches_manifest(bank_copy)
    assert not [p for p in bank_copy.rglob("*") if ".tmp-" in p.name or p.name == bank.LOCK]
    with monkeypatch.context() as mp:
        mp.setattr(bank, "N_RANDOM", 40)               # the new bank is the patched generator's
        assert bank.check(ops=OPS2, dtypes=DTYPES2, verify=False) == []


def test_killed_refresh_subprocess_leaves_old_bank_whole(tmp_path, monkeypatch):
    """SIGKILL a real `python -m nbx bank refresh` while it computes: the old bank stays whole."""
    old = tmp_path / "old"
    old.mkdir()
    with monkeypatch.context() as mp:
        mp.setattr(bank, "N_RANDOM", 40)              # the old bank differs from what refresh writes
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
        mp.setattr(bank, "N_RANDOM", 40)              # the old bank is the patched generator's
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
    assert all("sha256" not in q for q in problems), problems     # the hashes were kept consistent


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


def test_pending_and_malformed_journal_are_reported_with_the_fix(bank_copy):
    j = bank_copy / bank.JOURNAL
    j.write_text(json.dumps({"renames": [["exp/.float32.txt.tmp-1", "exp/float32.txt"]]}))
    problems = bank.check(ops=OPS2, dtypes=DTYPES2)
    assert len(problems) == 1 and str(j) in problems[0] and "`nbx bank finish`" in problems[0]
    for bad, why in (("{not json", "not JSON"), ('{"renames": 3}', "no list of renames"),
                     ('{"renames": [["../x", "/etc/passwd"]]}', "rename 0")):
        j.write_text(bad)
        problems = bank.check(ops=OPS2, dtypes=DTYPES2)
        assert len(problems) == 1 and str(j) in problems[0] and "malformed refresh journal" in problems[0]
        assert why in problems[0], problems
        with pytest.raises(bank.BankError, match=r"\.refresh-journal\.json: malformed refresh journal"):
            bank.load_manifest()
    j.unlink()
    assert bank.check(ops=OPS2, dtypes=DTYPES2) == []


def test_sample_seed_is_fresh_each_run_printed_and_repeatable(bank_copy):
    logs: list[str] = []
    for _ in range(2):
        assert bank.check(ops=OPS2, dtypes=DTYPES2, sample=5, log=logs.append) == []
    seeds = [int(line.split("--seed ")[1].rstrip(")")) for line in logs]
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
    from oracles import ORACLES
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
from nbx.harness import bank

class Os:                                   # os, except that the 3rd replace SIGKILLs this process:
    def __getattr__(self, name):            # 1st the journal (the commit point), 2nd a bank file
        return getattr(os, name)

n = 0
def replace(a, b):
    global n
    n += 1
    if n == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    os.replace(a, b)

bank.os = Os()
bank.os.replace = replace
bank.N_RANDOM = 40                          # every file changes
bank.refresh(sys.argv[1].split(","), sys.argv[2].split(","), progress=False, log=lambda *a: None)
"""

_READER = """
import sys, time
from nbx.harness import bank
from nbx.harness.targets import targets
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
    p = subprocess.run([sys.executable, "-c", _KILLED_REFRESH, ops, dts], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == -signal.SIGKILL, p.stderr
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
        mp.setattr(bank, "N_RANDOM", 40)        # the bank is now wholly the killed refresh's
        assert bank.check(ops=OPS2, dtypes=DTYPES2) == []
