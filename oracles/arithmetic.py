"""Binary and ternary arithmetic: the four operations, the division family, pow, the
max/min/clamp family, selection, lerp/addcmul/addcdiv, atan2, hypot, copysign.

Division semantics (OPS.md, ATen): floor_divide and remainder follow Python's float `//` and
`%` (fmod-based), except that a zero remainder keeps the dividend's sign (ATen); fmod keeps the
dividend's sign (C). The mpmath functions compute them exactly from the Fractions of the inputs.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from mpmath import mp

from .base import (HALF_PI, INF, NAN, PI, QUARTER_PI, THREE_QUARTER_PI, exact_add, exact_mul,
                   exact_sub, floor_quotient, from_fraction, oracle, to_fraction, when)

REAL = "real"
EXACT = "exactly-representable"
ROUNDING_MODES = (None, "trunc", "floor")


def _check_alpha(alpha):
    if isinstance(alpha, float):
        raise TypeError(f"add/sub/rsub: alpha={alpha!r} is a float; integer operands take an "
                        f"integer alpha (ATen)")
    return alpha


def _check_mode(rounding_mode):
    if rounding_mode not in ROUNDING_MODES:
        raise ValueError(f"div: rounding_mode must be one of {ROUNDING_MODES}, "
                         f"got {rounding_mode!r}")
    return rounding_mode


# --- the division family -----------------------------------------------------------------------
def trunc_int(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def fmod_int(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def div_f64(a, b, rounding_mode=None):
    _check_mode(rounding_mode)
    if rounding_mode is None:
        return a / b
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    # trunc of the exact quotient, as floor of |a|/|b| with the quotient's sign; an infinite
    # dividend over a finite divisor is +-inf (trunc(a/b) in ATen).
    t = np.copysign(np.floor_divide(np.abs(a), np.abs(b)), a / b)
    return np.where(np.isinf(a) & np.isfinite(b), a / b, t)


def div_mp(a, b, rounding_mode=None):
    _check_mode(rounding_mode)
    if rounding_mode is None:
        return a / b
    if b == 0:
        raise ZeroDivisionError("div")
    if rounding_mode == "floor":
        return from_fraction(Fraction(floor_quotient(a, b)))
    return from_fraction(Fraction(math.trunc(to_fraction(a) / to_fraction(b))))


def _by_mode(true_division, trunc, floor):
    """A div row whose output depends on rounding_mode."""
    return lambda p: {None: true_division, "trunc": trunc, "floor": floor}[p["rounding_mode"]]


def div_int(a, b, rounding_mode=None):
    _check_mode(rounding_mode)
    if rounding_mode is None:
        return Fraction(a, b)
    return a // b if rounding_mode == "floor" else trunc_int(a, b)


def remainder_f64(a, b):
    # ATen: r = fmod(a, b), then r + b where r is nonzero with the sign opposite to b's. r is
    # exact, so the result is the exact remainder rounded once; a zero r keeps a's sign.
    r = np.fmod(a, b)
    return np.where((r != 0) & ((b < 0) != (r < 0)), r + b, r)


def remainder_mp(a, b):
    if b == 0:
        raise ZeroDivisionError("remainder")
    qa, qb = to_fraction(a), to_fraction(b)
    return from_fraction(qa - qb * math.floor(qa / qb))


def fmod_mp(a, b):
    if b == 0:
        raise ZeroDivisionError("fmod")
    qa, qb = to_fraction(a), to_fraction(b)
    return from_fraction(qa - qb * math.trunc(qa / qb))


# --- pow -----------------------------------------------------------------------------------------
def pow_mp(x, y):
    if x == 0:
        return mp.nan          # 0**y is 0, inf or 1: exact, taken from float64 with its sign
    if y == mp.floor(y):
        n = int(y)
        if abs(n) <= 64:
            # small integer exponents exactly (x**n has at most 64*53 bits), one rounding after
            power = exact_mul(*([x] * abs(n))) if n else mp.one
            return power if n >= 0 else 1 / power
        return mp.power(x, n)
    return mp.nan if x < 0 else mp.power(x, y)


def pow_f64(x, y):
    # numpy's power takes a sqrt fast path for a 0-d exponent 0.5 (power(-0.0, 0.5) = -0.0,
    # power(-inf, 0.5) = NaN); C99 says +0 and +inf. The odd-integer rules are restated.
    r = np.power(x, y)
    odd = np.abs(np.fmod(y, 2.0)) == 1.0
    r = np.where((x == 0) & (y > 0) & ~odd, 0.0, r)
    r = np.where((x == -INF) & ~odd & ~np.isnan(y), np.where(y > 0, INF, 0.0), r)
    return np.where(y == 0, 1.0, r)          # C99: pow(x, +-0) = 1 for every x, NaN and -inf too


def pow_int(a: int, b: int, bits: int | None = None, **_):
    if b < 0:
        raise ValueError(f"pow: integer base to the negative integer power {b}")
    if abs(a) <= 1 or b < 64:
        return a ** b
    # |a| >= 2 and b >= 64: the value only matters modulo 2**bits (the harness wraps).
    return pow(a, b, 1 << (bits or 64))


POW_ROWS = (
    ((0.0, 0.0), 1.0), ((NAN, 0.0), 1.0), ((NAN, -0.0), 1.0), ((INF, 0.0), 1.0), ((-INF, 0.0), 1.0),
    ((-INF, -0.0), 1.0),
    ((1.0, NAN), 1.0), ((1.0, INF), 1.0), ((1.0, -INF), 1.0), ((-1.0, INF), 1.0),
    ((-1.0, -INF), 1.0), ((NAN, 1.0), NAN), ((2.0, NAN), NAN),
    ((0.0, -1.0), INF), ((-0.0, -1.0), -INF), ((-0.0, -2.0), INF), ((0.0, -0.5), INF),
    ((-0.0, 3.0), -0.0), ((-0.0, 2.0), 0.0), ((-0.0, 0.5), 0.0), ((0.0, -INF), INF),
    ((-0.0, -INF), INF), ((0.0, INF), 0.0), ((0.5, -INF), INF), ((2.0, -INF), 0.0),
    ((0.5, INF), 0.0), ((2.0, INF), INF), ((-0.5, INF), 0.0), ((-2.0, INF), INF),
    ((-INF, -3.0), -0.0), ((-INF, -2.0), 0.0), ((-INF, 3.0), -INF), ((-INF, 2.0), INF),
    ((-INF, 0.5), INF), ((INF, -1.0), 0.0), ((INF, 2.0), INF), ((-2.0, 0.5), NAN),
    ((-8.0, 1.0 / 3.0), NAN), ((2.0, 10.0), 1024.0), ((-2.0, 3.0), -8.0), ((4.0, 0.5), 2.0),
    ((2.0, -1.0), 0.5),
)


# --- max / min / clamp ---------------------------------------------------------------------------
# np.maximum(0.0, -0.0) is -0.0 (it returns the first of equal operands): the zeros are fixed so
# that -0 < +0 (IEEE 754-2019 maximum/minimum, Triton's propagating max/min).
def _zero_fix(r, a, b, neg):
    both = (a == 0) & (b == 0)
    return np.where(both, np.where(neg(np.signbit(a), np.signbit(b)), -0.0, 0.0), r)


def maximum_f64(a, b):
    return _zero_fix(np.maximum(a, b), a, b, np.logical_and)


def minimum_f64(a, b):
    return _zero_fix(np.minimum(a, b), a, b, np.logical_or)


def fmax_f64(a, b):
    return _zero_fix(np.fmax(a, b), a, b, np.logical_and)


def fmin_f64(a, b):
    return _zero_fix(np.fmin(a, b), a, b, np.logical_or)


def _max_rows(nan_result_first, nan_result_second, zero):
    return (((NAN, 1.0), nan_result_first), ((1.0, NAN), nan_result_second), ((NAN, NAN), NAN),
            ((-0.0, 0.0), zero), ((0.0, -0.0), zero), ((-0.0, -0.0), -0.0), ((0.0, 0.0), 0.0))


# --- lerp, addcmul, addcdiv ----------------------------------------------------------------------
def lerp_f64(start, end, weight):
    # ATen's two branches; the exact value is start + weight*(end - start) either way.
    diff = end - start
    return np.where(np.abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))


def addcdiv_mp(x, t1, t2, value=1):
    # (x*t2 + value*t1)/t2: exact numerator, one rounding, no cancellation between two roundings.
    if t2 == 0:
        raise ZeroDivisionError("addcdiv")
    return exact_add(exact_mul(x, t2), exact_mul(value, t1)) / t2


ORACLES = [
    oracle("add", 2, REAL, lambda a, b, alpha=1: a + alpha * b,
           lambda a, b, alpha=1: exact_add(a, exact_mul(alpha, b)),
           lambda a, b, alpha=1: a + _check_alpha(alpha) * b, params={"alpha": 1},
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((INF, -INF), when(NAN, alpha=1)),
                     ((INF, 1.0), INF), ((-INF, 1.0), -INF), ((0.0, 0.0), 0.0),
                     ((-0.0, -0.0), when(-0.0, alpha=1)), ((-0.0, 0.0), when(0.0, alpha=1)),
                     ((1.0, -1.0), when(0.0, alpha=1)))),
    oracle("sub", 2, REAL, lambda a, b, alpha=1: a - alpha * b,
           lambda a, b, alpha=1: exact_sub(a, exact_mul(alpha, b)),
           lambda a, b, alpha=1: a - _check_alpha(alpha) * b, params={"alpha": 1},
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((INF, INF), when(NAN, alpha=1)),
                     ((INF, 1.0), INF), ((1.0, INF), when(-INF, alpha=1)), ((0.0, 0.0), 0.0),
                     ((-0.0, 0.0), when(-0.0, alpha=1)), ((-0.0, -0.0), when(0.0, alpha=1)),
                     ((1.0, 1.0), when(0.0, alpha=1)), ((-INF, 1.0), -INF),
                     ((1.0, -INF), when(INF, alpha=1)))),
    oracle("rsub", 2, REAL, lambda a, b, alpha=1: b - alpha * a,
           lambda a, b, alpha=1: exact_sub(b, exact_mul(alpha, a)),
           lambda a, b, alpha=1: b - _check_alpha(alpha) * a, params={"alpha": 1},
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((INF, INF), when(NAN, alpha=1)),
                     ((1.0, INF), INF), ((INF, 1.0), when(-INF, alpha=1)), ((0.0, 0.0), 0.0),
                     ((0.0, -0.0), when(-0.0, alpha=1)), ((-0.0, -0.0), when(0.0, alpha=1)),
                     ((2.0, 1.0), when(-1.0, alpha=1)), ((1.0, -INF), -INF),
                     ((-INF, 1.0), when(INF, alpha=1))),
           notes="rsub(a, b, alpha) = b - alpha*a"),
    oracle("mul", 2, REAL, np.multiply, exact_mul, lambda a, b: a * b,
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((INF, 0.0), NAN), ((0.0, INF), NAN),
                     ((-INF, -0.0), NAN), ((INF, -1.0), -INF), ((0.0, -1.0), -0.0),
                     ((-0.0, -0.0), 0.0), ((-0.0, 1.0), -0.0), ((INF, INF), INF))),
    oracle("div", 2, REAL, div_f64, div_mp, div_int, params={"rounding_mode": None},
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((1.0, 0.0), INF), ((-1.0, 0.0), -INF),
                     ((1.0, -0.0), -INF), ((0.0, 0.0), NAN), ((INF, INF), NAN), ((1.0, INF), 0.0),
                     ((-1.0, INF), lambda p: -1.0 if p["rounding_mode"] == "floor" else -0.0),
                     ((INF, 2.0), lambda p: NAN if p["rounding_mode"] == "floor" else INF),
                     ((0.0, -1.0), -0.0), ((-0.0, -1.0), 0.0), ((-INF, 2.0), _by_mode(-INF, -INF, NAN)),
                     ((1.0, 0.1), _by_mode(10.0, 9.0, 9.0)), ((-7.0, 2.0), _by_mode(-3.5, -3.0, -4.0))),
           notes="rounding_mode None: true division (two integers give the exact Fraction; the "
                 "result dtype is float). 'floor': as floor_divide. 'trunc': trunc of the EXACT "
                 "quotient, like floor_divide is floor of it (trunc-div(1.0, 0.1) = 9, where "
                 "ATen's trunc(a/b) rounds the quotient first and gives 10); an infinite dividend "
                 "over a finite divisor gives +-inf as trunc(a/b). Integer modes exact, "
                 "ZeroDivisionError on a zero divisor."),
    oracle("floor_divide", 2, REAL, np.floor_divide,
           lambda a, b: div_mp(a, b, rounding_mode="floor"), lambda a, b: a // b,
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((1.0, 0.0), INF), ((-1.0, 0.0), -INF),
                     ((1.0, -0.0), -INF), ((0.0, 0.0), NAN), ((1.0, INF), 0.0),
                     ((-1.0, INF), -1.0), ((1.0, -INF), -1.0), ((-1.0, -INF), 0.0),
                     ((INF, 1.0), NAN), ((INF, INF), NAN), ((0.0, 1.0), 0.0), ((-0.0, 1.0), -0.0),
                     ((0.0, -1.0), -0.0), ((-0.0, -1.0), 0.0), ((1.0, 0.1), 9.0),
                     ((-0.5, 2.0), -1.0), ((0.5, 2.0), 0.0), ((-0.5, -2.0), 0.0),
                     ((0.5, -2.0), -1.0), ((7.0, 2.0), 3.0), ((-7.0, 2.0), -4.0)),
           notes="floor of the exact quotient (Python's float //: 1.0 // 0.1 == 9.0), rounded "
                 "where it is not representable; a zero result has the sign of a/b; x // 0 is "
                 "a/0 (+-inf or NaN) as ATen; inf // finite is NaN (Python, ATen)"),
    oracle("remainder", 2, REAL, remainder_f64, remainder_mp, lambda a, b: a % b,
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((1.0, 0.0), NAN), ((0.0, 0.0), NAN),
                     ((INF, 1.0), NAN), ((1.0, INF), 1.0), ((-1.0, INF), INF),
                     ((1.0, -INF), -INF), ((-1.0, -INF), -1.0), ((0.0, 1.0), 0.0),
                     ((-0.0, 3.0), -0.0), ((0.0, -1.0), 0.0), ((3.0, -3.0), 0.0),
                     ((-3.0, 3.0), -0.0), ((5.0, -3.0), -1.0), ((-5.0, 3.0), 1.0),
                     ((0.0, INF), 0.0), ((-0.0, INF), -0.0), ((5.5, 2.0), 1.5)),
           notes="sign of the divisor (Python %); a zero result keeps the dividend's sign "
                 "(ATen's fmod + fix: -0.0 % 3.0 = -0.0, 3.0 % -3.0 = +0.0); x % 0 is NaN; "
                 "x % +-inf is x or +-inf by the sign rule; real kind: r + b may round"),
    oracle("fmod", 2, EXACT, np.fmod, fmod_mp, fmod_int,
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((1.0, 0.0), NAN), ((0.0, 0.0), NAN),
                     ((INF, 1.0), NAN), ((1.0, INF), 1.0), ((-1.0, INF), -1.0),
                     ((0.0, 1.0), 0.0), ((-0.0, 1.0), -0.0), ((-5.0, 3.0), -2.0),
                     ((5.0, -3.0), 2.0), ((-0.0, INF), -0.0), ((-6.0, 3.0), -0.0),
                     ((-INF, 1.0), NAN), ((1.0, -INF), 1.0), ((-1.0, -INF), -1.0)),
           notes="C fmod: sign of the dividend, always exact"),
    oracle("pow", 2, REAL, pow_f64, pow_mp, pow_int, domain=((0.0, INF), (-INF, INF)),
           specials=POW_ROWS,
           notes="C99/IEEE pow at the specials; a negative base with a non-integer exponent is "
                 "NaN; integer pow exact, a negative exponent raises ValueError, and for |a| >= 2 "
                 "and b >= 64 the value is returned modulo 2**bits (keyword bits, default 64)"),
    oracle("maximum", 2, EXACT, maximum_f64, max, max, specials=_max_rows(NAN, NAN, 0.0)
           + (((INF, 1.0), INF), ((-INF, 1.0), 1.0), ((NAN, INF), NAN)),
           notes="NaN propagates; -0 < +0"),
    oracle("minimum", 2, EXACT, minimum_f64, min, min, specials=_max_rows(NAN, NAN, -0.0)
           + (((INF, 1.0), 1.0), ((-INF, 1.0), -INF), ((NAN, -INF), NAN)),
           notes="NaN propagates; -0 < +0"),
    oracle("fmax", 2, EXACT, fmax_f64, max, max, specials=_max_rows(1.0, 1.0, 0.0)
           + (((INF, NAN), INF), ((-INF, NAN), -INF)),
           notes="NaN ignored when the other is a number; -0 < +0"),
    oracle("fmin", 2, EXACT, fmin_f64, min, min, specials=_max_rows(1.0, 1.0, -0.0)
           + (((INF, NAN), INF), ((-INF, NAN), -INF)),
           notes="NaN ignored when the other is a number; -0 < +0"),
    oracle("clamp", 3, EXACT, lambda x, lo, hi: minimum_f64(maximum_f64(x, lo), hi),
           lambda x, lo, hi: min(max(x, lo), hi), lambda a, lo, hi: min(max(a, lo), hi),
           specials=(((NAN, 0.0, 1.0), NAN), ((0.5, NAN, 1.0), NAN), ((0.5, 0.0, NAN), NAN),
                     ((2.0, 0.0, 1.0), 1.0), ((-1.0, 0.0, 1.0), 0.0), ((0.5, 1.0, 0.0), 0.0),
                     ((-0.0, 0.0, 1.0), 0.0), ((0.0, -0.0, -0.0), -0.0), ((INF, 0.0, 1.0), 1.0),
                     ((-INF, 0.0, 1.0), 0.0), ((INF, -INF, INF), INF), ((0.5, 0.0, 1.0), 0.5)),
           notes="minimum(maximum(x, min), max): min > max gives max; a NaN x or bound gives "
                 "NaN (ATen); -0 < +0; a missing bound is passed as -inf/+inf"),
    oracle("clamp_min", 2, EXACT, maximum_f64, max, max,
           specials=(((NAN, 0.0), NAN), ((1.0, NAN), NAN), ((-0.0, 0.0), 0.0), ((-1.0, 0.0), 0.0),
                     ((2.0, 0.0), 2.0), ((-INF, 0.0), 0.0), ((INF, 0.0), INF),
                     ((0.0, -0.0), 0.0)),
           notes="maximum(x, min): NaN propagates; -0 < +0"),
    oracle("where", 3, EXACT, lambda c, a, b: np.where(c.astype(bool), a, b),
           lambda c, a, b: a if c else b, lambda c, a, b: a if c else b,
           domain=((0.0, 1.0), (-INF, INF), (-INF, INF)),
           specials=(((True, NAN, 1.0), NAN), ((False, NAN, 1.0), 1.0), ((True, -0.0, 1.0), -0.0),
                     ((False, 1.0, -0.0), -0.0), ((True, INF, 0.0), INF),
                     ((False, 0.0, NAN), NAN), ((True, -INF, 0.0), -INF),
                     ((False, 0.0, -INF), -INF)),
           notes="cond is bool (the domain (0, 1) means False/True)"),
    oracle("masked_fill", 2, EXACT,
           lambda x, mask, value=0.0: np.where(mask.astype(bool), value, x),
           lambda x, mask, value=0.0: mp.mpf(value) if mask else x,
           lambda a, mask, value=0: value if mask else a, params={"value": 0.0},
           domain=((-INF, INF), (0.0, 1.0)),
           specials=(((NAN, False), NAN), ((NAN, True), lambda p: p["value"]),
                     ((-0.0, False), -0.0), ((INF, True), lambda p: p["value"]),
                     ((-INF, False), -INF), ((0.0, True), lambda p: p["value"])),
           notes="mask is bool; the result is value where mask is True"),
    oracle("lerp", 3, REAL, lerp_f64,
           lambda s, e, w: exact_add(s, exact_mul(w, exact_sub(e, s))),
           domain=((-INF, INF), (-INF, INF), (0.0, 1.0)),
           specials=(((NAN, 1.0, 0.5), NAN), ((0.0, 1.0, NAN), NAN), ((1.0, 2.0, 0.0), 1.0),
                     ((1.0, 2.0, 1.0), 2.0), ((0.0, INF, 0.25), INF), ((0.0, INF, 0.5), NAN),
                     ((1.0, -INF, 0.25), -INF), ((INF, INF, 0.5), NAN), ((-0.0, 1.0, 0.5), 0.5),
                     ((0.0, 0.0, 0.5), 0.0), ((1.0, NAN, 0.0), NAN), ((0.0, 1.0, 0.25), 0.25),
                     ((0.0, 4.0, 0.75), 3.0)),
           zero_sign_matters=False,
           notes="exact value start + weight*(end - start); the float64 function is ATen's "
                 "two-branch form (|w| < 0.5 ? start + w*diff : end - diff*(1 - w)), which also "
                 "decides the infinite cases (lerp(0, inf, 0.5) = inf - inf*0.5 = NaN). A zero "
                 "result's sign depends on the branch, so it is not compared"),
    oracle("addcmul", 3, REAL, lambda x, t1, t2, value=1: x + value * t1 * t2,
           lambda x, t1, t2, value=1: exact_add(x, exact_mul(value, t1, t2)),
           lambda a, t1, t2, value=1: a + value * t1 * t2, params={"value": 1},
           specials=(((NAN, 1.0, 1.0), NAN), ((1.0, INF, 0.0), NAN), ((INF, 1.0, -INF), NAN),
                     ((0.0, -0.0, 1.0), 0.0), ((-0.0, 0.0, 1.0), when(0.0, value=1)),
                     ((-0.0, -0.0, 1.0), when(-0.0, value=1)), ((1.0, 2.0, 3.0), when(7.0, value=1)),
                     ((1.0, INF, 1.0), when(INF, value=1))),
           notes="input + value*t1*t2"),
    oracle("addcdiv", 3, REAL, lambda x, t1, t2, value=1: x + value * t1 / t2, addcdiv_mp,
           params={"value": 1},
           specials=(((NAN, 1.0, 1.0), NAN), ((1.0, 1.0, 0.0), when(INF, value=1)),
                     ((1.0, -1.0, 0.0), when(-INF, value=1)), ((1.0, 0.0, 0.0), NAN),
                     ((1.0, 1.0, INF), 1.0), ((0.0, -1.0, INF), 0.0),
                     ((-0.0, 0.0, 1.0), when(0.0, value=1)), ((-0.0, -0.0, 1.0), when(-0.0, value=1)),
                     ((-0.0, 1.0, -INF), when(-0.0, value=1)), ((1.0, 1.0, 4.0), when(1.25, value=1))),
           notes="input + value*(t1/t2)"),
    oracle("atan2", 2, REAL, np.arctan2, mp.atan2,
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((0.0, 0.0), 0.0), ((-0.0, 0.0), -0.0),
                     ((0.0, -0.0), PI), ((-0.0, -0.0), -PI), ((0.0, 1.0), 0.0), ((-0.0, 1.0), -0.0),
                     ((0.0, -1.0), PI), ((-0.0, -1.0), -PI), ((1.0, 0.0), HALF_PI),
                     ((-1.0, 0.0), -HALF_PI), ((1.0, -0.0), HALF_PI), ((INF, INF), QUARTER_PI),
                     ((INF, -INF), THREE_QUARTER_PI), ((-INF, INF), -QUARTER_PI),
                     ((-INF, -INF), -THREE_QUARTER_PI), ((INF, 1.0), HALF_PI),
                     ((-INF, 1.0), -HALF_PI), ((1.0, INF), 0.0), ((-1.0, INF), -0.0),
                     ((1.0, -INF), PI), ((-1.0, -INF), -PI), ((1.0, 1.0), QUARTER_PI)),
           notes="atan2(y, x) with C's quadrant and signed-zero rules"),
    oracle("hypot", 2, REAL, np.hypot, mp.hypot,
           specials=(((INF, NAN), INF), ((NAN, INF), INF), ((-INF, NAN), INF), ((NAN, -INF), INF),
                     ((NAN, 1.0), NAN), ((0.0, 0.0), 0.0), ((-0.0, -0.0), 0.0), ((3.0, 4.0), 5.0),
                     ((-0.0, 1.0), 1.0), ((-INF, 1.0), INF)),
           notes="C hypot: an infinity wins over NaN"),
    oracle("copysign", 2, EXACT, np.copysign, lambda a, b: abs(a) if b >= 0 else -abs(a),
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), 1.0), ((1.0, -0.0), -1.0), ((-1.0, 0.0), 1.0),
                     ((INF, -1.0), -INF), ((0.0, -1.0), -0.0), ((-0.0, 1.0), 0.0),
                     ((-INF, INF), INF), ((2.0, -3.0), -2.0)),
           notes="the NaN row is the positive quiet NaN (its sign bit is what counts)"),
]
