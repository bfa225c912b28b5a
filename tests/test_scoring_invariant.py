"""The two figures of a float measurement agree: a result strictly within half an ulp of the exact
value is its correct rounding (ulp(y) is the spacing of y's own binade, so no other value of the
format lies that close), and a result counted as not correctly rounded is at least half an ulp away.
The float64 truth is within 2^-29 ulp of the exact value for these formats: the margin."""
import numpy as np
import pytest

import nbx
from nbx.harness.scoring import host as measure
from nbx.harness.targets.target import targets
from nbx.oracles import ORACLES

MARGIN = 2.0 ** -20
OPS = ["log_sigmoid", "hardswish", "sigmoid", "silu", "gelu", "elu", "exp", "sin", "log1p", "erfc", "tanh", "mish"]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("op", OPS)
def test_misrounded_count_agrees_with_the_ulp_error(op, dtype):
    d = nbx.DTYPES[dtype]
    rng = np.random.default_rng(11)
    n = 1 << 12
    x = rng.integers(0, 2 ** (8 * d.itemsize), n, dtype=np.uint64).astype(d.uint_np).view(d.np)
    x = np.concatenate([x, np.array([60.0, 100.0, -100.0, 1e-30, -4.0, -3.0, 3e4], dtype=d.np)])
    for t in targets(ops=[op], dtypes=[dtype]):
        got = t.run([x])
        b = measure.score(t, [x], got)
        ok = ~b.special & np.isfinite(b.err)
        assert not (b.not_cr & ok & (b.err < 0.5 - MARGIN)).any(), t.label
        assert not (~b.not_cr & ok & (b.err > 0.5 + MARGIN)).any(), t.label
        if not ORACLES[op].zero_sign_matters:
            zeros = (got.astype(np.float64) == 0) & ok & (b.err == 0)
            assert not (b.not_cr & zeros).any(), t.label


@pytest.mark.parametrize("op", ["div", "mul", "square", "sqrt", "exp"])
def test_float64_results_in_the_subnormal_grid_are_scored_from_one_rounding(op):
    """float(mpf) rounds a subnormal twice (to 53 bits, then to the grid): 0xfffffffffffff / (1 - 2^-53)
    = 2^52 - 1/2 - 2^-53 units lies below the midpoint, so 0xfffffffffffff is correct, 0.5 ulp off,
    not "0x10000000000000 expected, 1 ulp". Results near 2^-1022 and below, both ways."""
    rng = np.random.default_rng(3)
    n = 1 << 11
    tiny = (rng.integers(1, 1 << 53, n, dtype=np.uint64) | (rng.integers(0, 2, n, dtype=np.uint64) << 63)).view(np.float64)
    near1 = (np.uint64(0x3ff0000000000000) + rng.integers(-2048, 2048, n).astype(np.int64).astype(np.uint64)).view(np.float64)
    cases = {"div": [tiny, near1], "mul": [tiny, near1], "square": [np.sqrt(np.abs(tiny)) * near1],
             "sqrt": [np.abs(tiny) * 2.0 ** -1000], "exp": [-708.5 - rng.random(n) * 36]}
    arrays = cases[op]
    arrays[0][:2] = np.array([0xfffffffffffff, 0x800fffffffffffff], dtype=np.uint64).view(np.float64)
    if op in ("div", "mul"):
        arrays[1][:2] = np.array([0x3fefffffffffffff] * 2, dtype=np.uint64).view(np.float64)
    t = targets(ops=[op], dtypes=["float64"])[0]
    got = t.run(arrays)
    b = measure.score(t, arrays, got)
    ok = ~b.special & np.isfinite(b.err)
    assert not (b.not_cr & ok & (b.err < 0.5 - MARGIN)).any()
    assert not (~b.not_cr & ok & (b.err > 0.5 + MARGIN)).any()
    if op in ("div", "mul", "square", "sqrt"):       # IEEE operations: correctly rounded, in the subnormals too
        assert not b.not_cr.any(), [hex(int(v)) for v in got.view(np.uint64)[b.not_cr][:4]]
        assert b.err.max() <= 0.5 + MARGIN
    if op == "div":
        assert got.view(np.uint64)[0] == 0xfffffffffffff and b.expected_bits[0] == 0xfffffffffffff


def test_a_correct_result_decided_by_ziv_scores_at_most_half_an_ulp():
    """sigmoid float32 of x = 0xb6d60000 is 0.5 + x/4 - x^3/48 ~ a float32 tie whose float64 value
    lies one float64 ulp (2^-29 float32 ulp) on the other side: the host decides it with mpmath, and
    the correct result scores 0.5, as the device's rule scores the elements it decides."""
    t = next(iter(targets(ops=["sigmoid"], dtypes=["float32"])))
    x = np.array([0xB6D60000, 0xB6E20000, 0xB6DA0000], np.uint32).view(np.float32)
    got = t.run([x])
    b = measure.score(t, [x], got)
    assert not b.not_cr.any() and b.close_calls == 3
    assert (b.err == 0.5).all(), b.err.tolist()
