"""Casts and value-preserving ops: copy, to, bf16_to_fp16, nan_to_num, angle.

The harness rounds an exact value to the target format, so casts between floats are the
identity here. Float to integer (nbx's definition; ATen leaves it undefined): truncate toward
zero, saturate to the target's range, NaN -> 0. The f64 and mp functions do that when the
harness passes the target's range as keywords `int_min`, `int_max`; `to_bool=True` gives
x != 0 (NaN is true). Integer to integer casts are the identity here and the harness wraps.
`output_format` says which of those keywords an oracle takes (base.OUTPUT_FORMAT).
"""
from __future__ import annotations

import numpy as np
from mpmath import mp

from .base import INF, NAN, PI, from_fraction, oracle, to_fraction, unary_rows

EXACT = "exactly-representable"
FLOAT64_MAX = float(np.finfo(np.float64).max)


def _identity(x, *_, **__):
    return x


def to_f64(x, int_min=None, int_max=None, to_bool=False, **_):
    if to_bool:
        return x != 0
    if int_min is None:
        return x
    t = np.where(np.isnan(x), 0.0, np.trunc(x))
    return np.clip(t, int_min, int_max) + 0.0


def to_mp(x, int_min=None, int_max=None, to_bool=False, **_):
    if to_bool:
        return x != 0
    if int_min is None:
        return x
    t = int(to_fraction(x))            # int() of a Fraction truncates toward zero
    return from_fraction(to_fraction(min(max(t, int_min), int_max)))


def _to_row(as_float, as_int, as_bool):
    def row(p):
        if p.get("to_bool"):
            return as_bool
        return as_int(p) if p.get("int_min") is not None else as_float
    return row


def _fmt_max(p):
    return p.get("fmt_max") if p.get("fmt_max") is not None else FLOAT64_MAX


def nan_to_num_f64(x, nan=0.0, posinf=None, neginf=None, fmt_max=None, **_):
    big = FLOAT64_MAX if fmt_max is None else fmt_max
    pos = big if posinf is None else posinf
    neg = -big if neginf is None else neginf
    return np.where(np.isnan(x), nan, np.where(x == INF, pos, np.where(x == -INF, neg, x)))


ORACLES = [
    oracle("copy", 1, EXACT, _identity, _identity, _identity,
           specials=unary_rows(NAN, INF, -INF, 0.0, -0.0)),
    oracle("bf16_to_fp16", 1, EXACT, _identity, _identity,
           specials=unary_rows(NAN, INF, -INF, 0.0, -0.0),
           notes="the value of the bfloat16 input; the harness rounds it to float16 (overflow "
                 "to inf, subnormals kept)"),
    oracle("to", 1, EXACT, to_f64, to_mp, _identity,
           specials=unary_rows(_to_row(NAN, lambda p: 0.0, True),
                               _to_row(INF, lambda p: float(p["int_max"]), True),
                               _to_row(-INF, lambda p: float(p["int_min"]), True),
                               _to_row(0.0, lambda p: 0.0, False),
                               _to_row(-0.0, lambda p: 0.0, False)),
           output_format=("int_range",),
           notes="float targets: identity (the harness rounds to nearest even); integer "
                 "targets (keywords int_min, int_max): trunc toward zero, saturate, NaN -> 0; "
                 "to_bool=True: x != 0. Integer sources: identity, the harness wraps"),
    oracle("nan_to_num", 1, EXACT, nan_to_num_f64, _identity, _identity,
           params={"nan": 0.0, "posinf": None, "neginf": None},
           specials=unary_rows(lambda p: p["nan"],
                               lambda p: _fmt_max(p) if p["posinf"] is None else p["posinf"],
                               lambda p: -_fmt_max(p) if p["neginf"] is None else p["neginf"],
                               0.0, -0.0, (1.5, 1.5)),
           output_format=("float_max",),
           notes="posinf/neginf None mean the OUTPUT format's max/-max: the harness passes it as "
                 "keyword fmt_max (to f64 and in lookup_special's params; float64's by default)"),
    oracle("angle", 1, "real", lambda x: np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0)),
           lambda x: +mp.pi if x < 0 else mp.zero,
           specials=unary_rows(NAN, 0.0, PI, 0.0, 0.0, (-1.0, PI), (2.0, 0.0)),
           notes="real input: x < 0 ? pi : 0, so angle(-0.0) = +0.0 (ATen's real angle; "
                 "atan2(0, -0) would say pi); NaN stays NaN"),
]
