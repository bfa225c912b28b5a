"""The runner's job list and case batches: deterministic, complete under sharding, profiles sized."""
import numpy as np

from nbx import dtype as D
from nbx.harness import cases, runner
from nbx.harness.targets import Target


def test_shards_partition_the_jobs():
    every = [(j.target.label, j.target.dtype.name, j.suite) for j in runner.jobs(["exp", "add"])]
    parts = [[(j.target.label, j.target.dtype.name, j.suite) for j in runner.jobs(["exp", "add"])[i::3]]
             for i in range(3)]
    assert sorted(sum(parts, [])) == sorted(every) and len(set(every)) == len(every)


def test_batches_are_deterministic_from_the_seed():
    t = Target("add", {}, D.float32)
    a = [x.copy() for x in next(runner.batches(t, "pairs", "ci", 7))]
    b = next(runner.batches(t, "pairs", "ci", 7))
    c = next(runner.batches(t, "pairs", "ci", 8))
    assert all(np.array_equal(x.view(np.uint32), y.view(np.uint32)) for x, y in zip(a, b))
    assert not np.array_equal(a[0].view(np.uint32), c[0].view(np.uint32))


def test_exhaustive_profile_walks_every_float32_pattern_in_chunks():
    t = Target("exp", {}, D.float32)
    gen = runner.batches(t, "sweep", "exhaustive", 0)
    first = next(gen)[0]
    assert first.dtype == np.float32 and first.view(np.uint32)[0] == 0
    assert np.array_equal(first.view(np.uint32), np.arange(first.size, dtype=np.uint32))
    second = next(gen)[0]
    assert second.view(np.uint32)[0] == first.size                   # contiguous, no gaps
    small = [c.view(np.uint32) for c in cases.exhaustive32_chunks(chunk=1000, start=(1 << 32) - 2500)]
    assert [c.size for c in small] == [1000, 1000, 500]
    assert np.array_equal(np.concatenate(small), np.arange((1 << 32) - 2500, 1 << 32, dtype=np.uint64))


def test_exhaustive16_is_every_16_bit_pattern():
    t = Target("exp", {}, D.bfloat16)
    got = np.concatenate([b[0] for b in runner.batches(t, "exhaustive16", "ci", 0)])
    assert np.array_equal(np.sort(got.view(np.uint16)), np.arange(1 << 16, dtype=np.uint16))
