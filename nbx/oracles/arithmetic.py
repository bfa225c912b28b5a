"""Binary arithmetic: add, sub, rsub, mul, the division family (div, floor_divide, remainder),
maximum and minimum.

Division semantics (docs/OPS.md, ATen): floor_divide and remainder follow Python's float `//` and
`%` (fmod-based), except that a zero remainder keeps the dividend's sign (ATen). The mpmath
functions compute them exactly from the Fractions of the inputs.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .base import (INF, NAN, exact_add, exact_mul, exact_sub, floor_quotient, from_fraction, oracle,
                   to_fraction, when)

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


# --- maximum / minimum -------------------------------------------------------------------------
# np.maximum(0.0, -0.0) is -0.0 (it returns the first of equal operands): the zeros are fixed so
# that -0 < +0 (IEEE 754-2019 maximum/minimum, Triton's propagating max/min).
def zero_fix(r, a, b, neg):
    both = (a == 0) & (b == 0)
    return np.where(both, np.where(neg(np.signbit(a), np.signbit(b)), -0.0, 0.0), r)


def maximum_f64(a, b):
    return zero_fix(np.maximum(a, b), a, b, np.logical_and)


def minimum_f64(a, b):
    return zero_fix(np.minimum(a, b), a, b, np.logical_or)


def max_rows(nan_result_first, nan_result_second, zero):
    return (((NAN, 1.0), nan_result_first), ((1.0, NAN), nan_result_second), ((NAN, NAN), NAN),
            ((-0.0, 0.0), zero), ((0.0, -0.0), zero), ((-0.0, -0.0), -0.0), ((0.0, 0.0), 0.0))


def plus_scaled(c, alpha, x):
    """c + alpha*x in float64, as a fused multiply-add gives it where alpha*x alone overflows: an
    infinite c stays (inf + a finite product is inf, not NaN), a cancelling c brings the sum back in
    range. Those elements are summed at 2^-64 (only float64 operands reach there; the few bits of a
    tiny c lost in the scaling lie far below the sum's rounding)."""
    with np.errstate(over="ignore", invalid="ignore"):
        p = alpha * x
        s = c + p
        over = np.isinf(p) & np.isfinite(x)
        if np.any(over):
            s = np.where(over, np.ldexp(np.ldexp(c, -64) + alpha * np.ldexp(x, -64), 64), s)
    return s


ORACLES = [
    oracle("add", 2, REAL, lambda a, b, alpha=1: plus_scaled(a, alpha, b),
           lambda a, b, alpha=1: exact_add(a, exact_mul(alpha, b)),
           lambda a, b, alpha=1: a + _check_alpha(alpha) * b, params={"alpha": 1},
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((INF, -INF), when(NAN, alpha=1)),
                     ((INF, 1.0), INF), ((-INF, 1.0), -INF), ((0.0, 0.0), 0.0),
                     ((-0.0, -0.0), when(-0.0, alpha=1)), ((-0.0, 0.0), when(0.0, alpha=1)),
                     ((1.0, -1.0), when(0.0, alpha=1)))),
    oracle("sub", 2, REAL, lambda a, b, alpha=1: plus_scaled(a, -alpha, b),
           lambda a, b, alpha=1: exact_sub(a, exact_mul(alpha, b)),
           lambda a, b, alpha=1: a - _check_alpha(alpha) * b, params={"alpha": 1},
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((INF, INF), when(NAN, alpha=1)),
                     ((INF, 1.0), INF), ((1.0, INF), when(-INF, alpha=1)), ((0.0, 0.0), 0.0),
                     ((-0.0, 0.0), when(-0.0, alpha=1)), ((-0.0, -0.0), when(0.0, alpha=1)),
                     ((1.0, 1.0), when(0.0, alpha=1)), ((-INF, 1.0), -INF),
                     ((1.0, -INF), when(INF, alpha=1)))),
    oracle("rsub", 2, REAL, lambda a, b, alpha=1: plus_scaled(b, -alpha, a),
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
    oracle("maximum", 2, EXACT, maximum_f64, max, max, specials=max_rows(NAN, NAN, 0.0)
           + (((INF, 1.0), INF), ((-INF, 1.0), 1.0), ((NAN, INF), NAN)),
           notes="NaN propagates; -0 < +0"),
    oracle("minimum", 2, EXACT, minimum_f64, min, min, specials=max_rows(NAN, NAN, -0.0)
           + (((INF, 1.0), 1.0), ((-INF, 1.0), -INF), ((NAN, -INF), NAN)),
           notes="NaN propagates; -0 < +0"),
]
