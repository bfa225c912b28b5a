"""Binary math functions (C's <math.h>): fmod, pow, fmax, fmin, atan2, hypot, copysign.

fmod keeps the dividend's sign (C) and is exact; its mpmath function computes it from the
Fractions of the inputs.
"""
from __future__ import annotations

import math

import numpy as np
from mpmath import mp

from .arithmetic import max_rows, zero_fix
from .base import (HALF_PI, INF, NAN, PI, QUARTER_PI, THREE_QUARTER_PI, exact_mul, from_fraction,
                   oracle, to_fraction)

REAL = "real"
EXACT = "exactly-representable"


# --- fmod ----------------------------------------------------------------------------------------
def fmod_int(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return -r if a < 0 else r


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


# --- atan2 -----------------------------------------------------------------------------------------
# A split (base.py, "Oracle splits"): for x > 0, atan2(y, x) = q + (atan(q) - q) with q = y/x. Where q is
# dyadic it is a midpoint of a format whenever it falls between two values of its grid (float64 y/x of
# 3 2^-1074 / 2 is 1.5 2^-1074), and for |q| < 2^-508 the rest, about -q^3/3, is below 2^-1016 |q|: every
# working precision returns q. atan(q) is transcendental for a rational q != 0, so the value is never exact
# there. atan(q) - q cancels to about q^2/3 of q, so it carries twice q's exponent in bits more.
# Where q is not dyadic it lies 2^-(53 + p) or more from every midpoint, and Ziv's loop decides it; for
# x < 0 the value is atan(q) +- pi, for |q| >= 1 near +-pi/2: no dyadic part either.
# The other binary math ops are exact (fmod, fmax, fmin, copysign), come near only values of the output
# format (hypot's max(|x|, |y|)), or have exact values where they are dyadic (pow's integer powers and
# exact roots, hypot's Pythagorean triples), which the exact-value rule rounds.
def atan2_split(y, x):
    if not (x > 0 and y != 0):
        return None
    q = to_fraction(y) / to_fraction(x)
    if q.denominator & (q.denominator - 1) or abs(q) >= 1:
        return None
    q = from_fraction(q)
    with mp.extraprec(2 * max(0, -int(mp.mag(q))) + 16):
        return q, mp.atan(q) - q


# --- fmax / fmin: NaN ignored; the zeros as in maximum / minimum ---------------------------------
def fmax_f64(a, b):
    return zero_fix(np.fmax(a, b), a, b, np.logical_and)


def fmin_f64(a, b):
    return zero_fix(np.fmin(a, b), a, b, np.logical_or)


ORACLES = [
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
    oracle("fmax", 2, EXACT, fmax_f64, max, max, specials=max_rows(1.0, 1.0, 0.0)
           + (((INF, NAN), INF), ((-INF, NAN), -INF)),
           notes="NaN ignored when the other is a number; -0 < +0"),
    oracle("fmin", 2, EXACT, fmin_f64, min, min, specials=max_rows(1.0, 1.0, -0.0)
           + (((INF, NAN), INF), ((-INF, NAN), -INF)),
           notes="NaN ignored when the other is a number; -0 < +0"),
    oracle("atan2", 2, REAL, np.arctan2, mp.atan2,
           specials=(((NAN, 1.0), NAN), ((1.0, NAN), NAN), ((0.0, 0.0), 0.0), ((-0.0, 0.0), -0.0),
                     ((0.0, -0.0), PI), ((-0.0, -0.0), -PI), ((0.0, 1.0), 0.0), ((-0.0, 1.0), -0.0),
                     ((0.0, -1.0), PI), ((-0.0, -1.0), -PI), ((1.0, 0.0), HALF_PI),
                     ((-1.0, 0.0), -HALF_PI), ((1.0, -0.0), HALF_PI), ((INF, INF), QUARTER_PI),
                     ((INF, -INF), THREE_QUARTER_PI), ((-INF, INF), -QUARTER_PI),
                     ((-INF, -INF), -THREE_QUARTER_PI), ((INF, 1.0), HALF_PI),
                     ((-INF, 1.0), -HALF_PI), ((1.0, INF), 0.0), ((-1.0, INF), -0.0),
                     ((1.0, -INF), PI), ((-1.0, -INF), -PI), ((1.0, 1.0), QUARTER_PI)),
           splits=(atan2_split,),
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
