"""`nbx run --executor ray [--address ADDR]`: the jobs as Ray tasks, on a cluster of any size.

Each job is one task (ray_measure: the Plan and the job's index), asking for one CPU and, on the
CUDA backend, 1/N of a GPU (`--jobs N` jobs share a GPU; Ray gives each GPU task a fresh worker
process, bound to the GPU it was given). The driver keeps as many tasks in flight as the cluster
has room for, costliest first, so that a task starts about when it is submitted (the time limit
counts from there), and merges each result as it arrives (runner.execute). A task whose worker or
node is lost runs again (Ray's max_retries, once); a task over `--job-timeout` is cancelled (its
worker killed) and reported as timed out. Every node must have nbx installed at the run's commit,
on the run's backend (a task that finds another backend reports so, and the gate fails it).

`pip install -e .[ray]`; without Ray, `--executor ray` exits 3 saying so.
"""
from __future__ import annotations

import collections
import socket
import time
from dataclasses import dataclass, field

from nbx.harness.records.measurement import Measurement
from nbx.harness.run import runner

# Tries of a task whose worker or node is lost (Ray's max_retries): one more, as the pool does.
RETRIES = 1
# Seconds between reads of the cluster's size (nodes may join or leave during a run).
RESIZE_S = 5.0


class RayUnavailable(ImportError):
    """Ray is not installed (an optional dependency: exit 3)."""


def ray_measure(plan_dict: dict, k: int) -> tuple:
    """The task: (the k-th job's Measurement as a dict, this node's host name, the GPU ids Ray gave)."""
    import ray
    plan = runner.Plan.from_dict(plan_dict)
    runner.load_peers(plan)
    m = runner.measure_job(plan, k)
    return m.to_dict(), socket.gethostname(), [str(g) for g in ray.get_gpu_ids()]


def import_ray():
    try:
        import ray
    except ImportError as e:
        raise RayUnavailable("ray is not installed: `pip install -e .[ray]` (README.md, \"A nightly on a Ray "
                             f"cluster\") ({e})") from None
    return ray


@dataclass
class RayExecutor:
    """address: the cluster's (`auto`, `ray://host:10001`, host:port); None starts a local one, or
    uses the one this process is already connected to. jobs_per_gpu: how many jobs share a GPU on
    the CUDA backend. job_timeout: seconds a task may run (None: no limit)."""
    address: str | None = None
    jobs_per_gpu: int = 1
    job_timeout: float | None = None
    nodes: dict = field(default_factory=dict)          # host -> GPU ids used there

    def describe(self) -> dict:
        """The report's run metadata: executor, nodes and GPUs (those the run's tasks used)."""
        gpus = [f"{h}:{','.join(sorted(g))}" for h, g in sorted(self.nodes.items()) if g]
        return {"executor": f"ray ({self.address or 'a local cluster'})",
                "nodes": ", ".join(sorted(self.nodes)) or "none",
                "gpus": "; ".join(gpus) or "none"}

    def _connect(self):
        """Ray, connected; True as well when this call connected it (and run disconnects)."""
        ray = import_ray()
        if ray.is_initialized():
            return ray, False
        from nbx.backend import NAME
        # workers choose the run's backend, whatever their node would pick by itself
        env = {"NBX_BACKEND": NAME, "PYTHONUNBUFFERED": "1"}
        ray.init(address=self.address, runtime_env={"env_vars": env}, log_to_driver=True,
                 include_dashboard=False, configure_logging=False)
        return ray, True

    def _room(self, ray, cuda: bool) -> int:
        """How many tasks the cluster runs at once: its CPUs, and on CUDA its GPUs x jobs_per_gpu."""
        res = ray.cluster_resources()
        room = int(res.get("CPU", 0))
        if cuda:
            room = min(room, int(res.get("GPU", 0) * self.jobs_per_gpu))
        return max(room, 1)

    def run(self, plan: runner.Plan, order: list, deliver) -> None:
        from nbx.backend import IS_CUDA
        try:
            ray, connected = self._connect()
        except (ConnectionError, RuntimeError) as e:
            raise runner.ExecutorFailed(f"cannot reach the Ray cluster at {self.address or 'a new local one'}: "
                                        f"{e}") from None
        opts = {"num_cpus": 1, "max_retries": RETRIES, "retry_exceptions": False}
        if IS_CUDA:
            opts["num_gpus"] = 1.0 / self.jobs_per_gpu
        task = ray.remote(**opts)(ray_measure)
        plan_ref = ray.put(plan.to_dict())
        queue = collections.deque(order)
        flying: dict = {}                       # ref -> (k, submitted)
        room, sized = self._room(ray, IS_CUDA), time.monotonic()
        try:
            while queue or flying:
                now = time.monotonic()
                if now - sized > RESIZE_S:
                    room, sized = self._room(ray, IS_CUDA), now
                while queue and len(flying) < room:
                    k = queue.popleft()
                    flying[task.remote(plan_ref, k)] = (k, time.monotonic())
                left = [s + self.job_timeout - now for _, s in flying.values()] if self.job_timeout else []
                wait_s = min([RESIZE_S] + [max(x, 0.0) for x in left])
                ready, _ = ray.wait(list(flying), num_returns=1, timeout=wait_s)
                for ref in ready:
                    k, started = flying.pop(ref)
                    try:
                        d, host, gpus = ray.get(ref)
                    except ray.exceptions.RayError as e:       # lost twice, or the task itself broke
                        deliver(k, runner.failed(plan, k, f"lost: the Ray task failed ({type(e).__name__}: "
                                                          f"{str(e).splitlines()[0] if str(e) else ''})",
                                                 time.monotonic() - started), measured=False)
                        continue
                    self.nodes.setdefault(host, set()).update(gpus)
                    deliver(k, Measurement.from_dict(d))
                if self.job_timeout:
                    now = time.monotonic()
                    for ref, (k, started) in list(flying.items()):
                        if now - started >= self.job_timeout:
                            flying.pop(ref)
                            ray.cancel(ref, force=True)
                            deliver(k, runner.failed(
                                plan, k, f"timed out: still running after {now - started:.0f} s (--job-timeout "
                                         f"{self.job_timeout:g}); its Ray task was cancelled", now - started),
                                measured=False)
        finally:
            for ref in flying:
                ray.cancel(ref, force=True)
            if connected:
                ray.shutdown()
