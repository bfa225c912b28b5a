"""Resumable runs: each finished job's Measurement is written into the run directory the moment it
arrives, so a run killed at any instant (SIGKILL included) loses at most the jobs in flight, and
`nbx run --resume DIR` runs only the jobs DIR lacks.

DIR/jobs/run.json records the run (its id, the command line that started it, the Plan); each
finished job is DIR/jobs/<job>.json, the job's key and its Measurement, written atomically
(records/files.py), so a file is whole or absent. A resumed run takes its options from run.json,
and the report it writes holds the same measurements, figure for figure, as a run never stopped.
Once a run's report is written with every job measured, DIR/jobs/ is removed (the report holds
it all); it stays while a job is missing (a run stopped, a job timed out or lost), for --resume.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

from nbx.harness.records.files import atomic_write_text
from nbx.harness.records.measurement import Measurement
from nbx.harness.run.runner import Job, Plan

JOBS_DIR = "jobs"
RECORD_FILE = "run.json"
FORMAT = 1


def job_key(job: Job) -> str:
    """Who, op label, dtype and suite: `nbx|clamp:max=2.5,min=-1.5|float32|pairs`."""
    return f"{job.name}|{job.target.label}|{job.target.dtype.name}|{job.suite}"


def job_file(job: Job) -> str:
    """The key as a file name: readable, with a hash of the exact key to keep two keys apart."""
    key = job_key(job)
    safe = re.sub(r"[^A-Za-z0-9._,=+-]", "_", key.replace("|", "__"))[:120]
    return f"{safe}.{hashlib.sha1(key.encode()).hexdigest()[:10]}.json"


class JobStore:
    """The finished jobs of one run directory (see the module docstring)."""

    def __init__(self, run_dir: Path):
        self.run_dir = Path(run_dir)
        self.dir = self.run_dir / JOBS_DIR
        self.broken = ""

    def start(self, *, run_id: str, argv: list, plan: Plan) -> None:
        """Begin a fresh run here: the finished jobs of any earlier run in the directory are
        removed (they measured something else, or the same with other code), then the record is
        written."""
        self.dir.mkdir(parents=True, exist_ok=True)
        for p in self.dir.iterdir():
            if p.is_file() and (p.suffix in (".json", ".tmp")):
                p.unlink()
        record = {"format": FORMAT, "run_id": run_id, "argv": [str(a) for a in argv], "plan": plan.to_dict()}
        atomic_write_text(self.dir / RECORD_FILE, json.dumps(record, indent=1) + "\n")

    def record(self) -> dict:
        """run.json of the run in the directory; ValueError (naming the file) when there is none or
        it cannot be read."""
        path = self.dir / RECORD_FILE
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            if (self.run_dir / "report.json").is_file() and not (self.run_dir / "INCOMPLETE").exists():
                raise ValueError(f"{self.run_dir} holds a finished run: its report has every job, and there "
                                 "is nothing to resume") from None
            raise ValueError(f"{self.run_dir} holds no run to resume ({path} is missing): give the "
                             "directory of a run that `nbx run` started (its --out)") from None
        except (OSError, ValueError) as e:
            raise ValueError(f"cannot read {path}: {e}") from None
        if not isinstance(d, dict) or d.get("format") != FORMAT or not {"run_id", "argv", "plan"} <= set(d):
            raise ValueError(f"{path} is not a run record this nbx reads (format {FORMAT})")
        return d

    def finished(self, jobs: list[Job]) -> dict:
        """{index in jobs: Measurement} of the jobs saved here. A file that does not parse or holds
        another key is left out (its job runs again)."""
        out = {}
        for k, job in enumerate(jobs):
            path = self.dir / job_file(job)
            try:
                d = json.loads(path.read_text(encoding="utf-8"))
                if d.get("key") != job_key(job):
                    continue
                out[k] = Measurement.from_dict(d["measurement"])
            except FileNotFoundError:
                continue
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue
        return out

    def holds_all(self, jobs: list[Job]) -> bool:
        return len(self.finished(jobs)) == len(jobs)

    def remove(self) -> None:
        """Remove DIR/jobs/: the record first, so that a removal cut short leaves nothing to resume
        from, only stray files."""
        (self.dir / RECORD_FILE).unlink(missing_ok=True)
        for p in self.dir.iterdir():
            if p.is_file():
                p.unlink()
        self.dir.rmdir()

    def save(self, job: Job, m: Measurement) -> None:
        """Write one finished job. A write that fails (a full disk, a file-size limit) is said once
        on stderr and the run goes on without saving: its report is what it is for, and is written
        (or fails) as it would have; only a resume of it would redo more jobs."""
        if self.broken:
            return
        text = json.dumps({"key": job_key(job), "measurement": m.to_dict()}, allow_nan=False)
        try:
            atomic_write_text(self.dir / job_file(job), text + "\n")
        except OSError as e:
            self.broken = f"{e.strerror or e}"
            print(f"nbx run: cannot save finished jobs into {self.dir}: {self.broken}; the run goes on, and a "
                  "resume of it would run them again", file=sys.stderr)
