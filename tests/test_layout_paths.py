"""The layout suite takes every code path of the launcher that layout.PATHS lists (the layouts
were picked one per path, not many alike): the plans the launcher builds while the suite runs are
recorded and classified (layout.launch_paths, layout.call_paths), and every path of
layout.required_paths must appear, for a sample of ops (unary with a float32 fast path, binary
with Python scalars, the ternary where with its bool mask, a 16-bit load, bool)."""
from __future__ import annotations

import pytest

from nbx.dtype import bfloat16, bool_, float16, float32, int32
from nbx.harness.suites import layout
from nbx.harness.scoring.host import Accumulator
from nbx.harness.targets.target import Target, measured
from nbx.kernels import iterate
from nbx.ops import OPS


def record(monkeypatch, t: Target, profile: str):
    """Run t's layout suite; returns (accumulator, paths taken, launch inputs at most)."""
    seen: set = set()
    width = [0]
    real_plan, real_call = iterate.plan, layout.call

    def plan(out, inputs, *, op):
        p = real_plan(out, inputs, op=op)
        seen.update(layout.launch_paths(out, inputs, p))
        width[0] = max(width[0], len(inputs))
        return p

    def call(tt, operands, out=None):
        res = real_call(tt, operands, out=out)
        seen.update(layout.call_paths(tt, operands, res.shape))
        return res

    monkeypatch.setattr(iterate, "plan", plan)
    monkeypatch.setattr(layout, "call", call)
    acc = Accumulator(t, "layout", "test")
    layout.run_layout(t, profile, 0, acc)
    return acc, seen, width[0]


def target(op, dtype):
    return Target(op, measured(OPS[op], dtype)[0], dtype)


@pytest.mark.parametrize("op,dtype,profile", [("exp", float32, "nightly"), ("add", int32, "nightly"),
                                              ("where", float16, "nightly"), ("neg", bfloat16, "nightly"),
                                              ("bitwise_and", bool_, "nightly"), ("mul", float32, "ci")])
def test_full_layout_set_takes_every_path(monkeypatch, op, dtype, profile):
    t = target(op, dtype)
    assert profile == "nightly" or dtype in layout._full_set_dtypes(op)      # the ci's full set: the same layouts
    acc, seen, width = record(monkeypatch, t, profile)
    assert acc.wrong == 0, [w.note for *_, w in acc.worst if w.note]
    assert width == OPS[op].arity
    missing = layout.required_paths(width, layout.scalar_positions(t)) - seen
    assert not missing, f"{op} {dtype.name} {profile}: no layout takes {sorted(missing)} (layout.PATHS)"


def test_every_required_path_is_documented():
    for n, scalars in ((1, ()), (2, (0, 1)), (3, (1, 2))):
        for p in layout.required_paths(n, scalars, big=True):
            assert p in layout.PATHS or p.rsplit(" @", 1)[0] + " @i" in layout.PATHS, p
            assert p.rsplit(" @", 1)[0] in layout.__doc__, p


def test_dropping_a_kernel_shape_is_noticed(monkeypatch):
    """The check has teeth: without the NDIM 8 transposed row (and out= aliasing, which also takes
    it) the recorded paths miss it."""
    monkeypatch.setattr(layout, "VIEW_ROWS", tuple(r for r in layout.VIEW_ROWS if "NDIM 8, transposed" not in r[0]))
    real = layout._layouts_views
    monkeypatch.setattr(layout, "_layouts_views", lambda n, alias_at, dense_ok=True: real(n, None, dense_ok))
    _, seen, width = record(monkeypatch, target("exp", float32), "nightly")
    missing = layout.required_paths(width) - seen
    assert missing == {"NDIM 8 transposed", "out= aliasing"}, missing
