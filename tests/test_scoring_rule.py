"""The scoring rule (nbx/harness/scoring/rule.py, through its numpy views in nbx.harness.scoring.ulp) against
hand-computed values and an exact rational restatement of docs/PRECISION.md (ulp_error_exact below,
written here in Fractions and mpmath so that the rule is held to a second, independent statement)."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import mpmath
import numpy as np
import pytest

import math

from nbx.harness.scoring.ulp import classify_specials, correctly_rounded, overflow_edge, ulp_error, ulp_of
from nbx.oracles.formats import FORMATS, from_bits, max_finite, min_subnormal, to_bits
from nbx.oracles.rounding import round_mpf

F16, BF16, F32, F64 = (FORMATS[n] for n in ("float16", "bfloat16", "float32", "float64"))
ALL = list(FORMATS.values())
ids = lambda f: f.name  # noqa: E731
inf, nan = np.inf, np.nan


def ulp_exact(y: float, f) -> Fraction:
    """docs/PRECISION.md's ulp with floor(log2|y|) found by exact comparison with powers of two."""
    if y == 0:
        return Fraction(min_subnormal(f))
    a = abs(Fraction(y))
    e = a.numerator.bit_length() - a.denominator.bit_length()  # within one of the answer
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    while Fraction(2) ** e > a:
        e -= 1
    return Fraction(2) ** (max(e, f.emin) - f.precision + 1)


def ulp_error_exact(got, expected_mpf, fmt="float64") -> np.ndarray:
    """err(got, y) with each y an exact mpmath mpf, in rational arithmetic rounded once to float64:
    the rule restated element by element. 0 for both NaN or got equal to the infinity y rounds to,
    inf for a NaN or inf mismatch, inf measured as 2^(emax+1) at an overflow edge."""
    f = FORMATS[fmt] if isinstance(fmt, str) else fmt
    g = np.asarray(got).astype(np.float64)
    out = []
    top = math.ldexp(1.0, f.emax + 1) if f.name != "float64" else inf
    for r, y in zip(g.ravel().tolist(), expected_mpf):
        y = y if isinstance(y, mpmath.mpf) else mpmath.mpf(y)
        due = float(from_bits(round_mpf(y, f), f))
        at_edge = (f.name != "float64" and mpmath.isfinite(y) and max_finite(f) <= abs(y) < top
                   and (abs(r) == max_finite(f) or math.isinf(r)) and (r < 0) == (y < 0))
        if at_edge:
            r = math.copysign(top, r) if math.isinf(r) else r
            due = r
        if mpmath.isnan(y) or math.isnan(r):
            out.append(0.0 if (mpmath.isnan(y) and math.isnan(r)) else inf)
        elif math.isinf(due) or math.isinf(r):
            out.append(0.0 if r == due else inf)
        else:
            sign, man, exp, bc = y._mpf_
            if man == 0:
                exact, ulp = Fraction(0), Fraction(min_subnormal(f))
            else:
                exact = Fraction(-man if sign else man) * Fraction(2) ** exp
                ulp = Fraction(2) ** (max(exp + bc - 1, f.emin) - f.precision + 1)
            err = abs(Fraction(r) - exact) / ulp
            big = float(np.finfo(np.float64).max)
            out.append(big if err >= big else float(err))
    return np.array(out).reshape(g.shape)


@pytest.mark.parametrize("f", ALL, ids=ids)
def test_rule_against_exact_restatement(f):
    """Random results within a few ulps of random truths, with zeros, subnormals and the overflow
    edge: the rule's err equals the exact restatement's to 2^-50 relative."""
    rng = np.random.default_rng(5)
    n = 3000
    if f.name == "float64":
        y = np.ldexp(rng.uniform(-1, 1, n), rng.integers(-1080, 1024, n))
    else:
        y = np.ldexp(rng.uniform(-1, 1, n), rng.integers(f.emin - f.precision - 2, f.emax + 1, n))
        y[:20] = max_finite(f) * (1 + rng.uniform(0, 2.0 ** -f.precision, 20))
    with np.errstate(all="ignore"):
        got = (y + ulp_of(y, f) * rng.integers(-4, 5, n)).astype(f.np_dtype)
    got[:10] = np.inf
    want = ulp_error_exact(got, [mpmath.mpf(v) for v in y.tolist()], f)
    err = ulp_error(got, y, f)
    both_inf = np.isinf(err) & np.isinf(want)
    with np.errstate(invalid="ignore"):
        close = both_inf | (np.abs(err - want) <= 2.0 ** -50 * np.maximum(want, 1.0))
    assert np.all(close), \
        [(y[i], got[i], err[i], want[i]) for i in np.flatnonzero(~close)[:4]]


# ---------------------------------------------------------------------------------------- ulp_of

HAND_ULPS = [
    (F32, 1.0, 2.0**-23),
    (F32, np.nextafter(np.float32(1), np.float32(0)), 2.0**-24),  # just below 1: one binade down
    (F32, np.nextafter(1.0, 0.0), 2.0**-24),  # a float64 truth just below 1, same binade
    (F32, 2.0**-126, 2.0**-149),
    (F32, 2.0**-140, 2.0**-149),  # subnormal: the quantum stays fixed
    (F32, 0.0, 2.0**-149),
    (F32, -3.0, 2.0**-22),
    (F32, max_finite(F32), 2.0**104),
    (F16, 65504.0, 32.0),
    (F16, 1.0, 2.0**-10),
    (F16, 2.0**-20, 2.0**-24),
    (F16, 0.0, 2.0**-24),
    (BF16, 1.0, 2.0**-7),
    (BF16, 0.0, 2.0**-133),
    (F64, 1.0, 2.0**-52),
    (F64, np.nextafter(1.0, 0.0), 2.0**-53),
    (F64, 0.0, 5e-324),
    (F64, 1e-310, 5e-324),
    (F64, max_finite(F64), 2.0**971),
]


@pytest.mark.parametrize("f,y,want", HAND_ULPS, ids=[f"{f.name}-{float(y)!r}" for f, y, _ in HAND_ULPS])
def test_ulp_of_hand_cases(f, y, want):
    assert ulp_of(np.array([y, -y]), f).tolist() == [want, want]


@pytest.mark.parametrize("f", ALL, ids=ids)
def test_ulp_of_at_every_binade_edge(f):
    # 2^k and the float64 just below it: np.log2 rounds the second up to k for many k.
    k = np.arange(f.emin - f.precision + 1, f.emax + 1)
    edge = np.ldexp(1.0, k)
    below = np.nextafter(edge, 0.0)
    want_edge = np.ldexp(1.0, np.maximum(k, f.emin) - f.precision + 1)
    want_below = np.ldexp(1.0, np.maximum(k - 1, f.emin) - f.precision + 1)
    assert np.array_equal(ulp_of(edge, f), want_edge)
    assert np.array_equal(ulp_of(below, f), want_below)


@pytest.mark.parametrize("f", ALL, ids=ids)
def test_ulp_of_random_against_exact_definition(f):
    rng = np.random.default_rng(11)
    y = np.ldexp(rng.uniform(0.5, 1, 2000), rng.integers(f.emin - f.precision - 2, f.emax + 2, 2000))
    for yi, u in zip(y.tolist(), ulp_of(y, f).tolist()):
        assert Fraction(u) == ulp_exact(yi, f), yi


def test_ulp_of_inputs():
    assert ulp_of(np.array([1.0], np.float32), "float32")[0] == 2.0**-23  # values of fmt widen exactly
    assert ulp_of(np.array([1.0], ml_dtypes.bfloat16), "bfloat16")[0] == 2.0**-7
    assert np.isnan(ulp_of(np.array([inf, nan]), F32)).all()
    with pytest.raises(TypeError, match="float array"):
        ulp_of(np.array([1, 2]), F32)


# ---------------------------------------------------------------------------------------- ulp_error


def test_ulp_error_hand_cases():
    f32 = lambda *v: np.array(v, dtype=np.float32)  # noqa: E731
    got = f32(1 + 2.0**-23, 1 - 2.0**-24, 1.0, 2.0**-149, 0.0, -1.0)
    want = np.array([1.0, 1.0, 1 + 2.0**-25, 0.0, 2.0**-150, 1.0])
    # 1 ulp above 1; half an ulp (of the truth's binade) below; a quarter; one subnormal quantum
    # from 0; half a quantum; 2 / 2^-23 across zero.
    assert ulp_error(got, want, F32).tolist() == [1.0, 0.5, 0.25, 1.0, 0.5, 2.0**24]
    # max against a truth that rounds to inf, below 2^16: a rounding error (overflow_edge)
    assert ulp_error(np.array([65504], np.float16), np.array([65520.0]), F16)[0] == 0.5
    assert ulp_error(np.array([65504], np.float16), np.array([65519.0]), F16)[0] == 15 / 32
    assert ulp_error(np.array([65504], np.float16), np.array([65536.0]), F16)[0] == inf  # beyond the edge


def test_overflow_edge():
    """inf and max are neighbours for a truth in [max, 2^(emax+1)): inf counts as 2^(emax+1) there,
    either result is a rounding (misrounded or not), no special mismatch; outside, inf is special."""
    got = np.array([inf, inf, 65504, -inf, inf, 65504, inf, -65504, 65504], np.float16)
    want = np.array([65519.0, 65530.0, 65530.0, -65519.0, 65503.0, 65536.0, 65536.0, 65519.0, 65504.0])
    assert ulp_error(got, want, F16).tolist() == [17 / 32, 6 / 32, 26 / 32, 17 / 32, inf, inf, 0.0, 131023 / 32, 0.0]
    spec = classify_specials(got, want, F16)
    assert spec["special"].tolist() == [False, False, False, False, True, True, False, False, False]
    assert overflow_edge(got, want, F16).tolist() == [True, True, True, True, False, False, False, False, True]
    # float32 and bfloat16 alike; float64 keeps every overflow special (its truth stops at max)
    m32 = float(np.finfo(np.float32).max)
    assert ulp_error(np.array([inf], np.float32), np.array([m32 + 2.0**103]), F32)[0] == 0.5
    assert ulp_error(np.array([inf], ml_dtypes.bfloat16), np.array([2.0**128 - 2.0**119]), "bfloat16")[0] == 0.5
    assert not overflow_edge(np.array([inf]), np.array([np.finfo(np.float64).max]), F64).any()
    # exact rationals agree
    ys = [mpmath.mpf(65519), mpmath.mpf(65530), mpmath.mpf(65503)]
    assert ulp_error_exact(np.array([inf, 65504, inf], np.float16), ys, F16).tolist() == [17 / 32, 26 / 32, inf]


@pytest.mark.parametrize("f", ALL, ids=ids)
def test_ulp_error_opposite_sign_extremes(f):
    # |max - (-max)| / ulp(max) = 2 (2 - 2^(1-p)) 2^emax / 2^(emax-p+1) = 2^(p+1) - 2, exactly.
    # (numpy's nulp_diff gives 2.07e7 for float32 here instead of 2^25 - 2 = 33554430.)
    m = max_finite(f)
    got = np.array([m, -m]).astype(np.float64)
    err = ulp_error(got.astype(f.np_dtype), np.array([-m, m]), f)
    assert err.tolist() == [2.0 ** (f.precision + 1) - 2] * 2


def test_ulp_error_float64_saturates_instead_of_inf():
    err = ulp_error(np.array([1.0, max_finite(F64)]), np.array([0.0, 5e-324]), F64)
    assert err.tolist() == [np.finfo(np.float64).max] * 2


def test_ulp_error_specials():
    got = np.array([nan, nan, 1.0, inf, -inf, 1.0, inf, inf, 0.0, 3.4028235e38], dtype=np.float32)
    want = np.array([nan, 1.0, nan, inf, inf, inf, 1.0, 1e39, -0.0, 1e39])
    err = ulp_error(got, want, F32)
    # both NaN; NaN vs 1; 1 vs NaN; same inf; wrong-sign inf; finite where inf due; inf where
    # finite due; inf due from a finite float64 beyond float32's range; zero sign (not an ulp
    # matter); max finite where the truth rounds to inf.
    assert err.tolist() == [0, inf, inf, 0, inf, inf, inf, 0, 0, inf]


def test_ulp_error_double_double_truth():
    hi, lo = np.array([1.0, 1.0, 1.0, 2.0**-1022]), np.array([2.0**-53, -(2.0**-60), 0.0, -(2.0**-1074)])
    got = np.array([1 + 2.0**-52, 1.0, 1.0, 2.0**-1022])
    # Half an ulp; 2^-60 below 1 where the ulp is 2^-53 (not 2^-52); 0; a subnormal truth.
    assert ulp_error(got, (hi, lo), F64).tolist() == [0.5, 2.0**-7, 0.0, 1.0]
    # hi + lo at max + half an ulp rounds to inf: inf is due.
    m = max_finite(F64)
    assert ulp_error(np.array([inf, m]), (np.array([m, m]), np.array([2.0**970] * 2)), F64).tolist() == [0, inf]
    c = classify_specials(np.array([0.0]), (np.array([-0.0]), np.array([0.0])), F64)
    assert c["zero_sign_mismatch"].tolist() == [True]
    assert ulp_error(1.0, 1.0 + 2.0**-52, "float64").shape == ()  # scalars and names work
    with pytest.raises(ValueError, match="double-double"):
        ulp_error(np.ones(1, np.float32), (hi, lo), F32)


def test_ulp_error_exact_with_mpmath_truth():
    with mpmath.workprec(300):
        ys = [mpmath.mpf(1) - mpmath.mpf(2) ** -60, mpmath.mpf(1) / 3, mpmath.mpf(0),
              mpmath.mpf("inf"), mpmath.mpf("nan"), mpmath.mpf(2) ** 1024, mpmath.mpf(2) ** 1024]
    got = np.array([1.0, 1 / 3, 5e-324, inf, nan, inf, max_finite(F64)])
    err = ulp_error_exact(got, ys)
    third = abs(Fraction(1 / 3) - Fraction(1, 3)) / Fraction(2) ** -54
    assert err.tolist() == [2.0**-7, float(third), 1.0, 0.0, 0.0, 0.0, inf]


def test_ulp_error_float64_path_agrees_with_exact_path():
    rng = np.random.default_rng(12)
    y = np.ldexp(rng.uniform(-1, 1, 300), rng.integers(-1080, 1024, 300))
    got = y + ulp_of(y, F64) * rng.integers(-5, 6, 300)
    # With the truth exactly y the float64 path has only its own rounding: agreement to 1e-12.
    assert np.allclose(ulp_error(got, y, F64), ulp_error_exact(got, [mpmath.mpf(v) for v in y]), rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------- specials


def test_classify_specials_cases():
    got = np.array([nan, 1.0, inf, -inf, 1.0, inf, 0.0, -0.0, 0.0, 2.0], dtype=np.float32)
    want = np.array([1.0, nan, -inf, inf, inf, 1.0, -0.0, 0.0, -1e-60, 2.0])
    c = classify_specials(got, want, F32)
    assert c["nan_mismatch"].tolist() == [1, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    assert c["inf_mismatch"].tolist() == [0, 0, 1, 1, 1, 1, 0, 0, 0, 0]
    # -1e-60 rounds to -0 in float32: +0 is the wrong sign there too.
    assert c["zero_sign_mismatch"].tolist() == [0, 0, 0, 0, 0, 0, 1, 1, 1, 0]
    assert c["special"].tolist() == [1, 1, 1, 1, 1, 1, 1, 1, 1, 0]
    c = classify_specials(got, want, F32, zero_sign_matters=False)
    assert not c["zero_sign_mismatch"].any() and c["special"].sum() == 6


def test_classify_specials_bfloat16_range():
    # The overflow threshold is max + half an ulp = 2^128 - 2^119 = 3.39617e38: 3.3962e38 is above
    # it (inf due) and 3.3961e38 below (max finite due). Both lie below 2^128, where max and inf are
    # neighbours: either result is a rounding (overflow_edge). From 2^128 on, max is an inf mismatch;
    # below max, inf is.
    got = np.array([3.3895313892515355e38, inf], dtype=ml_dtypes.bfloat16)
    for truth in (3.3962e38, 3.3961e38):
        c = classify_specials(got, np.array([truth, truth]), BF16)
        assert c["inf_mismatch"].tolist() == [False, False]
        assert misrounded_pair(got, truth) == ([False, True] if truth < 3.39617e38 else [True, False])
    c = classify_specials(got, np.array([2.0**128, 3.38e38]), BF16)
    assert c["inf_mismatch"].tolist() == [True, True]


def misrounded_pair(got, truth):
    """Which of got is not the bfloat16 rounding of truth."""
    due = np.array([truth], np.float64).astype(ml_dtypes.bfloat16)[0]
    return [bool(g != due) for g in got]


# ---------------------------------------------------------------------------------------- correctly_rounded


def test_correctly_rounded_bits():
    f32 = np.array([0x7FC00000, 0x7F800001, 0xFFC00000, 0x80000000, 0x3F800000], dtype=np.uint32)
    e32 = np.array([0x7FC00001, 0x7FC00000, 0x7FC00000, 0x00000000, 0x3F800000], dtype=np.uint32)
    assert correctly_rounded(f32, e32).tolist() == [True, True, True, False, True]  # NaNs all equal; +-0 not
    # uint16 is float16 or bfloat16: 0x7C01 is a NaN in float16 but a finite value in bfloat16.
    g16, e16 = np.array([0x7C01], np.uint16), np.array([0x7E00], np.uint16)
    assert correctly_rounded(g16, e16, F16).tolist() == [True]
    assert correctly_rounded(g16, e16, BF16).tolist() == [False]
    with pytest.raises(ValueError, match="fmt is needed"):
        correctly_rounded(g16, e16)
    v = np.array([nan, 1.0, -0.0])
    assert correctly_rounded(v, np.array([nan, 1.0, 0.0])).tolist() == [True, True, False]
    assert correctly_rounded(to_bits(v, F64), np.array([nan, 1.0, -0.0]), F64).all()


# ---------------------------------------------------------------------------------------- host and device


def _planted(due: np.ndarray, f, rng) -> np.ndarray:
    """Results around the rounded truths `due` (float64, values of f), as bit patterns: the value
    itself, one and three patterns either side (crossing zero, into NaN and inf patterns), the sign
    flipped (wrong zero signs), inf, a NaN with a payload, max finite, and random patterns."""
    with np.errstate(all="ignore"):
        bits = to_bits(due.astype(f.np_dtype), f).astype(np.int64)
    one = np.int64(1)
    sign = np.int64(1 << (f.bits - 1))
    inf_b = np.int64(((1 << (f.bits - f.precision)) - 1) << (f.precision - 1))
    choice = np.arange(bits.size) % 10
    plants = [bits, bits + one, bits - one, bits + 3 * one, bits ^ sign, (bits & sign) | inf_b,
              (bits & sign) | (inf_b + 5), (bits & sign) | (inf_b - 1), rng.integers(0, 1 << f.bits, bits.size), bits]
    out = np.choose(choice, plants) & ((1 << f.bits) - 1)
    return out.astype(f.uint_dtype).view(f.np_dtype)


def _inputs(f, n, rng) -> np.ndarray:
    """Random patterns of f (both signs, subnormals, NaN payloads, infinities) and the edges."""
    bits = rng.integers(0, 1 << f.bits, n).astype(f.uint_dtype)
    edges = [0, 1, (1 << (f.precision - 1)) - 1, 1 << (f.precision - 1)]
    top = ((1 << (f.bits - f.precision)) - 1) << (f.precision - 1)
    edges += [top - 1, top, top + 1, top | (1 << (f.precision - 2))]
    edges += [e | (1 << (f.bits - 1)) for e in edges]
    bits[:len(edges)] = edges
    return bits.view(f.np_dtype)


@pytest.mark.parametrize("op", ["copy", "exp", "sigmoid", "log"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_host_and_device_hold_one_rule(op, dtype):
    """The rule as the device scorer runs it (tile reductions, position lists) and as the host runs
    it (per element, rule.classify_arrays) give the same classes, counts, positions and errors on the
    same inputs, truths and bound: every pattern class of the format, the overflow edge, NaN
    payloads, zeros of both signs."""
    from nbx.oracles import device
    from nbx.harness.scoring.device import evaluate, score
    from nbx.harness.scoring import rule
    from nbx.tensor import from_numpy

    f = FORMATS[dtype]
    d = device.DEVICE_ORACLES[op]
    rng = np.random.default_rng(21)
    x = _inputs(f, 1 << 15, rng)
    with np.errstate(all="ignore"):
        v = evaluate(d, x.astype(np.float64))
    got = _planted(rule.round_array(v, f), f, rng)
    got[[4, 12]] = [inf, -inf]          # at x = +-max: copy's overflow edge
    host = rule.classify_arrays(got, v, f, bound=d.bound + 2.0 ** -52, zero_sign=True,
                                exact=np.full(v.shape, d.k == 0))
    dev = score(d, [from_numpy(x)], from_numpy(got), zero_sign=True)
    cls = host.cls
    assert dev.decided == int((cls != rule.UNDECIDED).sum())
    assert dev.undecided == int((cls == rule.UNDECIDED).sum())
    assert dev.misrounded == int((cls == rule.MISROUNDED).sum())
    assert dev.specials == int((cls == rule.SPECIAL).sum()) > 0
    assert np.array_equal(np.sort(dev.special_at), np.flatnonzero(cls == rule.SPECIAL))
    assert np.array_equal(np.sort(dev.failing_at), np.flatnonzero((cls == rule.SPECIAL) | (cls == rule.MISROUNDED)))
    assert np.array_equal(np.sort(dev.undecided_at), np.flatnonzero(cls == rule.UNDECIDED))
    scored = (cls == rule.CORRECT) | (cls == rule.MISROUNDED)
    assert dev.err_count == int(scored.sum())
    assert dev.err_max == host.err[scored].max()
    assert math.isclose(dev.err_sum, float(host.err[scored].sum()), rel_tol=1e-12)
    if op == "copy":
        assert dev.undecided == 0 and (host.why & rule.WHY_EDGE).any()
