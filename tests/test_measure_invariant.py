"""The two figures of a float measurement agree: a result strictly within half an ulp of the exact
value is its correct rounding (ulp(y) is the spacing of y's own binade, so no other value of the
format lies that close), and a result counted as not correctly rounded is at least half an ulp away.
The float64 truth is within 2^-29 ulp of the exact value for these formats: the margin."""
import numpy as np
import pytest

import nbx
from nbx.harness import measure
from nbx.harness.targets import targets
from oracles import ORACLES

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
