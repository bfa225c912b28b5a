"""a + alpha*b on float64 rounds once at every magnitude: the kernels' fma is DFMA on the GPU and
an exact emulation under the interpreter (nbx/backend/interpreter_libdevice.py), checked against
mpmath through real add/sub kernels; the float64 oracle agrees where alpha*b alone overflows."""
import mpmath
import numpy as np
import pytest

import nbx
from nbx.oracles.arithmetic import plus_scaled
from nbx.oracles.formats import from_bits
from nbx.oracles.rounding import round_mpf

F64_MAX = float(np.finfo(np.float64).max)


def _exact(a, alpha, b):
    """a + alpha*b rounded once to float64, from mpmath (exact at 2,200 bits for these operands)."""
    out = []
    with mpmath.workprec(2200):
        for x, y in zip(a.tolist(), b.tolist()):
            if not (np.isfinite(x) and np.isfinite(y)):
                out.append(x + alpha * y if np.isfinite(y) or not np.isfinite(x) else np.nan)
                continue
            out.append(float(from_bits(round_mpf(mpmath.mpf(x) + alpha * mpmath.mpf(y), "float64"), "float64")))
    return np.array(out)


def _wide_operands(n, seed):
    """Pairs over every binade of float64 (both signs), with b near -a/alpha for cancellation and
    near the top of the range, where Dekker's split and alpha*b overflow."""
    rng = np.random.default_rng(seed)
    a = rng.choice([-1.0, 1.0], n) * np.ldexp(rng.uniform(1, 2, n), rng.integers(-1074, 1024, n))
    b = rng.choice([-1.0, 1.0], n) * np.ldexp(rng.uniform(1, 2, n), rng.integers(-1074, 1024, n))
    top = slice(0, n // 4)
    a[top] = np.ldexp(rng.uniform(1, 2, n // 4), rng.integers(990, 1024, n // 4)) * rng.choice([-1.0, 1.0], n // 4)
    b[top] = np.ldexp(rng.uniform(1, 2, n // 4), rng.integers(990, 1023, n // 4)) * rng.choice([-1.0, 1.0], n // 4)
    near = slice(n // 4, n // 2)
    b[near] = -a[near] / 3 * (1 + rng.uniform(-1e-12, 1e-12, n // 4))
    return a, b


@pytest.mark.parametrize("alpha", [2, 3])
def test_add_and_sub_with_alpha_round_once_on_float64(alpha):
    a, b = _wide_operands(4096, alpha)
    x, y = nbx.from_numpy(a), nbx.from_numpy(b)
    with np.errstate(all="ignore"):
        want_add, want_sub = _exact(a, alpha, b), _exact(a, -alpha, b)
    got_add, got_sub = nbx.add(x, y, alpha=alpha).numpy(), nbx.sub(x, y, alpha=alpha).numpy()
    for got, want in ((got_add, want_add), (got_sub, want_sub)):
        bad = np.flatnonzero(got.view(np.int64) != want.view(np.int64))
        assert bad.size == 0, [(a[i], b[i], got[i], want[i]) for i in bad[:4]]


def test_a_product_beyond_float64_is_added_exactly():
    # alpha*b beyond max: an infinite a stays, a cancelling a brings the sum back (inf - 3 max is inf,
    # not NaN; -max + 2 max is max, not inf); the float64 oracle says the same
    a = np.array([np.inf, -F64_MAX, F64_MAX, -np.inf, 1.0])
    b = np.array([F64_MAX, F64_MAX, -F64_MAX, -F64_MAX, F64_MAX])
    got = nbx.sub(nbx.from_numpy(a), nbx.from_numpy(-b), alpha=2).numpy()        # a + 2b
    want = [np.inf, F64_MAX, -F64_MAX, -np.inf, np.inf]
    assert got.tolist() == want
    assert plus_scaled(a, 2, b).tolist() == want
    assert nbx.sub(nbx.from_numpy(a[:1]), nbx.from_numpy(b[:1]), alpha=3).numpy().tolist() == [np.inf]
