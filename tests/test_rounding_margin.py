"""The Ziv loop's safety margin (nbx/oracles/rounding.round_correctly), tested by values that need it.

round_correctly accepts an evaluation at `prec` bits only when it rounds as the previous one did
AND lies more than 2^-(prec - 8) relative from every rounding boundary: mpmath's functions are good
to about one unit of the working precision, and the 8 bits of margin cover 256 such units. Two
evaluations can agree on the wrong side of a midpoint when the exact value lies closer to it than
the evaluation's error; only the margin stops the loop there.

- Values m (1 + s 2^-k) around midpoints m of each format, with k from just past the format's
  precision to 600 bits (runs of k - p zeros or ones after the round bit), at and beside the
  margin of every precision of the loop's schedule, evaluated by a function whose error is up to
  64 units of the working precision (within the documented allowance), always toward and past the
  midpoint: the loop must return the correctly rounded bits. Without the margin (cut to 0 bits) it
  accepts the wrong side.
- Real hard cases: the float16 inputs of exp, log, sin, cos, tan, sinh, atan whose values lie
  nearest a float16 midpoint (found by a search over all float16 inputs), and published binary64
  worst cases of exp and log (CORE-MATH's src/binary64/{exp,log}/*.wc, up to 64 identical bits
  after the round bit), rounded by the loop as they are by a 3000-bit evaluation.
"""
from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from mpmath import libmp

from nbx.oracles.formats import FORMATS
from nbx.oracles.rounding import round_correctly, round_fraction, round_mpf

FMTS = [FORMATS[n] for n in ("float16", "bfloat16", "float32", "float64")]
ids = lambda f: f.name  # noqa: E731


def _schedule(f):
    """The precisions the loop evaluates at: p + 32, doubling, capped at 1024."""
    out, prec = [], f.precision + 32
    while True:
        out.append(prec)
        if prec >= 1024:
            return out
        prec = min(2 * prec, 1024)


def _ks(f):
    """Distances 2^-k (relative) from the midpoint: just past the format's precision, around the
    first working precision, at and beside the margin 2^-(P - 8) of every P of the schedule (P - 8
    +- 2), and far beyond (no doubling before 600 bits can see the side from the value alone)."""
    p = f.precision
    ks = {p + 3, p + 12, p + 31, p + 32, p + 33, p + 40, 300, 600}
    for prec in _schedule(f)[:-1]:
        ks |= {prec - 10, prec - 8, prec - 6, prec, prec + 1, prec + 9}
    return sorted(k for k in ks if p + 3 <= k <= 600)


def _mpf(q: Fraction):
    """An exact mpf of a dyadic rational."""
    d = q.denominator
    assert d & (d - 1) == 0
    return mpmath.mp.make_mpf(libmp.from_man_exp(q.numerator, -(d.bit_length() - 1)))


def _biased(y: Fraction, m: Fraction, c: int):
    """fn for round_correctly: y rounded to the working precision, then moved c units of that
    precision (c 2^-prec relative) toward the midpoint m and past it: an evaluation error of at most
    c + 1 units, all of it on the wrong side."""
    toward = -1 if y > m else 1
    exact = _mpf(y)

    def fn():
        prec = mpmath.mp.prec
        yp = +exact                                         # rounded to prec bits
        return yp + toward * c * mpmath.ldexp(abs(yp), -prec)
    return fn


def _cases(f):
    p = f.precision
    rng = np.random.default_rng(p)
    for e in (0, -3, 5):
        for j in (0, int(rng.integers(1, 2 ** (p - 1))), 2 ** (p - 1) - 1):
            m = Fraction(2 ** (p - 1) + j) * 2 + 1                 # an odd multiple of half an ulp
            m = m * Fraction(2) ** (e - p)                          # in [2^e, 2^(e+1))
            for k in _ks(f):
                for s in (1, -1):
                    yield m, m * (1 + s * Fraction(1, 2 ** k)), k


@pytest.mark.parametrize("c", [1, 3, 16, 64])
@pytest.mark.parametrize("f", FMTS, ids=ids)
def test_an_evaluation_off_toward_the_midpoint_cannot_decide_the_wrong_side(f, c):
    wrong = []
    n = 0
    for m, y, k in _cases(f):
        rr = round_correctly(_biased(y, m, c), [], f)
        want = round_fraction(y, f)
        n += 1
        if not rr.resolved or rr.bits != want:
            wrong.append((k, float(m), "up" if y > m else "down", hex(rr.bits), hex(want), rr.resolved))
    assert not wrong, f"{len(wrong)} of {n} near-midpoint values misrounded (k, m, side, got, want, resolved): " \
                      f"{wrong[:6]}"


def test_the_margin_is_what_decides_the_first_agreeing_pair():
    """A value 2^-200 beside a float32 midpoint, evaluated 3 units off toward it: the evaluations at
    56 and 112 bits agree on the wrong side and lie more than one unit from the midpoint, yet within
    the margin; the loop goes on to 224 bits, where the side shows."""
    m = Fraction(2 ** 24 + 1, 2 ** 24)                              # 1 + 2^-24: float32's midpoint above 1
    y = m * (1 + Fraction(1, 2 ** 200))
    rr = round_correctly(_biased(y, m, 3), [], FORMATS["float32"])
    assert rr.resolved and rr.bits == 0x3F800001 and rr.precision_used >= 224


# ---------------------------------------------------------------------------------------- real hard cases
def _reference(fn, args, f, bits=3000):
    with mpmath.workprec(bits):
        return round_mpf(fn(*[mpmath.mpf(a) for a in args]), f)


F16_FUNCTIONS = {"exp": (np.exp, mpmath.exp), "log": (np.log, mpmath.log), "sin": (np.sin, mpmath.sin),
                 "cos": (np.cos, mpmath.cos), "tan": (np.tan, mpmath.tan), "sinh": (np.sinh, mpmath.sinh),
                 "atan": (np.arctan, mpmath.atan)}


def _hardest_float16(np_fn, count=6):
    """The float16 inputs whose float64 values lie nearest a float16 rounding midpoint, relative to
    the float16 ulp (finite, normal results; float64's own error, 2^-42 of a float16 ulp, does not
    reorder the nearest few)."""
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float64)
    with np.errstate(all="ignore"):
        y = np_fn(x)
    ok = np.isfinite(y) & (np.abs(y) >= 2.0 ** -14) & (np.abs(y) < 65504) & np.isfinite(x)
    ok &= np.abs(y) != np.abs(x)                                      # leave out sin(x) = x and friends
    x, y = x[ok], y[ok]
    e = np.frexp(np.abs(y))[1] - 1
    units = np.ldexp(np.abs(y), 10 - e)                               # in float16 ulps
    dist = np.abs(units - np.floor(units) - 0.5)
    order = np.argsort(dist, kind="stable")[:count]
    return x[order], dist[order]


@pytest.mark.parametrize("name", sorted(F16_FUNCTIONS))
def test_hardest_float16_cases_round_as_a_3000_bit_evaluation(name):
    np_fn, mp_fn = F16_FUNCTIONS[name]
    f = FORMATS["float16"]
    xs, dist = _hardest_float16(np_fn)
    assert dist[0] < 2.0 ** -12, (name, dist[0])        # a run of 12 or more equal bits after the round bit
    for x in xs:
        rr = round_correctly(mp_fn, [float(x)], f)
        assert rr.resolved and rr.bits == _reference(mp_fn, [float(x)], f), (name, float(x))


# CORE-MATH's binary64 worst cases (src/binary64/exp/exp.wc: at least 45 identical bits after the
# round bit; src/binary64/log/log.wc, from Lefevre's hrcases: up to 64 identical bits)
EXP64_WORST = ("0x1.0122ef37212ebp-1", "0x1.00d48a707b93ep-1", "0x1.00e0e33c8c3fdp-1", "0x1.00bcc31ebded7p-1",
               "0x1.012c061237773p-1", "0x1.005ae04256babp-1", "0x1.008eb56314daap+0", "0x1.0138c96e1a075p+0")
LOG64_WORST = ("0x1.a6ae5142326b5p+0", "0x1.a6ba95b1520f9p+0", "0x1.a702b2ce91b3p+0", "0x1.a775c6c1d8d3ep+0",
               "0x1.b072ab04ee9bfp+0", "0x1.c877cba59d0acp+0", "0x1.1e852e6951306p+1", "0x1.2669caccf03cap+1")


@pytest.mark.parametrize("name, inputs, fn", [("exp", EXP64_WORST, mpmath.exp), ("log", LOG64_WORST, mpmath.log)])
def test_published_binary64_worst_cases_round_as_a_3000_bit_evaluation(name, inputs, fn):
    f = FORMATS["float64"]
    for h in inputs:
        x = float.fromhex(h)
        rr = round_correctly(fn, [x], f)
        with mpmath.workprec(3000):
            y = fn(mpmath.mpf(x))
            # how hard: the distance to the nearest rounding boundary of any rounding mode (a
            # midpoint, or a float64 for the directed modes the lists also serve), in ulps
            units = abs(y) * mpmath.mpf(2) ** (52 - int(mpmath.floor(mpmath.log(abs(y), 2))))
            frac = units - mpmath.floor(units)
            dist = min(abs(frac - mpmath.mpf(0.5)), frac, 1 - frac)
        assert dist < mpmath.mpf(2) ** -40, (name, h, float(dist))
        assert rr.resolved and rr.bits == round_mpf(y, f), (name, h)
