"""nbx.testing: assert_ulp_close measures ulps as the harness's rule does and compares specials
exactly; assert_correctly_rounded holds a callable to an op (nbx.verify, or api.score on one's own
inputs) or to an mpmath reference; the failures name the worst inputs in hex and decimal; the
hypothesis strategies draw every dtype's values, bit patterns, shapes, tensors and views."""
from __future__ import annotations

import re

import ml_dtypes
import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nbx
from nbx.dtype import ALL
from nbx.testing import (assert_bits_equal, assert_correctly_rounded, assert_ulp_close, bits, randoms,
                         specials, strategies as nst)

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------------- assert_ulp_close
def test_ulp_close_measures_ulps_at_the_exact_value():
    one = np.float32(1.0)
    up = np.nextafter(one, np.float32(2))                # 1 + 2^-23: one ulp above 1
    assert_ulp_close(np.array([up]), np.array([1.0]), max_ulp=1)
    with pytest.raises(AssertionError, match=r"1 of 1 elements over max_ulp=0.5"):
        assert_ulp_close(np.array([up]), np.array([1.0]), max_ulp=0.5)
    # ulps at the exact value: 1 - 2^-24, the float32 below 1, is half an ulp of 1 (2^-23) away
    down = np.nextafter(one, np.float32(0))
    assert_ulp_close(np.array([down]), np.array([1.0]), max_ulp=0.5)
    with pytest.raises(AssertionError):
        assert_ulp_close(np.array([down]), np.array([1.0]), max_ulp=0.49)
    # the exact value between two floats: 0.25 ulp from the nearer
    assert_ulp_close(np.array([one]), np.array([1.0 + 2.0 ** -25]), max_ulp=0.25)


def test_ulp_close_in_each_format_and_broadcast():
    x = nbx.from_numpy(np.linspace(-3, 3, 101, dtype=np.float32))
    exact = np.exp(np.linspace(-3, 3, 101, dtype=np.float32).astype(np.float64))
    assert_ulp_close(nbx.exp(x), exact, max_ulp=0.5)                        # nbx's exp: correctly rounded
    h = ml_dtypes.bfloat16(1.0078125)                                       # 1 + 2^-7: one bfloat16 ulp
    assert_ulp_close(np.array([h, h]), np.array(1.0), max_ulp=1, dtype="bfloat16")
    with pytest.raises(AssertionError):
        assert_ulp_close(np.array([h]), np.array(1.0), max_ulp=0.9)
    assert_ulp_close(np.float64([1.0 + 2.0 ** -52]), [1.0], max_ulp=1)


def test_ulp_close_compares_specials_exactly():
    nan, inf = np.float32(np.nan), np.float32(np.inf)
    assert_ulp_close(np.array([nan, inf, -inf, -0.0], np.float32), [np.nan, np.inf, -np.inf, -0.0], max_ulp=0)
    big = float(np.finfo(np.float32).max) * (1 + 2.0 ** -25)               # the overflow edge: max or inf
    assert_ulp_close(np.array([inf], np.float32), [big], max_ulp=1)
    for got, want in [(nan, 1.0), (np.float32(1.0), np.nan), (inf, 1.0), (np.float32(0.0), -0.0),
                      (np.float32(3e38), np.inf)]:
        with pytest.raises(AssertionError, match="special mismatch"):
            assert_ulp_close(np.array([got]), [want], max_ulp=1e30)


def test_ulp_close_failure_lists_the_worst_in_hex_and_decimal():
    x = np.linspace(-3, 3, 1001, dtype=np.float32)
    got = nbx.exp(nbx.from_numpy(x)).numpy()
    got[7] = np.nextafter(got[7], np.float32(np.inf))
    got[9] = np.nextafter(np.nextafter(got[9], np.float32(0)), np.float32(0))
    with pytest.raises(AssertionError) as e:
        assert_ulp_close(got, np.exp(x.astype(np.float64)), max_ulp=0.5)
    text = str(e.value)
    assert "2 of 1001 elements over max_ulp=0.5 ulp of float32" in text
    first, second = text.splitlines()[1:3]
    assert first.startswith("  at [9]: actual ") and second.startswith("  at [7]: actual ")
    assert re.search(r"actual [0-9.e-]+ \(0x[0-9a-f]{8}\), desired [0-9.e-]+ \(0x[0-9a-f]{16}\): \d\.\d+ ulp", first)


@pytest.mark.parametrize("call, error, words", [
    (lambda: assert_ulp_close(np.ones(2, np.int32), np.ones(2), max_ulp=1), TypeError, "dtype=int32"),
    (lambda: assert_ulp_close(np.ones(2, np.float32), np.ones(2), max_ulp=-1), ValueError, "max_ulp=-1"),
    (lambda: assert_ulp_close(np.ones(2, np.float32), np.ones(2), max_ulp="1"), ValueError, "max_ulp='1'"),
    (lambda: assert_ulp_close(np.ones(2, np.float32), np.ones(3), max_ulp=1), ValueError, "do not broadcast"),
    (lambda: assert_ulp_close(np.ones(2, np.float32), np.ones(2), max_ulp=1, dtype="float99"), TypeError,
     "dtype='float99'"),
])
def test_ulp_close_bad_arguments_are_named(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()


# ---------------------------------------------------------------------- assert_correctly_rounded
def test_correctly_rounded_passes_nbx_and_fails_numpy():
    assert_correctly_rounded(nbx.exp, "exp", "float32", arrays="nbx")
    with pytest.raises(AssertionError) as e:
        assert_correctly_rounded(np.exp, "exp", "float32", suites=["bank"])
    text = str(e.value)
    assert "numpy.exp: exp on float32" in text and "not correctly rounded" in text
    assert re.search(r"0x[0-9a-f]{8} \(-?[0-9.e+-]+\) -> got 0x[0-9a-f]{8}", text)


def test_correctly_rounded_on_ones_own_inputs():
    x = np.linspace(-3, 3, 1001, dtype=np.float32)
    assert_correctly_rounded(lambda a: nbx.exp(nbx.from_numpy(a)).numpy(), "exp", "float32", x)
    with pytest.raises(AssertionError) as e:
        assert_correctly_rounded(np.exp, "exp", "float32", x)
    text = str(e.value)
    assert re.search(r"suite inputs: \d+ not correctly rounded .* of 1,001 cases", text)
    assert re.search(r"nbx repro exp float32 0x[0-9a-f]{8}", text)
    add = lambda a, b, alpha=1: (a.astype(np.float64) + alpha * b.astype(np.float64)).astype(np.float32)  # noqa: E731
    assert_correctly_rounded(add, "add", "float32", (x, x[::-1].copy()), params={"alpha": 3})


def test_correctly_rounded_against_an_mpmath_reference():
    half = lambda x: (x.astype(np.float64) / 2).astype(np.float16)   # noqa: E731
    assert_correctly_rounded(half, lambda x: x / 2, "float16", name="half")
    with pytest.raises(AssertionError, match="not correctly rounded"):
        assert_correctly_rounded(lambda x: (x.astype(np.float64) * 0.501).astype(np.float16), lambda x: x / 2,
                                 "float16", name="half")
    with pytest.raises(ValueError, match="inputs= goes with an op name"):
        assert_correctly_rounded(half, mpmath.exp, "float16", [1.0])


# ---------------------------------------------------------------------- bits and values
@pytest.mark.parametrize("d", ALL, ids=lambda d: d.name)
def test_specials_and_randoms_are_of_the_dtype(d):
    sp = specials(d)
    assert sp.dtype == d.np and sp.size >= 2
    r = randoms(d, (3, 4), np.random.default_rng(0))
    assert r.dtype == d.np and r.shape == (3, 4)
    assert_bits_equal(r, randoms(d, (3, 4), np.random.default_rng(0)))
    if d.is_float:
        fi = ml_dtypes.finfo(d.np)
        v = sp.astype(np.float64)
        assert np.isnan(v).any() and np.isinf(v).any() and (v == float(fi.smallest_subnormal)).any()
        assert (bits(sp) == bits(np.array([-0.0], d.np))[0]).any()


def test_assert_bits_equal_sees_nan_payloads_and_zero_signs():
    a = np.array([np.nan, 0.0], np.float32)
    b = a.copy()
    b.view(np.uint32)[0] |= 1
    with pytest.raises(AssertionError, match=r"1 of 2 elements differ .*\n  at \[0\]: actual nan \(0x7fc00000\)"):
        assert_bits_equal(a, b)
    with pytest.raises(AssertionError, match="differ"):
        assert_bits_equal(np.array([0.0]), np.array([-0.0]))
    assert_bits_equal(nbx.from_numpy(a), a)


# ---------------------------------------------------------------------- strategies
@SETTINGS
@given(d=nst.dtypes(), data=st.data())
def test_values_and_bit_patterns_are_of_every_dtype(d, data):
    b = data.draw(nst.bit_patterns(d))
    assert 0 <= b < (2 if d.is_bool else 1 << d.bits)
    v = data.draw(nst.values(d))
    assert np.asarray(v).dtype == d.np
    a = data.draw(nst.arrays(d, (2, 3)))
    assert a.dtype == d.np and a.shape == (2, 3)


@SETTINGS
@given(nst.values("float32", allow_nan=False, allow_infinity=False, allow_subnormal=False))
def test_values_leave_out_what_is_not_allowed(v):
    f = float(v)
    assert np.isfinite(f) and (f == 0 or abs(f) >= float(np.finfo(np.float32).tiny))


def test_values_draw_subnormals_and_specials():
    seen = set()

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(nst.values("bfloat16"))
    def draw(v):
        f = float(v)
        tiny = float(ml_dtypes.finfo(ml_dtypes.bfloat16).smallest_normal)
        seen.add("nan" if f != f else "inf" if abs(f) == np.inf else "zero" if f == 0 else
                 "subnormal" if abs(f) < tiny else "normal")

    draw()
    assert seen == {"nan", "inf", "zero", "subnormal", "normal"}


@SETTINGS
@given(nst.broadcastable_shapes(3))
def test_broadcastable_shapes_broadcast(shapes):
    assert np.broadcast_shapes(*shapes.input_shapes) == shapes.result_shape


@SETTINGS
@given(d=nst.dtypes(kinds=("float", "int")), data=st.data())
def test_views_hold_the_values_of_their_array(d, data):
    shape = data.draw(st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple))
    v = data.draw(nst.views(d, shape))
    assert v.tensor.shape == shape and v.kind in nst.VIEW_KINDS
    assert_bits_equal(v.tensor.contiguous(), v.array, context=v.kind)
    t = data.draw(nst.tensors(d, shape))
    assert t.shape == shape and t.dtype is d


def test_every_view_kind_is_drawn():
    kinds = set()

    @settings(max_examples=80, deadline=None, derandomize=True)
    @given(nst.views(nbx.float32, (2, 3)))
    def draw(v):
        kinds.add(v.kind)

    draw()
    assert kinds == set(nst.VIEW_KINDS)


@pytest.mark.parametrize("call, words", [
    (lambda: nst.dtypes(kinds=("complex",)), "kinds=('complex',)"),
    (lambda: nst.values("float99"), "dtype='float99'"),
    (lambda: nst.values("float32", allow_nan=1), "allow_nan=1"),
    (lambda: nst.broadcastable_shapes(0), "num_shapes=0"),
    (lambda: nst.views("float32", (2, -1)), "shape=(2, -1)"),
    (lambda: nst.views("float32", (2,), kinds=("diagonal",)), "kinds=('diagonal',)"),
])
def test_strategies_validate_eagerly(call, words):
    with pytest.raises((TypeError, ValueError), match=re.escape(words)):
        call()
