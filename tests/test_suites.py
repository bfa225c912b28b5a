"""The structural suites (harness/suites.py, layout.py, intdiv.py): layout and intdiv give zero
wrong on correct ops, and a deliberately broken launcher or floor-division body makes them report
wrong results and the gate fail."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import triton
import triton.language as tl  # noqa: F401  (a @triton.jit body needs tl visible)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import nbx
from nbx.dtype import bfloat16, bool_, float16, float32, float64, int16, int32, int64, int8, uint8
from nbx.harness.gate import verdict as gate
from nbx.harness import api
from nbx.harness.run import runner
from nbx.harness.suites import layout
from nbx.harness.suites import structural
from nbx.harness.scoring.host import Accumulator
from nbx.harness.targets.target import Target
from nbx.kernels import iterate
from nbx.kernels import math as m
from nbx.tensor import Tensor

NO_BUDGETS = {"schema": 1, "backend": "test", "budgets": {}}


def measure(op, dtype, suite, params=None):
    return api.measure(Target(op, params or {}, dtype), suite, backend="test")


def gate_reasons(ms, op, dtype, suite):
    fails = gate.decide(ms, NO_BUDGETS, ops=[op], dtypes=[dtype.name], suites=[suite])
    return [f.reason for f in fails if tuple(f.key)[:3] == (ms[0].op, dtype.name, suite)]


# ---------------------------------------------------------------------- which suites apply
def test_structural_suites_mapping():
    assert structural.structural_suites(Target("exp", {}, float32)) == ["layout"]
    assert structural.structural_suites(Target("gelu", {"approximate": "tanh"}, float32)) == []
    assert structural.structural_suites(Target("to", {"dtype": "bool"}, int8)) == ["layout"]
    assert structural.structural_suites(Target("to", {"dtype": "int8"}, int8)) == []
    assert structural.structural_suites(Target("floor_divide", {}, int64)) == ["layout", "intdiv"]
    assert structural.structural_suites(Target("div", {"rounding_mode": "trunc"}, uint8)) == ["intdiv"]
    assert structural.structural_suites(Target("div", {}, int32)) == ["layout"]
    assert structural.structural_suites(Target("remainder", {}, float64)) == ["layout", "intdiv"]
    assert structural.structural_suites(Target("fmod", {}, float32)) == ["layout"]
    assert "intdiv" in api.suites_for(Target("fmod", {}, int16))


# ---------------------------------------------------------------------- correct ops: zero wrong
@pytest.mark.parametrize("op,dtype,profile", [("add", float32, "ci"), ("where", float32, "ci"),
                                              ("exp", bfloat16, "nightly"), ("bitwise_and", bool_, "ci"),
                                              ("glu", float32, "ci"), ("lt", int64, "nightly"),
                                              ("mul", float16, "ci")])
def test_layout_suite_zero_wrong(op, dtype, profile):
    t = Target(op, {}, dtype)
    acc = Accumulator(t, "layout", "test")
    layout.run_layout(t, profile, 0, acc)
    notes = [w.note for _, _, w in acc.worst]
    assert acc.wrong == 0, notes
    full = profile == "nightly" or dtype in layout._full_set_dtypes(op)
    assert acc.layouts >= (12 if full else 2) and acc.cases > 0


@pytest.mark.parametrize("op,params,dtype", [("floor_divide", {}, int64), ("remainder", {}, int8),
                                             ("div", {"rounding_mode": "trunc"}, int32),
                                             ("fmod", {}, uint8), ("floor_divide", {}, float32),
                                             ("remainder", {}, float64)])
def test_intdiv_suite_zero_wrong(op, params, dtype):
    ms = measure(op, dtype, "intdiv", params)
    assert not ms.error, ms.error
    assert ms.wrong == 0, [w.note for w in ms.worst]
    assert ms.special_mismatches == 0 and ms.cases > 500


# ---------------------------------------------------------------------- hypothesis: the view machinery
@st.composite
def views(draw, shape):
    """A transform list for an operand of `shape` (the suite's view builder's vocabulary)."""
    nd = len(shape)
    tr = []
    if nd >= 2 and draw(st.booleans()):
        tr.append(("perm", tuple(draw(st.permutations(range(nd))))))
    if nd and draw(st.booleans()):
        tr.append(("step", draw(st.integers(0, nd - 1)), draw(st.integers(2, 3))))
    if nd and draw(st.booleans()):
        tr.append(("narrow", draw(st.integers(0, nd - 1)), draw(st.integers(1, 2))))
    if draw(st.booleans()):
        tr.append(("offset1",))
    return tr


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3))
def test_layout_group_on_hypothesis_shapes(data, shapes):
    """A layout group on hypothesis's shapes and views: zero mismatches, and the built views hold
    exactly the values they were built from."""
    t = Target("mul", {}, float32)
    rng = np.random.default_rng(0)
    acc = Accumulator(t, "layout", "test")
    run = layout.LayoutRun(t, acc, rng, 2, False)
    ins = list(shapes.input_shapes)
    per = [data.draw(views(s)) for s in ins]
    for s, tr in zip(ins, per):
        v = rng.standard_normal(s).astype(np.float32)
        built = layout.build(v, tr, lambda shp: np.full(shp, np.nan, np.float32))
        assert built.shape == tuple(s)
        np.testing.assert_array_equal(built.numpy(), v)
    run.group(ins, [layout.Layout("hypothesis", per)], "hypothesis")
    assert acc.layouts == 1 and acc.wrong == 0, [w.note for _, _, w in acc.worst]


def test_numpy_drawn_shapes_broadcast():
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(1, 4))
        shapes, full = layout.draw_broadcastable_shapes(rng, n, 1, 8, 1, 3)
        assert len(shapes) == n and np.broadcast_shapes(*shapes) == full and len(shapes[0]) == len(full)
    a = layout.draw_broadcastable_shapes(np.random.default_rng(5), 3, 1, 6)
    assert a == layout.draw_broadcastable_shapes(np.random.default_rng(5), 3, 1, 6)      # deterministic


# ---------------------------------------------------------------------- broken kernels fail the gate
def _contiguous_strides(shape):
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))


def test_launcher_ignoring_an_operand_stride_fails_the_gate(monkeypatch):
    real_plan = iterate.plan

    def broken_plan(out, inputs, *, op):
        if len(inputs) >= 2:
            b = inputs[1]
            inputs = [inputs[0], Tensor(b._storage, b.shape, _contiguous_strides(b.shape), b._offset, b.dtype),
                      *inputs[2:]]
        return real_plan(out, inputs, op=op)

    monkeypatch.setattr(iterate, "plan", broken_plan)
    ms = measure("add", float32, "layout")
    assert not ms.error, ms.error
    assert ms.wrong > 0 and ms.layouts > 0
    assert any(w.note.startswith("layout") for w in ms.worst)
    assert any("wrong results" in r for r in gate_reasons([ms], "add", float32, "layout"))


@triton.jit
def _naive_floor_divide(a, b):
    return m.floor(m.div(a, b))          # floor of the ROUNDED quotient: 1.0 // 0.1 would be 10


def test_floor_of_rounded_quotient_fails_the_gate(monkeypatch):
    spec = nbx.OPS["floor_divide"]
    orig = spec.body
    broken = dataclasses.replace(spec, body=lambda p, t: _naive_floor_divide if t.compute[0].is_float else orig(p, t))
    monkeypatch.setitem(nbx.OPS, "floor_divide", broken)
    ms = measure("floor_divide", float32, "intdiv")
    assert not ms.error, ms.error
    assert ms.wrong > 0 and ms.not_correctly_rounded > 0
    reasons = gate_reasons([ms], "floor_divide", float32, "intdiv")
    assert any("wrong results" in r for r in reasons), reasons
    monkeypatch.undo()
    assert nbx.OPS["floor_divide"] is spec
    assert measure("floor_divide", float32, "intdiv").wrong == 0


def test_a_raising_layout_case_is_counted_not_crashed(monkeypatch):
    real = layout.call

    def flaky(t, operands, out=None):
        if any(isinstance(x, Tensor) and x.storage_offset() == 1 for x in operands):
            raise RuntimeError("boom on an unaligned operand")
        return real(t, operands, out=out)

    monkeypatch.setattr(layout, "call", flaky)
    ms = measure("neg", float32, "layout")
    assert not ms.error and ms.wrong > 0
    assert any("boom" in w.note for w in ms.worst)


def test_integer_zero_division_that_does_not_raise_is_wrong(monkeypatch):
    spec = nbx.OPS["remainder"]
    monkeypatch.setitem(nbx.OPS, "remainder", dataclasses.replace(spec, fault=None))
    ms = measure("remainder", int32, "intdiv")
    assert ms.wrong > 0
    assert any("ZeroDivisionError" in w.note for w in ms.worst)


def test_suite_times_line():
    from types import SimpleNamespace
    ms = [SimpleNamespace(suite="layout", wall_s=2.0), SimpleNamespace(suite="bank", wall_s=0.5),
          SimpleNamespace(suite="layout", wall_s=1.25)]
    assert runner.suite_times(ms) == "time per suite: layout 3.2 s (2 jobs), bank 0.5 s (1 jobs); total 3.8 s"
