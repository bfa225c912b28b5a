"""Double-double arithmetic (nbx/kernels/double_double.py) and pow's settling of float32 midpoints
(math._pow_settle) against mpmath, on the interpreter (the same Triton source runs on the GPU)."""
import mpmath
import numpy as np
import pytest
import triton
import triton.language as tl

from nbx.kernels import double_double
from nbx.kernels import math as kernel_math
from nbx.tensor import from_numpy


@triton.jit
def _log_kernel(x_ptr, h_ptr, l_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=1.0)
    h, lo = double_double.log_dd(x)
    tl.store(h_ptr + i, h, mask=i < n)
    tl.store(l_ptr + i, lo, mask=i < n)


@triton.jit
def _settle_kernel(a_ptr, b_ptr, r_ptr, out_ptr, n, SETTLE: tl.constexpr, BLOCK: tl.constexpr):
    """SETTLE(a, b, r): math._pow_settle or math._atan2_settle, elementwise."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + i, mask=i < n, other=1.0)
    b = tl.load(b_ptr + i, mask=i < n, other=1.0)
    r = tl.load(r_ptr + i, mask=i < n, other=1.0)
    tl.store(out_ptr + i, SETTLE(a, b, r), mask=i < n)


def _run(kernel, arrays, outs, **constexprs):
    ts = [from_numpy(np.ascontiguousarray(a)) for a in arrays + outs]
    n = len(arrays[0])
    kernel[(triton.cdiv(n, 4096),)](*ts, n, BLOCK=4096, **constexprs)
    return [t.numpy() for t in ts[len(arrays):]]


def test_log_dd_is_good_to_2_to_the_minus_71_over_the_float32_range():
    rng = np.random.default_rng(7)
    x32 = np.concatenate([rng.integers(1, 0x7F800000, 3000, dtype=np.uint32).view(np.float32),
                          np.array([1.0, 2.0, 0.5, 1.4142135, 1.4142137, 0.70710677, 1 - 2 ** -24, 1 + 2 ** -23,
                                    2 ** -149, np.finfo(np.float32).max], np.float32)])
    x = x32.astype(np.float64)
    h, lo = _run(_log_kernel, [x], [np.zeros_like(x), np.zeros_like(x)])
    with mpmath.workprec(200):
        worst = max(abs(mpmath.mpf(float(a)) + mpmath.mpf(float(b)) - mpmath.log(mpmath.mpf(float(v))))
                    for v, a, b in zip(x, h, lo))
        assert worst < mpmath.mpf(2) ** -71, float(mpmath.log(worst, 2))


def _midpoint_near(f: mpmath.mpf) -> tuple[float, float]:
    """The float32 rounding midpoint nearest the positive value f (exact in float64), and the
    float32 spacing there."""
    e = max(int(mpmath.floor(mpmath.log(f, 2))), -126)
    u = mpmath.mpf(2) ** (e - 23)
    return float((mpmath.floor(f / u) + mpmath.mpf(0.5)) * u), float(u)


@pytest.mark.parametrize("offset", [-6, -1, 0, 1, 6])
def test_pow_settle_puts_a_value_near_a_midpoint_on_the_exact_side(offset):
    """For a^b with a float64 value r `offset` float64 ulps from the float32 midpoint M nearest the
    exact value, _pow_settle's result rounds to float32 as the exact value does, wherever r sits
    (the sign of b ln a - ln M decides, not r); 400 pairs over normal and subnormal results."""
    rng = np.random.default_rng(11 + offset)
    a = rng.uniform(0.01, 100.0, 400).astype(np.float32)
    b = rng.uniform(-18.0, 18.0, 400).astype(np.float32)       # |a^b| within float32 range
    a[:40] = rng.uniform(1e-3, 1e-2, 40).astype(np.float32)     # results down into the subnormals
    b[:40] = rng.uniform(13.0, 22.0, 40).astype(np.float32)
    want, r = [], []
    with mpmath.workprec(200):
        for x, y in zip(a, b):
            f = mpmath.power(mpmath.mpf(float(x)), mpmath.mpf(float(y)))
            mid, u = _midpoint_near(f)
            r.append((np.array([mid]).view(np.int64) + offset).view(np.float64)[0])
            want.append(np.float32(mid + u / 2 if f > mid else mid - u / 2))
    got = _run(_settle_kernel, [a.astype(np.float64), b.astype(np.float64), np.array(r)], [np.zeros(len(r))],
               SETTLE=kernel_math._pow_settle)[0]
    assert np.count_nonzero(a[:40].astype(np.float64) ** b[:40] < 2.0 ** -126) > 10
    bad = [(hex(int(np.float32(x).view(np.uint32))), hex(int(np.float32(y).view(np.uint32))))
           for x, y, g, w in zip(a, b, got, want) if np.float32(g) != w]
    assert not bad, bad[:5]


@triton.jit
def _sincos_kernel(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + i, mask=i < n, other=0.0)
    sh, sl, ch, cl = double_double.sincos_dd(a)
    tl.store(out_ptr + 4 * i, sh, mask=i < n)
    tl.store(out_ptr + 4 * i + 1, sl, mask=i < n)
    tl.store(out_ptr + 4 * i + 2, ch, mask=i < n)
    tl.store(out_ptr + 4 * i + 3, cl, mask=i < n)


def test_sincos_dd_is_good_to_2_to_the_minus_100_on_the_range_of_atan2():
    rng = np.random.default_rng(5)
    a = np.concatenate([rng.uniform(-3.2, 3.2, 2000), [0.0, np.pi / 2, -np.pi / 2, np.pi, -np.pi, np.pi / 4,
                                                      3 * np.pi / 4, 1e-300, 3.2, -3.2]])
    out = _run(_sincos_kernel, [a], [np.zeros(4 * len(a))])[0].reshape(-1, 4)
    with mpmath.workprec(250):
        worst = max(max(abs(mpmath.mpf(float(o[0])) + mpmath.mpf(float(o[1])) - mpmath.sin(mpmath.mpf(float(v)))),
                        abs(mpmath.mpf(float(o[2])) + mpmath.mpf(float(o[3])) - mpmath.cos(mpmath.mpf(float(v)))))
                    for v, o in zip(a, out))
        assert worst < mpmath.mpf(2) ** -100, float(mpmath.log(worst, 2))


@pytest.mark.parametrize("offset", [-6, -1, 0, 1, 6])
def test_atan2_settle_puts_a_value_near_a_midpoint_on_the_exact_side(offset):
    """As for pow: r `offset` float64 ulps from the float32 midpoint M nearest atan2(y, x) rounds to
    float32 as the exact angle does after _atan2_settle, in every quadrant; and the pair an H100
    misrounded (0x109b1331, 0x8bd93d26: pi/2 + 0.00137) with r a float64 ulp on the wrong side."""
    rng = np.random.default_rng(13 + offset)
    y = (rng.uniform(-100.0, 100.0, 400) * 10.0 ** rng.integers(-30, 30, 400)).astype(np.float32)
    x = (rng.uniform(-100.0, 100.0, 400) * 10.0 ** rng.integers(-30, 30, 400)).astype(np.float32)
    y[0], x[0] = np.array([0x109B1331, 0x8BD93D26], np.uint32).view(np.float32)
    want, r = [], []
    with mpmath.workprec(200):
        for a, b in zip(y, x):
            f = mpmath.atan2(mpmath.mpf(float(a)), mpmath.mpf(float(b)))
            mid, u = _midpoint_near(abs(f))
            mid = mid if f > 0 else -mid
            r.append((np.array([mid]).view(np.int64) + offset).view(np.float64)[0])
            want.append(np.float32(mid + u / 2 if f > mid else mid - u / 2))
    got = _run(_settle_kernel, [y.astype(np.float64), x.astype(np.float64), np.array(r)], [np.zeros(len(r))],
               SETTLE=kernel_math._atan2_settle)[0]
    bad = [(hex(int(a.view(np.uint32))), hex(int(b.view(np.uint32)))) for a, b, g, w in zip(y, x, got, want)
           if np.float32(g) != w]
    assert not bad, bad[:5]
