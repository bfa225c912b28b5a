"""The runner's job list and case batches: deterministic, complete under sharding, profiles sized."""
import numpy as np

from nbx.dtype import bfloat16, float32
from nbx.harness.inputs import cases
from nbx.harness.run import runner
from nbx.harness.suites import values
from nbx.harness.targets.target import Target


def test_shards_partition_the_jobs():
    js = runner.jobs(["exp", "add"])
    every = [(j.target.label, j.target.dtype.name, j.suite) for j in js]
    shard = runner.shard_of(js, "ci", 3)
    parts = [[k for k, i in zip(every, shard) if i == s] for s in range(3)]
    assert sorted(sum(parts, [])) == sorted(every) and len(set(every)) == len(every)
    assert shard == runner.shard_of(runner.jobs(["exp", "add"]), "ci", 3)      # every shard computes it alike


def test_shards_share_the_costly_jobs():
    # the exhaustive profile's 2^32-input jobs and its host-scored ones spread over the shards by
    # estimated cost: no shard more than one costliest job above another (round-robin over
    # (bank, sweep) pairs gave every other shard all the banks)
    js = runner.jobs(None, ["float32", "float16", "int32"], ["bank", "sweep", "pairs"])
    n = 16
    shard = runner.shard_of(js, "exhaustive", n)
    costs = [runner.job_cost(j, "exhaustive") for j in js]
    top = max(costs)
    heavy = [sum(1 for c, i in zip(costs, shard) if i == s and c == top) for s in range(n)]
    assert max(heavy) - min(heavy) <= 1, heavy
    load = [sum(c for c, i in zip(costs, shard) if i == s) for s in range(n)]
    assert max(load) - min(load) <= top, load
    assert sum(1 for j in js if runner.job_cost(j, "exhaustive") == 3.0) > 100      # float32 sweeps, 16-bit pairs


def test_batches_are_deterministic_from_the_seed():
    t = Target("add", {}, float32)
    a = [x.copy() for x in next(values.batches(t, "pairs", "ci", 7))]
    b = next(values.batches(t, "pairs", "ci", 7))
    c = next(values.batches(t, "pairs", "ci", 8))
    assert all(np.array_equal(x.view(np.uint32), y.view(np.uint32)) for x, y in zip(a, b))
    assert not np.array_equal(a[0].view(np.uint32), c[0].view(np.uint32))


def test_exhaustive_profile_walks_every_float32_pattern_in_chunks():
    t = Target("exp", {}, float32)
    gen = values.batches(t, "sweep", "exhaustive", 0)
    first = next(gen)[0]
    assert first.dtype == np.float32 and first.view(np.uint32)[0] == 0
    assert np.array_equal(first.view(np.uint32), np.arange(first.size, dtype=np.uint32))
    second = next(gen)[0]
    assert second.view(np.uint32)[0] == first.size                   # contiguous, no gaps
    small = [c.view(np.uint32) for c in cases.exhaustive32_chunks(chunk=1000, start=(1 << 32) - 2500)]
    assert [c.size for c in small] == [1000, 1000, 500]
    assert np.array_equal(np.concatenate(small), np.arange((1 << 32) - 2500, 1 << 32, dtype=np.uint64))


def test_exhaustive16_is_every_16_bit_pattern():
    t = Target("exp", {}, bfloat16)
    got = np.concatenate([b[0] for b in values.batches(t, "exhaustive16", "ci", 0)])
    assert np.array_equal(np.sort(got.view(np.uint16)), np.arange(1 << 16, dtype=np.uint16))
