"""The launcher's deferred exact paths (launch.py): a float32 op with a fast path runs its fast body
over every tile and its exact body, in pieces reloaded from memory, only over flagged tiles.

Each test compares a deferred launch against the exact body launched on every element: the results
must be the same bit for bit, whatever the piece size, the layout, or aliasing of out= and input.
On the GPU a piece is 128 elements; here the pieces are set small so the loop runs many times.
"""
import numpy as np
import pytest
import triton
import triton.language as tl

import nbx
from nbx.kernels import fast32, flat, launch, math as m

UNARY = {"log": m.log, "sin": m.sin, "cos": m.cos, "tan": m.tan, "rsqrt": m.rsqrt, "erf": m.erf}


def _hard_input(n, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 20).astype(np.float32)
    x[::1777] = np.nan                                      # a flag in every ~2 pieces of 1024
    x[3::2503] = 3.0e7                                      # trig outside the fast domain
    x[7::3001] = -0.0
    return x


def _exact(op, x: nbx.Tensor) -> np.ndarray:
    """The exact body alone over every element (the deferral's reference)."""
    fast, exact = m.DEFERRED[UNARY[op]][:2]
    out = nbx.empty(x.shape, dtype="float32")
    launch.launch(exact, out, [x], [], compute=[nbx.float32], op=op, defer=False)
    return out.numpy()


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint32)


@pytest.fixture(params=[launch.PIECE, 2048], ids=lambda p: f"piece{p}")
def piece(request, monkeypatch):
    monkeypatch.setattr(launch, "PIECE", request.param)
    return request.param


@pytest.fixture(params=[True, False], ids=["flat", "tiled"])
def kernel(request, monkeypatch):
    """deferred_flat_kernel (contiguous operands) or elementwise_kernel's deferred branch."""
    monkeypatch.setattr(launch, "FLAT", request.param)
    return request.param


@pytest.fixture(params=[None, True, False], ids=["own-mask", "piece-mask", "no-mask"])
def mask(request, monkeypatch):
    """The flat kernel's per-piece mask as each body registered it (erf: on), forced on, or off."""
    monkeypatch.setattr(launch, "PIECE_MASK", request.param)
    return request.param


@pytest.mark.parametrize("op", sorted(UNARY))
def test_deferred_equals_the_exact_body(op, piece, kernel, mask):
    # with pieces of 2048 a tile of the interpreter's 65536 elements has 32: the mask's sign bit too
    x = nbx.from_numpy(_hard_input(70000))
    np.testing.assert_array_equal(_bits(getattr(nbx, op)(x).numpy()), _bits(_exact(op, x)))


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
def test_deferred_on_a_strided_2d_view(op, piece):
    # a transposed view: 2-D tiles, so a piece spans the tile's rows
    base = _hard_input(300 * 257, seed=1).reshape(300, 257)
    x = nbx.from_numpy(base).transpose(0, 1)
    got = getattr(nbx, op)(x).numpy()
    want = _exact(op, nbx.from_numpy(np.ascontiguousarray(base.T)))
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("op", ["sin", "tan"])
def test_deferred_with_out_aliasing_the_input(op, piece, kernel):
    # the fallback reloads its inputs: nothing of a flagged tile may be stored before it
    host = _hard_input(20000, seed=2)
    want = _exact(op, nbx.from_numpy(host))
    x = nbx.from_numpy(host)
    r = getattr(nbx, op)(x, out=x)
    assert r is x
    np.testing.assert_array_equal(_bits(x.numpy()), _bits(want))


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_deferred_integral_division(mode, piece, kernel):
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(30000) * 1e3).astype(np.float32)
    b = rng.standard_normal(30000).astype(np.float32)
    b[::997] = 0.0                                          # outside the fast range: flagged tiles
    a[5::1511] = 3.0e38
    A, B = nbx.from_numpy(a), nbx.from_numpy(b)
    if mode is None:
        got = nbx.floor_divide(A, B).numpy()
        mode = "floor"
    else:
        got = nbx.div(A, B, rounding_mode=mode).numpy()
    from nbx.ops import arithmetic
    exact = arithmetic._float_floor_divide if mode == "floor" else arithmetic._float_div_trunc
    assert m.DEFERRED[exact][1] is exact
    out = nbx.empty(a.shape, dtype="float32")
    launch.launch(exact, out, [A, B], [], compute=[nbx.float32, nbx.float32], op="floor_divide", defer=False)
    np.testing.assert_array_equal(_bits(got), _bits(out.numpy()))


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_deferred_division_by_a_scalar(mode, kernel):
    # a Python scalar operand is a broadcast element (stride 0), which the flat kernel takes
    rng = np.random.default_rng(6)
    a = (rng.standard_normal(30000) * 1e6).astype(np.float32)
    a[::1301] = np.inf                                      # flagged tiles
    A = nbx.from_numpy(a)
    got = nbx.div(A, 0.1, rounding_mode=mode).numpy()
    from nbx.ops import arithmetic
    exact = arithmetic._float_floor_divide if mode == "floor" else arithmetic._float_div_trunc
    out = nbx.empty(a.shape, dtype="float32")
    B = nbx.from_numpy(np.full(a.shape, 0.1, dtype=np.float32))
    launch.launch(exact, out, [A, B], [], compute=[nbx.float32, nbx.float32], op="div", defer=False)
    np.testing.assert_array_equal(_bits(got), _bits(out.numpy()))


def test_which_deferred_launches_are_flat():
    from nbx.kernels import iterate
    x = nbx.from_numpy(_hard_input(4096).reshape(64, 64))
    flat = lambda out, ins, params=(), fault=None: launch._flat(iterate.plan(out, ins, op="t"), list(params), fault)
    assert flat(nbx.empty((64, 64), dtype="float32"), [x])
    assert flat(nbx.empty((64, 64), dtype="float32"), [x, nbx.from_numpy(np.float32(2.0).reshape(()))])
    assert not flat(nbx.empty((64, 64), dtype="float32"), [x.transpose(0, 1)])
    assert not flat(nbx.empty((32, 64), dtype="float32"), [x[::2]])
    assert not flat(nbx.empty((64, 64), dtype="float32"), [x], params=[x])


def test_pieces_cover_the_tile():
    for block_r, block_c in [(1, 1024), (32, 32), (4, 256), (1, 65536), (256, 4)]:
        piece_c, n = launch._pieces(block_r, block_c)
        assert piece_c * n == block_c and block_c % piece_c == 0
        assert block_r * piece_c <= max(launch.PIECE, block_r)


def test_only_float32_launches_defer():
    assert launch._deferred(m.sin, [nbx.float32]) == m.DEFERRED[m.sin]
    assert m.DEFERRED[m.sin][1] is m.sin                    # the exact path is the body itself
    assert launch._deferred(m.sin, [nbx.float64]) is None
    assert launch._deferred(m.exp, [nbx.float32]) is None


@pytest.mark.parametrize("op", ["sin", "rsqrt"])
def test_many_small_pieces(op, monkeypatch):
    # 2000 elements: one tile of 2048 columns in 64 pieces of 32, the last one partly masked
    monkeypatch.setattr(launch, "PIECE", 32)
    x = nbx.from_numpy(_hard_input(2000, seed=5))
    np.testing.assert_array_equal(_bits(getattr(nbx, op)(x).numpy()), _bits(_exact(op, x)))


# The launcher's threshold is the body's own window (math.defer k=, fast32.key_hard): a fast body
# whose values lie 300 float64 ulps from a float32 midpoint, keyed with K = 512, falls back where
# its registration says k=512 and keeps its (here deliberately wrong) fast values under k=256.
@triton.jit
def _window_fast(x):
    y = (x * 0.0).to(tl.float64) + (1.0 + 2.0 ** -24 + 300 * 2.0 ** -52)
    return x * 0.0 + 2.0, fast32.hard_key(y, x != x, 512)


@triton.jit
def _window_exact(x):
    return x * 0.0 + 1.0


@triton.jit
def _window_512(x):
    return _window_exact(x)


@triton.jit
def _window_256(x):
    return _window_exact(x)


m.defer(_window_512, _window_fast, _window_exact, True, k=512)
m.defer(_window_256, _window_fast, _window_exact, True, k=256)


@pytest.mark.parametrize("body, want", [(_window_512, 1.0), (_window_256, 2.0)], ids=["k512", "k256"])
def test_the_threshold_is_the_bodys_own_window(body, want, kernel):
    x = nbx.from_numpy(np.ones(3000, np.float32))
    out = nbx.empty(3000, dtype="float32")
    launch.launch(body, out, [x], [], compute=[nbx.float32], op="window")
    assert set(out.numpy().tolist()) == {want}
