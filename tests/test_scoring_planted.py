"""Planted special mismatches, seen by the host scorer and by the device scorer alike.

For float32, float16 and bfloat16, correctly rounded results of `add` and `exp` (checked first
against oracles.rounding.round_correctly) are changed at known positions, one class at a time:

  (a) a zero of the wrong sign;
  (b) an infinity where a finite value is due (and an infinity of the wrong sign);
  (c) a finite value where an infinity is due (a truth far beyond the range, or an infinite one);
  (d) NaN where a number is due, and a number where NaN is due;
  (e) the overflow edge: a truth in [max, 2^(emax+1)) answered by the other of max and inf,
      which is a rounding off by at most one ulp (inf taken as 2^(emax+1)), never a special;
  (f) a subnormal result one ulp off.

Classes (a)-(d) must be counted as special mismatches and nothing else, (e) and (f) as
misrounded and never special, by measure.score (host), by ulp.classify_specials / ulp_error, and by
device_score.score (the device's decisions, under the interpreter here), position for position. The
unplanted results must score clean on all three. Only public functions are called: the test holds
the scoring rule, whichever module carries it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import nbx
from nbx.oracles import device
from nbx.harness.scoring.device import score
from nbx.harness.scoring import host as measure
from nbx.harness.scoring import ulp
from nbx.harness.targets.target import Target
from nbx.oracles import ORACLES, evaluate_mp
from nbx.oracles.formats import FORMATS, from_bits
from nbx.oracles.rounding import round_correctly

DTYPES = ("float32", "float16", "bfloat16")
INF, NAN = math.inf, math.nan


def _fmt_values(dtype):
    f = FORMATS[dtype]
    top = math.ldexp(1.0, f.emax + 1)
    ulp_max = math.ldexp(1.0, f.emax - f.precision + 1)      # the ulp of the largest finite value
    return f, top - ulp_max, ulp_max, math.ldexp(1.0, f.emin - f.precision + 1)


def _add_case(dtype):
    """(operand rows, {class: [(row, planted value)]}) for add (alpha = 1)."""
    f, mx, u, sub = _fmt_values(dtype)
    rows = [
        (-0.0, -0.0),                # 0: -0
        (0.0, -0.0),                 # 1: +0
        (1.5, 3.0),                  # 2: 4.5
        (-1.5, -3.0),                # 3: -4.5
        (mx, mx),                    # 4: 2 max, far beyond the range: inf
        (INF, 1.0),                  # 5: inf
        (-mx, -mx),                  # 6: -inf
        (INF, -INF),                 # 7: NaN
        (2.0, 3.0),                  # 8: 5
        (mx, 0.25 * u),              # 9: max + u/4: rounds to max
        (mx, 0.75 * u),              # 10: max + 3u/4: rounds to inf, below 2^(emax+1)
        (-mx, -0.75 * u),            # 11: -(max + 3u/4): -inf
        (sub, 2 * sub),              # 12: 3 subnormal quanta
        (-5 * sub, sub),             # 13: -4 quanta
        (1.0, math.ldexp(1.0, -f.precision - 1)),   # 14: 1 + u(1)/4: 1 (a control)
        (mx, -mx),                   # 15: +0 (a control)
        (-mx, -0.25 * u),            # 16: -(max + u/4): -max
    ]
    plants = {
        "a": [(0, 0.0), (1, -0.0)],
        "b": [(2, INF), (3, -INF), (5, -INF)],
        "c": [(4, mx), (5, mx), (6, -mx)],
        "d": [(7, 0.0), (8, NAN)],
        "e": [(9, INF), (10, mx), (11, -mx), (16, -INF)],
        "f": [(12, 4 * sub), (13, -5 * sub)],
    }
    return [np.array(c, np.float64) for c in zip(*rows)], plants


def _exp_case(dtype):
    """(operand rows, plants) for exp: a transcendental truth, decided through a bound."""
    f, mx, u, sub = _fmt_values(dtype)
    tiny_x = {"float32": -100.0, "float16": -15.0, "bfloat16": -90.0}[dtype]   # exp: a subnormal result
    with np.errstate(over="ignore"):
        due_sub = float(np.exp(np.float64(tiny_x)))
    q = round(due_sub / sub)
    assert 1 < q < 2 ** (f.precision - 1)
    rows = [-INF, 1.0, 100.0 if dtype != "float16" else 12.0, NAN, 0.5, tiny_x, 0.0, INF]
    plants = {
        "a": [(0, -0.0)],
        "b": [(1, INF), (4, -INF)],
        "c": [(2, mx), (7, -INF), (7, mx)],
        "d": [(3, 1.0), (4, NAN)],
        "f": [(5, (q + 1) * sub)],
    }
    return [np.array(rows, np.float64)], plants


CASES = {"add": _add_case, "exp": _exp_case}
SPECIAL = {"a", "b", "c", "d"}
# the largest error a planted rounding class may show: the overflow edge is one of the truth's two
# neighbours (at most one ulp); a result one ulp from the correctly rounded one lies under 1.5 ulp
ERR_MAX = {"e": 1.0, "f": 1.5}


def _correct(op, cols, dtype):
    """The correctly rounded results by Ziv's loop on the mpmath oracle, as values of the dtype."""
    f = FORMATS[dtype]
    oracle = ORACLES[op]
    bits = []
    for row in zip(*cols):
        row = tuple(float(v) for v in row)
        rr = round_correctly(lambda *_: evaluate_mp(oracle, row, {}), row, f)
        assert rr.resolved, (op, dtype, row)
        bits.append(rr.bits)
    return from_bits(np.array(bits, dtype=f.uint_dtype), f)


def _planted(op, dtype, classes):
    """(op, operand arrays, results with the classes planted, special rows, misrounded rows)."""
    cols, plants = CASES[op](dtype)
    d = nbx.DTYPES[dtype]
    arrays = [c.astype(d.np) for c in cols]
    assert all(np.array_equal(a.astype(np.float64), c, equal_nan=True) for a, c in zip(arrays, cols)), \
        "the operands are values of the dtype"
    got = _correct(op, cols, dtype).astype(np.float64)
    special, misrounded = set(), set()
    for cls in classes:
        for row, value in plants.get(cls, []):
            got[row] = value
            (special if cls in SPECIAL else misrounded).add(row)
            (misrounded if cls in SPECIAL else special).discard(row)
    with np.errstate(over="ignore"):
        return op, arrays, got.astype(d.np), special, misrounded


def _host(op, arrays, got, dtype):
    return measure.score(Target(op, {}, nbx.DTYPES[dtype]), arrays, got)


def _device(op, arrays, got, dtype):
    d = device.DEVICE_ORACLES[op]
    params = [ORACLES[op].params.get(p, 1.0) for p in d.params]      # add: alpha = 1
    return score(d, [nbx.from_numpy(np.ascontiguousarray(a)) for a in arrays], nbx.from_numpy(got), params,
                    zero_sign=ORACLES[op].zero_sign_matters)


def _truth64(op, arrays):
    with np.errstate(all="ignore"):
        return np.asarray(ORACLES[op].f64(*(a.astype(np.float64) for a in arrays)), np.float64)


PLANTS = [(op, cls) for op in CASES for cls in ("a", "b", "c", "d", "e", "f") if op != "exp" or cls != "e"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(CASES))
def test_correct_results_score_clean_on_host_and_device(op, dtype):
    op, arrays, got, special, misrounded = _planted(op, dtype, ())
    n = len(got)
    h = _host(op, arrays, got, dtype)
    assert not h.special.any() and not h.not_cr.any(), (np.flatnonzero(h.special), np.flatnonzero(h.not_cr))
    assert np.all(h.err <= 0.5), h.err
    s = _device(op, arrays, got, dtype)
    assert (s.decided, s.undecided, s.specials, s.misrounded) == (n, 0, 0, 0), s
    assert s.failing_at.size == 0 and s.special_at.size == 0
    assert s.err_max <= 0.5


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op, cls", PLANTS, ids=[f"{o}-{c}" for o, c in PLANTS])
def test_a_planted_class_is_counted_as_that_class_on_host_and_device(op, cls, dtype):
    op, arrays, got, special, misrounded = _planted(op, dtype, (cls,))
    n = len(got)
    assert special or misrounded
    # the host: measure.score
    h = _host(op, arrays, got, dtype)
    assert set(np.flatnonzero(h.special).tolist()) == special, (cls, np.flatnonzero(h.special))
    assert set(np.flatnonzero(h.not_cr & ~h.special).tolist()) == misrounded, (cls, np.flatnonzero(h.not_cr))
    assert all(math.isinf(h.err[i]) for i in special), h.err
    for i in misrounded:                 # inf taken as 2^(emax+1) at the overflow edge
        assert 0.5 < h.err[i] <= ERR_MAX[cls], (cls, i, h.err[i])
    others = np.setdiff1d(np.arange(n), sorted(special | misrounded))
    assert np.all(h.err[others] <= 0.5)
    # the device: device_score.score
    s = _device(op, arrays, got, dtype)
    assert (s.decided, s.undecided) == (n, 0)
    assert s.specials == len(special) and s.misrounded == len(misrounded), (cls, s.specials, s.misrounded)
    assert set(s.special_at.tolist()) == special, (cls, s.special_at)
    assert set(s.failing_at.tolist()) == special | misrounded, (cls, s.failing_at)
    assert s.err_count == n - len(special)
    if misrounded:
        assert 0.5 < s.err_max <= ERR_MAX[cls], s.err_max
        assert s.argmax in misrounded
    else:
        assert s.err_max <= 0.5


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(CASES))
def test_every_class_at_once_and_the_float64_truth_functions(op, dtype):
    """All classes planted together, scored by ulp.classify_specials and ulp.ulp_error on the float64
    truth as well: the special classes are specials with an infinite error, the overflow edge is an
    overflow_edge with an error of at most one ulp, the rest is finite."""
    op, arrays, got, special, misrounded = _planted(op, dtype, ("a", "b", "c", "d", "e", "f"))
    n = len(got)
    y = _truth64(op, arrays)
    f = FORMATS[dtype]
    flags = ulp.classify_specials(got, y, f, zero_sign_matters=True)
    assert set(np.flatnonzero(flags["special"]).tolist()) == special
    edge_rows = {r for r, _ in CASES[op](dtype)[1].get("e", [])}
    assert set(np.flatnonzero(flags["overflow_edge"]).tolist()) == edge_rows
    err = ulp.ulp_error(got, y, f)
    zero_sign = {r for r, _ in CASES[op](dtype)[1]["a"]}
    assert all(math.isinf(err[i]) for i in special - zero_sign), err
    assert all(err[i] == 0 for i in zero_sign)      # a zero's sign is counted by classify_specials only
    assert all(0.5 < err[i] <= 1.5 for i in misrounded), err
    assert all(err[i] <= 1.0 for i in edge_rows), err
    rest = np.setdiff1d(np.arange(n), sorted(special | misrounded))
    assert np.all(err[rest] <= 0.5)
    h = _host(op, arrays, got, dtype)
    s = _device(op, arrays, got, dtype)
    assert set(np.flatnonzero(h.special).tolist()) == set(s.special_at.tolist()) == special
    assert set(np.flatnonzero(h.not_cr & ~h.special).tolist()) == misrounded
    assert set(s.failing_at.tolist()) == special | misrounded
    assert (s.specials, s.misrounded) == (len(special), len(misrounded))
    # listing only the special mismatches, or nothing: the same counts
    d = device.DEVICE_ORACLES[op]
    operands = [nbx.from_numpy(np.ascontiguousarray(a)) for a in arrays]
    params = [ORACLES[op].params.get(p, 1.0) for p in d.params]
    for listed, want in ((1, special), (0, set())):
        t = score(d, operands, nbx.from_numpy(got), params, zero_sign=ORACLES[op].zero_sign_matters,
                     listed=listed)
        assert (t.specials, t.misrounded) == (len(special), len(misrounded)), listed
        assert set(t.failing_at.tolist()) == set(t.special_at.tolist()) == want, listed
