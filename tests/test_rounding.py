"""oracles.formats and oracles.rounding against exact rational arithmetic and IEEE hardware.

IEEE 754 requires +, *, / and float64 -> narrower conversions to be correctly rounded, so numpy's
results on exact inputs are an independent reference for round_fraction wherever they apply.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import mpmath
import numpy as np
import pytest

from nbx.harness.scoring.rule import round_to_format
from mpmath import libmp

from nbx.oracles.formats import (
    FORMATS,
    from_bits,
    get_format,
    inf_bits,
    max_finite,
    min_normal,
    min_subnormal,
    quiet_nan_bits,
    to_bits,
)
from nbx.oracles.rounding import (
    RoundResult,
    round_correctly,
    round_fraction,
    round_mpf,
)

F16, BF16, F32, F64 = (FORMATS[n] for n in ("float16", "bfloat16", "float32", "float64"))
ALL = list(FORMATS.values())
NARROW = [F16, BF16, F32]
ids = lambda f: f.name  # noqa: E731


def sign_bit(f):
    return 1 << (f.bits - 1)


def negative(x) -> bool:
    return math.copysign(1.0, x) < 0


# ---------------------------------------------------------------------------------------- formats


@pytest.mark.parametrize("f", ALL, ids=ids)
def test_format_constants_match_finfo(f):
    info = ml_dtypes.finfo(f.np_dtype) if f.name == "bfloat16" else np.finfo(f.np_dtype)
    assert max_finite(f) == float(info.max)
    assert min_normal(f) == float(info.smallest_normal)
    assert min_subnormal(f) == float(info.smallest_subnormal)
    assert f.precision == info.nmant + 1 and f.bits == info.bits
    assert f.uint_dtype.itemsize == f.np_dtype.itemsize
    assert from_bits(inf_bits(f), f) == np.inf
    assert np.isnan(from_bits(quiet_nan_bits(f), f))


def test_get_format_names_the_argument():
    assert get_format("bfloat16") is BF16
    with pytest.raises(ValueError, match="fmt='float8'"):
        get_format("float8")


def test_bits_round_trip_and_dtype_checks():
    x = np.array([1.0, -2.5, np.inf], dtype=np.float32)
    assert to_bits(x, F32).tolist() == [0x3F800000, 0xC0200000, 0x7F800000]
    assert np.array_equal(from_bits(to_bits(x, F32), F32), x)
    assert from_bits([0x8000000000000000, 1], F64).tolist() == [-0.0, 5e-324]  # no float64 detour
    with pytest.raises(TypeError, match="float32"):
        to_bits(np.ones(2), F32)  # float64 given: converting would round
    with pytest.raises(ValueError, match="out of range"):
        from_bits([1 << 16], F16)


# ---------------------------------------------------------------------- exhaustive 16-bit formats


def _all_patterns(f):
    bits = np.arange(1 << 16, dtype=np.uint32).astype(f.uint_dtype)
    with np.errstate(invalid="ignore"):  # ml_dtypes warns casting a bfloat16 NaN
        return bits, from_bits(bits, f).astype(np.float64)


@pytest.mark.parametrize("f", [F16, BF16], ids=ids)
def test_every_16bit_pattern_round_trips(f):
    bits, vals = _all_patterns(f)
    for b, v in zip(bits.tolist(), vals.tolist()):
        if math.isfinite(v):
            assert round_fraction(Fraction(v), f, negative_zero=negative(v)) == b, hex(b)


@pytest.mark.parametrize("f", [F16, BF16], ids=ids)
def test_every_16bit_midpoint_goes_to_even_and_off_midpoints_to_the_near_side(f):
    # Positive patterns k and k+1 are consecutive values; the one with an even pattern has the even
    # significand (across a binade edge the upper one, significand field 0). Between 0 and the
    # smallest subnormal the even neighbour is zero, which keeps the midpoint's sign.
    _, vals = _all_patterns(f)
    top = inf_bits(f)  # patterns 0 .. top-1 are the finite non-negative values
    for k in range(top - 1):
        a, b = Fraction(vals[k]), Fraction(vals[k + 1])
        mid, eps = (a + b) / 2, (b - a) / 2**40
        even = k if k % 2 == 0 else k + 1
        s = sign_bit(f)
        assert round_fraction(mid, f) == even
        assert round_fraction(-mid, f) == even | s
        assert round_fraction(mid + eps, f) == k + 1
        assert round_fraction(mid - eps, f) == k
        assert round_fraction(-mid - eps, f) == (k + 1) | s
        assert round_fraction(-mid + eps, f) == k | s


# ---------------------------------------------------------------------- subnormals, zero, overflow


@pytest.mark.parametrize("f", ALL, ids=ids)
def test_subnormal_range(f):
    s, tiny = sign_bit(f), Fraction(min_subnormal(f))
    largest_sub = (1 << (f.precision - 1)) - 1
    assert round_fraction(tiny, f) == 1
    assert round_fraction(tiny / 2, f) == 0  # tie between 0 and 1: 0 is even
    assert round_fraction(-tiny / 2, f) == s  # ... and the zero keeps the sign
    assert round_fraction(tiny / 2 + tiny / 2**30, f) == 1
    assert round_fraction(-(tiny / 2 + tiny / 2**30), f) == s | 1
    assert round_fraction(tiny / 2 - tiny / 2**30, f) == 0
    assert round_fraction(tiny * 3 / 2, f) == 2  # tie between 1 and 2
    assert round_fraction(tiny * 5 / 2, f) == 2  # tie between 2 and 3
    assert round_fraction(largest_sub * tiny, f) == largest_sub
    assert round_fraction(Fraction(min_normal(f)), f) == largest_sub + 1
    # Largest subnormal + half a quantum ties between an odd significand and min normal (even).
    assert round_fraction((largest_sub + Fraction(1, 2)) * tiny, f) == largest_sub + 1
    assert round_fraction(-(largest_sub + Fraction(1, 2)) * tiny, f) == s | (largest_sub + 1)
    assert round_fraction(Fraction(1, 2**5000), f) == 0
    assert round_fraction(Fraction(-1, 2**5000), f) == s


@pytest.mark.parametrize("f", ALL, ids=ids)
def test_signed_zero(f):
    assert round_fraction(Fraction(0), f) == 0
    assert round_fraction(0, f, negative_zero=True) == sign_bit(f)
    assert round_fraction(Fraction(-1, 3**1000), f) == sign_bit(f)  # a non-dyadic underflow


@pytest.mark.parametrize("f", ALL, ids=ids)
@pytest.mark.parametrize("sign", [1, -1])
def test_overflow_threshold(f, sign):
    s = sign_bit(f) if sign < 0 else 0
    big = Fraction(max_finite(f))
    half_ulp = Fraction(2) ** (f.emax - f.precision)
    max_bits = inf_bits(f) - 1
    assert round_fraction(sign * big, f) == s | max_bits
    assert round_fraction(sign * (big + half_ulp), f) == s | inf_bits(f)  # the tie goes to "even" inf
    assert round_fraction(sign * (big + half_ulp - Fraction(1, 10**9)), f) == s | max_bits
    assert round_fraction(sign * (big + half_ulp * 3), f) == s | inf_bits(f)
    assert round_fraction(sign * Fraction(2) ** (f.emax + 1), f) == s | inf_bits(f)
    assert round_fraction(sign * Fraction(2) ** 100000, f) == s | inf_bits(f)


def test_round_fraction_rejects_floats():
    with pytest.raises(TypeError, match="q must be"):
        round_fraction(0.1, F32)


# ---------------------------------------------------------------------- random, against IEEE hardware


def _random_finite(f, n, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << f.bits, size=2 * n, dtype=np.uint64).astype(f.uint_dtype)
    vals = from_bits(bits, f)
    return vals[np.isfinite(vals)][:n]


def test_float32_products_and_quotients():
    # A product of two float32 values has at most 48 significant bits and an exponent inside
    # float64's range, so float64(a) * float64(b) is exact and astype(float32) rounds it once.
    a, b = _random_finite(F32, 20000, 1), _random_finite(F32, 20000, 2)
    with np.errstate(all="ignore"):
        prod = to_bits((a.astype(np.float64) * b.astype(np.float64)).astype(np.float32), F32)
        quot = to_bits(a / b, F32)  # IEEE float32 division, correctly rounded by the hardware
    for x, y, p, q in zip(a.tolist(), b.tolist(), prod.tolist(), quot.tolist()):
        X, Y = Fraction(x), Fraction(y)
        neg = negative(x) != negative(y)
        assert round_fraction(X * Y, F32, negative_zero=neg) == p, (x, y)
        if y != 0:
            assert round_fraction(X / Y, F32, negative_zero=neg) == q, (x, y)


def test_float64_values_sums_products_quotients():
    x = _random_finite(F64, 20000, 3)
    # Partners for sums: within 2^60 of x, so that the sums round in interesting places.
    rng = np.random.default_rng(4)
    with np.errstate(over="ignore"):
        y = np.ldexp(rng.uniform(-1, 1, x.size), np.frexp(x)[1] + rng.integers(-60, 4, x.size))
    keep = np.isfinite(y) & (y != 0)
    x, y = x[keep], y[keep]
    with np.errstate(all="ignore"):
        s, p, q = x + y, x * y, x / y
    for xi, yi, si, pi, qi in zip(x.tolist(), y.tolist(), s.tolist(), p.tolist(), q.tolist()):
        X, Y = Fraction(xi), Fraction(yi)
        neg = negative(xi) != negative(yi)
        bits = lambda v: int(np.float64(v).view(np.uint64))  # noqa: E731
        assert round_fraction(X, F64, negative_zero=negative(xi)) == bits(xi)
        if X + Y != 0:  # an exact zero sum is +0 in both
            assert round_fraction(X + Y, F64) == bits(si), (xi, yi)
        assert round_fraction(X * Y, F64, negative_zero=neg) == bits(pi), (xi, yi)
        if yi != 0:
            assert round_fraction(X / Y, F64, negative_zero=neg) == bits(qi), (xi, yi)
    # Products of two random bit patterns overflow and underflow to subnormals often.
    a, b = _random_finite(F64, 5000, 5), _random_finite(F64, 5000, 6)
    with np.errstate(all="ignore"):
        prod = (a * b).view(np.uint64).tolist()
    for ai, bi, pi in zip(a.tolist(), b.tolist(), prod):
        neg = negative(ai) != negative(bi)
        assert round_fraction(Fraction(ai) * Fraction(bi), F64, negative_zero=neg) == pi, (ai, bi)


# ---------------------------------------------------------------------- the scoring rule's round_to


def _float64_probe(n, seed):
    """Random float64s spread over every narrow format's range, plus extremes."""
    rng = np.random.default_rng(seed)
    mant = rng.uniform(0.5, 1.0, n) * rng.choice([-1.0, 1.0], n)
    x = np.ldexp(mant, rng.integers(-160, 135, n))
    # Random low bits so that values sit near narrow-format midpoints.
    x = (x.view(np.uint64) ^ rng.integers(0, 1 << 40, n, dtype=np.uint64)).view(np.float64)
    extra = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-310, 1e300, -1e300,
             max_finite(F32), 65504.0, 65520.0, 65519.99, -65520.0, 2.0**-25, 2.0**-150, 2.0**-134]
    return np.concatenate([x, np.array(extra)])


@pytest.mark.parametrize("f", NARROW, ids=ids)
def test_rule_round_to_matches_round_fraction(f):
    x = _float64_probe(20000, 7)
    got = to_bits(round_to_format(x, f), f).tolist()
    for xi, gi in zip(x.tolist(), got):
        if math.isnan(xi):
            assert (gi & ~sign_bit(f)) > inf_bits(f)
        elif math.isinf(xi):
            assert gi == (inf_bits(f) | (sign_bit(f) if xi < 0 else 0))
        else:
            assert gi == round_fraction(Fraction(xi), f, negative_zero=negative(xi)), xi


@pytest.mark.parametrize("f", [F16, F32], ids=ids)
def test_rule_round_to_agrees_with_numpy_astype(f):
    x = _float64_probe(50000, 8)
    with np.errstate(over="ignore"):
        want = to_bits(x.astype(f.np_dtype), f)
    got = to_bits(round_to_format(x, f), f)
    nan = np.isnan(x)
    assert np.array_equal(got[~nan], want[~nan])
    assert np.all(np.isnan(got.view(f.np_dtype)[nan]))


def test_bfloat16_rounds_once_where_float32_route_rounds_twice():
    # 1 + 2^-8 is the midpoint between bfloat16's 1 and 1 + 2^-7; 2^-30 puts x just above it.
    # float32 drops the 2^-30 (below its half ulp 2^-24), landing on the tie, which goes to 1.
    x = np.array([1 + 2.0**-8 + 2.0**-30, -(1 + 2.0**-8 + 2.0**-30)])
    assert to_bits(round_to_format(x, BF16), BF16).tolist() == [0x3F81, 0xBF81]
    assert to_bits(x.astype(np.float32).astype(ml_dtypes.bfloat16), BF16).tolist() == [0x3F80, 0xBF80]


def test_every_bfloat16_midpoint_from_float64():
    # bfloat16 midpoints have 9 significant bits: exact in float64.
    _, vals = _all_patterns(BF16)
    v = vals[: inf_bits(BF16)]
    mids = (v[:-1] + v[1:]) / 2
    k = np.arange(mids.size)
    even = np.where(k % 2 == 0, k, k + 1)
    assert np.array_equal(to_bits(round_to_format(mids, BF16), BF16), even)
    assert np.array_equal(to_bits(round_to_format(-mids, BF16), BF16), even | 0x8000)


def test_rule_round_to_keeps_shape_and_checks_dtype():
    x = np.arange(12, dtype=np.float64).reshape(3, 4).T
    assert round_to_format(x, BF16).shape == (4, 3)
    assert np.array_equal(round_to_format(x, "float64"), x)
    with pytest.raises(TypeError, match="float array"):
        round_to_format(x.astype(np.int32), BF16)


# ---------------------------------------------------------------------- round_mpf


def _mpf(man, exp):
    return mpmath.mp.make_mpf(libmp.from_man_exp(man, exp))


@pytest.mark.parametrize("f", ALL, ids=ids)
def test_round_mpf_agrees_with_round_fraction(f):
    rng = np.random.default_rng(9)
    span = f.emax - f.emin + 2 * f.precision + 8
    for _ in range(3000):
        nbits = int(rng.integers(1, 160))
        man = int.from_bytes(rng.bytes(20), "little") >> (160 - nbits) | 1
        man = -man if rng.random() < 0.5 else man
        exp = int(rng.integers(f.emin - f.precision - 4, f.emin - f.precision - 4 + span)) - nbits
        q = Fraction(man) * Fraction(2) ** exp
        assert round_mpf(_mpf(man, exp), f) == round_fraction(q, f), (man, exp)


@pytest.mark.parametrize("f", ALL, ids=ids)
def test_round_mpf_specials_and_extreme_exponents(f):
    s = sign_bit(f)
    assert round_mpf(mpmath.mpf("nan"), f) == quiet_nan_bits(f)
    assert round_mpf(mpmath.mpf("inf"), f) == inf_bits(f)
    assert round_mpf(mpmath.mpf("-inf"), f) == s | inf_bits(f)
    assert round_mpf(mpmath.mpf(0), f) == 0
    assert round_mpf(-0.0, f) == s  # a float keeps its zero sign; mpmath has no -0
    assert round_mpf(_mpf(1, 10**9), f) == inf_bits(f)
    assert round_mpf(_mpf(-1, 10**9), f) == s | inf_bits(f)
    assert round_mpf(_mpf(1, -(10**9)), f) == 0
    assert round_mpf(_mpf(-1, -(10**9)), f) == s
    with pytest.raises(TypeError, match="mpmath.mpf"):
        round_mpf("1.5", f)


# ---------------------------------------------------------------------- Ziv loop


def _reference(fn, args, f, bits=3000):
    """One evaluation at far more precision than any float64 hard case needs."""
    with mpmath.workprec(bits):
        return round_mpf(fn(*[mpmath.mpf(a) for a in args]), f)


def test_ziv_known_values_of_exp_1():
    r = round_correctly(mpmath.exp, [1.0], F64)
    assert isinstance(r, RoundResult) and r.resolved
    assert r.bits == 0x4005BF0A8B145769 and r.value == math.e
    assert round_correctly(mpmath.exp, [1.0], F32).bits == 0x402DF854
    assert round_correctly(mpmath.exp, [1.0], F16).bits == 0x4170  # 2.71875 = 1392 * 2^-9
    assert round_correctly(mpmath.exp, [1.0], BF16).bits == 0x402E  # 2.71875 = 174 * 2^-6


def test_ziv_sin_and_friends_against_a_3000_bit_evaluation():
    assert round_correctly(mpmath.sin, [1.0], F64).bits == 0x3FEAED548F090CEE
    cases = [1e22, 355.0, 1e-300, -2.5, 2.0**-1074, 1.5707963267948966, 3.141592653589793]
    for x in cases:
        for fn in (mpmath.sin, mpmath.cos, mpmath.exp):
            for f in (F32, F64):
                r = round_correctly(fn, [x], f)
                assert r.resolved and r.bits == _reference(fn, [x], f), (fn, x, f.name)
    # float32 inputs near the overflow threshold of exp: ln(max float32) = 88.7228...
    for x in (88.72283172607422, 88.72283935546875, 89.0, -103.97, -104.0):
        r = round_correctly(mpmath.exp, [x], F32)
        assert r.resolved and r.bits == _reference(mpmath.exp, [x], F32), x


def test_ziv_precision_schedule_and_global_precision_untouched():
    seen = []

    def identity(x):
        seen.append(mpmath.mp.prec)
        return +x  # unary plus rounds to the working precision

    assert round_correctly(identity, [0.1], F32).precision_used == 112
    assert seen == [56, 112]  # p + 32, then doubled; two agreeing evaluations
    seen.clear()
    tie = lambda: _mpf((1 << 53) + 1, -53) if seen.append(mpmath.mp.prec) is None else None  # noqa: E731
    r = round_correctly(tie, [], F64)
    assert seen == [85, 170, 340, 680, 1024] and r.precision_used == 1024
    assert mpmath.mp.prec == 53
    with pytest.raises(ZeroDivisionError):
        round_correctly(lambda: 1 / 0, [], F32)
    assert mpmath.mp.prec == 53


@pytest.mark.parametrize("f", ALL, ids=ids)
def test_ziv_exact_midpoint_is_reported_unresolved(f):
    # 1 + 2^-p is the midpoint between 1 and its successor, whatever the working precision.
    tie = lambda: _mpf((1 << f.precision) + 1, -f.precision)  # noqa: E731
    r = round_correctly(tie, [], f)
    assert r.resolved is False and r.precision_used == 1024
    assert r.bits == round_fraction(Fraction(1), f)  # the tie's even neighbour, 1.0


def test_ziv_climbs_past_a_value_that_looks_like_a_midpoint():
    # At 56 and 112 bits the 2^-150 term vanishes and y is exactly float32's 1 + 2^-24 tie; two
    # evaluations agree on 1.0 there, yet the value is above the tie. The boundary margin makes
    # the loop go on until the term shows and the rounding settles on 1 + 2^-23.
    fn = lambda: mpmath.mpf(1) + mpmath.mpf(2) ** -24 + mpmath.mpf(2) ** -150  # noqa: E731
    r = round_correctly(fn, [], F32)
    assert r.resolved and r.bits == 0x3F800001 and r.precision_used >= 224


def test_ziv_converts_arguments_exactly():
    # float16 starts at 43 bits; mpf(x) there would cut 1 + 2^-11 + 2^-52 to the tie 1 + 2^-11.
    x = 1 + 2.0**-11 + 2.0**-52
    assert round_correctly(lambda v: +v, [x], F16).bits == 0x3C01
    assert round_correctly(lambda v: +v, [np.float32(0.1)], F32).bits == 0x3DCCCCCD
    assert round_correctly(lambda v: v * 3, [Fraction(1, 4)], F32).value == 0.75
    with pytest.raises(TypeError, match="not exactly representable"):
        round_correctly(mpmath.exp, [Fraction(1, 3)], F32)


@pytest.mark.parametrize("f", ALL, ids=ids)
def test_ziv_special_inputs_pass_through(f):
    assert round_correctly(mpmath.exp, [math.inf], f).bits == inf_bits(f)
    assert round_correctly(mpmath.exp, [-math.inf], f).bits == 0
    assert round_correctly(mpmath.exp, [math.nan], f).bits == quiet_nan_bits(f)
    assert round_correctly(mpmath.log, [0.0], f).bits == sign_bit(f) | inf_bits(f)
    r = round_correctly(lambda x: -0.0 if x == 0 else mpmath.sin(x), [-0.0], f)
    assert r.bits == sign_bit(f) and r.resolved


def test_ziv_argument_validation():
    with pytest.raises(ValueError, match="max_bits=40"):
        round_correctly(mpmath.exp, [1.0], F32, max_bits=40)
    with pytest.raises(ValueError, match="start_bits=1"):
        round_correctly(mpmath.exp, [1.0], F32, start_bits=1)
    with pytest.raises(TypeError, match="fn returned str"):
        round_correctly(lambda: "x", [], F32)
