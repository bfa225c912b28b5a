"""The oracles against themselves: special tables against the float64 functions, float64
against mpmath on random points of each domain, the exact integer functions against Python's
integer semantics, and the named cases docs/OPS.md pins."""
from __future__ import annotations

import math
import operator
import subprocess
import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from mpmath import mp

from nbx.oracles import ORACLE_NAMES, ORACLES, MpConst, evaluate_mp, lookup_special

NAN, INF = float("nan"), float("inf")
FLOAT_KINDS = ("real", "exactly-representable")
INTEGER_ONLY = {n for n in ORACLE_NAMES if n.startswith("bitwise_")}
BOOL_OPERANDS = {"where": (0,), "masked_fill": (1,)}

# Non-default parameters worth checking as well as the defaults.
PARAM_CASES = [
    ("gelu", {"approximate": "tanh"}), ("div", {"rounding_mode": "trunc"}),
    ("div", {"rounding_mode": "floor"}), ("softplus", {"beta": 2.0, "threshold": 10.0}),
    ("leaky_relu", {"negative_slope": 0.2}), ("elu", {"alpha": 0.5}), ("celu", {"alpha": 2.0}),
    ("threshold", {"threshold": 1.0, "value": -3.0}), ("add", {"alpha": 3}),
    ("sub", {"alpha": -2}), ("rsub", {"alpha": 2}), ("addcmul", {"value": 0.5}),
    ("addcdiv", {"value": -2.0}), ("masked_fill", {"value": 7.5}),
]


def _same(got, want, zero_sign_matters=True) -> bool:
    got, want = float(got), float(want)
    if math.isnan(want):
        return math.isnan(got)
    if got != want:
        return False
    return not (zero_sign_matters and want == 0) or math.copysign(1, got) == math.copysign(1, want)


def _f64(oracle, inputs, params):
    return oracle.f64(*(np.asarray(v) for v in inputs), **params)


# ------------------------------------------------------------------------------------------------
def test_registry_shape():
    assert len(ORACLES) == len(ORACLE_NAMES) == 100
    for name, o in ORACLES.items():
        assert o.name == name and len(o.domain) == o.arity
        assert o.kind in ("real", "bool", "exactly-representable")
        assert o.mp is not None or name in INTEGER_ONLY


@pytest.mark.parametrize("name", [n for n in ORACLE_NAMES if n not in INTEGER_ONLY])
def test_specials_cover_nan_inf_zero(name):
    o = ORACLES[name]
    inputs = [v for row, _ in o.specials for v in row if not isinstance(v, bool)]
    assert any(math.isnan(v) for v in inputs), name
    assert INF in inputs and -INF in inputs, name
    assert any(v == 0 and math.copysign(1, v) > 0 for v in inputs), name
    assert any(v == 0 and math.copysign(1, v) < 0 for v in inputs), name


@pytest.mark.parametrize("name", ORACLE_NAMES)
def test_special_table_agrees_with_f64(name):
    o = ORACLES[name]
    for inputs, _ in o.specials:
        want = lookup_special(o, inputs, {})
        if want is None:
            continue
        got = _f64(o, inputs, o.params)
        if o.kind == "bool":
            assert bool(got) == want, (name, inputs)
        elif isinstance(want, MpConst):
            assert abs(float(got) - want) <= 4e-16 * abs(want), (name, inputs, got, want)
        else:
            assert _same(got, want, o.zero_sign_matters), (name, inputs, float(got), want)


# ------------------------------------------------------------------------------------------------
def _sample(rng, lo, hi, n):
    """Uniform on a bounded interval; on an unbounded side half moderate values, half spread
    log-uniformly over float64's range."""
    if math.isfinite(lo) and math.isfinite(hi):
        return rng.uniform(lo, hi, n)
    wide = 10.0 ** rng.uniform(-300, 300, n)
    if math.isfinite(lo):
        moderate = lo + rng.uniform(0, 20, n)
        return np.where(rng.random(n) < 0.5, moderate, lo + wide)
    if math.isfinite(hi):
        moderate = hi - rng.uniform(0, 20, n)
        return np.where(rng.random(n) < 0.5, moderate, hi - wide)
    signed = np.where(rng.random(n) < 0.5, -wide, wide)
    return np.where(rng.random(n) < 0.5, rng.uniform(-20, 20, n), signed)


def _points(name, o, seed, n=200):
    rng = np.random.default_rng(seed)
    columns = []
    for i, (lo, hi) in enumerate(o.domain):
        if i in BOOL_OPERANDS.get(name, ()):
            columns.append(rng.random(n) < 0.5)
        else:
            columns.append(_sample(rng, lo, hi, n))
    return columns


FLOAT_CASES = [(n, None) for n in ORACLE_NAMES if n not in INTEGER_ONLY] + PARAM_CASES


@pytest.mark.parametrize("name,params", FLOAT_CASES,
                         ids=[n if p is None else f"{n}-{'-'.join(map(str, p.values()))}"
                              for n, p in FLOAT_CASES])
def test_f64_agrees_with_mp(name, params):
    o = ORACLES[name]
    params = {**o.params, **(params or {})}
    columns = _points(name, o, seed=sum(map(ord, name)))
    fast = np.asarray(o.f64(*columns, **params))
    with mp.workprec(80):
        for i in range(len(columns[0])):
            inputs = tuple(c[i].item() for c in columns)
            exact = evaluate_mp(o, inputs, params)
            if o.kind == "bool":
                assert bool(fast[i]) == exact, (name, inputs)
                continue
            want, got = float(exact), float(fast[i])
            if math.isnan(want) or math.isnan(got) or math.isinf(want):
                assert _same(got, want, False), (name, inputs, got, want)
                continue
            assert abs(got - want) <= 1e-13 * abs(want) + 1e-300, (name, inputs, got, want)


# ------------------------------------------------------------------------------------------------
INT_CASES = [n for n in ORACLE_NAMES if ORACLES[n].exact_int is not None]


def _small_ints(name, rng, n=300):
    o = ORACLES[name]
    columns = [rng.integers(-1000, 1001, n) for _ in range(o.arity)]
    if name == "pow":
        columns[1] = rng.integers(0, 6, n)
    if name.startswith("bitwise_") and "shift" in name:
        columns[1] = rng.integers(-2, 70, n)
    for i in BOOL_OPERANDS.get(name, ()):
        columns[i] = rng.integers(0, 2, n)
    return columns


@pytest.mark.parametrize("name", INT_CASES)
def test_exact_int_agrees_with_f64_on_small_ints(name):
    o = ORACLES[name]
    columns = _small_ints(name, np.random.default_rng(7))
    fast = np.asarray(o.f64(*(c.astype(np.float64) for c in columns), **o.params))
    for i in range(len(columns[0])):
        ints = [int(c[i]) for c in columns]
        try:
            exact = o.exact_int(*ints, **o.params)
        except ZeroDivisionError:
            assert not math.isfinite(fast[i]), (name, ints)
            continue
        if isinstance(exact, Fraction):
            assert abs(float(exact) - fast[i]) <= 1e-15 * abs(float(exact)), (name, ints)
        else:
            assert fast[i] == exact, (name, ints, fast[i], exact)


def _c_fmod(a, b):
    return int(math.copysign(abs(a) % abs(b), a)) if abs(a) % abs(b) else 0


def test_integer_division_matches_python():
    rng = np.random.default_rng(11)
    big = [int(v) for v in rng.integers(-2**63, 2**63 - 1, 400, dtype=np.int64)]
    small = [int(v) for v in rng.integers(-300, 300, 400)] + [1, -1, 2**62 + 1, -(2**63)]
    fd, rem, fm, div = (ORACLES[n].exact_int for n in ("floor_divide", "remainder", "fmod", "div"))
    for a in big + small:
        for b in small[:50] + big[:5]:
            if b == 0:
                for fn in (fd, rem, fm):
                    with pytest.raises(ZeroDivisionError):
                        fn(a, b)
                continue
            assert fd(a, b) == a // b and div(a, b, rounding_mode="floor") == a // b
            assert rem(a, b) == a % b
            trunc = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            assert div(a, b, rounding_mode="trunc") == trunc
            assert fm(a, b) == a - b * trunc
            assert div(a, b) == Fraction(a, b)
    assert fm(-5, 3) == -2 and fm(5, -3) == 2 and rem(5, -3) == -1 and rem(-5, 3) == 1
    with pytest.raises(ValueError):
        div(1, 2, rounding_mode="round")


def test_shifts_and_bitwise_exact():
    left, right = ORACLES["bitwise_left_shift"].exact_int, ORACLES["bitwise_right_shift"].exact_int
    for bits in (8, 16, 32, 64):
        for a in (0, 1, -1, 5, -128, 2**(bits - 1) - 1, -(2**(bits - 1))):
            for b in (-1, 0, 1, bits - 1, bits, bits + 5):
                in_range = 0 <= b < bits
                assert left(a, b, bits=bits, signed=True) == (a << b if in_range else 0)
                assert right(a, b, bits=bits, signed=True) == (a >> b if in_range
                                                               else (-1 if a < 0 else 0))
    assert right(200, 9, bits=8, signed=False) == 0
    bnot = ORACLES["bitwise_not"].exact_int
    assert bnot(True) is False and bnot(1, bits=1, signed=False) is False and bnot(5) == -6
    assert ORACLES["bitwise_xor"].exact_int(6, 3) == 5


def test_pow_int():
    p = ORACLES["pow"].exact_int
    assert p(0, 0) == 1 and p(-3, 3) == -27 and p(2, 62) == 2**62
    assert p(3, 100, bits=32) % 2**32 == 3**100 % 2**32
    with pytest.raises(ValueError):
        p(2, -1)


def test_add_float_alpha_with_ints_is_an_error():
    with pytest.raises(TypeError):
        ORACLES["add"].exact_int(1, 2, alpha=1.5)


# ------------------------------------------------------------------------------------------------
def _f(name, *inputs, **params):
    o = ORACLES[name]
    return float(_f64(o, inputs, {**o.params, **params}))


def _m(name, *inputs, **params):
    with mp.workprec(80):
        return evaluate_mp(ORACLES[name], inputs, params)


def test_named_cases():
    assert _f("floor_divide", 1.0, 0.1) == 9.0 and float(_m("floor_divide", 1.0, 0.1)) == 9.0
    assert _same(_f("remainder", -0.0, 3.0), -0.0) and _same(_m("remainder", -0.0, 3.0), -0.0)
    assert _same(_m("remainder", -6.0, 3.0), -0.0) and _same(_f("remainder", -6.0, 3.0), -0.0)
    assert _f("remainder", 5.0, -3.0) == -1.0 and ORACLES["remainder"].exact_int(5, -3) == -1
    assert _f("fmod", -5.0, 3.0) == -2.0 and float(_m("fmod", -5.0, 3.0)) == -2.0
    for args in ((0.0, 0.0), (NAN, 0.0), (1.0, NAN)):
        assert _f("pow", *args) == 1.0 and _m("pow", *args) == 1.0
    assert _same(_f("atan2", 0.0, -0.0), math.pi) and _same(_f("atan2", -0.0, -0.0), -math.pi)
    with mp.workprec(80):
        assert _m("atan2", -0.0, -0.0) == -mp.pi and _m("atan2", 0.0, -0.0) == mp.pi
    assert math.isnan(_f("maximum", NAN, 1.0)) and _f("fmax", NAN, 1.0) == 1.0
    assert _f("round", 2.5) == 2.0 and _same(_f("round", -0.5), -0.0)
    assert _f("sigmoid", -1000.0) == 0.0 and _f("sigmoid", 1000.0) == 1.0
    assert _same(_f("sign", -0.0), -0.0) and _same(_f("maximum", -0.0, 0.0), 0.0)
    assert _same(_f("minimum", 0.0, -0.0), -0.0)
    assert _f("div", 1.0, 0.1, rounding_mode="trunc") == 9.0
    assert _f("softplus", 21.0) == 21.0 and _f("hardswish", -INF) == 0.0


def test_evaluate_mp_repairs_what_mpmath_cannot_hold():
    with mp.workprec(80):
        assert _m("atan2", -0.0, -2.5) == -mp.pi                       # no row: sign repaired
        assert _m("copysign", 3.0, -0.0) == -3
        assert _same(_m("trunc", -0.25), -0.0) and _same(_m("mul", -0.0, 5.0), -0.0)
        assert _m("div", 2.5, 0.0) == INF and _m("div", -2.5, 0.0) == -INF
        assert _m("pow", -0.0, -5.0) == -INF and _same(_m("pow", -0.0, 5.0), -0.0)
        assert _m("atan2", INF, 3.0) == mp.pi / 2                      # mpmath's infinity
        assert _m("exp", INF) == INF and math.isnan(_m("log", -3.0))
        assert isinstance(_m("acos", 0.0), mpmath.mpf) and _m("acos", 0.0) == mp.pi / 2
        assert _m("nan_to_num", INF, fmt_max=65504.0) == 65504.0
        assert _m("to", -7.9, int_min=-128, int_max=127) == -7
        assert _m("to", NAN, int_min=-128, int_max=127) == 0.0
        assert _m("to", 1e10, int_min=-128, int_max=127) == 127
        # exact arithmetic: no double rounding before the harness rounds
        assert _m("add", 1.0, 2.0**-200) == mp.fadd(1, mp.mpf(2) ** -200, exact=True)
        product = _m("mul", 1.0 + 2.0**-52, 1.0 + 2.0**-52)
        assert product - 1 - mp.mpf(2) ** -51 == mp.mpf(2) ** -104


def test_lookup_special_matching():
    exp = ORACLES["exp"]
    assert lookup_special(exp, (NAN,), {}) != lookup_special(exp, (NAN,), {})   # it is NaN
    assert lookup_special(exp, (-0.0,), {}) == 1.0 and lookup_special(exp, (2.0,), {}) is None
    assert lookup_special(ORACLES["ceil"], (-0.5,), {}) == 0.0
    assert math.copysign(1, lookup_special(ORACLES["ceil"], (-0.5,), {})) < 0
    assert lookup_special(ORACLES["add"], (INF, -INF), {"alpha": 2}) is None
    assert lookup_special(ORACLES["elu"], (-INF,), {"alpha": 0.5}) == -0.5


def test_import_needs_numpy_and_mpmath_only():
    """nbx.oracles loads nbx's package header (which chooses the backend) and nothing else of nbx:
    no kernels, no ops, no harness, no Triton."""
    code = ("import sys, nbx.oracles; bad = [m for m in sys.modules if m in ('triton', 'torch', 'scipy') or "
            "m.startswith(('nbx.kernels', 'nbx.ops', 'nbx.harness', 'nbx.tensor'))]; print(bad); sys.exit(bool(bad))")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                   cwd=__file__.rsplit("/tests/", 1)[0])


def test_comparisons_are_ieee():
    for name, op in (("eq", operator.eq), ("lt", operator.lt), ("ge", operator.ge)):
        o = ORACLES[name]
        for a, b in ((NAN, 1.0), (0.0, -0.0), (-INF, 2.0)):
            assert bool(_f64(o, (a, b), {})) == op(a, b) == evaluate_mp(o, (a, b), {})


def test_lerp_float64_function_keeps_a_cancelling_sum():
    # start + w (end - start) where w*end nearly cancels start: the float64 function must stay
    # within a few float64 ulps of the exact value (ATen's form, with end - start rounded, gave
    # 0.0156 for bfloat16 lerp(-7.97e13, 1.15e30, 6.9e-17) = 0.00553: 82.75 ulp off)
    from fractions import Fraction

    from nbx.oracles.ternary import lerp_f64
    rng = np.random.default_rng(5)
    e = (rng.standard_normal(2000) * 2.0 ** rng.integers(-60, 60, 2000)).astype(np.float32).astype(np.float64)
    w = (rng.uniform(0, 1, 2000) * 2.0 ** -rng.integers(0, 40, 2000)).astype(np.float32).astype(np.float64)
    s = (-(w * e) * (1 + rng.choice([0, 1, -1], 2000) * 2.0 ** -20)).astype(np.float32).astype(np.float64)
    s[0], e[0], w[0] = -79714593013760.0, 1.1488083564568329e+30, 6.938893903907228e-17
    got = lerp_f64(s, e, w)
    for i in range(len(s)):
        exact = Fraction(s[i]) + Fraction(w[i]) * (Fraction(e[i]) - Fraction(s[i]))
        if exact:
            assert abs(Fraction(got[i]) - exact) <= abs(exact) * Fraction(2) ** -50, (s[i], e[i], w[i], got[i])


def test_lerp_float64_function_rounds_to_odd_off_a_float32_midpoint():
    # the exact value lies 9.8e-25 above -(2^128 - 2^103), the midpoint between -max and -2^128:
    # rounded to float32 it is -max; a float64 value on the midpoint would round to -inf
    from nbx.harness.scoring.rule import round_to_format
    from nbx.oracles.ternary import lerp_f64
    s, e, w = (np.array([v], np.uint32).view(np.float32).astype(np.float64)
               for v in (0xff000000, 0x97971c6b, 0xbf7fffff))
    v = lerp_f64(s, e, w)
    assert v[0] != -(2.0 ** 128 - 2.0 ** 103) and abs(v[0]) < 2.0 ** 128 - 2.0 ** 103
    assert round_to_format(v, "float32").view(np.uint32)[0] == 0xff7fffff
    # exact sums stay exact: 0 + 0.25 * (4 - 0) = 1
    assert lerp_f64(np.array([0.0]), np.array([4.0]), np.array([0.25]))[0] == 1.0
