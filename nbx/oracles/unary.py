"""Unary math: sign and rounding ops, exponentials and logarithms, trigonometric and hyperbolic
functions, error functions, and the float classification predicates."""
from __future__ import annotations

import math

import numpy as np
from mpmath import mp

from .base import (HALF_PI, INF, NAN, PI, exact_mul, exact_sub, oracle, unary_rows,
                   vectorize)

POSITIVE = ((0.0, INF),)
REAL = "real"
EXACT = "exactly-representable"


def _identity(x, **_):
    return x


def _trunc_mp(x):
    return mp.floor(x) if x >= 0 else mp.ceil(x)


def _sign_f64(x):
    # np.sign(-0.0) is +0.0; the oracle keeps the zero (sign(-0) = -0) and the NaN.
    return np.where(x > 0, 1.0, np.where(x < 0, -1.0, x))


def _where(fn, defined):
    # Outside `defined` the result is NaN or a pole (log(0) = -inf, atanh(1) = inf): mp returns
    # NaN there and evaluate_mp takes the exact float64 value.
    return lambda x: fn(x) if defined(x) else mp.nan


def _log_mp(fn):
    return _where(fn, lambda x: x > 0)


ORACLES = [
    # Sign and rounding ops: exact in every format; identity on integers.
    oracle("neg", 1, EXACT, np.negative, lambda x: -x, lambda a: -a,
           specials=unary_rows(NAN, -INF, INF, -0.0, 0.0, (1.5, -1.5)),
           notes="integer neg of INT_MIN: the math value; the harness wraps (ATen wraps)"),
    oracle("abs", 1, EXACT, np.abs, abs, abs,
           specials=unary_rows(NAN, INF, INF, 0.0, 0.0, (-1.5, 1.5)),
           notes="integer abs of INT_MIN: the math value; the harness wraps (ATen wraps)"),
    oracle("floor", 1, EXACT, np.floor, mp.floor, _identity,
           specials=unary_rows(NAN, INF, -INF, 0.0, -0.0, (-0.5, -1.0), (0.5, 0.0), (2.5, 2.0))),
    oracle("ceil", 1, EXACT, np.ceil, mp.ceil, _identity,
           specials=unary_rows(NAN, INF, -INF, 0.0, -0.0, (-0.5, -0.0), (0.5, 1.0))),
    oracle("trunc", 1, EXACT, np.trunc, _trunc_mp, _identity,
           specials=unary_rows(NAN, INF, -INF, 0.0, -0.0, (-0.5, -0.0), (-1.5, -1.0))),
    # np.round and mpmath's nint both round half to even.
    oracle("round", 1, EXACT, np.round, mp.nint, _identity,
           specials=unary_rows(NAN, INF, -INF, 0.0, -0.0, (2.5, 2.0), (-0.5, -0.0), (0.5, 0.0),
                               (1.5, 2.0), (-2.5, -2.0), (3.5, 4.0)),
           notes="half to even"),
    oracle("sign", 1, EXACT, _sign_f64, lambda x: mp.sign(x), lambda a: (a > 0) - (a < 0),
           specials=unary_rows(NAN, 1.0, -1.0, 0.0, -0.0, (-3.0, -1.0)),
           notes="sign(-0) = -0 and sign(NaN) = NaN (ATen's (0 < x) - (x < 0) gives +0 and 0)"),
    oracle("frac", 1, EXACT, lambda x: x - np.trunc(x), lambda x: exact_sub(x, _trunc_mp(x)),
           lambda a: 0,
           specials=unary_rows(NAN, NAN, NAN, 0.0, 0.0, (-2.0, 0.0), (-2.5, -0.5), (2.25, 0.25)),
           notes="x - trunc(x) as ATen: an integral x gives +0.0 (-2 - -2 = +0, -0 - -0 = +0)"),
    oracle("square", 1, REAL, lambda x: x * x, lambda x: exact_mul(x, x), lambda a: a * a,
           specials=unary_rows(NAN, INF, INF, 0.0, 0.0, (-3.0, 9.0))),

    # Classification: integers are finite, never inf or NaN.
    oracle("isfinite", 1, "bool", np.isfinite, lambda x: True, lambda a: True,
           specials=unary_rows(False, False, False, True, True, (1.0, True))),
    oracle("isinf", 1, "bool", np.isinf, lambda x: False, lambda a: False,
           specials=unary_rows(False, True, True, False, False, (1.0, False))),
    oracle("isnan", 1, "bool", np.isnan, lambda x: False, lambda a: False,
           specials=unary_rows(True, False, False, False, False, (1.0, False))),
    oracle("signbit", 1, "bool", np.signbit, lambda x: x < 0, lambda a: a < 0,
           specials=unary_rows(False, False, True, False, True, (-2.0, True)),
           notes="the sign bit, so signbit(-0.0) is True; the NaN row is the positive quiet NaN"),

    # Exponentials and logarithms.
    oracle("exp", 1, REAL, np.exp, mp.exp,
           specials=unary_rows(NAN, INF, 0.0, 1.0, 1.0)),
    oracle("exp2", 1, REAL, np.exp2, lambda x: mp.power(2, x),
           specials=unary_rows(NAN, INF, 0.0, 1.0, 1.0, (10.0, 1024.0), (-1.0, 0.5))),
    oracle("expm1", 1, REAL, np.expm1, mp.expm1,
           specials=unary_rows(NAN, INF, -1.0, 0.0, -0.0)),
    oracle("log", 1, REAL, np.log, _log_mp(mp.log), domain=POSITIVE,
           specials=unary_rows(NAN, INF, NAN, -INF, -INF, (1.0, 0.0), (-1.0, NAN))),
    oracle("log2", 1, REAL, np.log2, _log_mp(lambda x: mp.log(x, 2)), domain=POSITIVE,
           specials=unary_rows(NAN, INF, NAN, -INF, -INF, (1.0, 0.0), (8.0, 3.0), (-1.0, NAN))),
    oracle("log10", 1, REAL, np.log10, _log_mp(mp.log10), domain=POSITIVE,
           specials=unary_rows(NAN, INF, NAN, -INF, -INF, (1.0, 0.0), (100.0, 2.0),
                               (-1.0, NAN))),
    oracle("log1p", 1, REAL, np.log1p, _where(mp.log1p, lambda x: x > -1),
           domain=((-1.0, INF),),
           specials=unary_rows(NAN, INF, NAN, 0.0, -0.0, (-1.0, -INF), (-2.0, NAN))),
    oracle("sqrt", 1, REAL, np.sqrt, _where(mp.sqrt, lambda x: x >= 0),
           domain=POSITIVE,
           specials=unary_rows(NAN, INF, NAN, 0.0, -0.0, (4.0, 2.0), (-1.0, NAN))),
    oracle("rsqrt", 1, REAL, lambda x: 1.0 / np.sqrt(x),
           _where(lambda x: 1 / mp.sqrt(x), lambda x: x > 0), domain=POSITIVE,
           specials=unary_rows(NAN, 0.0, NAN, INF, -INF, (4.0, 0.5), (-1.0, NAN)),
           notes="rsqrt(-0) = 1/sqrt(-0) = -inf"),
    oracle("reciprocal", 1, REAL, lambda x: 1.0 / x, lambda x: 1 / x,
           specials=unary_rows(NAN, 0.0, -0.0, INF, -INF, (4.0, 0.25))),
    # cbrt in long double, rounded once: numpy's AVX2 cbrt (X86_V3 dispatch) gave cbrt(27) =
    # 3.0000000000000004 on an x86-64 CPU with AVX2; cbrtl then rounding is exact there
    oracle("cbrt", 1, REAL, lambda x: np.cbrt(np.asarray(x, np.longdouble)).astype(np.float64),
           lambda x: mp.cbrt(x) if x >= 0 else -mp.cbrt(-x),
           specials=unary_rows(NAN, INF, -INF, 0.0, -0.0, (-8.0, -2.0), (27.0, 3.0))),

    # Trigonometric and hyperbolic functions.
    oracle("sin", 1, REAL, np.sin, mp.sin, specials=unary_rows(NAN, NAN, NAN, 0.0, -0.0)),
    oracle("cos", 1, REAL, np.cos, mp.cos, specials=unary_rows(NAN, NAN, NAN, 1.0, 1.0)),
    oracle("tan", 1, REAL, np.tan, mp.tan, specials=unary_rows(NAN, NAN, NAN, 0.0, -0.0)),
    oracle("asin", 1, REAL, np.arcsin, _where(mp.asin, lambda x: abs(x) <= 1),
           domain=((-1.0, 1.0),),
           specials=unary_rows(NAN, NAN, NAN, 0.0, -0.0, (2.0, NAN), (-2.0, NAN))),
    oracle("acos", 1, REAL, np.arccos, _where(mp.acos, lambda x: abs(x) <= 1),
           domain=((-1.0, 1.0),),
           specials=unary_rows(NAN, NAN, NAN, HALF_PI, HALF_PI, (1.0, 0.0), (-1.0, PI), (2.0, NAN))),
    oracle("atan", 1, REAL, np.arctan, mp.atan,
           specials=unary_rows(NAN, HALF_PI, -HALF_PI, 0.0, -0.0)),
    oracle("sinh", 1, REAL, np.sinh, mp.sinh, specials=unary_rows(NAN, INF, -INF, 0.0, -0.0)),
    oracle("cosh", 1, REAL, np.cosh, mp.cosh, specials=unary_rows(NAN, INF, INF, 1.0, 1.0)),
    oracle("asinh", 1, REAL, np.arcsinh, mp.asinh, specials=unary_rows(NAN, INF, -INF, 0.0, -0.0)),
    oracle("acosh", 1, REAL, np.arccosh, _where(mp.acosh, lambda x: x >= 1),
           domain=((1.0, INF),),
           specials=unary_rows(NAN, INF, NAN, NAN, NAN, (1.0, 0.0), (0.5, NAN))),
    oracle("atanh", 1, REAL, np.arctanh, _where(mp.atanh, lambda x: abs(x) < 1),
           domain=((-1.0, 1.0),),
           specials=unary_rows(NAN, NAN, NAN, 0.0, -0.0, (1.0, INF), (-1.0, -INF), (2.0, NAN))),

    # Error functions: numpy has none; math.erf/erfc (correctly rounded to within an ulp in
    # glibc) element by element.
    oracle("erf", 1, REAL, vectorize(math.erf), mp.erf,
           specials=unary_rows(NAN, 1.0, -1.0, 0.0, -0.0)),
    oracle("erfc", 1, REAL, vectorize(math.erfc), mp.erfc,
           specials=unary_rows(NAN, 0.0, 2.0, 1.0, 1.0)),
]
