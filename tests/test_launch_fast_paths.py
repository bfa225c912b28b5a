"""The launcher's fast paths (OpSpec.fast32, launch.py): a float32 op with a fast path runs its
evaluation over every tile and its exact body, in pieces reloaded from memory, only over tiles with
a hard element.

Each test compares a fast-path launch against the exact body launched on every element
(LaunchConfig(fast=False)): the results must be the same bit for bit, whatever the piece size, the
kernel, the piece mask, the layout, or aliasing of out= and input. On the GPU a piece is 128
elements; here the pieces are set small so the loop runs many times.
"""
import math

import numpy as np
import pytest
import triton
import triton.language as tl

import nbx
from nbx.kernels import flat, iterate, launch
from nbx.kernels.fast32 import keys
from nbx.kernels.fastpath import FastPath
from nbx.kernels.launch import LaunchConfig
from nbx.ops import OPS
from nbx.ops import registry

UNARY = sorted(name for name, spec in OPS.items() if isinstance(spec.fast32, FastPath) and spec.arity == 1)
EXACT = LaunchConfig(fast=False)


def _hard_input(n, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 20).astype(np.float32)
    x[::1777] = np.nan                                      # a flag in every ~2 pieces of 1024
    x[3::2503] = 3.0e7                                      # trig outside the fast domain
    x[7::3001] = -0.0
    return x


def _run(op, *args, config=launch.DEFAULT, out=None, **params):
    return registry.run(OPS[op], list(args), params, out=out, config=config)


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint32)


@pytest.fixture(params=[0, 2048], ids=lambda p: f"piece{p or launch.PIECE}")
def piece(request):
    return request.param


@pytest.fixture(params=[True, False], ids=["flat", "tiled"])
def kernel(request):
    """fast_flat_kernel (contiguous operands) or elementwise_kernel's fast branch."""
    return request.param


@pytest.fixture(params=[None, True, False], ids=["own-mask", "piece-mask", "no-mask"])
def mask(request):
    """The flat kernel's per-piece mask as each fast path sets it (erf: on), forced on, or off."""
    return request.param


@pytest.mark.parametrize("op", UNARY)
def test_fast_path_equals_the_exact_body(op, piece, kernel, mask):
    # with pieces of 2048 a tile of the interpreter's 65536 elements has 32: the mask's sign bit too
    x = nbx.from_numpy(_hard_input(70000))
    config = LaunchConfig(piece=piece, flat=kernel, piece_mask=mask)
    np.testing.assert_array_equal(_bits(_run(op, x, config=config).numpy()), _bits(_run(op, x, config=EXACT).numpy()))


@pytest.mark.parametrize("op", UNARY)
def test_fast_path_equals_the_exact_body_on_special_values_in_a_fast_tile(op):
    # each special value alone in a tile of 256 ordinary ones (under the interpreter a tile is
    # otherwise 65536 elements, and one element outside the fast domain sends all of them to the
    # exact body): signed zeros, infinities, subnormals and extremes are decided by the fast path
    # wherever it claims them (asinh(-0) once was not)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754944e-38, -1.1754944e-38,
                        3.4028235e38, -3.4028235e38, 1.0, -1.0, 0.5, -0.5], np.float32)
    rng = np.random.default_rng(5)
    x = rng.uniform(0.01, 0.9, special.size * 256) * rng.choice([-1, 1], special.size * 256)
    x = (np.abs(x) + 1 if op == "acosh" else x).astype(np.float32)    # inside every fast domain
    x[77::256] = special
    x = nbx.from_numpy(x)
    config = LaunchConfig(block=256)
    np.testing.assert_array_equal(_bits(_run(op, x, config=config).numpy()), _bits(_run(op, x, config=EXACT).numpy()))


def test_nan_takes_the_exact_body():
    # a NaN kept through the fast body's max and min (the GPU's FMNMX drops NaN unless told)
    x = nbx.from_numpy(np.array([np.nan, -np.nan, 1.0, 2.0] * 64, np.float32))
    for op in UNARY:
        got = _run(op, x).numpy()
        assert np.isnan(got[::4]).all() and np.isnan(got[1::4]).all(), op


def test_the_public_function_runs_the_fast_path():
    assert all(OPS[op].fast32 is not None for op in UNARY)
    x = nbx.from_numpy(_hard_input(5000))
    np.testing.assert_array_equal(_bits(nbx.sin(x).numpy()), _bits(_run("sin", x).numpy()))


@triton.jit
def _piece_mask_kernel(key_ptr, out_ptr, HARD_KEY: tl.constexpr, NP: tl.constexpr, PIECE_C: tl.constexpr):
    key = tl.load(key_ptr + tl.arange(0, NP * PIECE_C))
    tl.store(out_ptr, flat.piece_mask(key, HARD_KEY, NP, PIECE_C))


@pytest.mark.parametrize("hard_at, want", [
    ([], 0),
    ([0], 1),                                # the first element: piece 0
    ([5 * 16 + 15], 1 << 5),                 # the last element of piece 5
    ([3, 7 * 16, 7 * 16 + 9], 0b10000001),   # two in piece 7: one bit
    ([31 * 16 + 4], -2 ** 31),               # piece 31: the sign bit
    (list(range(0, 512, 16)), -1),           # every piece
])
def test_piece_mask_marks_the_pieces_that_hold_a_hard_key(hard_at, want):
    key = np.full(32 * 16, 5, np.int32)
    key[hard_at] = -7                        # <= HARD_KEY = -3
    out = nbx.empty(1, dtype="int32")
    _piece_mask_kernel[(1,)](nbx.from_numpy(key), out, HARD_KEY=-3, NP=32, PIECE_C=16)
    assert int(out.numpy()[0]) == want


@pytest.mark.parametrize("op", ["sin", "log"])
def test_fast_path_on_a_strided_2d_view(op, piece):
    # a transposed view: 2-D tiles, so a piece spans the tile's rows
    base = _hard_input(300 * 257, seed=1).reshape(300, 257)
    x = nbx.from_numpy(base).transpose(0, 1)
    got = _run(op, x, config=LaunchConfig(piece=piece)).numpy()
    want = _run(op, nbx.from_numpy(np.ascontiguousarray(base.T)), config=EXACT).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("op", ["sin", "softplus", "pow"])
def test_fast_path_on_the_rows_of_a_padded_slice_and_a_broadcast_row(op, piece, kernel):
    # fast_flat_kernel row by row (each row's bases in scalar arithmetic) or the 2-D tiles; tiles of
    # 256 under the interpreter, so rows span several tiles and a tile's pieces split one row
    base = _hard_input(24 * 1100, seed=4).reshape(24, 1100)
    x = nbx.from_numpy(base)[:, 37:37 + 1000]
    config = LaunchConfig(piece=piece, flat=kernel, block=256 if kernel else 0)
    args = [x, nbx.from_numpy(np.abs(base[0, :1000]) + 0.5)] if op == "pow" else [x]
    got = _run(op, *args, config=config).numpy()
    want = _run(op, *[nbx.from_numpy(np.ascontiguousarray(a.numpy())) for a in args], config=EXACT).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("op", ["sin", "tan"])
def test_fast_path_with_out_aliasing_the_input(op, piece, kernel):
    # the fallback reloads its inputs: nothing of a flagged tile may be stored before it
    host = _hard_input(20000, seed=2)
    want = _run(op, nbx.from_numpy(host), config=EXACT).numpy()
    x = nbx.from_numpy(host)
    r = _run(op, x, out=x, config=LaunchConfig(piece=piece, flat=kernel))
    assert r is x
    np.testing.assert_array_equal(_bits(x.numpy()), _bits(want))


@pytest.mark.parametrize("op, params", [("floor_divide", {}), ("div", {"rounding_mode": "trunc"}),
                                        ("div", {"rounding_mode": "floor"})])
def test_fast_integral_division(op, params, piece, kernel):
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(30000) * 1e3).astype(np.float32)
    b = rng.standard_normal(30000).astype(np.float32)
    b[::997] = 0.0                                          # outside the fast range: flagged tiles
    a[5::1511] = 3.0e38
    A, B = nbx.from_numpy(a), nbx.from_numpy(b)
    got = _run(op, A, B, config=LaunchConfig(piece=piece, flat=kernel), **params).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(_run(op, A, B, config=EXACT, **params).numpy()))


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_fast_division_by_a_scalar(mode, kernel):
    # a Python scalar operand is a broadcast element (stride 0), which the flat kernel takes
    rng = np.random.default_rng(6)
    a = (rng.standard_normal(30000) * 1e6).astype(np.float32)
    a[::1301] = np.inf                                      # flagged tiles
    A = nbx.from_numpy(a)
    got = _run("div", A, 0.1, rounding_mode=mode, config=LaunchConfig(flat=kernel)).numpy()
    B = nbx.from_numpy(np.full(a.shape, 0.1, dtype=np.float32))
    np.testing.assert_array_equal(_bits(got), _bits(_run("div", A, B, rounding_mode=mode, config=EXACT).numpy()))


def test_which_fast_launches_are_flat():
    x = nbx.from_numpy(_hard_input(4096).reshape(64, 64))
    flat_ = lambda out, ins, fault=None: launch._flat(iterate.plan(out, ins, op="t"), fault)
    assert flat_(nbx.empty((64, 64), dtype="float32"), [x])
    assert flat_(nbx.empty((64, 64), dtype="float32"), [x, nbx.from_numpy(np.float32(2.0).reshape(()))])
    assert not flat_(nbx.empty((64, 64), dtype="float32"), [x.transpose(0, 1)])
    assert flat_(nbx.empty((32, 64), dtype="float32"), [x[::2]])                 # rows of a padded slice
    assert flat_(nbx.empty((64, 64), dtype="float32"), [x, x[0]])                # and a broadcast row
    assert not flat_(nbx.empty((4, 4, 64), dtype="float32"), [x.reshape(8, 8, 64)[::2, ::2]])   # two outer dims
    assert not flat_(nbx.empty((64, 64), dtype="float32"), [x], fault=object())


def test_pieces_cover_the_tile():
    for piece in (0, 32, 2048):
        for block_r, block_c in [(1, 1024), (32, 32), (4, 256), (1, 65536), (256, 4)]:
            piece_c, n = launch._pieces(block_r, block_c, piece)
            assert piece_c * n == block_c and block_c % piece_c == 0
            assert block_r * piece_c <= max(piece or launch.PIECE, block_r)


def test_only_float32_computations_take_the_fast_path():
    spec = OPS["sin"]
    f32, f64, f16 = (nbx.empty(4, dtype=d) for d in ("float32", "float64", "float16"))
    assert spec.select_fast32({}, spec.typing([f32], {})) is spec.fast32
    # float16/bfloat16 float math computes in float64, rounded once on the store: the fast path's
    # rounding test vouches for float32 results only
    assert spec.select_fast32({}, spec.typing([f16], {})) is None
    i16 = nbx.empty(4, dtype="int16")
    assert spec.select_fast32({}, spec.typing([i16], {})) is spec.fast32     # integers: float32 results
    assert spec.select_fast32({}, spec.typing([f64], {})) is None
    assert OPS["exp"].select_fast32({}, OPS["exp"].typing([f32], {})) is None
    i32 = nbx.empty(4, dtype="int32")
    fd = OPS["floor_divide"]
    assert fd.select_fast32({}, fd.typing([i32, i32], {})) is None           # integer division is exact already


# Number parameters reach the fast path as they reach the exact body; a value the fast path cannot
# take (0, inf or NaN; softplus's |beta| <= 2^-800, where exp's clamp would show) sends every
# element to the exact body.
WITH_NUMBERS = [("elu", {"alpha": 0.5}), ("elu", {"alpha": -2.0}), ("elu", {"alpha": 0.0}),
                ("elu", {"alpha": math.inf}), ("celu", {"alpha": 2.0}), ("celu", {"alpha": -0.75}),
                ("celu", {"alpha": 1e-300}), ("celu", {"alpha": math.nan}),
                ("softplus", {"beta": 2.0, "threshold": 10.0}), ("softplus", {"beta": -3.0}),
                ("softplus", {"beta": 1e-250}), ("softplus", {"beta": 2.0 ** -900}),
                ("softplus", {"threshold": math.nan}), ("softplus", {"beta": 0.125, "threshold": -5.0})]


@pytest.mark.parametrize("op, params", WITH_NUMBERS, ids=lambda v: v if isinstance(v, str) else
                         ",".join(f"{k}={w}" for k, w in v.items()))
def test_fast_path_with_number_parameters_equals_the_exact_body(op, params, kernel):
    x = _hard_input(70000, seed=3)
    x[11::997] = -750.0                                     # exp(u) below float64's range for beta = 1
    x = nbx.from_numpy(x)
    got = _run(op, x, config=LaunchConfig(flat=kernel), **params).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(_run(op, x, config=EXACT, **params).numpy()))


@pytest.mark.parametrize("op", ["sin", "rsqrt"])
def test_many_small_pieces(op):
    # 2000 elements: one tile of 2048 columns in 64 pieces of 32, the last one partly masked
    x = nbx.from_numpy(_hard_input(2000, seed=5))
    got = _run(op, x, config=LaunchConfig(piece=32)).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(_run(op, x, config=EXACT).numpy()))


# The launcher's threshold is the fast path's own window (FastPath.k): an evaluation whose values lie
# 300 float64 ulps from a float32 midpoint falls back under k=512 and keeps its (here deliberately
# wrong) fast values under k=256.
@triton.jit
def _window_eval(x):
    y = (x * 0.0).to(tl.float64) + (1.0 + 2.0 ** -24 + 300 * 2.0 ** -52)
    return y, x != x


@triton.jit
def _window_exact(x):
    return x * 0.0 + 1.0


@pytest.mark.parametrize("k, want", [(512, 1.0), (256, 1.0 + 2.0 ** -23)], ids=["k512", "k256"])
def test_the_threshold_is_the_fast_paths_own_window(k, want, kernel):
    x = nbx.from_numpy(np.ones(3000, np.float32))
    out = nbx.empty(3000, dtype="float32")
    launch.launch(_window_exact, out, [x], [], compute=[nbx.float32], op="window",
                  fast=FastPath(_window_eval, k=k), config=LaunchConfig(flat=kernel))
    assert set(out.numpy().tolist()) == {np.float32(want)}


def _pow_operands(n, seed):
    """Random pairs over 2^-40..2^40 and their edges (fastpath.random_pairs), realistic ones, and
    exact powers: 4097^2 = 2^24 + 2^13 + 1 is a float32 midpoint (an exact tie), 3^11 and 2^-149
    exact values, negative bases with odd, even and fractional exponents."""
    from nbx.harness.suites import fastpath
    a, b = fastpath.random_pairs(n, seed=seed)
    rng = np.random.default_rng(seed)
    k = n // 4
    a[:k] = rng.uniform(0.01, 10.0, k)
    b[:k] = rng.standard_normal(k) * 8
    special = [(4097.0, 2.0), (3.0, 11.0), (2.0, -149.0), (0.5, 149.5), (-3.0, 3.0), (-3.0, 4.0), (-2.0, 0.5),
               (-0.0, 3.0), (0.0, -1.0), (np.inf, -0.5), (1.0, np.nan), (np.nan, 0.0), (1.0000001, 1e9),
               (0.9999999, -1e9), (-1.0, 16777217.0), (65535.0, 8.0), (1e-38, 0.25)]
    for i, (x, y) in enumerate(special):
        a[k + 257 * i], b[k + 257 * i] = x, y
    return nbx.from_numpy(a), nbx.from_numpy(b)


@pytest.mark.parametrize("block", [0, 256], ids=["own-tile", "tile256"])
def test_pow_fast_path_equals_the_exact_body(kernel, block):
    # tiles of 256 (the flat kernel): each special operand pair shares its tile with ordinary ones only
    A, B = _pow_operands(70000, seed=7)
    got = _run("pow", A, B, config=LaunchConfig(flat=kernel, block=block)).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(_run("pow", A, B, config=EXACT).numpy()))
