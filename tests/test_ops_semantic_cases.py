"""The op families beyond the core: activations, bitwise/logical, ternary, conversions, more unary and
binary math. Values against numpy float64 (rounded to the output format, ulp-measured) and exact
Python-integer references; specials (NaN, +-inf, +-0, extremes) in every input set; then named
semantic cases. One launch per (op, dtype) keeps the interpreter run short.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import nbx
from nbx.dtype import ALL, DType, FLOATS, INTEGRAL, INTS, bfloat16, float16, float32, float64, int16, int64

nan, inf = float("nan"), float("inf")
FORMAT = {"float16": (11, -14), "bfloat16": (8, -126), "float32": (24, -126), "float64": (53, -1022)}
RNG = np.random.default_rng(20261202)


# ---------------------------------------------------------------- helpers
def T(a) -> nbx.Tensor:
    return nbx.from_numpy(np.asarray(a))


def as_dtype(values, d: DType) -> np.ndarray:
    if d.is_float:
        with np.errstate(over="ignore"):
            return np.asarray(values, dtype=np.float64).astype(d.np)
    if d.is_bool:
        return np.asarray(values) != 0
    return np.asarray([int(v) for v in values], dtype=object).astype(np.int64).astype(d.np)


def float_inputs(d: DType, n=160) -> np.ndarray:
    """Specials, both signs of every magnitude the format has, and values near the usual kinks."""
    fi = ml_dtypes.finfo(d.np)
    big, tiny, sub = float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal)
    sp = [nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 6.0, -6.0, 20.0, 21.0,
          100.0, -100.0, 1e-30, -1e-30, 1e-4, -1e-4, 0.999, 1.001, -0.999, big, -big, tiny, -tiny, sub, -sub,
          88.0, -88.0, 710.0, -710.0, 1e300, -1e300]
    lo, hi = math.log10(sub), math.log10(big)
    mags = 10.0 ** RNG.uniform(lo, hi, n)
    rand = np.concatenate([mags * RNG.choice([-1.0, 1.0], n), RNG.uniform(-12, 12, n)])
    return as_dtype(np.concatenate([sp, rand]), d)


def int_inputs(d: DType, n=120) -> np.ndarray:
    if d.is_bool:
        return np.array([True, False] * 4)
    lo, hi = d.min, d.max
    edge = [0, 1, -1, 2, -2, 3, 7, -8, 100, lo, hi, lo + 1, hi - 1]
    edge = [v for v in edge if lo <= v <= hi]
    r = [int(v) for v in RNG.integers(lo, hi, n, endpoint=True, dtype=np.int64)]
    small = [int(v) for v in RNG.integers(max(lo, -20), min(hi, 20), n // 2, endpoint=True)]
    return np.array(edge + r + small, dtype=object).astype(d.np)


def inputs(d: DType) -> np.ndarray:
    return float_inputs(d) if d.is_float else int_inputs(d)


def ulp(y: np.ndarray, fmt: str) -> np.ndarray:
    p, emin = FORMAT[fmt]
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.abs(y)))
    e = np.where(np.isfinite(e), e, emin)
    return np.exp2(np.maximum(e, emin) - p + 1)


def check_float(got: np.ndarray, want64: np.ndarray, tol: float, where=None, zero_sign=True, scale=None):
    """got (in its format) against the float64 value: NaN where NaN, inf where the rounded value is inf,
    otherwise within tol ulp (of `scale` when given); tol == 0 means bit for bit (signed zeros included)."""
    fmt = str(got.dtype) if got.dtype != ml_dtypes.bfloat16 else "bfloat16"
    want64 = np.broadcast_to(np.asarray(want64, dtype=np.float64), got.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        want = want64.astype(got.dtype)
    g64 = got.astype(np.float64)
    both_nan = np.isnan(g64) & np.isnan(want64)
    if tol == 0:
        same = (g64 == want.astype(np.float64)) & (
            (np.signbit(g64) == np.signbit(want.astype(np.float64))) | (not zero_sign))
        ok = both_nan | same
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            ref = want64 if scale is None else np.maximum(np.abs(want64), scale)
            err = np.abs(g64 - want64) / ulp(ref, fmt)
        finite = np.isfinite(want.astype(np.float64))
        ok = both_nan | (g64 == want.astype(np.float64)) | (finite & np.isfinite(g64) & (err <= tol))
        if zero_sign:
            ok &= ~((want64 == 0) & (g64 == 0) & (np.signbit(g64) != np.signbit(want64)))
    bad = np.flatnonzero(~ok)
    if bad.size:
        i = bad[:6]
        src = "" if where is None else f" inputs {[w.ravel()[i] for w in where]}"
        pytest.fail(f"{bad.size} of {ok.size} wrong:{src} got {g64.ravel()[i]} want {want64.ravel()[i]}")


def wrap(values, d: DType) -> np.ndarray:
    """Python ints to the dtype by two's complement (bool: != 0)."""
    if d.is_bool:
        return np.array([bool(v) for v in values])
    m = 1 << d.bits
    out = []
    for v in values:
        v = int(v) % m
        out.append(v - m if d.kind == "i" and v >= m >> 1 else v)
    return np.array(out, dtype=object).astype(d.np)


def check_exact(got: np.ndarray, want: np.ndarray):
    want = np.asarray(want).astype(got.dtype)
    bad = np.flatnonzero(got != want)
    if bad.size:
        pytest.fail(f"{bad.size} of {got.size} wrong: got {got.ravel()[bad[:8]]} want {want.ravel()[bad[:8]]}")


def out_dtype_F(d: DType) -> DType:
    return d if d.is_float else float32


# ---------------------------------------------------------------- float64 references
def sigmoid64(x):
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def softplus64(u):
    return np.logaddexp(0.0, u)


_erfc = np.vectorize(math.erfc, otypes=[np.float64])
SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _neg_inf_to_neg_zero(x, y):
    return np.where(x == -inf, -0.0, y)


def _gelu_tanh64(x):
    with np.errstate(over="ignore", invalid="ignore"):
        u = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
        return _neg_inf_to_neg_zero(x, x / (1 + np.exp(-2 * u)))


def _hardswish64(x):
    return np.where(x <= -3, 0.0, np.where(x >= 3, x, x * (x + 3) / 6))


# name -> (reference, extra kwargs, float64 tolerance in ulp or 0 for exact everywhere, zero sign compared)
# Tolerances: float16/bfloat16/float32 results are formulas evaluated whole in float64 and rounded
# once, so they sit within 0.5 ulp plus the double rounding float64 -> float32 -> 16 bits: 1 ulp.
# float64 results compound a few float64 roundings (and the reference's own), hence the larger figures.
UNARY = {
    "relu": (lambda x: np.where(x > 0, x, np.where(np.isnan(x), x, 0.0)), {}, 0, True),
    "sigmoid": (sigmoid64, {}, 4, True),
    "silu": (lambda x: _neg_inf_to_neg_zero(x, x * sigmoid64(x)), {}, 4, True),
    "gelu": (lambda x: _neg_inf_to_neg_zero(x, 0.5 * x * _erfc(-x * math.sqrt(0.5))), {}, 8, True),
    # float64 gelu-tanh for x << 0 is x*exp(2u): the few-ulp rounding error of u = k(x + c x^3) is
    # multiplied by |2u| (measured 150 ulp at x = -11.4; up to ~2000 where 2u nears -745). The
    # reference has the same error; only float64 double-double arithmetic for u would remove it.
    "gelu-tanh": (_gelu_tanh64, {"approximate": "tanh"}, 2048, True),
    "tanh": (np.tanh, {}, 2, True),
    "hardsigmoid": (lambda x: np.where(np.isnan(x), x, np.clip((x + 3) / 6, 0, 1)), {}, 2, True),
    "hardswish": (_hardswish64, {}, 2, False),
    "leaky_relu": (lambda x: np.where(x > 0, x, 0.2 * x), {"negative_slope": 0.2}, 1, True),
    "elu": (lambda x: np.where(x > 0, x, 1.5 * np.expm1(x)), {"alpha": 1.5}, 2, True),
    "celu": (lambda x: np.where(x > 0, x, 0.5 * np.expm1(x / 0.5)), {"alpha": 0.5}, 2, True),
    "selu": (lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x)), {}, 2, True),
    "mish": (lambda x: _neg_inf_to_neg_zero(x, x * np.tanh(softplus64(x))), {}, 4, True),
    "softplus": (lambda x: np.where(x * 2 > 20, x, softplus64(2 * x) / 2), {"beta": 2.0}, 2, True),
    "log_sigmoid": (lambda x: -softplus64(-x), {}, 2, False),
    "threshold": (lambda x: np.where(x <= 0.5, -2.0, x), {"threshold": 0.5, "value": -2.0}, 0, True),
    "dropout": (lambda x: x, {"p": 0.1}, 0, True),
    "expm1": (np.expm1, {}, 2, True), "log1p": (np.log1p, {}, 2, True), "log2": (np.log2, {}, 2, True),
    "log10": (np.log10, {}, 2, True), "sinh": (np.sinh, {}, 2, True), "cosh": (np.cosh, {}, 2, True),
    "asin": (np.arcsin, {}, 2, True), "acos": (np.arccos, {}, 2, True), "atan": (np.arctan, {}, 2, True),
    "asinh": (np.arcsinh, {}, 2, True), "acosh": (np.arccosh, {}, 2, True),
    "atanh": (np.arctanh, {}, 2, True), "cbrt": (np.cbrt, {}, 2, True), "erfc": (_erfc, {}, 4, True),
    "sign": (lambda x: np.where(x > 0, 1.0, np.where(x < 0, -1.0, x)), {}, 0, True),
    "square": (lambda x: x * x, {}, 0, True),
    "frac": (lambda x: x - np.trunc(x), {}, 0, True),
    "angle": (lambda x: np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0)), {}, 0, True),
    "nan_to_num": (None, {"nan": 1.5}, 0, True),
}
SAME_DTYPE = {"relu", "threshold", "dropout", "sign", "square", "frac", "nan_to_num"}


def _fn(case):
    return getattr(nbx, case.split("-")[0])


@pytest.mark.parametrize("d", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("case", list(UNARY))
def test_unary_float(case, d):
    ref, kw, tol64, zero_sign = UNARY[case]
    x = float_inputs(d)
    got = _fn(case)(T(x), **kw).numpy()
    assert got.dtype == d.np
    x64 = x.astype(np.float64)
    if case == "nan_to_num":
        big = float(ml_dtypes.finfo(d.np).max)
        want = np.where(np.isnan(x64), 1.5, np.where(x64 == inf, big, np.where(x64 == -inf, -big, x64)))
    else:
        with np.errstate(all="ignore"):
            want = ref(x64)
    tol = tol64 if d is float64 or tol64 == 0 else 1
    check_float(got, want, tol, where=[x], zero_sign=zero_sign)


@pytest.mark.parametrize("d", INTEGRAL, ids=lambda d: d.name)
@pytest.mark.parametrize("case", ["sigmoid", "gelu", "silu", "elu", "mish", "log_sigmoid", "expm1", "atan",
                                  "erfc", "angle", "cbrt"])
def test_unary_float_math_on_integers(case, d):
    ref, kw, _, zero_sign = UNARY[case]
    x = int_inputs(d)
    got = _fn(case)(T(x), **kw).numpy()
    assert got.dtype == np.float32
    with np.errstate(all="ignore"):
        check_float(got, ref(x.astype(np.float64)), 1, where=[x], zero_sign=zero_sign)


@pytest.mark.parametrize("d", INTEGRAL, ids=lambda d: d.name)
@pytest.mark.parametrize("case", ["relu", "sign", "square", "frac", "nan_to_num", "threshold", "dropout",
                                  "signbit"])
def test_unary_integer_exact(case, d):
    fn = getattr(nbx, case)
    if d.is_bool and case in ("relu", "square", "frac", "threshold"):
        with pytest.raises(TypeError, match=f"nbx.{case}"):
            fn(T(int_inputs(d)), **({"threshold": 0, "value": 1} if case == "threshold" else {}))
        return
    x = int_inputs(d)
    xs = [int(v) for v in x]
    kw = {"threshold": 2.5, "value": -1 if d.kind == "i" else 1} if case == "threshold" else {}
    want = {"relu": [max(v, 0) for v in xs], "sign": [(v > 0) - (v < 0) for v in xs],
            "square": [v * v for v in xs], "frac": [0] * len(xs), "nan_to_num": xs, "dropout": xs,
            "signbit": [v < 0 for v in xs],
            "threshold": [kw.get("value") if v <= 2.5 else v for v in xs]}[case]
    got = fn(T(x), **kw).numpy()
    check_exact(got, np.array([v < 0 for v in xs]) if case == "signbit" else wrap(want, d))


@pytest.mark.parametrize("d", FLOATS, ids=lambda d: d.name)
def test_signbit_float(d):
    x = float_inputs(d)
    x = np.concatenate([x, -np.abs(x[:1])])          # a NaN with the sign bit set
    check_exact(nbx.signbit(T(x)).numpy(), np.signbit(x.astype(np.float64)))


# ---------------------------------------------------------------- binary and ternary float ops
def pair_inputs(d, n=300):
    s = float_inputs(d, 8)[:38]
    a, b = np.meshgrid(s, s)
    r = float_inputs(d, n // 2)
    return (np.concatenate([a.ravel(), r]).astype(d.np),
            np.concatenate([b.ravel(), RNG.permutation(r)]).astype(d.np))


def _fmax64(a, b, pick):
    r = pick(a, b)
    both0 = (a == 0) & (b == 0)
    neg = (np.signbit(a) & np.signbit(b)) if pick is np.fmax else (np.signbit(a) | np.signbit(b))
    return np.where(both0, np.where(neg, -0.0, 0.0), r)


BINARY = {  # name -> (reference, float64 tolerance; 0 = exact)
    "fmod": (np.fmod, 0), "pow": (np.power, 2),
    "fmax": (lambda a, b: _fmax64(a, b, np.fmax), 0), "fmin": (lambda a, b: _fmax64(a, b, np.fmin), 0),
    "atan2": (np.arctan2, 2), "hypot": (np.hypot, 2), "copysign": (np.copysign, 0),
    # gate * (sigmoid(gate) * up), the order nbx and the oracle use: silu(4.9e-324) * inf is inf, not
    # the NaN of an underflowed silu times inf
    "swiglu": (lambda g, u: np.where(g == -np.inf, _neg_inf_to_neg_zero(g, g * sigmoid64(g)) * u,
                                     g * (sigmoid64(g) * u)), 4),
    "clamp_min": (lambda a, b: np.where(np.isnan(a) | np.isnan(b), nan, _fmax64(a, b, np.fmax)), 0),
}


@pytest.mark.parametrize("d", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("case", list(BINARY))
def test_binary_float(case, d):
    ref, tol64 = BINARY[case]
    a, b = pair_inputs(d)
    got = getattr(nbx, case)(T(a), T(b)).numpy()
    assert got.dtype == d.np
    with np.errstate(all="ignore"):
        want = ref(a.astype(np.float64), b.astype(np.float64))
    tol = tol64 if d is float64 or tol64 == 0 else 1
    check_float(got, want, tol, where=[a, b], zero_sign=case != "swiglu")


@pytest.mark.parametrize("d", FLOATS, ids=lambda d: d.name)
def test_ternary_float(d):
    a, b = pair_inputs(d)
    c = as_dtype(RNG.uniform(-0.5, 1.5, a.size), d)
    c[:5] = as_dtype([0.0, 1.0, 0.5, 0.49, nan], d)
    a64, b64, c64 = (v.astype(np.float64) for v in (a, b, c))
    cond = RNG.random(a.size) < 0.5
    # float64: the reference's own roundings (and the GPU's fused multiply-adds) differ by a few ulp of
    # the largest term, which is many ulp of a result that cancels; measure in ulp of that term.
    with np.errstate(all="ignore"):
        big = np.finfo(np.float64).max
        terms = {"lerp": np.maximum(np.abs(a64), np.abs(b64)),
                 "addcmul": np.minimum(np.maximum(np.abs(a64), np.abs(0.5 * b64 * c64)), big),
                 "addcdiv": np.minimum(np.maximum(np.abs(a64), np.abs(2 * b64 / c64)), big)} if d is float64 else {}
        diff = b64 - a64
        lerp = np.where(np.abs(c64) < 0.5, a64 + c64 * diff, b64 - diff * (1 - c64))
        cases = [
            ("lerp", nbx.lerp(T(a), T(b), T(c)), lerp, 1 if d is not float64 else 4, False),
            ("addcmul", nbx.addcmul(T(a), T(b), T(c), value=0.5), a64 + 0.5 * b64 * c64, 1 if d is not float64 else 4, False),
            ("addcdiv", nbx.addcdiv(T(a), T(b), T(c), value=2), a64 + 2 * b64 / c64, 1 if d is not float64 else 4, False),
            ("where", nbx.where(T(cond), T(a), T(b)), np.where(cond, a64, b64), 0, True),
            ("masked_fill", nbx.masked_fill(T(a), T(cond), -7.25), np.where(cond, -7.25, a64), 0, True),
            ("clamp", nbx.clamp(T(a), T(np.minimum(b, c)), T(c)),
             np.where(np.isnan(a64) | np.isnan(b64) | np.isnan(c64), nan,
                      np.minimum(np.maximum(a64, np.minimum(b64, c64)), c64)), 0, False),
        ]
    for name, got, want, tol, zs in cases:
        got = got.numpy()
        assert got.dtype == d.np, name
        check_float(got, want, tol, where=[a, b, c], zero_sign=zs, scale=terms.get(name))


# ---------------------------------------------------------------- integer ops, exact
def _shift_counts(d, n):
    return as_dtype(RNG.integers(-3 if d.kind == "i" else 0, d.bits + 3, n, endpoint=True), d)


def _ref_shift(a, b, bits, left):
    if b < 0 or b >= bits:
        return 0 if left else (-1 if a < 0 else 0)
    return a << b if left else a >> b


INT_BINARY = {
    "bitwise_and": lambda a, b, d: a & b, "bitwise_or": lambda a, b, d: a | b,
    "bitwise_xor": lambda a, b, d: a ^ b,
    "bitwise_left_shift": lambda a, b, d: _ref_shift(a, b, d.bits, True),
    "bitwise_right_shift": lambda a, b, d: _ref_shift(a, b, d.bits, False),
    "fmax": lambda a, b, d: max(a, b), "fmin": lambda a, b, d: min(a, b),
    "clamp_min": lambda a, b, d: max(a, b),
    "fmod": lambda a, b, d: int(math.fmod(a, b)) if abs(a) < 2**52 else (abs(a) % abs(b)) * (1 if a >= 0 else -1),
    "pow": lambda a, b, d: pow(a, b, 1 << 64),
}


@pytest.mark.parametrize("d", INTS, ids=lambda d: d.name)
@pytest.mark.parametrize("case", list(INT_BINARY))
def test_integer_binary_exact(case, d):
    a = int_inputs(d)
    if "shift" in case:
        b = _shift_counts(d, a.size)
    elif case == "pow":
        b = as_dtype(RNG.integers(0, min(d.max, 70), a.size, endpoint=True), d)
    else:
        b = RNG.permutation(a)
    if case == "fmod":
        b = np.where(b == 0, 1, b).astype(d.np)
    got = getattr(nbx, case)(T(a), T(b)).numpy()
    want = [INT_BINARY[case](int(x), int(y), d) for x, y in zip(a, b)]
    check_exact(got, wrap(want, d))


@pytest.mark.parametrize("d", INTS, ids=lambda d: d.name)
def test_integer_unary_and_ternary_exact(d):
    a = int_inputs(d)
    b, c = RNG.permutation(a), RNG.permutation(a)
    A, B, C = ([int(v) for v in x] for x in (a, b, c))
    check_exact(nbx.bitwise_not(T(a)).numpy(), wrap([~x for x in A], d))
    check_exact(nbx.addcmul(T(a), T(b), T(c), value=3).numpy(), wrap([x + 3 * y * z for x, y, z in zip(A, B, C)], d))
    lo = np.minimum(b, c)
    check_exact(nbx.clamp(T(a), T(lo), T(c)).numpy(), wrap([min(max(x, min(y, z)), z) for x, y, z in zip(A, B, C)], d))
    check_exact(nbx.clamp(T(a), min=-5 if d.kind == "i" else 5, max=9).numpy(),
                wrap([min(max(x, -5 if d.kind == "i" else 5), 9) for x in A], d))
    cond = RNG.random(a.size) < 0.5
    check_exact(nbx.where(T(cond), T(a), T(b)).numpy(), np.where(cond, a, b))
    check_exact(nbx.masked_fill(T(a), T(cond), 7).numpy(), np.where(cond, 7, a).astype(d.np))
    for n in (0, 1, 2, 3, 4, 5, 11):
        check_exact(nbx.pow(T(a), n).numpy(), wrap([x ** n for x in A], d))


@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or",
                                "logical_xor"])
def test_bool_and_logical(op):
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    want = {"and": a & b, "or": a | b, "xor": a ^ b}[op.split("_")[1]]
    got = getattr(nbx, op)(T(a), T(b)).numpy()
    assert got.dtype == np.bool_
    check_exact(got, want)


@pytest.mark.parametrize("d", ALL, ids=lambda d: d.name)
def test_logical_any_dtype(d):
    x = inputs(d)
    y = RNG.permutation(x)
    xb, yb = x.astype(np.float64) != 0, y.astype(np.float64) != 0        # NaN != 0 is True
    check_exact(nbx.logical_not(T(x)).numpy(), ~xb)
    check_exact(nbx.logical_and(T(x), T(y)).numpy(), xb & yb)
    check_exact(nbx.logical_or(T(x), 0).numpy(), xb)
    check_exact(nbx.logical_xor(T(x), T(y)).numpy(), xb ^ yb)


# ---------------------------------------------------------------- named semantic cases
def vals(t):
    return t.numpy().tolist()


def test_shift_out_of_range_counts():
    a8 = T(np.array([1, -1, -128, 64], dtype=np.int8))
    assert vals(nbx.bitwise_left_shift(a8, 8)) == [0, 0, 0, 0]          # width of int8, not of int32
    assert vals(nbx.bitwise_left_shift(a8, 7)) == [-128, -128, 0, 0]
    assert vals(nbx.bitwise_left_shift(a8, -1)) == [0, 0, 0, 0]
    assert vals(nbx.bitwise_right_shift(a8, 8)) == [0, -1, -1, 0]       # the sign fill
    assert vals(nbx.bitwise_right_shift(a8, -2)) == [0, -1, -1, 0]
    u8 = T(np.array([255, 1], dtype=np.uint8))
    assert vals(nbx.bitwise_left_shift(u8, T(np.array([1, 8], dtype=np.uint8)))) == [254, 0]
    assert vals(nbx.bitwise_right_shift(u8, 9)) == [0, 0]
    i64 = T(np.array([1, -(2**63)], dtype=np.int64))
    assert vals(nbx.bitwise_left_shift(i64, 63)) == [-(2**63), 0]
    assert vals(nbx.bitwise_left_shift(i64, 64)) == [0, 0]
    assert vals(nbx.bitwise_right_shift(i64, 64)) == [0, -1]
    assert vals(nbx.bitwise_right_shift(i64, 63)) == [0, -1]


def test_bitwise_not_bool_is_logical_not():
    got = nbx.bitwise_not(T(np.array([True, False])))
    assert got.dtype is nbx.bool and vals(got) == [False, True]
    assert vals(~T(np.array([True, False]))) == [False, True]
    assert vals(nbx.bitwise_not(T(np.array([0, -1, 5], dtype=np.int16)))) == [-1, 0, -6]
    assert vals(nbx.bitwise_not(T(np.array([0, 255], dtype=np.uint8)))) == [255, 0]


def test_bitwise_broadcast_and_scalars():
    q = T(np.array([[True], [False], [True]]))
    k = T(np.array([[True, False, True, True]]))
    assert nbx.bitwise_and(q, k).shape == (3, 4)
    check_exact(nbx.bitwise_and(q, k).numpy(), np.array([[1], [0], [1]], bool) & np.array([[1, 0, 1, 1]], bool))
    got = nbx.bitwise_and(T(np.array([True, False])), 3)      # bool tensor & int scalar -> int64 (ATen)
    assert got.dtype is nbx.int64 and vals(got) == [1, 0]


def test_integral_errors_name_op_and_argument():
    with pytest.raises(TypeError, match=r"nbx.bitwise_xor: argument 'other' has dtype float32"):
        nbx.bitwise_xor(T(np.array([1], np.int32)), T(np.array([1.0], np.float32)))
    with pytest.raises(TypeError, match=r"nbx.bitwise_or: argument 'other' has dtype float"):
        nbx.bitwise_or(T(np.array([1], np.int32)), 1.5)
    with pytest.raises(TypeError, match=r"nbx.bitwise_left_shift: argument 'input' has dtype bool.*allowed: uint8"):
        nbx.bitwise_left_shift(T(np.array([True])), 1)
    with pytest.raises(TypeError, match=r"nbx.bitwise_not: argument 'input' has dtype bfloat16"):
        nbx.bitwise_not(T(np.array([1.0], ml_dtypes.bfloat16)))


def test_nan_to_num_defaults_are_the_output_dtypes():
    x = np.array([nan, inf, -inf, 2.0])
    for d, big in [(float16, 65504.0), (bfloat16, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
                   (float32, float(np.finfo(np.float32).max)), (float64, float(np.finfo(np.float64).max))]:
        got = nbx.nan_to_num(T(as_dtype(x, d))).numpy().astype(np.float64).tolist()
        assert got == [0.0, big, -big, 2.0], d.name
    got = nbx.nan_to_num(T(as_dtype(x, float16)), nan=-1.0, posinf=1.0, neginf=-2.0)
    assert vals(got) == [-1.0, 1.0, -2.0, 2.0]
    assert vals(nbx.nan_to_num(T(np.array([3, -4], np.int32)))) == [3, -4]


def test_angle_specials():
    got = nbx.angle(T(np.array([-0.0, 0.0, -2.0, 3.0, nan, -inf, inf], np.float32))).numpy()
    assert not np.signbit(got[0]) and got[0] == 0.0 and got[1] == 0.0       # angle(-0.0) = +0.0
    assert got[2] == np.float32(np.pi) and got[5] == np.float32(np.pi)
    assert got[3] == 0 and got[6] == 0 and np.isnan(got[4])
    assert vals(nbx.angle(T(np.array([-1, 0, 1], np.int64)))) == [np.float32(np.pi), 0.0, 0.0]


def test_pow_specials_and_exponent_forms():
    assert vals(nbx.pow(T(np.array([0.0, nan, -0.0, inf], np.float32)), 0)) == [1.0, 1.0, 1.0, 1.0]
    one_nan = nbx.pow(T(np.array([1.0, 1.0], np.float32)), T(np.array([nan, -inf], np.float32)))
    assert vals(one_nan) == [1.0, 1.0]
    b = T(np.array([0.0, -0.0, -0.0, -2.0], np.float64))
    got = nbx.pow(b, T(np.array([0.0, -1.0, 3.0, 0.5]))).numpy()
    assert got[0] == 1 and got[1] == -inf and got[2] == 0 and np.signbit(got[2]) and np.isnan(got[3])
    assert vals(nbx.pow(2, T(np.array([0, 3, 10], np.int64)))) == [1, 8, 1024]          # scalar ** tensor
    assert nbx.pow(10000.0, T(np.array([0.5], np.float32))).dtype is nbx.float32
    assert vals(nbx.pow(T(np.array([3.0], np.float32)), -2)) == [np.float32(1 / 9)]
    # x**2 by multiplication is the exact square rounded once (exp/log measured 15 ulp in the seed)
    x = float_inputs(float32)
    check_float(nbx.pow(T(x), 2).numpy(), x.astype(np.float64) ** 2, 0)
    check_float(nbx.pow(T(x), 3.0).numpy(), x.astype(np.float64) ** 3, 0.5)
    with np.errstate(divide="ignore"):
        check_float(nbx.pow(T(x), -3).numpy(), 1 / x.astype(np.float64) ** 3, 0.5)


def test_pow_integer_wraps_and_negative_exponent_is_an_error():
    assert vals(nbx.pow(T(np.array([3, -3, 2], np.int8)), 5)) == [-13, 13, 32]            # 243 wraps
    assert vals(nbx.pow(T(np.array([3], np.int64)), 41)) == [wrap([3 ** 41], int64)[0]]
    assert vals(nbx.pow(T(np.array([2, 7], np.int32)), T(np.array([31, 0], np.int32)))) == [-(2**31), 1]
    assert vals(nbx.pow(T(np.array([0, 5], np.int16)), 0)) == [1, 1]                          # 0**0 = 1
    with pytest.raises(ValueError, match=r"nbx.pow: an integer base to a negative integer power"):
        nbx.pow(T(np.array([2], np.int32)), -1)
    with pytest.raises(ValueError, match=r"nbx.pow: .*argument 'exponent' has a negative element"):
        nbx.pow(T(np.array([2, 2], np.int64)), T(np.array([1, -3], np.int64)))
    with pytest.raises(ValueError, match=r"nbx.pow"):
        nbx.pow(2, T(np.array([-1], np.int64)))
    assert vals(nbx.pow(T(np.array([2], np.int32)), -1.0)) == [0.5]                            # float exponent


def test_fmod_integer_division_by_zero_and_int_min():
    with pytest.raises(ZeroDivisionError, match="nbx.fmod"):
        nbx.fmod(T(np.array([1, 2], np.int32)), T(np.array([1, 0], np.int32)))
    assert vals(nbx.fmod(T(np.array([-128, -7, 7], np.int8)), T(np.array([-1, 2, -2], np.int8)))) == [0, -1, 1]
    got = nbx.fmod(T(np.array([-6.0, 5.0, -0.0], np.float32)), 3.0).numpy()
    assert got[0] == 0 and np.signbit(got[0]) and got[1] == 2 and np.signbit(got[2])


def test_clamp_semantics():
    x = T(np.array([nan, 0.5, -1.0, 2.0], np.float32))
    assert vals(nbx.clamp(x, 1.0, 0.0))[1:] == [0.0, 0.0, 0.0]                # min > max gives max
    assert np.isnan(vals(nbx.clamp(x, 1.0, 0.0))[0])                          # NaN input stays NaN
    assert vals(nbx.clamp(x, min=0.0))[1:] == [0.5, 0.0, 2.0]
    assert vals(nbx.clamp(x, max=0.0))[1:] == [0.0, -1.0, 0.0]
    lo = T(np.array([[0.0], [1.0]], np.float32))
    assert nbx.clamp(x, lo, 3.0).shape == (2, 4)                             # tensor bound broadcasts
    assert nbx.clamp(T(np.array([1, 5], np.int32)), 2.5).dtype is nbx.float32  # promotes like ATen
    assert vals(nbx.clamp_min(T(np.array([-0.0], np.float32)), 0.0)) == [0.0]
    assert not np.signbit(nbx.clamp_min(T(np.array([-0.0], np.float32)), 0.0).numpy()[0])
    with pytest.raises(ValueError, match="nbx.clamp: at least one"):
        nbx.clamp(x)
    with pytest.raises(TypeError, match="nbx.clamp: argument 'min'"):
        nbx.clamp(x, "0")


def test_where_and_masked_fill():
    c = T(np.array([True, False, True]))
    assert vals(nbx.where(c, 1.0, 0.0)) == [1.0, 0.0, 1.0]
    got = nbx.where(c, T(np.array([1, 2, 3], np.int8)), 2.5)
    assert got.dtype is nbx.float32 and vals(got) == [1.0, 2.5, 3.0]
    h = T(np.array([1.0, 2.0, 3.0], np.float16))
    assert nbx.where(c, h, 0.0).dtype is nbx.float16
    assert nbx.where(T(np.array([[True], [False]])), h, T(np.array([0.0], np.float16))).shape == (2, 3)
    with pytest.raises(TypeError, match="nbx.where: argument 'condition' must be a bool tensor"):
        nbx.where(T(np.array([1, 0, 1], np.uint8)), h, h)
    got = nbx.masked_fill(h, c, -1e4)
    assert got.dtype is nbx.float16 and vals(got) == [np.float16(-1e4), 2.0, np.float16(-1e4)]
    with pytest.raises(TypeError, match="nbx.masked_fill: argument 'mask' must be a bool tensor"):
        nbx.masked_fill(h, T(np.array([1, 0, 1], np.int64)), 0.0)
    with pytest.raises(TypeError, match="nbx.masked_fill"):
        nbx.masked_fill(T(np.array([1, 2, 3], np.int32)), c, 0.5)


def test_lerp_both_branches():
    s = T(np.array([1.0, 1.0, 1e8, 0.0], np.float32))
    e = T(np.array([2.0, 2.0, 1.0, 1.0], np.float32))
    assert vals(nbx.lerp(s, e, 0.0))[:2] == [1.0, 1.0]          # small-weight branch: exact start
    assert vals(nbx.lerp(s, e, 1.0)) == [2.0, 2.0, 1.0, 1.0]    # large-weight branch: exact end
    got = nbx.lerp(s, e, T(np.array([0.25, 0.75, 0.5, 0.49999997], np.float32))).numpy()
    assert got.tolist()[:2] == [1.25, 1.75]
    assert got[3] == np.float32(0.49999997)


def test_addcmul_addcdiv_values():
    x = T(np.array([1.0, 0.0], np.float32))
    t1 = T(np.array([2.0, 1.0], np.float32))
    t2 = T(np.array([3.0, 4.0], np.float32))
    assert vals(nbx.addcmul(x, t1, t2)) == [7.0, 4.0]
    assert vals(nbx.addcdiv(x, t1, t2, value=2)) == [np.float32(1 + 4 / 3), 0.5]
    with pytest.raises(TypeError, match="nbx.addcmul: value=0.5 is a float"):
        nbx.addcmul(T(np.array([1], np.int32)), T(np.array([1], np.int32)), T(np.array([1], np.int32)), value=0.5)
    with pytest.raises(TypeError, match="nbx.addcdiv"):
        nbx.addcdiv(T(np.array([1], np.int32)), T(np.array([1], np.int32)), T(np.array([1], np.int32)))


def test_glu_dims_are_views():
    a = np.arange(24, dtype=np.float32).reshape(4, 6) / 7 - 1
    x = T(a)
    a64 = a.astype(np.float64)
    check_float(nbx.glu(x).numpy(), a64[:, :3] * sigmoid64(a64[:, 3:]), 0.5)
    check_float(nbx.glu(x, dim=0).numpy(), a64[:2] * sigmoid64(a64[2:]), 0.5)
    check_float(nbx.glu(x.T, dim=-1).numpy(), a64.T[:, :2] * sigmoid64(a64.T[:, 2:]), 0.5)
    assert nbx.glu(x, dim=0).shape == (2, 6)
    with pytest.raises(ValueError, match=r"nbx.glu: argument .input. has odd size 3 in the split dim 0"):
        nbx.glu(T(np.zeros((3, 2), np.float32)), dim=0)
    with pytest.raises(ValueError, match="nbx.glu: dim=2 out of range"):
        nbx.glu(x, dim=2)


def test_silu_and_mul_and_swiglu():
    a = (np.arange(16, dtype=np.float64).reshape(2, 8) - 8) / 3
    x = T(a.astype(np.float32))
    a64 = a.astype(np.float32).astype(np.float64)
    want = a64[:, :4] * sigmoid64(a64[:, :4]) * a64[:, 4:]
    check_float(nbx.silu_and_mul(x).numpy(), want, 0.5)
    check_float(nbx.swiglu(x[:, :4], x[:, 4:]).numpy(), want, 0.5)
    up = T(np.array([2.0], np.float32))                      # broadcast
    check_float(nbx.swiglu(x, up).numpy(), a64 * sigmoid64(a64) * 2.0, 0.5)
    got = nbx.swiglu(T(np.array([-inf, 0.0], np.float32)), T(np.array([1.0, -1.0], np.float32))).numpy()
    assert got[0] == 0 and np.signbit(got[0]) and got[1] == 0 and np.signbit(got[1])


def test_dropout_inference_is_a_copy():
    x = T(np.array([1.0, nan, -0.0], np.float32))
    y = nbx.dropout(x, p=0.3)
    assert y.data_ptr() != x.data_ptr() and np.array_equal(y.numpy(), x.numpy(), equal_nan=True)
    with pytest.raises(NotImplementedError, match="nbx.dropout: train=True"):
        nbx.dropout(x, train=True)
    with pytest.raises(ValueError, match="nbx.dropout: p=1.5"):
        nbx.dropout(x, p=1.5)


def test_bf16_to_fp16_and_in_place():
    v = np.array([1.0, -2.5, 3e38, -1e5, 65504.0, 65520.0, 1e-40, 6e-8, 3e-5, nan, -inf, -0.0],
                 dtype=np.float64).astype(ml_dtypes.bfloat16)
    with np.errstate(over="ignore"):
        want = v.astype(np.float32).astype(np.float16)       # overflow -> inf, subnormals kept
    src = T(v.view(np.int16))
    with np.errstate(over="ignore"):
        got = nbx.bf16_to_fp16(src).numpy()
    assert got.dtype == np.float16
    assert np.array_equal(got.view(np.uint16)[~np.isnan(got)], want.view(np.uint16)[~np.isnan(want)])
    assert np.isnan(got[9])
    assert got[7] != 0 and got[7] == np.float16(6e-8)       # a float16 subnormal survives
    out = nbx.Tensor(src.untyped_storage(), src.shape, src.stride(), src.storage_offset(), nbx.float16)
    assert nbx.bf16_to_fp16(src, out=out) is out
    assert np.array_equal(out.numpy().view(np.uint16)[~np.isnan(want)], want.view(np.uint16)[~np.isnan(want)])
    with pytest.raises(TypeError, match="nbx.bf16_to_fp16"):
        nbx.bf16_to_fp16(T(np.array([1.0], np.float32)))


def test_activation_extremes():
    x = T(np.array([100.0, -100.0, 1e-30, -1e-30, 0.0], np.float32))
    x64 = np.array([100.0, -100.0, 1e-30, -1e-30, 0.0])
    sp = nbx.softplus(x).numpy()
    assert sp[0] == 100 and sp[1] == np.float32(math.exp(-100)) and sp[2] == sp[3] == np.float32(math.log(2))
    ls = nbx.log_sigmoid(x).numpy()
    assert ls[1] == -100 and ls[0] == np.float32(-math.exp(-100)) and ls[2] == np.float32(-math.log(2))
    sg = nbx.sigmoid(x).numpy()
    assert sg[0] == 1 and sg[1] == np.float32(math.exp(-100)) and sg[2] == 0.5 and not np.isnan(sg).any()
    sg = nbx.sigmoid(T(np.array([inf, -inf, 1e4, -1e4]))).numpy()
    assert sg.tolist() == [1.0, 0.0, 1.0, 0.0]
    check_float(nbx.silu(x).numpy(), x64 * sigmoid64(x64), 0.5)
    check_float(nbx.mish(T(np.array([-200.0, -20.0, 30.0, 1e-30], np.float32))).numpy(),
                [-200 * math.exp(-200), -20 * math.tanh(math.log1p(math.exp(-20))), 30.0, 1e-30 * math.tanh(math.log(2))], 0.5)
    g = nbx.gelu(T(np.array([-10.0, 10.0, -30.0], np.float32)), approximate="tanh").numpy()
    assert g[1] == 10 and g[0] < 0 and g[0] > -1e-30 and g[2] == 0
    # softplus's branch is decided on the exact x*beta: 21 > 20 gives 21 exactly, 19.5 does not
    assert vals(nbx.softplus(T(np.array([21.0, 19.5], np.float64))))[0] == 21.0
    assert vals(nbx.softplus(T(np.array([19.5], np.float64)))) == [19.5 + math.log1p(math.exp(-19.5))]


def test_elu_near_zero_within_2_ulp_float32():
    x = -np.exp2(-np.arange(1, 140, 0.5)).astype(np.float32)     # down into the subnormals
    x64 = x.astype(np.float64)
    for op, want in [("elu", np.expm1(x64)), ("celu", np.expm1(x64)),
                     ("selu", SELU_S * SELU_A * np.expm1(x64))]:
        check_float(getattr(nbx, op)(T(x)).numpy(), want, 2, where=[x])
    got = nbx.elu(T(np.array([-1e-8], np.float32))).numpy()[0]
    assert got == np.float32(math.expm1(np.float64(np.float32(-1e-8))))


def test_relu_and_threshold_semantics():
    got = nbx.relu(T(np.array([-0.0, nan, -3.0, 2.0], np.float32))).numpy()
    assert got[0] == 0 and not np.signbit(got[0]) and np.isnan(got[1]) and got[3] == 2
    got = nbx.threshold(T(np.array([nan, 1.0, 0.5, 0.6], np.float32)), 0.5, 9.0).numpy()
    assert np.isnan(got[0]) and got[1:].tolist() == [1.0, 9.0, np.float32(0.6)]
    got = nbx.threshold(T(np.array([1, 2, 3], np.int8)), 2.5, -1)
    assert got.dtype is nbx.int8 and vals(got) == [-1, -1, 3]
    with pytest.raises(TypeError, match="nbx.threshold: argument 'value' is required"):
        nbx.threshold(T(np.array([1.0], np.float32)), 0.5)


def test_unary_sign_frac_and_near_zero_named_cases():
    f = T(np.array([-0.0, nan, -3.5, 2.0, inf], np.float32))
    s = nbx.sign(f).numpy()
    assert s[0] == 0 and np.signbit(s[0]) and np.isnan(s[1]) and s[2:].tolist() == [-1, 1, 1]
    fr = nbx.frac(f).numpy()
    assert fr[0] == 0 and not np.signbit(fr[0]) and fr[2] == -0.5 and fr[3] == 0 and np.isnan(fr[4])
    assert vals(nbx.signbit(f)) == [True, False, True, False, False]
    assert vals(nbx.square(T(np.array([-3, 200], np.int16)))) == [9, wrap([40000], int16)[0]]
    assert vals(nbx.log1p(T(np.array([-1.0, 1e-30], np.float32)))) == [-inf, np.float32(1e-30)]
    assert vals(nbx.expm1(T(np.array([1e-30], np.float32)))) == [np.float32(1e-30)]


def test_views_match_contiguous():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5) / 9 - 3
    x = T(a)
    v = x.permute(2, 0, 1)[1:, :, ::2]
    c = nbx.contiguous(v)
    for op in ("mish", "softplus", "erfc", "angle"):
        assert np.array_equal(getattr(nbx, op)(v).numpy(), getattr(nbx, op)(c).numpy()), op
    w = T(np.array([0.25], np.float32)).expand(4, 3, 2)
    assert np.array_equal(nbx.lerp(v, c, w).numpy(), nbx.lerp(c, c, 0.25).numpy())
    i = T(np.arange(24, dtype=np.int32).reshape(4, 6))
    assert np.array_equal(nbx.bitwise_left_shift(i.T, 3).numpy(), nbx.bitwise_left_shift(nbx.contiguous(i.T), 3).numpy())
    out = nbx.empty((3, 4, 5), dtype=nbx.float32)
    assert nbx.hypot(x, x, out=out) is out
    assert nbx.silu(x, out=x) is x                           # in place, aliasing the input
    a64 = a.astype(np.float64)
    check_float(x.numpy(), a64 * sigmoid64(a64), 0.5)


def test_registered_names_and_parameters():
    import inspect
    expect = {"gelu": ["approximate"], "leaky_relu": ["negative_slope"], "elu": ["alpha"], "celu": ["alpha"],
              "softplus": ["beta", "threshold"], "threshold": ["threshold", "value"], "glu": ["dim"],
              "dropout": ["p", "train"], "nan_to_num": ["nan", "posinf", "neginf"], "clamp": ["min", "max"],
              "masked_fill": ["value"], "addcmul": ["value"], "addcdiv": ["value"]}
    for name, params in expect.items():
        sig = inspect.signature(getattr(nbx, name))
        assert [p for p in sig.parameters if p in params] == params, name
    for name in ("relu silu gelu sigmoid tanh hardsigmoid hardswish leaky_relu elu celu selu mish softplus "
                 "log_sigmoid threshold glu swiglu silu_and_mul dropout nan_to_num bitwise_not logical_not "
                 "angle bf16_to_fp16 expm1 log1p log2 log10 sinh cosh asin acos atan asinh acosh atanh cbrt "
                 "erfc sign signbit square frac fmod pow fmax fmin clamp clamp_min where masked_fill lerp "
                 "addcmul addcdiv atan2 hypot copysign bitwise_and bitwise_or bitwise_xor bitwise_left_shift "
                 "bitwise_right_shift logical_and logical_or logical_xor").split():
        assert name in nbx.OPS, name
    assert vals(nbx.gelu(T(np.array([1.0], np.float32)), approximate="none")) != []
    with pytest.raises(ValueError, match="nbx.gelu: approximate='erf' is not allowed"):
        nbx.gelu(T(np.array([1.0], np.float32)), approximate="erf")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_addcdiv_keeps_its_accuracy_when_input_cancels_the_quotient(dtype):
    """x ~ -t1/t2: evaluated as x + t1/t2 in float64 the rounded quotient's error is amplified by
    the cancellation (39.6 float32 ulp at x = -0.6826); (x*t2 + t1)/t2 rounds the numerator once."""
    from fractions import Fraction as Fr
    import math
    d = nbx.DTYPES[dtype]
    rng = np.random.default_rng(0)
    n = 1500
    bits = 24 if dtype == "float32" else 8
    t1 = rng.integers(1 << (bits - 1), 1 << bits, n).astype(np.float64)
    t2 = rng.integers(1 << (bits - 1), 1 << bits, n).astype(np.float64)
    x, t1, t2 = ((-(t1 / t2)).astype(d.np), t1.astype(d.np), t2.astype(d.np))
    got = nbx.addcdiv(nbx.from_numpy(x), nbx.from_numpy(t1), nbx.from_numpy(t2)).numpy()
    p = 24 if dtype == "float32" else 8
    worst = 0.0
    for a, b, c, g in zip(x.astype(np.float64), t1.astype(np.float64), t2.astype(np.float64),
                          got.astype(np.float64)):
        exact = Fr(float(a)) + Fr(float(b)) / Fr(float(c))
        if exact:
            e = max(math.frexp(float(abs(exact)))[1] - 1, -126)
            worst = max(worst, float(abs(Fr(float(g)) - exact) / Fr(2) ** (e - (p - 1))))
    assert worst <= 0.5 + 2.0 ** -20, worst


def test_lerp_keeps_its_accuracy_when_the_terms_cancel():
    """s + w*(e - s) ~ 0 with s and e far apart: e - s rounds in float64 and the cancelling sum
    amplified it (up to 1.678e7 float32 ulp on the H200's stratified sample); s - w*s + w*e with
    exact products and TwoSums rounds once."""
    from fractions import Fraction as Fr
    import math
    rng = np.random.default_rng(0)
    n = 1500
    s = np.ldexp(rng.uniform(-1, 1, n), rng.integers(-40, 10, n)).astype(np.float32)
    e = np.ldexp(rng.uniform(-1, 1, n), rng.integers(-5, 30, n)).astype(np.float32)
    w = (-(s.astype(np.float64)) / (e.astype(np.float64) - s)).astype(np.float32)
    got = nbx.lerp(nbx.from_numpy(s), nbx.from_numpy(e), nbx.from_numpy(w)).numpy()
    worst = 0.0
    for a, b, c, g in zip(s, e, w, got):
        exact = Fr(float(a)) + Fr(float(c)) * (Fr(float(b)) - Fr(float(a)))
        if exact:
            k = max(math.frexp(float(abs(exact)))[1] - 1, -126)
            worst = max(worst, float(abs(Fr(float(g)) - exact) / Fr(2) ** (k - 23)))
    assert worst <= 0.5 + 2.0 ** -20, worst
