"""The host's last resort for a close call (scoring/host.round_exact_or_ziv) against real mpmath.

Where Ziv's loop cannot decide, an oracle's splits (value = exact main + a rest evaluated on its own,
oracles/base.py) decide values that lie within 2^-888 of a dyadic midpoint without being one, and the
exact-value rule (an mpf identical at p + 32 and 2(p + 32) bits is exact; an exact tie goes to even)
decides only where no split applies:
- swiglu and silu_and_mul at gate >= 700 (and gate ~ 1e30) where gate up is a float32, float16 or
  bfloat16 midpoint whose even neighbour is away from zero: the value gate up sigmoid(gate) lies below
  it in magnitude, so it rounds toward zero, as nbx computes and the device scorer decides, while mul
  of the same operands is an exact tie and goes to even;
- float64's smallest operands of silu, gelu (both forms), elu, hardswish, glu, swiglu and atan2, where
  x/2 (a y/x) is a subnormal midpoint: mpmath at 2600 bits, which holds the rest, gives the truth;
- exact ties of mul, div, hardsigmoid, hardswish and exp2 still go to even;
- round_split_correctly decides a rest of e^-(10^30) relative by its sign;
- every split is an identity (main + rest = the oracle's value at 300 bits) with an exact main.
"""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from mpmath import libmp

import nbx
from nbx.harness.scoring import device as DS
from nbx.harness.scoring.host import round_exact_or_ziv, score
from nbx.harness.suites import exhaustive as X
from nbx.harness.targets.target import Target
from nbx.oracles import ORACLES, evaluate_mp
from nbx.oracles.formats import FORMATS
from nbx.oracles.rounding import round_fraction, round_mpf, round_split_correctly

F64 = FORMATS["float64"]
TINY = 2.0 ** -1074

# Gates >= 700 per format, as (odd part, power of two): 700 = 175 2^2, 711, 704 = 11 2^6, 768 = 3 2^8,
# the format's largest usable (65280 = 255 2^8 in float16) and 3 2^98 ~ 9.5e29. An odd part needs at
# most p/2 + 1 bits for an odd up to give gate up p + 1 bits (bfloat16, p = 8: not 175 or 711).
GATES = {"float32": [(175, 2), (711, 0), (3, 98)],
         "float16": [(175, 2), (711, 0), (255, 8)],
         "bfloat16": [(3, 8), (11, 6), (3, 98)]}


def _midpoint_pairs(dtype: str):
    """(gate, up) pairs of the format with gate up a midpoint whose even neighbour lies away from
    zero (its odd significand M = g u has p + 1 bits and M = 3 mod 4), |gate up| in [16, 32), up of
    both signs."""
    p = FORMATS[dtype].precision
    pairs = []
    for g, a in GATES[dtype]:
        u = (-(-(1 << p) // g)) | 1
        while (g * u).bit_length() != p + 1 or (g * u) % 4 != 3:
            u += 2
            assert (g * u).bit_length() <= p + 1, (dtype, g)
        assert u < 1 << p
        b = 5 - a - (p + 1)
        gate, up = math.ldexp(g, a), math.ldexp(u, b)
        pairs += [(gate, up), (gate, -up)]
    return pairs


def _toward_zero(q: Fraction, dtype: str) -> int:
    return round_fraction(q * (1 - Fraction(1, 2 ** 200)), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_swiglu_midpoints_past_gate_700_round_toward_zero(dtype):
    fmt = FORMATS[dtype]
    for gate, up in _midpoint_pairs(dtype):
        q = Fraction(gate) * Fraction(up)
        assert all(float(np.float64(v).astype(fmt.np_dtype)) == v for v in (gate, up))
        tie = round_fraction(q, fmt)
        due = _toward_zero(q, dtype)
        assert tie != due, (dtype, gate, up)               # the planted input tells the two rules apart
        for op in ("swiglu", "silu_and_mul"):
            rr = round_exact_or_ziv(ORACLES[op], (gate, up), {}, fmt)
            assert rr.resolved and rr.bits == due, (op, dtype, gate, up, hex(rr.bits), hex(due))
        rr = round_exact_or_ziv(ORACLES["mul"], (gate, up), {}, fmt)
        assert rr.resolved and rr.bits == tie, ("mul", dtype, gate, up)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("op", ["swiglu", "silu_and_mul"])
def test_host_and_device_agree_on_the_midpoints(op, dtype):
    """nbx's results, the correctly rounded ones and the ties to even, scored on the host and by the
    device scorer: the same elements fail, nbx's own results are correct, and the device decides all."""
    d = nbx.DTYPES[dtype]
    pairs = _midpoint_pairs(dtype)
    gate, up = (np.array(v, np.float64).astype(d.np) for v in zip(*pairs))
    t = Target(op, {}, d)
    due = np.array([_toward_zero(Fraction(g) * Fraction(u), dtype) for g, u in pairs], np.uint64)
    tie = np.array([round_fraction(Fraction(g) * Fraction(u), dtype) for g, u in pairs], np.uint64)
    got = t.run([gate, up])
    assert np.array_equal(got.view(d.uint_np).astype(np.uint64), due), op
    oracle = X.device_oracle(t)
    for bits in (due, tie):
        result = bits.astype(d.uint_np).view(d.np)
        host = score(t, [gate, up], result)
        dev = DS.score(oracle, [nbx.from_numpy(gate), nbx.from_numpy(up)], nbx.from_numpy(result))
        assert dev.undecided == 0
        assert np.array_equal(dev.failing_at, np.flatnonzero(host.not_cr | host.special))
        assert int(host.not_cr.sum()) == (0 if bits is due else len(pairs))


# float64 operands where the main part is a subnormal midpoint: (op, params, operands)
SUBNORMAL = [
    ("silu", {}, (TINY,)), ("silu", {}, (-(2 ** 52 - 1) * TINY,)), ("silu", {}, (3 * TINY,)),
    ("gelu", {}, (TINY,)), ("gelu", {}, (-(2 ** 52 - 1) * TINY,)),
    ("gelu", {"approximate": "tanh"}, (TINY,)), ("gelu", {"approximate": "tanh"}, (-(2 ** 52 - 1) * TINY,)),
    ("elu", {"alpha": 0.5}, (-(2 ** 52 - 1) * TINY,)), ("elu", {"alpha": 0.5}, (-7 * TINY,)),
    ("hardswish", {}, (TINY,)), ("hardswish", {}, (-(2 ** 52 - 1) * TINY,)), ("hardswish", {}, (7 * TINY,)),
    ("hardswish", {}, (-3 * TINY,)),
    ("glu", {}, (7 * TINY, TINY)), ("glu", {}, (-5 * TINY, -TINY)),
    ("swiglu", {}, (7 * TINY, 1.0)), ("silu_and_mul", {}, (-TINY, -89.0)), ("swiglu", {}, (TINY, -7.0)),
    ("atan2", {}, (3 * TINY, 2.0)), ("atan2", {}, (-7 * TINY, 2.0)), ("atan2", {}, (5 * TINY, 4.0)),
]


def test_float64_subnormal_midpoints_follow_the_rest():
    """Each value is a subnormal midpoint m plus a rest below 2^-1070 of it; mpmath at 2600 bits holds
    the rest and gives the truth, which differs from m's tie to even in most of these."""
    differ = 0
    for op, params, row in SUBNORMAL:
        oracle = ORACLES[op]
        merged = {**oracle.params, **params}
        with mpmath.workprec(2600):
            truth = round_mpf(evaluate_mp(oracle, row, merged), F64)
        with mpmath.workprec(2 * (53 + 32)):
            tie = round_mpf(evaluate_mp(oracle, row, merged), F64)
        rr = round_exact_or_ziv(oracle, row, merged, F64)
        assert rr.resolved and rr.bits == truth, (op, params, row, hex(rr.bits), hex(truth))
        differ += truth != tie
    assert differ >= len(SUBNORMAL) // 2


def _exact_ties():
    """(op, params, operands, format, exact value): exact midpoints the exact-value rule rounds to even."""
    yield "mul", {}, (711.0, 5.0), "float16", Fraction(711 * 5)
    yield "div", {}, (1025 * 2.0 ** -24, 2.0), "float16", Fraction(1025, 2 ** 25)
    yield "exp2", {}, (-1075.0,), "float64", Fraction(1, 2 ** 1075)
    yield "hardsigmoid", {}, (float.fromhex("0x1.fffffep-1"),), "float32", \
        (Fraction(float.fromhex("0x1.fffffep-1")) + 3) / 6
    x = float.fromhex("-0x1.5cp+1")          # -2.71875 = -87/32, 87 = 3 29: x(x + 3)/6 is dyadic
    yield "hardswish", {}, (x,), "bfloat16", Fraction(x) * (Fraction(x) + 3) / 6


@pytest.mark.parametrize("op, params, row, dtype, exact", list(_exact_ties()),
                         ids=lambda v: v if isinstance(v, str) else None)
def test_exact_ties_still_go_to_even(op, params, row, dtype, exact):
    fmt = FORMATS[dtype]
    assert round_fraction(exact, fmt) != _toward_zero(exact, dtype) or \
        round_fraction(exact, fmt) != round_fraction(exact * (1 + Fraction(1, 2 ** 200)), fmt)  # a midpoint
    oracle = ORACLES[op]
    rr = round_exact_or_ziv(oracle, row, {**oracle.params, **params}, fmt)
    assert rr.resolved and rr.bits == round_fraction(exact, fmt)


def _mpf(man: int, exp: int):
    return mpmath.mp.make_mpf(libmp.from_man_exp(man, exp))


def test_round_split_correctly_decides_by_the_rest():
    f = FORMATS["float32"]
    mid = _mpf(2 ** 24 + 1, 0)                            # 2^24 + 1: between 2^24 and 2^24 + 2
    for sign, due in ((1, 0x4B800001), (-1, 0x4B800000)):
        tiny = _mpf(sign, -10 ** 30)                     # 2^-(10^30): decided at once, by its sign
        rr = round_split_correctly(lambda: (mid, tiny), [], f)
        assert rr.resolved and rr.bits == due and rr.precision_used == 2 * (24 + 32)
    rr = round_split_correctly(lambda: (mid, mpmath.mpf(0)), [], f)
    assert rr.resolved and rr.bits == 0x4B800000            # exact: the tie goes to even
    rr = round_split_correctly(lambda x: (x, x / 3), [1.0], f)
    assert rr.resolved and rr.bits == round_fraction(Fraction(4, 3), f)
    assert round_split_correctly(lambda: None, [], f) is None


# operands at which each split's identity is checked (the split may not apply at some)
SAMPLES = [0.75, -0.75, 1.5, -2.5, 700.0, -700.0, 2.0 ** -30, -(2.0 ** -30), 3 * TINY, -7 * TINY, 2.0 ** 100,
           -800.0]


@pytest.mark.parametrize("op", sorted(name for name, o in ORACLES.items() if o.splits))
def test_splits_are_identities_with_an_exact_main(op):
    oracle = ORACLES[op]
    variants = [{"approximate": "tanh"}] if op == "gelu" else [{"alpha": 0.5}] if op in ("elu", "celu") else []
    applied = 0
    for params in [{}] + variants:
        merged = {**oracle.params, **params}
        for row in ([(x,) for x in SAMPLES] if oracle.arity == 1 else
                    [(x, y) for x in SAMPLES for y in SAMPLES[:6]]):
            for split in oracle.splits:
                with mpmath.workprec(300):
                    value = evaluate_mp(oracle, row, merged)
                    parts = split(*(mpmath.mpf(v) for v in row), **merged)
                if parts is None:
                    continue
                applied += 1
                main, rest = parts
                with mpmath.workprec(600):
                    again = split(*(mpmath.mpf(v) for v in row), **merged)[0]
                assert main == again, (op, row, "main is not exact")
                with mpmath.workprec(300):       # where a split applies, main and rest do not cancel
                    total = main + rest
                    assert abs(total - value) <= abs(value) * mpmath.mpf(2) ** -280, (op, params, row, split)
    assert applied >= 3
