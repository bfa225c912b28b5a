"""The report record, its versioned JSON form, atomic file writes, and the merge of shards."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import secrets
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from nbx.harness.records.files import atomic_symlink, atomic_write_text, fsync_dir  # noqa: F401  (re-exported)
from nbx.harness.records.measurement import SCHEMA_VERSION, Measurement

REPORT_FILE = "report.json"

Key = tuple[str, str, str]


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def new_run_id() -> str:
    """Sortable and unique enough for shards started in the same second: time plus random hex."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@dataclass
class Report:
    schema_version: int = SCHEMA_VERSION
    run_id: str = field(default_factory=new_run_id)
    created: str = field(default_factory=utc_now_iso)
    backend: dict = field(default_factory=dict)
    git_commit: str = ""
    profile: str = ""
    argv: list = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)
    budgets: dict | None = None
    shards: list[str] = field(default_factory=list)   # run ids this report was merged from

    @property
    def backend_id(self) -> str:
        return str(self.backend.get("id", ""))

    def option_values(self, flag: str) -> list[str] | None:
        """The values given to `flag` on the command line that made this report (`--op exp`,
        `--op=exp`), or None when it was not given. The CLI parser takes no abbreviations, so
        the stored argv spells every flag in full."""
        return argv_values(self.argv, flag)

    @property
    def seed(self) -> int:
        vals = self.option_values("--seed")
        try:
            return int(vals[-1]) if vals else 0
        except ValueError:
            return 0

    @property
    def shard(self) -> tuple[int, int] | None:
        """(i, n) of a lone shard of a sharded run; None for a whole run or a merged report (a
        merged report keeps its first shard's argv, and lists its shards)."""
        vals = self.option_values("--shard")
        if not vals or self.shards:
            return None
        try:
            i, n = (int(x) for x in vals[-1].split("/"))
        except ValueError:
            return None
        return (i, n) if n > 1 else None

    def by_key(self) -> dict[Key, Measurement]:
        return {m.key(): m for m in self.measurements}

    def to_dict(self) -> dict:
        return {
            "schema_version": self.schema_version,
            "run_id": self.run_id,
            "created": self.created,
            "backend": dict(self.backend),
            "git_commit": self.git_commit,
            "profile": self.profile,
            "argv": [str(a) for a in self.argv],
            "budgets": self.budgets,
            "shards": list(self.shards),
            "measurements": [m.to_dict() for m in self.measurements],
        }

    def to_json(self, *, indent: int | None = 1) -> str:
        # allow_nan=False: a stray inf/nan outside the encoded fields is a bug, not a silent
        # non-standard token that other JSON readers reject.
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False) + "\n"

    @classmethod
    def from_dict(cls, d: Any) -> "Report":
        if not isinstance(d, dict) or "schema_version" not in d or "measurements" not in d:
            raise ValueError("not an nbx report: expected a JSON object with 'schema_version' "
                             "and 'measurements'")
        version = d["schema_version"]
        if version != SCHEMA_VERSION:
            raise ValueError(f"unknown nbx report schema_version {version!r}: this nbx reads "
                             f"version {SCHEMA_VERSION}")
        return cls(
            schema_version=int(version),
            run_id=str(d.get("run_id", "")),
            created=str(d.get("created", "")),
            backend=dict(d.get("backend") or {}),
            git_commit=str(d.get("git_commit") or ""),
            profile=str(d.get("profile") or ""),
            argv=list(d.get("argv") or []),
            measurements=[Measurement.from_dict(m) for m in d["measurements"]],
            budgets=d.get("budgets"),
            shards=list(d.get("shards") or []),
        )

    @classmethod
    def from_json(cls, text: str) -> "Report":
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"not an nbx report: not valid JSON ({e})") from None
        return cls.from_dict(d)


def argv_values(argv: list, flag: str) -> list[str] | None:
    argv = [str(a) for a in argv or []]
    vals = [argv[i + 1] for i, x in enumerate(argv[:-1]) if x == flag]
    vals += [x.split("=", 1)[1] for x in argv if x.startswith(flag + "=")]
    return vals or None


def parse_param_value(text: str):
    """A parameter value as a target label prints it (str() of the value): an int, a float, True,
    False, None, or else the string itself (`tanh`, `float16`)."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return {"True": True, "False": False, "None": None}.get(text, text)


def parse_label(label: str) -> tuple[str, dict]:
    """Split a target label `op` or `op:k=v,...` (Measurement.op, as target.Target.label writes
    it) into the op name and its parameters; parse_label(t.label) == (t.op, t.params)."""
    op, sep, rest = label.partition(":")
    params: dict = {}
    if sep:
        for item in rest.split(","):
            k, eq, v = item.partition("=")
            if not eq or not k:
                raise ValueError(f"{label!r}: expected op:name=value,... (got {item!r})")
            params[k] = parse_param_value(v)
    if not op:
        raise ValueError(f"{label!r}: no op name")
    return op, params


def load_report(path: str | os.PathLike) -> Report:
    """Read a report from a report.json path or from a run directory holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / REPORT_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no nbx report at {path}")
    try:
        return Report.from_json(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


# to_dict writes the measurements last, at one space of indent: the text before this holds
# every other top-level field.
_MEASUREMENTS_AT = '\n "measurements":'


def read_header(path: Path, limit: int = 1 << 20) -> dict | None:
    """The top-level fields of a report.json except its measurements, or None if it is not a
    readable report. Reads only the start of a report this module wrote, so that a directory
    of nightly reports (megabytes each) is scanned in milliseconds."""
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(limit)
        i = head.find(_MEASUREMENTS_AT)
        if i >= 0:
            d = json.loads(head[:i].rstrip().rstrip(",") + "\n}")
        else:                                    # another writer's layout: parse it all
            d = json.loads(Path(path).read_text(encoding="utf-8"))
            if isinstance(d, dict):
                d.pop("measurements", None)
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) and "schema_version" in d else None


@dataclass
class Previous:
    """What a report is compared with in its summary: the earlier report found under `searched`
    (None: nothing was searched), or none (report None)."""
    searched: Path | None
    report: Report | None = None
    path: Path | None = None


def find_previous(report: Report, history: str | os.PathLike | None) -> Previous:
    """The most recent report under `history` (its run directories, and one level below them)
    created before `report`, with the same profile, backend id and seed: the run whose figures
    are comparable case for case. Lone shards, the report itself and its own shards are skipped."""
    if history is None:
        return Previous(None)
    history = Path(history)
    if not history.is_dir():
        return Previous(history)
    own = {report.run_id, *report.shards}
    best: tuple | None = None
    for path in sorted([*history.glob(f"*/{REPORT_FILE}"), *history.glob(f"*/*/{REPORT_FILE}")]):
        h = read_header(path)
        if h is None or str(h.get("run_id", "")) in own:
            continue
        head = Report(run_id=str(h.get("run_id", "")), created=str(h.get("created", "")),
                      backend=dict(h.get("backend") or {}), profile=str(h.get("profile") or ""),
                      argv=list(h.get("argv") or []), shards=list(h.get("shards") or []))
        if (head.profile != report.profile or head.backend_id != report.backend_id
                or head.seed != report.seed or head.shard is not None
                or not head.created or head.created >= report.created):
            continue
        if best is None or (head.created, head.run_id) > best[0]:
            best = ((head.created, head.run_id), path)
    if best is None:
        return Previous(history)
    try:
        return Previous(history, load_report(best[1]), best[1].parent)
    except (OSError, ValueError):
        return Previous(history)


LOCK_FILE = ".nbx-run.lock"


class DirectoryInUse(RuntimeError):
    """A report directory claimed by another live process (claim_dir)."""

    def __init__(self, directory: Path, holder: dict):
        self.directory, self.holder = Path(directory), holder
        if holder:
            who = (f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}, started "
                   f"{holder.get('started', '?')}")
            if holder.get("command"):
                who += f": {holder['command']}"
        else:
            who = "a process that has not yet recorded itself"
        super().__init__(f"{self.directory} is in use by another run ({who}); wait for it to "
                         "finish or write elsewhere (--out)")


def _read_holder(path: Path) -> dict:
    # The holder truncates the file and then writes its record under the lock: an empty or partial
    # read is that short window, so read again a few times before giving up.
    for _ in range(20):
        try:
            d = json.loads(Path(path).read_text(encoding="utf-8"))
            if isinstance(d, dict):
                return d
        except (OSError, ValueError):
            pass
        time.sleep(0.025)
    return {}


def _make_dir(directory: str | os.PathLike) -> Path:
    directory = Path(directory)
    for p in (directory, *directory.parents):
        if p.exists():
            if not p.is_dir():     # mkdir would say "File exists", which hides the cause
                raise NotADirectoryError(errno.ENOTDIR, f"{p} is a file, not a directory", str(p))
            break
    directory.mkdir(parents=True, exist_ok=True)
    return directory


class DirClaim:
    """The claim of a report directory (claim_dir): the open, flocked lock file. close() drops the
    claim and leaves the file; release(), and leaving a `with` block, remove the file first."""

    def __init__(self, file, path: Path):
        self.file, self.path = file, Path(path)

    def close(self) -> None:
        self.file.close()

    def release(self) -> None:
        """Remove the lock file while still holding it, then drop the claim: a finished run leaves
        no lock behind. A process that opened the old file meanwhile finds it unlinked once it
        holds it and takes a fresh one (claim_dir), so two runs never both hold "the" lock."""
        if self.file.closed:
            return
        try:
            os.unlink(self.path)
        except OSError:
            pass                 # a directory that became unwritable keeps the file, unlocked
        self.close()

    def __enter__(self) -> "DirClaim":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def claim_dir(directory: str | os.PathLike, *, command: str | None = None) -> DirClaim:
    """Claim `directory` (created if missing) for this process: an exclusive fcntl.flock on its
    LOCK_FILE, with this process's pid, host, start time and command line recorded in the file.
    Returns the DirClaim; the claim lasts until it is closed or released, or the process ends (the
    kernel drops a flock with its last descriptor, so a killed run never leaves a directory
    claimed, though its file stays). Raises DirectoryInUse at once, without waiting, when another
    process holds the claim, and OSError when the directory or its lock file cannot be created.

    A holder removes the file before it lets go (DirClaim.release), so a file locked here may have
    been unlinked between its open and the flock: the claim is taken only once the locked file is
    the one at LOCK_FILE, else the open is retried."""
    directory = _make_dir(directory)
    path = directory / LOCK_FILE
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        f = os.fdopen(fd, "r+", encoding="utf-8")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            f.close()
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise DirectoryInUse(directory, _read_holder(path)) from None
            raise
        try:
            held, named = os.fstat(fd), os.stat(path)
            if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
                break
        except FileNotFoundError:
            pass
        f.close()
    try:
        record = {"pid": os.getpid(), "host": socket.gethostname(), "started": utc_now_iso(),
                  "command": command if command is not None else " ".join(["nbx", *sys.argv[1:]])}
        f.seek(0)
        f.truncate()
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())
    except BaseException:
        f.close()
        raise
    return DirClaim(f, path)


INCOMPLETE_FILE = "INCOMPLETE"


def mark_incomplete(directory: str | os.PathLike, *, run_id: str, command: str | None = None) -> Path:
    """Write INCOMPLETE_FILE into `directory` before its report files are (re)written; remove it
    with mark_complete once every one is. A directory holding it is a mix of old, new and missing
    files (a full disk, a kill), and readers refuse it (incomplete_reason). Written in place, not
    through a temp file: an empty marker, all a full disk may allow, marks the directory as well."""
    path = Path(directory) / INCOMPLETE_FILE
    record = {"run_id": run_id, "pid": os.getpid(), "started": utc_now_iso(),
              "command": command if command is not None else " ".join(["nbx", *sys.argv[1:]])}
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(path.parent)
    return path


def mark_complete(directory: str | os.PathLike) -> None:
    """Remove the INCOMPLETE_FILE of mark_incomplete, durably: the report files are all written."""
    directory = Path(directory)
    try:
        os.unlink(directory / INCOMPLETE_FILE)
    except FileNotFoundError:
        return
    fsync_dir(directory)


def incomplete_reason(path: str | os.PathLike) -> str | None:
    """Why the report directory at `path` (or the directory of a report.json) cannot be read as a
    whole report, or None when it is not marked incomplete."""
    path = Path(path)
    directory = path if path.is_dir() else path.parent
    marker = directory / INCOMPLETE_FILE
    if not marker.exists():
        return None
    try:
        d = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        d = {}
    d = d if isinstance(d, dict) else {}
    who = f"`{d['command']}` (pid {d.get('pid', '?')}, started {d.get('started', '?')})" if d.get("command") \
        else "the command that wrote it"
    return (f"{directory} is incomplete: {who} stopped before writing every report file "
            f"({marker} is there); run it again, or delete {marker} to read the files as they are")


def check_writable_dir(directory: str | os.PathLike) -> None:
    """Raise OSError unless files can be created in `directory` (made if missing) the way
    atomic_write_text creates them: a real temp file, created and removed, since os.access says
    nothing of read-only mounts and everything is allowed to root."""
    directory = _make_dir(directory)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".nbx-probe-", suffix=".tmp")
    os.close(fd)
    os.unlink(tmp)


def _common(values: list[str]) -> str:
    distinct = list(dict.fromkeys(v for v in values if v))
    return ",".join(distinct)


def merge_reports(reports: list[Report]) -> Report:
    """Join shards of one run into one report with a fresh run id and creation time.

    All shards must share a backend id, and each (op, dtype, suite) may appear in one shard only:
    two measurements of the same key cannot be combined without the raw data.
    """
    if not reports:
        raise ValueError("merge_reports: reports is empty; give at least one report")
    backend_ids = {r.backend_id for r in reports}
    if len(backend_ids) != 1:
        raise ValueError(f"merge_reports: shards come from different backends {sorted(backend_ids)}; "
                         "merge only shards of one backend")
    seen: dict[Key, str] = {}
    measurements: list[Measurement] = []
    for r in reports:
        for m in r.measurements:
            if m.key() in seen:
                raise ValueError(f"merge_reports: measurement {'-'.join(m.key())} appears in run "
                                 f"{seen[m.key()]} and in run {r.run_id}; each key must be in "
                                 "one shard only")
            seen[m.key()] = r.run_id
            measurements.append(m)
    measurements.sort(key=Measurement.key)
    budgets = reports[0].budgets if all(r.budgets == reports[0].budgets for r in reports) else None
    shards: list[str] = []
    for r in reports:
        shards.extend(r.shards or [r.run_id])
    return Report(
        backend=dict(reports[0].backend),
        git_commit=_common([r.git_commit for r in reports]),
        profile=_common([r.profile for r in reports]),
        argv=list(reports[0].argv),
        measurements=measurements,
        budgets=budgets,
        shards=shards,
    )


# Shared by the text renderers.

def fmt_ulp(value: float) -> str:
    """An ulp figure to 4 significant digits; inf and nan spelled out."""
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    return f"{value:.4g}"


def fmt_frac(value: float) -> str:
    return "0" if value == 0 else f"{100 * value:.3g}%"


def severity(m: Measurement) -> tuple:
    """Sort key, worst first: errors, then max ulp descending (nan counts as worst), then counts."""
    ulp = m.max_ulp
    ulp_rank = float("inf") if ulp != ulp else ulp
    return (0 if m.error else 1, -(ulp != ulp), -ulp_rank, -m.special_mismatches, -m.wrong,
            m.key())
