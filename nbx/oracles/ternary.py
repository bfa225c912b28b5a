"""Selection and ternary arithmetic: clamp, clamp_min, where, masked_fill, lerp, addcmul, addcdiv."""
from __future__ import annotations

import numpy as np
from mpmath import mp

from .arithmetic import maximum_f64, minimum_f64
from .base import INF, NAN, exact_add, exact_mul, exact_sub, oracle, when

REAL = "real"
EXACT = "exactly-representable"


# --- lerp, addcmul, addcdiv ----------------------------------------------------------------------
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def lerp_f64(start, end, weight):
    """start - w start + w end: for operands of float32 and narrower, both products are exact in
    float64 and the TwoSums keep the three-term sum exact to its last rounding (within a few float64
    ulps; the device oracle's form). ATen's two branches, start + w (end - start) with end - start
    rounded, lost the small difference of a cancelling sum: bfloat16 lerp(-7.97e13, 1.15e30, 6.9e-17)
    = 0.00553 scored 82.75 ulp against it. Non-finite operands or sums keep ATen's form, which
    decides them (lerp(0, inf, 0.5) = inf - inf*0.5 = NaN); float64 operands are decided by mpmath."""
    diff = end - start
    aten = np.where(np.abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))
    h1, l1 = _two_sum(start, -(weight * start))
    h2, l2 = _two_sum(h1, weight * end)
    t, e = _two_sum(l1, l2)
    finite = np.isfinite(start) & np.isfinite(end) & np.isfinite(weight) & np.isfinite(h2)
    return np.where(finite, _round_to_odd(h2, t, e), aten)


def _round_to_odd(h, t, e):
    """h + t + e (e the rounding error of t, far below an ulp of the sum) rounded to odd in float64:
    of the two neighbours of the exact sum, the one whose last bit is odd, or the sum where exact.
    Rounded to any narrower format (float32 and below: 53 >= 24 + 2 bits) it rounds as the exact
    sum does: a sum a
    hair off a float32 midpoint (lerp(-2^127, -9.8e-25, -(1 - 2^-24)) = -(2^128 - 2^103) + 9.8e-25)
    no longer lands on it (rounded to nearest, it did, and went to -inf instead of -max)."""
    r, err = _two_sum(h, t)
    off = err + e                                     # the rest beyond r: rounded, its sign is exact
    bits = r.view(np.int64)
    even = (bits & 1) == 0
    toward = np.where((off > 0) == (r > 0), 1, -1)    # away from or toward zero, in bits
    moved = (bits + toward).view(np.float64)
    return np.where((off != 0) & even & np.isfinite(r) & (r != 0), moved, r)


def addcdiv_mp(x, t1, t2, value=1):
    # (x*t2 + value*t1)/t2: exact numerator, one rounding, no cancellation between two roundings.
    if t2 == 0:
        raise ZeroDivisionError("addcdiv")
    return exact_add(exact_mul(x, t2), exact_mul(value, t1)) / t2


ORACLES = [
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
           notes="exact value start + weight*(end - start); the float64 function sums the exact "
                 "terms start - w*start + w*end with TwoSums, and takes ATen's two-branch form "
                 "(|w| < 0.5 ? start + w*diff : end - diff*(1 - w)) for the infinite cases "
                 "(lerp(0, inf, 0.5) = inf - inf*0.5 = NaN). A zero result's sign depends on the "
                 "branch, so it is not compared"),
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
]
