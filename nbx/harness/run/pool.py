"""`nbx run --jobs N`: the jobs on a pool of N local worker processes.

Each worker is a fresh interpreter (the spawn start method: Triton and nbx's backend choice load in
the worker, never inherited from a forked parent) that measures one job at a time, sent as an index
into the run's Plan. The run hands the next job, costliest first, to whichever worker is free, and
merges each Measurement as it arrives (runner.execute). A job still running after the time limit
has its worker killed and replaced and is reported as timed out; a job whose worker dies (killed,
out of memory, a crash in native code) runs once more on a fresh worker, and is reported as lost
if that one dies too. The gate fails both by name. A worker that dies before its first job is
replaced, START_FAILURES times in all; after that the run goes on with the workers it has, and stops
only when none is left.
"""
from __future__ import annotations

import collections
import faulthandler
import multiprocessing
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass
from multiprocessing.connection import wait

from nbx.harness.records.measurement import Measurement
from nbx.harness.run import runner

# Tries of a job whose worker died: the first, and one more on a fresh worker.
TRIES = 2
# Workers that die before they are ready (an import that fails) end the run after this many.
START_FAILURES = 3
# Seconds a worker has to exit after its last job before it is killed.
EXIT_WAIT_S = 5.0


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this worker when the run's process dies (a SIGKILLed run leaves no
    worker measuring on); elsewhere the worker ends at its next read of the closed pipe."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def worker_main(conn, plan_dict: dict) -> None:
    """A worker: announce ("ready", pid) once the plan's job list is built, then measure each index
    received, answering ("done", index, measurement as a dict), until None or the pipe closes."""
    # the run stops its workers itself (SIGKILL): a time limit's SIGTERM, or a terminal's SIGINT, sent
    # to the whole process group (`timeout` does) must reach the run, which writes its report
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _die_with_parent()
    faulthandler.enable()     # a crash in native code (a driver, a compiled launcher) names its Python frame
    try:
        plan = runner.Plan.from_dict(plan_dict)
        runner.load_peers(plan)
        plan.jobs()
    except Exception as e:  # noqa: BLE001 (sent to the run, which stops with it)
        conn.send(("failed", f"{type(e).__name__}: {e}", None))
        return
    conn.send(("ready", os.getpid(), None))
    while True:
        try:
            k = conn.recv()
        except (EOFError, OSError):
            return
        if k is None:
            return
        m = runner.measure_job(plan, k)
        try:
            conn.send(("done", k, m.to_dict()))
        except (BrokenPipeError, OSError):
            return


@dataclass
class _Worker:
    process: multiprocessing.Process
    conn: object
    ready: bool = False
    job: int | None = None
    started: float = 0.0
    lost: bool = False


@dataclass
class LocalPool:
    """N worker processes on this machine. job_timeout: seconds a job may run (None: no limit)."""
    workers: int
    job_timeout: float | None = None
    start_method: str = "spawn"

    def describe(self) -> dict:
        """The report's run metadata: executor, nodes and GPUs."""
        from nbx.backend import IS_CUDA, backend_info
        gpus = backend_info().get("device", "") if IS_CUDA else ""
        return {"executor": f"pool of {self.workers} worker process(es) (--jobs {self.workers})",
                "nodes": socket.gethostname(), "gpus": gpus or "none"}

    def run(self, plan: runner.Plan, order: list, deliver) -> None:
        ctx = multiprocessing.get_context(self.start_method)
        queue = collections.deque(order)
        tries: collections.Counter = collections.Counter()
        pool: list[_Worker] = []
        start_failures = 0
        plan_dict = plan.to_dict()

        def start() -> _Worker:
            parent, child = ctx.Pipe()
            p = ctx.Process(target=worker_main, args=(child, plan_dict), daemon=True, name="nbx-run-worker")
            p.start()
            child.close()
            w = _Worker(p, parent)
            pool.append(w)
            return w

        def retire(w: _Worker, kill: bool) -> None:
            pool.remove(w)
            if kill and w.process.is_alive():
                w.process.join(EXIT_WAIT_S if w.lost else 0)   # exiting already: keep its own exit code
                if w.process.is_alive():
                    w.process.kill()
            w.process.join(EXIT_WAIT_S)
            w.conn.close()

        try:
            for _ in range(min(self.workers, len(queue))):
                start()
            while queue or any(w.job is not None for w in pool):
                if not pool:
                    raise runner.ExecutorFailed(f"no worker left: {start_failures} died before their first job")
                now = time.monotonic()
                for w in pool:
                    if w.ready and w.job is None and queue:
                        w.job, w.started = queue.popleft(), now
                        if not _send(w.conn, w.job):
                            # the worker died idle: its job goes back first, the loss is seen below
                            queue.appendleft(w.job)
                            w.job = None
                    elif w.ready and w.job is None and not queue:
                        _send(w.conn, None)
                        w.ready = False           # leaving: not given another job
                busy = [w.started + self.job_timeout - now for w in pool
                        if w.job is not None and self.job_timeout is not None]
                wait([w.conn for w in pool] + [w.process.sentinel for w in pool],
                     timeout=max(min(busy), 0.0) if busy else None)
                for w in list(pool):
                    lost = False
                    try:
                        while w.conn.poll():
                            what, a, b = w.conn.recv()
                            if what == "ready":
                                w.ready = True
                            elif what == "done":
                                deliver(a, Measurement.from_dict(b))
                                w.job = None
                            else:
                                raise runner.ExecutorFailed(f"a worker could not start: {a}")
                    except (EOFError, OSError):
                        lost = w.lost = True          # its end of the pipe closed: the worker is exiting
                    if lost or not w.process.is_alive():
                        retire(w, kill=True)
                        code = f"exit code {w.process.exitcode}{_signal_name(w.process.exitcode)}"
                        if not w.ready and w.job is None and w.process.exitcode not in (0, None):
                            start_failures += 1
                            print(f"nbx run: a worker died before its first job ({code})", file=sys.stderr,
                                  flush=True)
                            if start_failures >= START_FAILURES and not pool:
                                raise runner.ExecutorFailed(f"{start_failures} worker processes died before "
                                                            f"their first job (last {code})")
                        if w.job is not None:
                            tries[w.job] += 1
                            if tries[w.job] < TRIES:
                                queue.appendleft(w.job)
                                print(f"nbx run: a worker died ({code}) during {runner.job_label(plan.jobs()[w.job])}; "
                                      "it runs again on a fresh worker", file=sys.stderr, flush=True)
                            else:
                                deliver(w.job, runner.failed(
                                    plan, w.job, f"lost: its worker died {TRIES} times (last {code})",
                                    time.monotonic() - w.started), measured=False)
                        if queue and len(pool) < self.workers and start_failures < START_FAILURES:
                            start()
                        continue
                    if (w.job is not None and self.job_timeout is not None
                            and time.monotonic() - w.started >= self.job_timeout):
                        k, elapsed = w.job, time.monotonic() - w.started
                        retire(w, kill=True)
                        deliver(k, runner.failed(
                            plan, k, f"timed out: still running after {elapsed:.0f} s (--job-timeout "
                                     f"{self.job_timeout:g}); its worker was killed", elapsed), measured=False)
                        if queue and len(pool) < self.workers:
                            start()
        finally:
            for w in list(pool):
                if w.job is None and w.process.is_alive():
                    _send(w.conn, None)
                else:
                    w.process.kill()
            for w in list(pool):
                w.process.join(EXIT_WAIT_S)
                if w.process.is_alive():
                    w.process.kill()
                    w.process.join()
                w.conn.close()


def _send(conn, what) -> bool:
    """Send to a worker; False when its pipe is closed (the worker died between two reads), which
    the loop then sees as a lost worker instead of the run ending on EPIPE."""
    try:
        conn.send(what)
        return True
    except OSError:
        return False


def _signal_name(code: int | None) -> str:
    if code is None or code >= 0:
        return ""
    try:
        return f", {signal.Signals(-code).name}"
    except ValueError:
        return ""
