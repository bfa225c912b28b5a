"""Where the bank lives and how it changes on disk: paths, the manifest, the lock, the staged temp
files and the journal that publishes them, and loading a file against its manifest hash.

A refresh stages each changed file and the new manifest as temporary siblings `.<name>.tmp-<pid>`
(fsynced), then commits by writing the journal (JOURNAL, atomically): a list of renames, each with
the sha256 of what it moves. The renames follow, bank files first and the manifest last, and the
journal is removed. All of it happens under the bank's lock (flock on LOCK, unlinked on release).

A refresh killed before the journal exists leaves the old bank whole, plus its temp files and LOCK.
Killed after, it leaves the journal, the temp files not yet renamed, the bank files already renamed
(new, but the manifest still old) and LOCK. `finish` (and any reader of the bank, through
roll_forward) validates the journal against the staged files and the staged manifest, then
completes the renames, then removes temp files and LOCK.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from nbx.harness.records.files import DATA, atomic_write_text, fsync_dir
from nbx.harness.targets.target import Target, targets
from nbx.harness.suites.bank.text import BankError, BankFile, parse

ROOT = DATA / "reference_bank"
MANIFEST = "MANIFEST.json"
JOURNAL = ".refresh-journal.json"
LOCK = ".lock"
TMP_MARK = ".tmp-"
# Everything a writer creates besides bank files and the manifest starts with a dot: staged files
# `.<name>.tmp-<pid>`, atomic_write_text's `.<name>.<random>.tmp` (the journal's), the lock and the
# journal. A bank file is `<label>/<dtype>.txt`.
_BANK_PATH = re.compile(r"[^./][^/]*/[^./][^/]*\.txt")


class BankNotWritable(BankError):
    """The bank directory cannot be written: an environment failure, found before any work."""


def root() -> Path:
    return Path(os.environ.get("NBX_BANK", ROOT))


def relpath(t: Target) -> str:
    label = t.label.replace(":", "@")
    return f"{label}/{t.dtype.name}.txt"


def registry_paths() -> dict[str, Target]:
    return {relpath(t): t for t in targets()}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_temp(name: str) -> bool:
    """A temporary file of a bank writer (staged or atomic), never a bank file."""
    return name.startswith(".") and (TMP_MARK in name or name.endswith(".tmp"))


def temp_files(base: Path) -> list[Path]:
    return sorted(p for p in base.rglob(".*") if p.is_file() and is_temp(p.name))


def staged_name(path: Path) -> Path:
    return path.with_name(f".{path.name}{TMP_MARK}{os.getpid()}")


def stage(path: Path, data: bytes) -> Path:
    """Write `data` to the temp sibling of `path`, durably, without renaming it: the journal's
    renames publish it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = staged_name(path)
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return tmp


def check_writable(directories) -> None:
    """Raise BankNotWritable unless a file can be created in each directory, or, where one does not
    exist yet, in its nearest existing ancestor (a real temp file: os.access allows root anything
    and knows nothing of read-only mounts)."""
    for d in directories:
        d = Path(d)
        while not d.exists() and d != d.parent:
            d = d.parent
        try:
            fd, tmp = tempfile.mkstemp(dir=d, prefix=".nbx-probe-", suffix=".tmp")
            os.close(fd)
            os.unlink(tmp)
        except OSError as e:
            raise BankNotWritable(f"cannot write to {d} ({e.strerror or e}); the bank directory and "
                                  "its op directories must be writable") from None


# ---------------------------------------------------------------- the lock
@contextlib.contextmanager
def lock(base: Path):
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
            raise BankNotWritable(f"{path}: cannot create the bank's lock file ({e.strerror}); the bank "
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


def lock_state(base: Path) -> str | None:
    """None: no lock file; "held": a live process holds it; "left": a file nobody holds, left by
    a writer that was killed."""
    try:
        fd = os.open(base / LOCK, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return "held"
    finally:
        os.close(fd)
    return "left"


# ---------------------------------------------------------------- the journal
def _fix(j: Path) -> str:
    return (f"nothing was changed. To return to the committed bank remove {j} and the temp files and "
            "run `git checkout reference_bank` (or `nbx bank refresh` for the ops it concerned), "
            "then `nbx bank check`")


def _is_staged_of(src: str, dest: str) -> bool:
    """`src` is the temp sibling of `dest` that stage() writes: `<dir>/.<name>.tmp-<pid>`."""
    head, sep, pid = src.rpartition(TMP_MARK)
    d = Path(dest)
    return bool(sep) and pid.isdigit() and head == d.with_name("." + d.name).as_posix()


def read_journal(base: Path) -> list[tuple[str, str, str]] | None:
    """The renames (temp, destination, sha256) a pending journal lists, checked for shape: None
    when there is no journal. A journal is only ever written whole, so one that does not parse was
    damaged by something else: a BankError naming it."""
    j = base / JOURNAL
    try:
        text = j.read_text()
    except FileNotFoundError:
        return None
    try:
        plan = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BankError(f"{j}: malformed refresh journal, not JSON ({e}); {_fix(j)}") from None
    renames = plan.get("renames") if isinstance(plan, dict) else None
    if not isinstance(renames, list) or not renames:
        raise BankError(f"{j}: malformed refresh journal, no list of renames under \"renames\"; {_fix(j)}")
    out = []
    for k, r in enumerate(renames):
        ok = (isinstance(r, dict) and set(r) == {"from", "dest", "sha256"}
              and all(isinstance(x, str) for x in r.values()))
        if ok:
            dest = r["dest"]
            ok = (dest == MANIFEST) if k == len(renames) - 1 else bool(_BANK_PATH.fullmatch(dest))
            ok = ok and _is_staged_of(r["from"], dest)
            ok = ok and re.fullmatch(r"[0-9a-f]{64}", r["sha256"]) is not None
        if not ok:
            raise BankError(f"{j}: malformed refresh journal, rename {k} is {r!r} (expected "
                            "{\"from\": \"<dir>/.<name>.tmp-<pid>\", \"dest\": \"<label>/<dtype>.txt\", "
                            "\"sha256\": ...}, the manifest last); " + _fix(j))
        out.append((r["from"], r["dest"], r["sha256"]))
    dests = [d for _, d, _ in out]
    if len(set(dests)) != len(dests):
        raise BankError(f"{j}: malformed refresh journal, a destination is named twice; {_fix(j)}")
    return out


def validate_journal(base: Path, renames: list[tuple[str, str, str]]) -> None:
    """Before anything is renamed: every path stays inside the bank, every destination but the
    manifest is a registry target's bank file, each staged file (or, once renamed, its destination)
    has the sha256 the journal records, and the staged manifest lists every bank file with that
    same sha256. Raises BankError naming the first disagreement."""
    j = base / JOURNAL
    inside = base.resolve()
    registry = registry_paths()
    staged_manifest = None
    for tmp, dest, digest in renames:
        for rel in (tmp, dest):
            p = (base / rel).resolve()
            if p != inside and inside not in p.parents:
                raise BankError(f"{j}: {rel} resolves to {p}, outside the bank {inside}; {_fix(j)}")
        if dest != MANIFEST and dest not in registry:
            raise BankError(f"{j}: {dest} is not the bank file of any target of the registry; {_fix(j)}")
        src = base / tmp if (base / tmp).is_file() else base / dest
        try:
            data = src.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            raise BankError(f"{j}: neither {tmp} nor {dest} exists; {_fix(j)}") from None
        if sha256(data) != digest:
            raise BankError(f"{j}: {src.relative_to(base)} has sha256 {sha256(data)[:16]}..., the "
                            f"journal records {digest[:16]}...; {_fix(j)}")
        if dest == MANIFEST:
            try:
                staged_manifest = json.loads(data)["files"]
            except (ValueError, KeyError, TypeError) as e:
                raise BankError(f"{j}: the staged manifest {src.relative_to(base)} is malformed ({e}); "
                                f"{_fix(j)}") from None
    for _, dest, digest in renames[:-1]:
        entry = staged_manifest.get(dest) if isinstance(staged_manifest, dict) else None
        if not isinstance(entry, dict) or entry.get("sha256") != digest:
            raise BankError(f"{j}: the staged manifest does not list {dest} with the sha256 the journal "
                            f"records; {_fix(j)}")


def roll_forward_locked(base: Path) -> bool:
    """Validate and complete a pending journal (the caller holds the lock): True if one was
    completed, False if there was none."""
    renames = read_journal(base)
    if renames is None:
        return False
    validate_journal(base, renames)
    dirs = {base}
    for tmp, dest, _ in renames:
        if (base / tmp).exists():
            os.replace(base / tmp, base / dest)
        dirs.add((base / dest).parent)
    for d in sorted(dirs, reverse=True):
        fsync_dir(d)
    (base / JOURNAL).unlink()
    fsync_dir(base)
    return True


def roll_forward(base: Path) -> bool:
    """Finish a refresh that was stopped after its journal was written; True if one was finished.
    Serialized by the bank's lock, so concurrent readers each either finish it or find it done."""
    if not (base / JOURNAL).exists():
        return False
    with lock(base):
        rolled = roll_forward_locked(base)
        remove_temps(base)
    return rolled


def remove_temps(base: Path) -> list[Path]:
    """Remove the temp files of writers that died (only under the lock: every writer writes its
    temp files while holding it, so none of these is still being written)."""
    temps = temp_files(base)
    for p in temps:
        p.unlink()
    return temps


def publish(base: Path, staged: list[tuple[Path, Path, str]]) -> None:
    """Commit staged (temp, destination, sha256) files, the manifest last, by the journal; the
    caller holds the lock."""
    plan = {"renames": [{"from": t.relative_to(base).as_posix(), "dest": p.relative_to(base).as_posix(),
                         "sha256": h} for t, p, h in staged]}
    for d in {p.parent for _, p, _ in staged}:
        fsync_dir(d)
    # The commit point: before the journal exists the old bank is untouched; after it, any reader
    # rolls the refresh forward. The manifest is renamed last, so until the end the files renamed so
    # far disagree with its hashes: a partly renamed tree is never taken for a whole bank.
    atomic_write_text(base / JOURNAL, json.dumps(plan, indent=1) + "\n")
    roll_forward_locked(base)


# ---------------------------------------------------------------- the manifest and loading
def read_manifest(base: Path) -> dict:
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


def load_manifest(base: Path | None = None) -> dict:
    base = base or root()
    roll_forward(base)
    return read_manifest(base)


MANIFESTS: dict[str, dict] = {}


def cached_manifest() -> dict:
    """The manifest of root(), read once per process (refresh and finish clear the cache)."""
    key = str(root())
    if key not in MANIFESTS:
        MANIFESTS[key] = load_manifest()
    return MANIFESTS[key]


def load(t: Target, base: Path | None = None, manifest: dict | None = None) -> BankFile:
    base = base or root()
    rel = relpath(t)
    p = base / rel
    if not p.exists():
        raise BankError(f"{p}: no bank file for {t.label} {t.dtype.name}; run `nbx bank refresh --op {t.op}`")
    data = p.read_bytes()
    manifest = manifest if manifest is not None else load_manifest(base)
    entry = manifest.get("files", {}).get(rel)
    if not isinstance(entry, dict) or entry.get("sha256") != sha256(data):
        raise BankError(f"{p}: sha256 does not match the manifest (edited, corrupted or an interrupted "
                        "refresh); run `nbx bank refresh` for it")
    return parse(data.decode(), str(p))


def finish(base: Path | None = None) -> dict:
    """`nbx bank finish`: complete an interrupted refresh after validating its journal, and remove
    the temp files and the lock file killed writers left. Raises BankError, changing nothing,
    on a journal that does not agree with the staged files."""
    base = base or root()
    if not base.is_dir():
        raise BankError(f"{base}: no bank directory")
    left_lock = lock_state(base) == "left"
    with lock(base):
        rolled = roll_forward_locked(base)
        temps = remove_temps(base)
    MANIFESTS.clear()
    return {"rolled_forward": rolled, "temps": [p.relative_to(base).as_posix() for p in temps],
            "lock": left_lock}
