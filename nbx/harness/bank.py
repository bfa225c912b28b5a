"""The reference bank: per op (variant) and dtype, inputs and correctly rounded outputs as bits.

Layout: reference_bank/<op>[@k=v,...]/<dtype>.txt, one case a line:
    0x3f800000 -> 0x402df854   # special
(inputs as hex bit patterns in their operand dtypes, then the expected output's bits), and
reference_bank/MANIFEST.json with the provenance (generator version, mpmath version and precision,
seed) and per file its sha256, case count, op, params, dtype and output dtype. Loading needs no mpmath.

A refresh computes everything first; then, holding the bank's lock (flock on .lock), it writes each
file and the new manifest to temporary siblings (fsync) and commits by writing a journal of the
renames (atomically); the renames follow, bank files first and the manifest last. Killed before
the journal exists, the old bank is whole (its temp files are removed by the next refresh or
`nbx bank finish`); killed after, the next reader finishes the renames under the lock
(roll_forward) and the new bank is whole. No state in between is whole to git: it shows the journal
and temp files as untracked, and the bank files renamed so far disagree with the old manifest's
hashes, so `nbx bank check` (and the suite's check of the committed bank) fails on it.
`nbx bank check` verifies the manifest against the files and the registry; `--full` recomputes
every expected value with mpmath.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import mpmath
import numpy as np

from oracles import ORACLES
from oracles.formats import FORMATS

from .. import dtype as D
from . import cases as C
from .files import fsync_dir
from . import ulp
from .measure import Batch, bits_of, exact_expected, misrounded, oracle_params, round_exact_or_ziv
from .order import order_error
from .progress import Progress
from .targets import Target, targets

GENERATOR_VERSION = 1
SEED = 20261202
ROOT = Path(__file__).resolve().parents[2] / "reference_bank"
MANIFEST = "MANIFEST.json"
N_RANDOM = 96
N_SPECIAL_PAIRS = 14


class BankError(RuntimeError):
    """A corrupted, stale or missing bank: never a pass."""


def root() -> Path:
    return Path(os.environ.get("NBX_BANK", ROOT))


def relpath(t: Target) -> str:
    label = t.label.replace(":", "@")
    return f"{label}/{t.dtype.name}.txt"


def out_dtype(t: Target) -> D.DType:
    return t.out_dtype


# ---------------------------------------------------------------- cases and expected values
def bank_inputs(t: Target) -> tuple[list[np.ndarray], list[str]]:
    rng = C.rng_for(SEED, t.label, t.dtype.name, "bank")
    dts = t.operand_dtypes()
    arity = len(dts)

    def sample(d, n, i):
        if d.is_bool:
            return rng.integers(0, 2, n).astype(bool)
        if d.is_float:
            return C.stratified(d, n, rng, ORACLES[t.op].domain[i])
        return C.int_operand(t, i, n, rng, d)

    if arity == 1:
        sp = C.role_specials(t, 0, C.special_values(t.dtype), t.dtype)
        rnd = sample(t.dtype, N_RANDOM, 0)
        return [np.concatenate([sp, rnd])], ["special"] * len(sp) + ["random"] * N_RANDOM
    sps = []
    for i, d in enumerate(dts):
        s = C.special_values(d)
        if len(s) > N_SPECIAL_PAIRS:
            s = s[np.linspace(0, len(s) - 1, N_SPECIAL_PAIRS).astype(int)]
        sps.append(C.role_specials(t, i, s, d))
    if arity == 2:
        g = np.meshgrid(sps[0], sps[1], indexing="ij")
        special = [x.reshape(-1) for x in g]
    else:
        m = max(len(s) for s in sps)
        special = [np.resize(s, m) for s in sps]
    rnd = [sample(d, N_RANDOM, i) for i, d in enumerate(dts)]
    arrays = [np.concatenate([s, r]) for s, r in zip(special, rnd)]
    return arrays, ["special"] * len(special[0]) + ["random"] * N_RANDOM


def expected_bits(t: Target, arrays, out: D.DType) -> tuple[np.ndarray, np.ndarray]:
    """Correctly rounded expected outputs (mpmath, Ziv) as bits, and which cases resolved."""
    oracle = ORACLES[t.op]
    params = oracle_params(t, out)
    if not out.is_float:
        e = exact_expected(t, arrays, out, params)
        return bits_of(e).astype(np.uint64), np.ones(len(e), bool)
    fmt = FORMATS[out.name]
    vals = t.oracle_values(arrays, out)
    bits = np.zeros(len(vals[0]), dtype=np.uint64)
    ok = np.ones(len(vals[0]), bool)
    for i, row in enumerate(zip(*vals)):
        row = tuple(float(v) for v in row)
        rr = round_exact_or_ziv(oracle, row, params, fmt)
        bits[i], ok[i] = rr.bits, rr.resolved
    return bits, ok


# ---------------------------------------------------------------- file format
def _header(t: Target, out: D.DType, count: int, unresolved: int) -> list[str]:
    return [f"# nbx reference bank: op={t.op} params={json.dumps(t.params, sort_keys=True)} "
            f"dtype={t.dtype.name} operands={','.join(d.name for d in t.operand_dtypes())} out={out.name}",
            f"# generator={GENERATOR_VERSION} seed={SEED} mpmath={mpmath.__version__} "
            f"rounding=ziv(p+32 .. 1024 bits) cases={count} unresolved_dropped={unresolved}",
            "# inputs (hex bits) -> expected output (hex bits)   # tag"]


def render(t: Target, arrays, tags, bits, ok, out: D.DType) -> str:
    lines = _header(t, out, int(ok.sum()), int((~ok).sum()))
    in_bits = [bits_of(a) for a in arrays]
    for i in range(len(bits)):
        if not ok[i]:
            continue
        ins = " ".join(hex(int(b[i])) for b in in_bits)
        lines.append(f"{ins} -> {hex(int(bits[i]))}   # {tags[i]}")
    return "\n".join(lines) + "\n"


@dataclass
class BankFile:
    operands: list[D.DType]
    out: D.DType
    inputs: list[np.ndarray]
    expected: np.ndarray          # bits
    tags: list[str]


def parse(text: str, path: str = "") -> BankFile:
    operands = out = None
    ins, exp, tags = [], [], []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            if "operands=" in line:
                kv = dict(w.split("=", 1) for w in line[1:].split() if "=" in w)
                operands = [D.DTYPES[x] for x in kv["operands"].split(",")]
                out = D.DTYPES[kv["out"]]
            continue
        if not line.strip():
            continue
        try:
            body, _, tag = line.partition("#")
            left, right = body.split("->")
            ins.append([int(x, 16) for x in left.split()])
            exp.append(int(right.strip(), 16))
            tags.append(tag.strip())
        except ValueError as e:
            raise BankError(f"{path}:{n}: malformed bank line {line!r} ({e})") from None
    if operands is None:
        raise BankError(f"{path}: no header naming the operand and output dtypes")
    cols = list(zip(*ins)) if ins else [[] for _ in operands]
    arrays = []
    for d, col in zip(operands, cols):
        u = np.array(col, dtype=np.uint64).astype(d.uint_np if d.itemsize > 1 or d.is_bool else np.uint8)
        arrays.append(u.view(d.np) if not d.is_bool else u.astype(bool))
    return BankFile(operands, out, arrays, np.array(exp, dtype=np.uint64), tags)


_HEAD = (re.compile(r"# nbx reference bank: op=(?P<op>\S+) params=(?P<params>\{.*\}) dtype=(?P<dtype>\S+) "
                    r"operands=(?P<operands>\S+) out=(?P<out>\S+)$"),
         re.compile(r"# generator=(?P<generator>\d+) seed=(?P<seed>\d+) mpmath=(?P<mpmath>\S+) "
                    r"rounding=.* cases=(?P<cases>\d+) unresolved_dropped=(?P<dropped>\d+)$"))


def parse_header(text: str, path: str = "") -> dict:
    """The metadata of a bank file's first two header lines (render's _header)."""
    lines = text.splitlines()
    out = {}
    for n, rx in enumerate(_HEAD):
        m = rx.match(lines[n]) if n < len(lines) else None
        if m is None:
            got = lines[n] if n < len(lines) else "end of file"
            raise BankError(f"{path}:{n + 1}: malformed bank header {got!r} (expected {rx.pattern!r})")
        out.update(m.groupdict())
    try:
        out["params"] = json.loads(out["params"])
    except json.JSONDecodeError as e:
        raise BankError(f"{path}:1: malformed params in the bank header ({e})") from None
    for k in ("generator", "seed", "cases", "dropped"):
        out[k] = int(out[k])
    return out


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


JOURNAL = ".refresh-journal.json"
LOCK = ".lock"
TMP_MARK = ".tmp-"


def is_temp(name: str) -> bool:
    """A temporary sibling written by a refresh (`.<name>.tmp-<pid>`), never a bank file."""
    return name.startswith(".") and TMP_MARK in name


@contextlib.contextmanager
def _lock(base: Path):
    """The bank's exclusive lock: flock on base/LOCK, held by a refresh while it writes and publishes
    and by whoever rolls an interrupted refresh forward, so those never interleave.

    The holder unlinks the lock file before releasing it, so a finished bank leaves nothing for git
    to see; a waiter that then locks the unlinked file notices (its inode is no longer the path's)
    and retries on a fresh one, so two holders never coexist."""
    path = base / LOCK
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise BankError(f"{path}: cannot create the bank's lock file ({e.strerror}); the bank "
                            "directory must be writable to refresh it or finish a refresh") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        os.close(fd)


def _read_journal(base: Path) -> list[tuple[str, str]] | None:
    """The renames a pending journal lists (None: no journal). A journal is only ever written whole
    (os.replace), so one that does not parse was damaged by something else: a BankError naming it."""
    j = base / JOURNAL
    try:
        text = j.read_text()
    except FileNotFoundError:
        return None
    fix = (f"the bank may be half published: remove {j} and run `nbx bank refresh` for the ops it "
           "concerned, then `nbx bank check`")
    try:
        plan = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BankError(f"{j}: malformed refresh journal, not JSON ({e}); {fix}") from None
    renames = plan.get("renames") if isinstance(plan, dict) else None
    if not isinstance(renames, list):
        raise BankError(f"{j}: malformed refresh journal, no list of renames under \"renames\"; {fix}")
    out = []
    for k, r in enumerate(renames):
        ok = (isinstance(r, list) and len(r) == 2 and all(isinstance(x, str) for x in r)
              and is_temp(Path(r[0]).name) and not any(".." in Path(x).parts or Path(x).is_absolute()
                                                       for x in r))
        if not ok:
            raise BankError(f"{j}: malformed refresh journal, rename {k} is {r!r} (expected "
                            "[\".../.<name>.tmp-<pid>\", \"<path in the bank>\"]); " + fix)
        out.append((r[0], r[1]))
    return out


def _remove_temps(base: Path) -> None:
    """Remove temp files of refreshes that died before their commit point. Only under the lock:
    every refresh writes its temps while holding it, so none of these is still being written."""
    for p in base.rglob(f".*{TMP_MARK}*"):
        if p.is_file() and is_temp(p.name):
            p.unlink()


def _roll_forward_locked(base: Path) -> bool:
    renames = _read_journal(base)
    if renames is None:
        return False                  # nothing pending, or another process finished it first
    dirs = {base}
    for tmp, dest in renames:
        if (base / tmp).exists():
            os.replace(base / tmp, base / dest)
        elif not (base / dest).exists():
            raise BankError(f"{base / JOURNAL}: {tmp} and {dest} are both missing; the refresh cannot "
                            f"be finished: remove {base / JOURNAL} and run `nbx bank refresh`")
        dirs.add((base / dest).parent)
    for d in sorted(dirs, reverse=True):
        fsync_dir(d)
    (base / JOURNAL).unlink()
    fsync_dir(base)
    _remove_temps(base)
    return True


def roll_forward(base: Path) -> bool:
    """Finish a refresh that was stopped after its journal was written; True if one was finished.
    Serialized by the bank's lock, so concurrent readers each either finish it or find it done."""
    if not (base / JOURNAL).exists():
        return False
    with _lock(base):
        return _roll_forward_locked(base)


def finish(base: Path | None = None) -> dict:
    """`nbx bank finish`: complete an interrupted refresh and remove leftover temp files."""
    base = base or root()
    if not base.is_dir():
        raise BankError(f"{base}: no bank directory")
    with _lock(base):
        temps = [p for p in base.rglob(f".*{TMP_MARK}*") if p.is_file() and is_temp(p.name)]
        rolled = _roll_forward_locked(base)
        _remove_temps(base)
    _MANIFEST.clear()
    return {"rolled_forward": rolled, "temps": len(temps)}


def load_manifest(base: Path | None = None) -> dict:
    base = base or root()
    roll_forward(base)
    return _read_manifest(base)


def _read_manifest(base: Path) -> dict:
    p = base / MANIFEST
    if not p.exists():
        raise BankError(f"{p}: no bank manifest; run `nbx bank refresh`")
    try:
        m = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise BankError(f"{p}: corrupted manifest ({e})") from None
    if not isinstance(m, dict) or not isinstance(m.get("files"), dict):
        raise BankError(f"{p}: corrupted manifest (no \"files\" object)")
    return m


def load(t: Target, base: Path | None = None, manifest: dict | None = None) -> BankFile:
    base = base or root()
    rel = relpath(t)
    p = base / rel
    if not p.exists():
        raise BankError(f"{p}: no bank file for {t.label} {t.dtype.name}; run `nbx bank refresh --op {t.op}`")
    data = p.read_bytes()
    manifest = manifest if manifest is not None else load_manifest(base)
    entry = manifest.get("files", {}).get(rel)
    if entry is None or entry["sha256"] != sha256(data):
        raise BankError(f"{p}: sha256 does not match the manifest (edited, corrupted or an interrupted "
                        "refresh); run `nbx bank refresh` for it")
    return parse(data.decode(), str(p))


# ---------------------------------------------------------------- measuring against the bank
def measure_bank(t: Target, acc) -> None:
    bf = load(t, manifest=_manifest_cache())
    if not bf.expected.size:
        return
    got = t.run(bf.inputs)
    out = D.from_numpy_dtype(got.dtype)
    if out is not bf.out:
        raise BankError(f"{t.label} {t.dtype.name}: the op now returns {out.name}, the bank holds {bf.out.name}")
    exp = bf.expected.astype(out.uint_np if out.itemsize > 1 or out.is_bool else np.uint8)
    if not out.is_float:
        e = exp.view(out.np) if not out.is_bool else exp.astype(bool)
        wrong = got != e
        acc.add(bf.inputs, got, Batch(wrong.astype(float), np.zeros(len(got), bool), wrong, exp, True))
        return
    fmt = FORMATS[out.name]
    ev = exp.view(out.np).astype(np.float64)
    with np.errstate(all="ignore"):
        err = ulp.ulp_error(got, ev, fmt)
    special = ulp.classify_specials(got, ev, fmt, zero_sign_matters=ORACLES[t.op].zero_sign_matters)["special"]
    not_cr = misrounded(got, exp, fmt, ORACLES[t.op].zero_sign_matters)
    order = order_error(t, t.oracle_values(bf.inputs, out), oracle_params(t, out), got)
    acc.add(bf.inputs, got, Batch(np.where(special, np.inf, err), special, not_cr, exp, False, order=order))


_MANIFEST = {}


def _manifest_cache() -> dict:
    key = str(root())
    if key not in _MANIFEST:
        _MANIFEST[key] = load_manifest()
    return _MANIFEST[key]


# ---------------------------------------------------------------- refresh and check
def _atomic_write_bytes(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return tmp


def refresh(ops=None, dtypes=None, base: Path | None = None, progress=True, log=print) -> dict:
    """Regenerate the bank files of the selected targets with mpmath; returns a change summary."""
    base = base or root()
    chosen = targets(ops, dtypes)
    bar = Progress(len(chosen), "nbx bank refresh") if progress else None
    new_files = {}
    for t in chosen:
        out = out_dtype(t)
        arrays, tags = bank_inputs(t)
        bits, ok = expected_bits(t, arrays, out)
        new_files[relpath(t)] = (t, out, render(t, arrays, tags, bits, ok, out).encode())
        if bar:
            bar.step(f"{t.label} {t.dtype.name}")
    base.mkdir(parents=True, exist_ok=True)
    # Everything from reading the manifest to the last rename happens under the lock: a concurrent
    # refresh (of other ops) publishes wholly before or after this one, and its manifest entries
    # are kept; a concurrent roll-forward cannot interleave with these renames.
    with _lock(base):
        _roll_forward_locked(base)
        _remove_temps(base)
        try:
            manifest = _read_manifest(base)
        except BankError:
            manifest = {"files": {}}
        if manifest.get("generator_version", GENERATOR_VERSION) != GENERATOR_VERSION:
            # entries of another generator stay stale: a partial refresh must not re-label them current
            log(f"bank refresh: manifest generator {manifest.get('generator_version')} != "
                f"{GENERATOR_VERSION}; dropping its entries (refresh every op to rebuild them)")
            manifest = {"files": {}}
        summary = _publish(base, manifest, new_files)
    _MANIFEST.clear()
    log(f"bank refresh: {len(new_files)} files, {summary['cases']} cases; added {len(summary['added'])}, "
        f"changed {len(summary['changed'])} ({summary['changed_cases']} case lines differ), "
        f"unchanged {len(summary['unchanged'])}")
    for rel in summary["changed"][:20]:
        log(f"  changed: {rel}")
    return summary


def _publish(base: Path, manifest: dict, new_files: dict) -> dict:
    """Write the changed files and the new manifest as temps, commit by the journal, rename.
    The caller holds the lock."""
    summary = {"added": [], "changed": [], "unchanged": [], "cases": 0, "changed_cases": 0}
    temps = []
    files = dict(manifest.get("files", {}))
    for rel, (t, out, data) in new_files.items():
        p = base / rel
        old = p.read_bytes() if p.exists() else None
        summary["cases"] += data.count(b"\n") - 3
        if old == data:
            summary["unchanged"].append(rel)
        else:
            (summary["changed"] if old is not None else summary["added"]).append(rel)
            if old is not None:
                a = set(old.decode().splitlines()[3:])
                b = set(data.decode().splitlines()[3:])
                summary["changed_cases"] += len(a ^ b)
            temps.append((_atomic_write_bytes(p, data), p))
        files[rel] = {"sha256": sha256(data), "cases": data.count(b"\n") - 3, "op": t.op,
                      "params": t.params, "dtype": t.dtype.name, "out": out.name}
    new_manifest = {"generator_version": GENERATOR_VERSION, "seed": SEED, "mpmath": mpmath.__version__,
                    "precision": "Ziv: p+32 bits doubling to 1024; unresolved cases dropped",
                    "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "files": dict(sorted(files.items()))}
    mtmp = _atomic_write_bytes(base / MANIFEST, (json.dumps(new_manifest, indent=1) + "\n").encode())
    for d in {p.parent for _, p in temps}:
        fsync_dir(d)
    # The commit point: a journal of the renames still to do, written atomically. Before it exists
    # the old bank is untouched; after it, any reader rolls the refresh forward. The manifest is
    # renamed last, so until the end the files renamed so far disagree with its hashes: a partly
    # renamed tree is never taken for a whole bank.
    plan = {"renames": [[str(t.relative_to(base)), str(p.relative_to(base))] for t, p in temps]
            + [[str(mtmp.relative_to(base)), MANIFEST]]}
    jtmp = _atomic_write_bytes(base / JOURNAL, json.dumps(plan).encode())
    os.replace(jtmp, base / JOURNAL)
    fsync_dir(base)
    _roll_forward_locked(base)
    return summary


def _in_scope(rel: str, ops, dtypes) -> bool:
    top, _, name = rel.partition("/")
    return ((not ops or top.split("@")[0] in ops)
            and (not dtypes or name.removesuffix(".txt") in dtypes))


def _entry_problems(rel: str, entry, t: Target | None, head: dict | None, n_lines: int | None) -> list[str]:
    """A manifest entry against the registry's target for its path and against the file's header."""
    where = f"{MANIFEST} entry {rel}"
    if not isinstance(entry, dict):
        return [f"{where}: not an object"]
    missing = [k for k in ("sha256", "cases", "op", "params", "dtype", "out") if k not in entry]
    if missing:
        return [f"{where}: lacks {', '.join(missing)}"]
    out = []
    if t is not None:
        want = {"op": t.op, "params": t.params, "dtype": t.dtype.name, "out": out_dtype(t).name}
        for k, v in want.items():
            if json.dumps(entry[k], sort_keys=True) != json.dumps(v, sort_keys=True):
                out.append(f"{where}: {k} is {entry[k]!r} but the registry's target for this path "
                           f"has {v!r}")
    if head is not None:
        for k in ("op", "params", "dtype", "out"):
            if json.dumps(entry[k], sort_keys=True) != json.dumps(head[k], sort_keys=True):
                out.append(f"{where}: {k} is {entry[k]!r} but the file's header says {head[k]!r}")
        if t is not None and head["operands"] != ",".join(d.name for d in t.operand_dtypes()):
            out.append(f"{rel}: header operands={head['operands']} but the registry's target has "
                       f"{','.join(d.name for d in t.operand_dtypes())}")
        if entry["cases"] != head["cases"] or entry["cases"] != n_lines:
            out.append(f"{where}: cases is {entry['cases']!r}; the file's header says {head['cases']} "
                       f"and it holds {n_lines} case lines")
    return out


def _inputs_problem(t: Target, bf: BankFile, dropped: int) -> str | None:
    """The file's inputs and tags must be the generator's (bank_inputs, from SEED), less the
    `dropped` cases Ziv could not resolve: anything else was edited, or the generator changed
    without a GENERATOR_VERSION bump."""
    arrays, tags = bank_inputs(t)
    gen = list(zip(*[bits_of(a).tolist() for a in arrays], tags))
    got = list(zip(*[bits_of(a).tolist() for a in bf.inputs], bf.tags))
    if len(got) + dropped != len(gen):
        return (f"{relpath(t)}: {len(got)} cases + {dropped} dropped, but the generator draws "
                f"{len(gen)} (edited, or the generator changed: run `nbx bank refresh --op {t.op}`)")
    k = 0
    for i, row in enumerate(got):
        while k < len(gen) and gen[k] != row:
            k += 1
        if k == len(gen):
            return (f"{relpath(t)}: case {i} ({' '.join(hex(x) for x in row[:-1])}, tag {row[-1]}) is not "
                    f"among the generator's inputs in order (edited, or the generator changed: "
                    f"run `nbx bank refresh --op {t.op}`)")
        k += 1
    return None


def check(base: Path | None = None, sample: int = 64, ops=None, verify=True, dtypes=None, *,
          seed: int | None = None, full: bool = False, log=None, progress: bool = False) -> list[str]:
    """Problems with the bank (empty list: healthy).

    Without mpmath: a pending or malformed refresh journal, leftover temp files, the manifest's
    provenance (generator version, seed, mpmath version) against every file header, each entry
    (sha256, case count, op, params, dtype, out) against its file and the registry's target for its
    path, the inputs against the generator's, coverage of every target, and files the manifest does
    not list. With verify: `sample` cases drawn with `seed` (default: a fresh one, logged) are
    recomputed with mpmath; with full, every case is. `log` receives the seed and the timing."""
    base = base or root()
    log = log or (lambda *_a, **_k: None)
    if not base.is_dir():
        return [f"{base}: no bank directory; run `nbx bank refresh`"]
    try:
        pending = _read_journal(base)
    except BankError as e:
        return [str(e)]
    if pending is not None:
        # mid-publish the files and the manifest disagree by construction: judge the bank after
        return [f"{base / JOURNAL}: a refresh was interrupted after its commit point with renames "
                f"pending; run `nbx bank finish` to complete it (any reader of the bank, such as "
                f"`nbx run`, also does), then `nbx bank check` again"]
    problems = []
    try:
        manifest = _read_manifest(base)
    except BankError as e:
        return [str(e)]
    files = manifest["files"]
    if manifest.get("generator_version") != GENERATOR_VERSION:
        problems.append(f"bank generator version {manifest.get('generator_version')} != "
                        f"{GENERATOR_VERSION}: stale")
    if manifest.get("seed") != SEED:
        problems.append(f"{base / MANIFEST}: seed {manifest.get('seed')!r} is not the generator's "
                        f"{SEED}")
    if not isinstance(manifest.get("mpmath"), str):
        problems.append(f"{base / MANIFEST}: no mpmath version recorded")

    reg = _registry_paths()
    for p in sorted(base.rglob("*")):
        if not p.is_file() and not p.is_symlink():
            continue
        rel = p.relative_to(base).as_posix()
        if rel in (MANIFEST, JOURNAL, LOCK):
            continue
        if is_temp(p.name):
            problems.append(f"{p}: leftover temp file of an interrupted refresh (the old bank is whole); "
                            "`nbx bank finish` removes it")
        elif rel not in files:        # whatever ops were asked for: a stray is never a bank file
            problems.append(f"{p}: stray file, not listed in {MANIFEST}"
                            + ("" if rel in reg else
                               " and no target of the registry has this path (op, params or dtype)"))

    for rel, entry in files.items():
        if rel not in reg:
            problems.append(f"{MANIFEST} entry {rel}: no target of the registry has this path "
                            "(unknown op, params or dtype)")
        if not _in_scope(rel, ops, dtypes):
            continue
        if not (base / rel).exists():
            problems.append(f"{base / rel}: listed in the manifest but missing")

    provenance = {}                 # (field, manifest value, header value) -> files
    loaded = []
    for t in targets(ops, dtypes):
        rel = relpath(t)
        try:
            bf = load(t, base, manifest)
        except BankError as e:
            problems.append(str(e))
            continue
        text = (base / rel).read_text()
        try:
            head = parse_header(text, str(base / rel))
        except BankError as e:
            problems.append(str(e))
            continue
        problems += _entry_problems(rel, files[rel], t, head, len(bf.expected))
        for k, mk in (("generator", "generator_version"), ("seed", "seed"), ("mpmath", "mpmath")):
            if head[k] != manifest.get(mk):
                provenance.setdefault((k, manifest.get(mk), head[k]), []).append(rel)
        bad = _inputs_problem(t, bf, head["dropped"])
        if bad:
            problems.append(f"{base / rel}: " + bad.partition(": ")[2])
        loaded.append((t, bf))
    for (k, mv, hv), rels in provenance.items():
        problems.append(f"{base / MANIFEST}: records {k} {mv!r} but {len(rels)} file header(s) record "
                        f"{hv!r} (first: {rels[0]})")

    if full and loaded:
        problems += _verify_full(loaded, log, progress)
    elif verify and loaded and sample > 0:
        seed = secrets.randbits(32) if seed is None else seed
        sizes = np.array([bf.expected.size for _, bf in loaded])
        total = int(sizes.sum())
        rng = np.random.default_rng(seed)
        picks = np.sort(rng.choice(total, min(sample, total), replace=False))
        ends = np.cumsum(sizes)
        for g in picks:
            k = int(np.searchsorted(ends, g, side="right"))
            t, bf = loaded[k]
            i = int(g - (ends[k] - sizes[k]))
            bits, ok = expected_bits(t, [a[i:i + 1] for a in bf.inputs], bf.out)
            if ok[0] and int(bits[0]) != int(bf.expected[i]):
                problems.append(f"{relpath(t)} case {i}: stored {hex(int(bf.expected[i]))} but mpmath gives "
                                f"{hex(int(bits[0]))} (sample seed {seed})")
        log(f"nbx bank check: {len(picks)} sampled cases re-verified with mpmath, seed {seed} "
            f"(repeat with --seed {seed})")
    return problems


def _registry_paths() -> dict[str, Target]:
    return {relpath(t): t for t in targets()}


def _verify_full(loaded, log, progress: bool) -> list[str]:
    """Every case of every loaded file recomputed with mpmath: what a refresh computes."""
    t0 = time.monotonic()
    bar = Progress(len(loaded), "nbx bank check --full") if progress else None
    problems, n = [], 0
    for t, bf in loaded:
        if bf.expected.size:
            bits, ok = expected_bits(t, bf.inputs, bf.out)
            n += bf.expected.size
            wrong = np.flatnonzero(ok & (bits != bf.expected))
            if wrong.size:
                i = int(wrong[0])
                ins = " ".join(hex(int(x)) for x in (bits_of(a[i:i + 1])[0] for a in bf.inputs))
                problems.append(f"{relpath(t)}: {wrong.size} of {bf.expected.size} cases disagree with "
                                f"mpmath (first: case {i}, inputs {ins}: stored {hex(int(bf.expected[i]))}, "
                                f"mpmath gives {hex(int(bits[i]))})")
            if not ok.all():
                problems.append(f"{relpath(t)}: mpmath can no longer resolve {int((~ok).sum())} stored cases")
        if bar:
            bar.step(f"{t.label} {t.dtype.name}")
    log(f"nbx bank check --full: {n} cases in {len(loaded)} files recomputed with mpmath in "
        f"{time.monotonic() - t0:.1f} s")
    return problems
