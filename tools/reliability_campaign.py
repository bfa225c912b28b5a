"""Issue 19's reliability campaign, rerun on temp copies (interpreter backend): prints counts.

    python tools/reliability_campaign.py [--quick]

- bank: corruptions of a copy of reference_bank/ (NBX_BANK), each checked by `nbx bank check`
  (and `--full --op` for edits whose manifest hash was updated to match): caught / tried;
- refresh kills: `nbx bank refresh` SIGKILLed at random moments, then `nbx bank check`: torn / killed
  (torn: check fails on anything but the pending journal or temp files it names, with their fix);
- roll-forward: tests/test_bank.py's kill-after-commit-point + three concurrent readers: crashes / trials;
- fuzz: the bad-input fuzz test (NBX_FUZZ_EXAMPLES): failures / calls;
- runs: two `nbx run` into one --out at once: trials where one ran and the other was refused (exit 2).
"""
from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "NBX_BACKEND": "interpreter", "PYTHONPATH": str(REPO)}


def nbx(*args, bank=None, timeout=600):
    env = dict(ENV, **({"NBX_BANK": str(bank)} if bank else {}))
    return subprocess.run([sys.executable, "-m", "nbx", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def copy_bank(tmp: Path) -> Path:
    d = Path(tempfile.mkdtemp(dir=tmp))
    shutil.copytree(REPO / "reference_bank", d / "bank")
    return d / "bank"


def _manifest(b):
    return json.loads((b / "MANIFEST.json").read_text())


def _write_manifest(b, m):
    (b / "MANIFEST.json").write_text(json.dumps(m, indent=1))


def _data_line(path: Path) -> int:
    lines = path.read_text().splitlines()
    return next(i for i in range(len(lines) - 1, -1, -1) if lines[i] and not lines[i].startswith("#"))


def corruptions(rng):
    """(label, function(bank) -> needs_full_check_op or None)."""
    import hashlib
    out = []

    def flip(rel):
        def f(b):
            p = b / rel
            data = bytearray(p.read_bytes())
            i = rng.randrange(len(data) // 2, len(data))
            data[i] = ord("0") if data[i] != ord("0") else ord("1")
            p.write_bytes(bytes(data))
        return f

    def rehashed(rel):
        def f(b):
            p = b / rel
            lines = p.read_text().splitlines(keepends=True)
            i = _data_line(p)
            fields = lines[i].split()
            last = fields[-1]
            fields[-1] = last[:-1] + ("1" if last[-1] != "1" else "2")   # the expected value's last digit
            lines[i] = " ".join(fields) + "\n"
            p.write_text("".join(lines))
            m = _manifest(b)
            m["files"][rel]["sha256"] = hashlib.sha256(p.read_bytes()).hexdigest()
            _write_manifest(b, m)
            return m["files"][rel]["op"]
        return f

    def meta(rel, key, value):
        def f(b):
            m = _manifest(b)
            m["files"][rel][key] = value
            _write_manifest(b, m)
        return f

    def top(key, value):
        def f(b):
            m = _manifest(b)
            m[key] = value
            _write_manifest(b, m)
        return f

    def stray(rel):
        def f(b):
            (b / rel).parent.mkdir(parents=True, exist_ok=True)
            (b / rel).write_text("# stray\n")
        return f

    def delete(rel):
        return lambda b: (b / rel).unlink()

    files = sorted(_manifest(REPO / "reference_bank")["files"])
    for rel in rng.sample(files, 12):
        out.append((f"byte flip {rel}", flip(rel)))
    for rel in rng.sample([f for f in files if "float32" in f], 5):
        out.append((f"edit+rehash {rel}", rehashed(rel)))
    rel = "exp/float32.txt"
    out += [("meta cases", meta(rel, "cases", 3)), ("meta params", meta(rel, "params", {"x": 1})),
            ("meta dtype", meta(rel, "dtype", "float64")), ("meta out", meta(rel, "out", "float16")),
            ("meta op", meta(rel, "op", "log")), ("top seed", top("seed", 1)),
            ("top mpmath", top("mpmath", "0.1")), ("top generator_version", top("generator_version", 99))]
    out += [(f"stray {r}", stray(r)) for r in ("add/float128.txt", "notanop/float32.txt",
                                               "exp/float32.txt.orig", "exp/.float32.txt.tmp-123")]
    out += [("delete exp/float32.txt", delete("exp/float32.txt"))]
    return out


def bank_campaign(tmp, rng):
    caught = tried = 0
    missed = []
    for label, fn in corruptions(rng):
        b = copy_bank(tmp)
        op = fn(b)
        tried += 1
        r = nbx("bank", "check", bank=b)
        ok = r.returncode != 0
        if not ok and op:
            ok = nbx("bank", "check", "--full", "--op", op, bank=b).returncode != 0
            label += " (by --full)"
        caught += ok
        if not ok:
            missed.append(label)
        shutil.rmtree(b.parent)
    return caught, tried, missed


def kill_campaign(tmp, rng, n):
    torn = 0
    notes = []
    for _ in range(n):
        b = copy_bank(tmp)
        env = dict(ENV, NBX_BANK=str(b))
        p = subprocess.Popen([sys.executable, "-m", "nbx", "bank", "refresh", "--op", "exp", "--op", "add",
                              "--op", "sin"], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 8.0))
        p.kill()
        p.wait()
        r = nbx("bank", "check", bank=b)
        text = r.stdout + r.stderr
        if r.returncode != 0 and not re.search(r"journal|temp", text, re.I):
            torn += 1
            notes.append(text.strip().splitlines()[-1][:200] if text.strip() else "no output")
        shutil.rmtree(b.parent)
    return torn, n, notes


def pytest_count(args, env=None):
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=REPO,
                       env=dict(ENV, **(env or {})), capture_output=True, text=True, timeout=900)
    return r


def runs_campaign(tmp, n):
    refused = 0
    for i in range(n):
        out = Path(tempfile.mkdtemp(dir=tmp)) / "out"
        args = [sys.executable, "-m", "nbx", "run", "--op", "exp", "--dtype", "float32", "--profile", "ci",
                "--out", str(out), "--quiet"]
        ps = [subprocess.Popen(args, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(2)]
        res = [(p.wait(), p.stderr.read()) for p in ps]
        codes = sorted(c for c, _ in res)
        if codes == [0, 2] and any("in use" in e for c, e in res if c == 2):
            refused += 1
    return refused, n


def main():
    quick = "--quick" in sys.argv
    rng = random.Random(19)
    tmp = Path(tempfile.mkdtemp(prefix="nbx-campaign-"))
    t0 = time.time()
    try:
        c, t, missed = bank_campaign(tmp, rng)
        print(f"bank corruptions: {c}/{t} caught" + (f"; missed: {missed}" if missed else ""), flush=True)
        k = 4 if quick else 8
        torn, killed, notes = kill_campaign(tmp, rng, k)
        print(f"refresh kills: {torn}/{killed} torn" + (f"; {notes}" if notes else ""), flush=True)
        trials = 2 if quick else 5
        crashes = 0
        for _ in range(trials):
            r = pytest_count(["tests/test_bank.py", "-k", "three_readers_at_once"])
            crashes += r.returncode != 0
        print(f"concurrent roll-forward: {crashes}/{trials} trials crashed (3 readers each)", flush=True)
        n = "2000" if quick else "6000"
        r = pytest_count(["tests/test_bad_input.py", "-k", "test_fuzz_bad_arguments"], {"NBX_FUZZ_EXAMPLES": n})
        m = re.search(r"ran (\d+) examples .*?: (\d+) op calls", r.stdout)
        print(f"fuzz: {'0' if r.returncode == 0 else 'some (test failed)'} crashes / "
              f"{m.group(2) if m else '?'} calls ({m.group(1) if m else '?'} examples)", flush=True)
        ok, n2 = runs_campaign(tmp, 2 if quick else 4)
        print(f"two nbx run into one --out: {ok}/{n2} trials one ran and the other exited 2 naming the holder",
              flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"campaign took {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
