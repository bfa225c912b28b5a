"""The runner: the jobs of a run (op x dtype x suite, nbx's and each peer's) -> Measurement records.

Each job is one `api.measure` (the suites: suites/values.py for bank, exhaustive16, sweep and pairs,
suites/structural.py for layout and intdiv), a pure function of (target, suite, profile, sizes,
seed), so a job runs the same anywhere: in this process (run), on a local pool of worker processes
or as a Ray task (run/pool.py, run/ray_executor.py), with each finished job written into the run
directory (run/resume.py) so that a killed run resumes. `--shard i/n` runs the i-th of n shares of
similar estimated cost (shard_of), for external job arrays, and `nbx report merge` joins them.

Peers (`--target torch`, harness/targets/peers.py) and callables (`--target module:function --as
OP`): the same targets' value suites run again with the peer's op, on the same inputs, scored the
same way; their measurements carry the peer's name in `target`. Their jobs follow nbx's.
"""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

from nbx.dtype import float64
from nbx.backend import backend_id
from nbx.harness import api
from nbx.harness.api import suites_for
from nbx.harness.inputs.cases import PROFILES
from nbx.harness.progress import Progress
from nbx.harness.scoring.host import Accumulator
from nbx.harness.suites.values import VALUE_SUITES, bit_range, profile_sizes, sample_range, swept_on_device
from nbx.harness.targets import callables
from nbx.harness.targets import peers
from nbx.harness.targets.peers import peer_of
from nbx.harness.targets.target import Target, targets


@dataclass
class Job:
    target: Target
    suite: str

    @property
    def name(self) -> str:
        return self.target.name


def jobs(ops=None, dtypes=None, wanted_suites=None, target_names=(peers.NBX,)) -> list[Job]:
    """nbx's jobs (when "nbx" is among target_names), then each peer's: the same targets' value
    suites, for the ops the peer has (peers.LACKING lists the others); a callable's name
    (`pkg.module:function=op`, targets/callables.py): the value suites of its op's targets."""
    ts = targets(ops, dtypes)
    out = []
    if peers.NBX in target_names:
        for t in ts:
            out += [Job(t, s) for s in suites_for(t, wanted_suites)]
    for peer in [n for n in target_names if n != peers.NBX]:
        if callables.is_callable_name(peer):
            template = callables.load(peer).template
            out += [Job(callables.callable_of(t, template), s) for t in targets([template.op], dtypes)
                    for s in suites_for(t, wanted_suites) if s in VALUE_SUITES]
            continue
        for t in ts:
            if peers.has_peer(peer, t.op):
                out += [Job(peer_of(t, peer), s) for s in suites_for(t, wanted_suites) if s in VALUE_SUITES]
    return out


@dataclass(frozen=True)
class Plan:
    """What a run measures, as plain data that crosses to a worker process or a Ray task: its job
    list (jobs) is a pure function of it, the same in every process, so a worker is sent a plan
    and an index. backend: the backend id every job must be measured on."""
    ops: tuple | None = None
    dtypes: tuple | None = None
    suites: tuple | None = None
    profile: str = "ci"
    seed: int = 0
    shard: tuple = (0, 1)
    bits: tuple | None = None
    target_names: tuple = (peers.NBX,)
    sizes: tuple = ()
    backend: str = ""

    @classmethod
    def of(cls, ops=None, dtypes=None, suites=None, profile="ci", seed=0, shard=(0, 1), bits=None,
           target_names=(peers.NBX,), sizes=None, backend: str = "") -> "Plan":
        def tup(x):
            return None if x is None else tuple(x)
        return cls(tup(ops), tup(dtypes), tup(suites), profile, int(seed), tuple(shard), tup(bits),
                   tuple(target_names), tuple(sorted(dict(sizes or ()).items())), backend)

    def jobs(self) -> list[Job]:
        """This shard's jobs, in the job list's order."""
        return _plan_jobs(self)

    def to_dict(self) -> dict:
        d = {f: (list(v) if isinstance(v, tuple) else v) for f, v in self.__dict__.items()}
        d["sizes"] = [list(kv) for kv in self.sizes]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Plan":
        return cls.of(d["ops"], d["dtypes"], d["suites"], d["profile"], d["seed"], d["shard"], d["bits"],
                      d["target_names"], [tuple(kv) for kv in d["sizes"]], d["backend"])


@functools.lru_cache(maxsize=4)
def _plan_jobs(plan: Plan) -> list[Job]:
    all_jobs = jobs(plan.ops, plan.dtypes, plan.suites, plan.target_names)
    i, n = plan.shard
    return [j for j, k in zip(all_jobs, shard_of(all_jobs, plan.profile, n, plan.sizes)) if k == i]


def load_peers(plan: Plan) -> None:
    """Load each peer library the plan measures (peers.PeerUnavailable when one cannot be imported),
    in this process: the run's, and each worker's."""
    for name in plan.target_names:
        if name != peers.NBX:
            peers.load(name)


class ExecutorFailed(RuntimeError):
    """An executor cannot run jobs at all (its workers die before their first job, a cluster that
    cannot be reached): the run stops, with the message."""


def job_label(job: Job) -> str:
    """`exp float32 sweep`, with the peer's name for a peer's job."""
    return (f"{job.target.label} {job.target.dtype.name} {job.suite}"
            + ("" if job.name == peers.NBX else f" ({job.name})"))


def measure_job(plan: Plan, k: int):
    """The Measurement of the plan's k-th job, in this process (a worker's or the run's own)."""
    job = plan.jobs()[k]
    if plan.backend and plan.backend != backend_id():
        return failed(plan, k, f"measured on backend {backend_id()}, not the run's {plan.backend}: every "
                               "worker must run nbx on the run's backend")
    return api.measure(job.target, job.suite, profile=plan.profile, seed=plan.seed, bits=plan.bits,
                       sizes=plan.sizes, backend=plan.backend or backend_id())


def failed(plan: Plan, k: int, why: str, wall_s: float = 0.0):
    """The Measurement of the plan's k-th job that could not be measured (timed out, its worker
    lost twice): no cases, and `error` saying why, which the gate fails by name."""
    job = plan.jobs()[k]
    m = Accumulator(job.target, job.suite, plan.backend or backend_id()).measurement(wall_s, why)
    if job.name != peers.NBX:
        m.target, m.target_info = job.name, job.target.describe
    return m


def run(ops=None, dtypes=None, suites=None, profile="ci", seed=0, shard=(0, 1), progress=True, bits=None,
        target_names=(peers.NBX,), *, sizes=None, executor=None, store=None):
    """bits (lo, hi): unary float sweeps (float32) and exhaustive16 jobs (16-bit dtypes) take the
    bit patterns lo .. hi - 1 only, to reproduce a range or to split an exhaustive run.
    target_names: "nbx" and the peers (peers.PEERS) to measure; each peer is loaded first
    (peers.PeerUnavailable when its library cannot be imported). sizes: profile_sizes's overrides.
    executor, store: as execute's."""
    if profile not in PROFILES:
        raise ValueError(f"profile {profile!r} is not one of {', '.join(PROFILES)}")
    plan = Plan.of(ops, dtypes, suites, profile, seed, shard, bits, target_names, sizes, backend_id())
    load_peers(plan)
    return execute(plan, progress=progress, executor=executor, store=store)


def execute(plan: Plan, *, progress=True, executor=None, store=None) -> list:
    """The Measurements of the plan's jobs, in the job list's order. executor None: each job in
    this process, in order; else executor.run(plan, indices, deliver) runs the indices given
    (costliest first, job_cost) wherever it runs jobs and calls deliver(k, measurement) in this
    process as each arrives, or deliver(k, failed(...), measured=False) for a job it could not
    measure (run/pool.py, run/ray_executor.py). store (run/resume.py's JobStore):
    the jobs it holds are not run again, and each finished one is saved into it at once.
    SIGINT, or SIGTERM from a time limit (the cli raises KeyboardInterrupt), stops the run with what
    was measured, recorded in INTERRUPTED."""
    mine = plan.jobs()
    done = store.finished(mine) if store is not None else {}
    todo = [k for k in range(len(mine)) if k not in done]
    bar = Progress(len(todo), f"nbx run {plan.profile}") if progress and todo else None

    def deliver(k: int, m, measured: bool = True) -> None:
        # measured False: the job could not be measured (timed out, its worker lost twice); it is
        # reported, and not saved, so that a resumed run tries it again
        if k in done:
            return
        done[k] = m
        if store is not None and measured:
            store.save(mine[k], m)
        if bar:
            bar.step(job_label(mine[k]))
    try:
        if executor is None:
            for k in todo:
                deliver(k, measure_job(plan, k))
        else:
            costs = {k: job_cost(mine[k], plan.profile, plan.sizes) for k in todo}
            executor.run(plan, sorted(todo, key=lambda k: -costs[k]), deliver)
    except KeyboardInterrupt:       # SIGINT, or SIGTERM from a time limit (cli): keep what was measured
        print(f"nbx run: interrupted after {len(done)} of {len(mine)} jobs", file=sys.stderr)
        INTERRUPTED.append((len(done), len(mine)))
    out = [done[k] for k in sorted(done)]
    if progress and out:
        i, n = plan.shard
        tag = f" (shard {i}/{n})" if n > 1 else ""
        print(f"nbx run{tag}: {suite_times(out)}", file=sys.stderr, flush=True)
    return out


def job_cost(job: Job, profile: str, sizes=None) -> float:
    """A rough estimate of a job's seconds (H200 and 16 cores, 2026-12-04), to share jobs evenly:
    a range of 2^32 decided on the device ~3 s; host-scored cases ~15 us each (integers, whose
    exact oracle is Python), ~2 us (16- and 32-bit floats), ~100 us (float64: mpmath for every
    case); a bank ~0.2 s; a structural suite ~1 s."""
    t, suite = job.target, job.suite
    if suite == "bank":
        return 0.2
    if suite not in VALUE_SUITES:
        return 1.0
    tuples = sample_range(t, suite, profile, None, sizes)
    if tuples is not None:      # the profile's own sample ~3 s; `--tuples` scales it
        own = sample_range(t, suite, profile, None) or (0, 1 << 32)
        return 3.0 * (tuples[1] - tuples[0]) / (own[1] - own[0])
    span = bit_range(t, suite, profile, None)
    if swept_on_device(t, span, profile, None):
        return 3.0 if span[1] - span[0] > 1 << 20 else 0.3
    sizes = profile_sizes(profile, sizes)
    if suite == "exhaustive16":
        return 65536 * 2e-6
    if not t.dtype.is_float:
        return sizes["int"] * 15e-6
    if t.dtype is float64:
        return sizes["sweep64" if suite == "sweep" else "pairs64"] * 1e-4
    return min(sizes["sweep" if suite == "sweep" else "pairs"], 1 << 24) * 2e-6


def shard_of(all_jobs: list[Job], profile: str, n: int, sizes=None) -> list[int]:
    """The shard of each job: the costliest first, each to the shard with the least estimated time
    so far (ties: the lowest index). A pure function of the job list, so every shard computes the
    same split; round-robin gave one shard all the banks and its neighbour every exhaustive job."""
    load = [0.0] * n
    out = [0] * len(all_jobs)
    costs = [job_cost(j, profile, sizes) for j in all_jobs]
    for k in sorted(range(len(all_jobs)), key=lambda k: -costs[k]):
        i = min(range(n), key=lambda i: load[i])
        out[k] = i
        load[i] += costs[k]
    return out


def suite_times(measurements) -> str:
    """Seconds per suite, jobs per suite: "time per suite: layout 120.3 s (935 jobs), ...; total ..."."""
    secs: dict = {}
    count: dict = {}
    for m in measurements:
        secs[m.suite] = secs.get(m.suite, 0.0) + m.wall_s
        count[m.suite] = count.get(m.suite, 0) + 1
    parts = [f"{s} {secs[s]:.1f} s ({count[s]} jobs)" for s in sorted(secs, key=lambda s: -secs[s])]
    return f"time per suite: {', '.join(parts)}; total {sum(secs.values()):.1f} s"


INTERRUPTED: list = []
