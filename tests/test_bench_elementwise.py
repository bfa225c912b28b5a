"""bench/elementwise.py on the interpreter at 2^12 elements: the table's rows, its operands, its inputs.

The times are the interpreter's and mean nothing; the rows, the operands each op is given, the
inputs' domains and the counted exact-path fractions are the code path the H200 runs.
"""
import json
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import distributions, elementwise  # noqa: E402  (the checkout's bench/, beside tests/)
from nbx.harness.targets.target import Target  # noqa: E402

LOG2N = 12
OPS = ["exp", "add", "where", "log", "floor_divide"]          # unary, binary, ternary, two fast paths


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "bandwidth.json"
    rc = elementwise.main(["--log2n", str(LOG2N), "--ops", ",".join(OPS), "--reps", "1", "--json", str(path)])
    return rc, json.loads(path.read_text())


def test_every_op_dist_and_layout_has_a_row(table):
    rc, res = table
    assert rc == 0
    got = [(r["op"], r["dist"], r["layout"]) for r in res["rows"]]
    want = [(op, d, lay) for op in OPS for d in distributions.DISTS for lay in distributions.LAYOUTS]
    assert got == want
    for r in res["rows"]:
        assert r["error"] == "" and r["nbx_ms"] > 0 and r["nbx_of_copy"] > 0, r
        if r["torch_ms"] is None:
            assert r["torch"], r                    # a reason: torch is absent or lacks the op
    assert res["n"] == 1 << LOG2N and res["copy_ms"] > 0


def test_exact_path_fraction_is_counted_for_fast_paths_only(table):
    _, res = table
    for r in res["rows"]:
        fast = distributions.fast_path(elementwise.bench_targets([r["op"]])[0]) is not None
        if fast:
            assert 0.0 <= r["exact_fraction"] <= 1.0, r
        else:
            assert r["exact_fraction"] is None, r
    # the hard mix sends log's elements to the exact path (one interpreter tile holds them all)
    hard = [r["exact_fraction"] for r in res["rows"] if r["op"] == "log" and r["dist"] == "hard"]
    assert hard and min(hard) > 0.5
    uniform = [r["exact_fraction"] for r in res["rows"] if r["op"] == "log" and r["dist"] == "uniform"]
    assert uniform and max(uniform) < 0.5


@pytest.mark.parametrize("label", ["pow", "softplus"])
def test_exact_path_fraction_of_a_composed_op_and_one_with_parameters(label):
    # pow runs through its compose hook (plain_spec), softplus takes two numbers: the marked exact
    # body must reach the launch in both, so the hard mix (every pair outside the fast domain for
    # pow) counts as exact-path elements
    t = elementwise.bench_targets([label])[0]
    tensors = distributions.Inputs().flat(t, "hard", 1 << 12)
    elementwise.registry.run(elementwise.OPS[t.op], list(tensors), dict(t.params))   # the op itself first, as the bench runs it
    frac = elementwise.exact_fraction(t, tensors)
    assert (frac > 0.5) if label == "pow" else (0.0 <= frac <= 1.0)


@pytest.mark.parametrize("op", ["add", "floor_divide", "bitwise_and", "bitwise_left_shift", "where", "lerp"])
@pytest.mark.parametrize("layout", distributions.LAYOUTS)
def test_operands_are_distinct_tensors(op, layout):
    t = elementwise.bench_targets([op])[0]
    inputs = distributions.Inputs()
    for dist in distributions.DISTS:
        ts = inputs.operands(t, dist, layout, 1 << LOG2N).tensors
        assert len(ts) == t.spec.arity
        for i in range(len(ts)):
            for j in range(i + 1, len(ts)):
                assert ts[i] is not ts[j]
                assert ts[i].untyped_storage() is not ts[j].untyped_storage()
                if ts[i].dtype is ts[j].dtype and ts[i].shape == ts[j].shape:
                    assert not np.array_equal(ts[i].numpy(), ts[j].numpy()), (op, dist, layout, i, j)


@pytest.mark.parametrize("op", ["log", "sqrt", "acosh", "asin", "atanh", "log1p", "pow", "lerp", "where",
                                "bitwise_left_shift", "floor_divide", "rsqrt", "bf16_to_fp16"])
@pytest.mark.parametrize("dist", ["realistic", "hard"])
def test_inputs_lie_in_the_oracles_domain(op, dist):
    t = elementwise.bench_targets([op])[0]
    arrays = distributions.blocks(t, dist, 4096)
    values = t.oracle_values(arrays)                  # as the oracle sees them (a bits operand decoded)
    for i in range(t.spec.arity):
        lo, hi = distributions.domain(t, i)
        assert distributions.in_domain(values[i], lo, hi).all(), (op, dist, i, values[i][:8])
        assert not np.isnan(values[i]).any()
    if dist == "hard" and distributions.hard_pool(t)[0] is not None:
        # the hard mix is drawn from the elements the fast path's rounding test sends to the exact path
        # (where it flags any of its candidates: pow's flags none)
        assert distributions.hard_flags(distributions.fast_path(t), arrays).all()


def test_bad_names_are_refused():
    with pytest.raises(SystemExit, match="no op or variant"):
        elementwise.bench_targets(["nope"])
    with pytest.raises(SystemExit, match="--dists"):
        elementwise.main(["--dists", "gaussian", "--ops", "exp"])
    assert [t.label for t in elementwise.bench_targets(["div"])] == [
        "div", "div:rounding_mode=trunc", "div:rounding_mode=floor"]
    assert isinstance(elementwise.bench_targets(["div:rounding_mode=floor"])[0], Target)
