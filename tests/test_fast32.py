"""The float32 fast paths (nbx/kernels/fast32.py): the rounding test, the fallback, and their claim.

The claim: wherever the rounding test passes, the fast value rounds to the same float32 as the
libdevice float64 path; elsewhere the tile falls back to that path. On the CPU the interpreter runs
the same kernels over numpy (a strided sample of all float32 inputs); bench/fast32_exhaustive.py runs
all 2^32 on the GPU.
"""
import math

import numpy as np
import pytest
import triton
import triton.language as tl

import nbx
from nbx.harness import fastpath
from nbx.kernels import fast32

UNARY = sorted(fastpath.FNS)
ROOM = {"erf": 1.8}


@pytest.mark.parametrize("name", UNARY)
def test_fast_value_within_the_bound_and_never_wrong(name):
    # 2^16 bit patterns spread over all 2^32 (a stride prime to 2), every sign and exponent
    row = fastpath.probe_unary(name, 16, start=12345, stride=65537, chunk_log2=16)
    assert row["wrong"] == 0, row
    # the test's bound E (2^-45; erf 2^-40) must hold with room: the worst measured error is below
    # E / ROOM. erf's 7/8 rational has its own window, at 2.0x its fit error (2^-41.01, equioscillating
    # over the whole range, so 2^16 samples come within a few percent of it; float64 evaluation adds
    # < 2^-48.7; every float32 input on the H200: 2^-41.01)
    assert row["max_rel_err"] < fastpath.bound(name) / ROOM.get(name, 8), row


@pytest.mark.parametrize("name", UNARY)
def test_ordinary_inputs_take_the_fast_path(name):
    # 2^16 consecutive float32 from 1.0 up (one binade slice): almost no tile may fall back, or the
    # fast path would be dead code behind a rounding test that always fails
    one = int(np.float32(1.0).view(np.uint32))
    row = fastpath.probe_unary(name, 16, start=one, stride=1, chunk_log2=16)
    assert row["wrong"] == 0, row
    assert row["tiles_hard"] <= 2, row


@pytest.mark.parametrize("trunc", [False, True])
def test_integral_quotient_matches_the_fmod_path(trunc):
    a, b = fastpath.random_pairs(1 << 16, seed=7)
    row = fastpath.probe_divide(a, b, trunc)
    assert row["wrong"] == 0, row
    assert row["outside"] < row["inputs"] // 2, row        # the fast range is exercised


@pytest.mark.parametrize("op", ["log", "sin", "cos", "tan", "rsqrt", "erf"])
def test_op_equals_the_float64_path_on_fast_and_fallback_tiles(op):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.01, 100.0, 8192).astype(np.float32)
    x[100], x[101] = -0.0, 0.0                             # signed zeros: sin(-0) = -0 on the fast path
    x[102], x[103], x[104] = -3.9, 3.9192059, -np.inf      # erf: 1.0f from 3.9192 on, +-4 clamps
    x[5000] = np.nan                                       # that tile falls back, the others do not
    x[7000] = -1.0 if op == "log" else 3.0e6               # outside the fast domain
    got = getattr(nbx, op)(nbx.from_numpy(x)).numpy()
    with np.errstate(invalid="ignore"):
        ref = {"rsqrt": lambda w: 1 / np.sqrt(w), "erf": np.vectorize(math.erf)}.get(op) or getattr(np, op)
        want = ref(x.astype(np.float64)).astype(np.float32)
    # NaN payloads are the libraries' own (libdevice's erf returns 0x7fffffff, numpy 0x7fc00000)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(want)].view(np.uint32), want[~np.isnan(want)].view(np.uint32))


@pytest.mark.parametrize("op", ["floor_divide", "div_floor", "div_trunc"])
def test_integral_quotient_ops_keep_signed_zeros_and_exact_integers(op):
    a = np.array([-0.0, 0.0, 0.0, 1e-8, -1e-8, 1.0, 7.0, -7.0, 7.0, 4194303.0, 1.0], np.float32)
    b = np.array([3.0, -3.0, 3.0, 5.0, 5.0, 0.1, 2.0, 2.0, -2.0, 1.0, -np.inf], np.float32)
    mode = {"div_floor": "floor", "div_trunc": "trunc"}.get(op)
    fn = (lambda x, y: nbx.div(x, y, rounding_mode=mode)) if mode else nbx.floor_divide
    got = fn(nbx.from_numpy(a), nbx.from_numpy(b)).numpy()
    sign = np.signbit(a) != np.signbit(b)
    if mode == "trunc":
        want = [math.trunc(float(x) / float(y)) if math.isfinite(y) else 0.0 for x, y in zip(a, b)]
    else:
        want = [float(x) // float(y) for x, y in zip(a, b)]         # Python's: 1.0 // 0.1 == 9.0
    want = np.array([math.copysign(0.0, -1.0 if s else 1.0) if w == 0 else w for w, s in zip(want, sign)],
                    np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@triton.jit
def _hard_kernel(y_ptr, out_ptr, N: tl.constexpr, K: tl.constexpr, KEY_HARD: tl.constexpr):
    i = tl.arange(0, N)
    y = tl.load(y_ptr + i)
    hard = fast32.hard_to_round(y, K)
    by_key = fast32.hard_key(y, hard & ~hard, K) <= KEY_HARD          # the launcher's test of the key
    tl.store(out_ptr + i, hard.to(tl.int8) + 2 * by_key.to(tl.int8))


@pytest.mark.parametrize("k", [int(fast32.HARD_K), int(fast32.ERF_K)])
def test_hard_to_round_marks_the_window_around_each_float32_midpoint(k):
    one = np.float64(1.0).view(np.int64)
    mid = one + (1 << 28)                                  # 1 + 2^-24: halfway between 1 and its successor
    cases = {mid: 1, mid - k: 1, mid + k: 1, mid - k - 1: 0, mid + k + 1: 0, one: 0,
             np.float64(0.0).view(np.int64): 0,            # exact zeros round to themselves
             np.float64(3.0).view(np.int64) + (1 << 28) + 5: 1,
             np.float64(2.0 ** -126).view(np.int64): 0}
    y = np.array(list(cases), np.int64).view(np.float64)
    y = np.concatenate([y, -y])
    n = triton.next_power_of_2(len(y))
    buf = np.zeros(n, np.float64)
    buf[:len(y)] = y
    out = nbx.empty(n, dtype="int8")
    _hard_kernel[(1,)](nbx.from_numpy(buf), out, N=n, K=k, KEY_HARD=fast32.key_hard(k))
    want = [3 * h for h in cases.values()] * 2             # hard_to_round and the key agree
    assert out.numpy()[:len(y)].tolist() == want


@triton.jit
def _any_hard_kernel(y_ptr, outside_ptr, out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    hard = fast32.any_hard(tl.load(y_ptr + i), tl.load(outside_ptr + i) != 0, fast32.HARD_K)
    tl.store(out_ptr + i, tl.full([N], 0, tl.int8) + hard.to(tl.int8))


@pytest.mark.parametrize("where, outside, want", [
    (None, None, 0),            # every element easy: the tile keeps the fast values
    (17, None, 1),              # one element at a rounding midpoint
    (None, 300, 1),             # one element outside the domain
    (1023, 1023, 1),            # both on the last lane
])
def test_any_hard_is_one_flag_for_the_tile(where, outside, want):
    rng = np.random.default_rng(11)
    y = rng.uniform(1.0, 2.0, 1024)
    bits = y.view(np.int64)
    bits[:] = (bits & ~np.int64(0x1FFFFFFF)) | np.int64(0x08000000)   # a quarter ulp: easy everywhere
    if where is not None:
        bits[where] = (bits[where] & ~np.int64(0x1FFFFFFF)) | np.int64(0x10000000 + 3)
    out_mask = np.zeros(1024, np.int8)
    if outside is not None:
        out_mask[outside] = 1
    out = nbx.empty(1024, dtype="int8")
    _any_hard_kernel[(1,)](nbx.from_numpy(bits.view(np.float64)), nbx.from_numpy(out_mask), out, N=1024)
    assert set(out.numpy().tolist()) == {want}
