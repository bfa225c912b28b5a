"""An anchor nbx did not write: MPFR (through gmpy2) against nbx's oracles, bank and correct rounding.

Every other precision test holds nbx to its own oracles; a constant or a formula wrong in all of
them, with the bank regenerated from it, would pass them all. MPFR's functions are correctly rounded
in any precision and exponent range, so a gmpy2 context of the format's precision and range, with
subnormals (`subnormalize=True`), rounds a value exactly as nbx's bank must:

    float32   precision 24, emin -148, emax 128     (gmpy2.ieee(32))
    float16   precision 11, emin -23, emax 16       (gmpy2.ieee(16))
    bfloat16  precision 8, emin -132, emax 128      (float32's range, 8 bits)
    float64   precision 53, emin -1073, emax 1024   (gmpy2.ieee(64))

MPFR's exponents are those of a significand in [1/2, 1): the largest finite value (1 - 2^-p) 2^emax
and the smallest subnormal 2^(emin - 1).

- Every case of the bank's files (default parameters; float16, bfloat16, float32, float64) of the
  ops MPFR has (one MPFR call, correctly rounded), and of activation ops composed in MPFR at 300
  bits (2252 for float64, whose subnormal x/2 needs the x^2 term) and rounded once (checked at twice
  that), equals MPFR bit for bit (NaN: any payload).
- Published hard-to-round inputs (CORE-MATH's worst cases of atan2f, hypotf, powf and of binary64
  exp, log), rounded by nbx's Ziv loop on the op's mpmath oracle, equal MPFR's results.
- Sampled hard regions (near overflow and underflow thresholds, subnormal results, arguments
  near 1, large trigonometric arguments, tails) likewise.
- The activation constants (SELU's alpha and scale, GELU's sqrt(2/pi), 1/sqrt(2) and 0.044715)
  recomputed in MPFR from their defining expressions equal those of nbx's oracles, device oracles
  and kernels to within the precision each states.

gmpy2 is a test dependency (the `test` extra), never needed at run time; without it the module is
skipped. With it installed mpmath computes on gmpy2's mpz: the oracles' exact arithmetic is checked
under that backend too (test_exact_oracles_under_mpmaths_gmpy_backend).
"""
from __future__ import annotations

import math
import zlib
from pathlib import Path

import numpy as np
import pytest

gmpy2 = pytest.importorskip("gmpy2")
from gmpy2 import mpfr  # noqa: E402

import ml_dtypes  # noqa: E402

import mpmath  # noqa: E402

from nbx.oracles import ORACLES, evaluate_mp  # noqa: E402
from nbx.oracles.formats import FORMATS  # noqa: E402
from nbx.oracles.rounding import round_correctly  # noqa: E402

BANK = Path(__file__).resolve().parent.parent / "reference_bank"

CONTEXT = {"float32": dict(precision=24, emin=-148, emax=128),
           "float16": dict(precision=11, emin=-23, emax=16),
           "bfloat16": dict(precision=8, emin=-132, emax=128),
           "float64": dict(precision=53, emin=-1073, emax=1024)}
NP = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float64": np.float64}
UINT = {"float32": np.uint32, "float16": np.uint16, "bfloat16": np.uint16, "float64": np.uint64}
WIDE = 300                              # bits of a composed evaluation, before its one rounding


def fmt_context(dtype):
    return gmpy2.context(subnormalize=True, round=gmpy2.RoundToNearest, **CONTEXT[dtype])


def wide_context(bits=WIDE):
    return gmpy2.context(precision=bits, round=gmpy2.RoundToNearest)


def value(bits: int, dtype: str) -> float:
    return float(np.array(bits, dtype=UINT[dtype]).view(NP[dtype]).astype(np.float64))


def to_bits(x: float, dtype: str) -> int:
    return int(np.array(x, dtype=np.float64).astype(NP[dtype]).view(UINT[dtype]))


def exact(x: float):
    """A float as an mpfr, exactly (53 bits hold every value of the four formats)."""
    return mpfr(x, 53)


# ---------------------------------------------------------------------------------------- the ops
# One MPFR call each: the result is correctly rounded in the current context. Operand order is
# nbx's (atan2(a, b) is atan(a/b) in the quadrant of (b, a), MPFR's atan2(y, x) with y = a).
MPFR_OPS = {
    "exp": gmpy2.exp, "exp2": gmpy2.exp2, "expm1": gmpy2.expm1, "log": gmpy2.log, "log2": gmpy2.log2,
    "log10": gmpy2.log10, "log1p": gmpy2.log1p, "sin": gmpy2.sin, "cos": gmpy2.cos, "tan": gmpy2.tan,
    "asin": gmpy2.asin, "acos": gmpy2.acos, "atan": gmpy2.atan, "sinh": gmpy2.sinh, "cosh": gmpy2.cosh,
    "tanh": gmpy2.tanh, "asinh": gmpy2.asinh, "acosh": gmpy2.acosh, "atanh": gmpy2.atanh, "erf": gmpy2.erf,
    "erfc": gmpy2.erfc, "sqrt": gmpy2.sqrt, "rsqrt": gmpy2.rec_sqrt, "cbrt": gmpy2.cbrt,
    "reciprocal": lambda x: gmpy2.div(1, x), "square": lambda x: gmpy2.mul(x, x), "neg": lambda x: -x,
    "abs": abs, "add": gmpy2.add, "sub": gmpy2.sub, "mul": gmpy2.mul, "div": gmpy2.div, "atan2": gmpy2.atan2,
    "hypot": gmpy2.hypot, "pow": lambda a, b: a ** b, "fmod": gmpy2.fmod,
}


# Activations composed in MPFR at WIDE bits from their definitions (docs/OPS.md), with the SELU and
# GELU constants computed from their defining expressions (selu_constants, below), never copied
# from nbx. Finite inputs only: at an infinity the formulas give inf * 0, where nbx's oracles take
# the limit (nbx/oracles/activations.py).
def selu_constants():
    """SELU's alpha and scale (Klambauer et al., 2017, eqs. 14-15: the fixed point of mean 0 and
    variance 1), in the current context."""
    e, pi = gmpy2.exp(1), gmpy2.const_pi()
    c = gmpy2.erfc(1 / gmpy2.sqrt(2))
    alpha = -gmpy2.sqrt(2 / pi) / (c * gmpy2.sqrt(e) - 1)
    scale = (1 - c * gmpy2.sqrt(e)) * gmpy2.sqrt(2 * pi) / gmpy2.sqrt(
        2 * gmpy2.erfc(gmpy2.sqrt(2)) * e ** 2 + pi * c ** 2 * e - 2 * (2 + pi) * c * gmpy2.sqrt(e) + pi + 2)
    return alpha, scale


def _selu(x):
    alpha, scale = selu_constants()
    return scale * (x if x > 0 else alpha * gmpy2.expm1(x))


def _softplus(x):
    # beta = 1, threshold = 20 (ATen's defaults): x where x > 20
    return x if x > 20 else gmpy2.log1p(gmpy2.exp(x))


COMPOSED = {
    "sigmoid": lambda x: 1 / (1 + gmpy2.exp(-x)),
    "silu": lambda x: x / (1 + gmpy2.exp(-x)),
    "gelu": lambda x: x / 2 * gmpy2.erfc(-x / gmpy2.sqrt(2)),
    # 0.5x(1 + tanh(u)) = x / (1 + exp(-2u)): 1 + tanh(u) cancels past 300 bits for u << 0
    "gelu@approximate=tanh": lambda x: x / (1 + gmpy2.exp(
        -2 * gmpy2.sqrt(2 / gmpy2.const_pi()) * (x + mpfr("0.044715") * x ** 3))),
    "elu": lambda x: x if x > 0 else gmpy2.expm1(x),
    "celu": lambda x: x if x > 0 else gmpy2.expm1(x),
    "celu@alpha=2.0": lambda x: x if x > 0 else 2 * gmpy2.expm1(x / 2),
    "elu@alpha=0.5": lambda x: x if x > 0 else gmpy2.expm1(x) / 2,
    "selu": _selu,
    "softplus": _softplus,
    # -log(1 + exp(-x)) = min(x, 0) - log1p(exp(-|x|)): exp(-x) overflows MPFR's range for x << 0
    "log_sigmoid": lambda x: min(x, mpfr(0)) - gmpy2.log1p(gmpy2.exp(-abs(x))),
    "mish": lambda x: x * gmpy2.tanh(gmpy2.log1p(gmpy2.exp(x))),
    "hardsigmoid": lambda x: min(max((x + 3) / 6, mpfr(0)), mpfr(1)),
}
# ops whose zero sign nbx leaves open (docs/OPS.md; their oracles' zero_sign_matters is False)
ZERO_SIGN_OPEN = {"log_sigmoid"}

# Where nbx's documented semantics differ from MPFR's on purpose (docs/OPS.md), the bank must hold
# nbx's value instead: rsqrt(-0) is -inf, IEEE 754's rSqrt(-0) (= 1/sqrt(-0)) as in ATen; MPFR's
# rec_sqrt gives +inf. (pow's special cases, C99's and IEEE's, are MPFR's too: no entry.)
SEMANTIC = {
    "rsqrt": (lambda xs: xs[0] == 0 and math.copysign(1.0, xs[0]) < 0, lambda xs: -math.inf),
}


def mpfr_bits(op: str, xs: tuple, dtype: str):
    """MPFR's correctly rounded result bits of op at the float inputs xs, or None where the op is
    composed and the evaluations at w and 2w bits round differently (a value within 2^-(w-10) of a
    rounding boundary: none seen). w = max(300, 2 (p - emin)) holds the x^2 term of a subnormal x
    that moves x/2 off a midpoint (silu(2^-1074) = 2^-1075 + 2^-2150 + ...: up, to 2^-1074)."""
    if op in MPFR_OPS:
        with fmt_context(dtype):
            r = MPFR_OPS[op](*(exact(x) for x in xs))
            return to_bits(float(r), dtype)
    results = []
    ctx = CONTEXT[dtype]
    wide = max(WIDE, 2 * (ctx["precision"] - ctx["emin"]))
    for bits in (wide, 2 * wide):
        with wide_context(bits):
            y = COMPOSED[op](*(exact(x) for x in xs))
        with fmt_context(dtype):
            results.append(to_bits(float(mpfr(y)), dtype))
    return results[0] if results[0] == results[1] else None


def _same(a: int, b: int, dtype: str, zero_sign: bool = True) -> bool:
    va, vb = value(a, dtype), value(b, dtype)
    if math.isnan(va) or math.isnan(vb):
        return math.isnan(va) and math.isnan(vb)
    if not zero_sign and va == 0 and vb == 0:
        return True
    return a == b


INT_BITS = {"bool": (1, False), "uint8": (8, False), "int8": (8, True), "int16": (16, True), "int32": (32, True),
            "int64": (64, True)}


def operand_value(bits: int, dtype: str) -> float:
    """An operand as the op computes on it: a float as itself; an integer or bool (two's complement
    bits) as PyTorch's promotion loads it for float math, rounded once to float32 (by MPFR here)."""
    if dtype in NP:
        return value(bits, dtype)
    width, signed = INT_BITS[dtype]
    v = bits - (1 << width) if signed and bits >> (width - 1) else bits
    with fmt_context("float32"):
        return float(mpfr(v))


def read_bank(label: str, dtype: str):
    """(inputs as float tuples, expected bits, output dtype) of reference_bank/<label>/<dtype>.txt,
    parsed here (the harness's loader is not the thing under test)."""
    path = BANK / label / f"{dtype}.txt"
    lines = path.read_text().splitlines()
    header = dict(kv.split("=", 1) for kv in lines[0].split() if "=" in kv)
    operands, out = header["operands"].split(","), header["out"]
    rows = []
    for line in lines:
        if not line or line.startswith("#"):
            continue
        lhs, rhs = line.split("#")[0].split("->")
        ins = tuple(operand_value(int(h, 16), d) for h, d in zip(lhs.split(), operands))
        rows.append((ins, int(rhs.split()[0], 16)))
    return rows, out


def _out_dtype(label: str, dtype: str):
    first = (BANK / label / f"{dtype}.txt").read_text().split("\n", 1)[0]
    return dict(kv.split("=", 1) for kv in first.split() if "=" in kv)["out"]


# every default-parameter bank file (and the parameter variants COMPOSED names) with a float result:
# float operands, and integer or bool operands that float math loads as float32
BANK_CASES = [(label, dtype) for label in sorted(set(MPFR_OPS) | set(COMPOSED))
              for dtype in ("float16", "bfloat16", "float32", "float64", *INT_BITS)
              if (BANK / label / f"{dtype}.txt").exists() and _out_dtype(label, dtype) in NP]


def test_contexts_are_ieee_formats():
    for bits, dtype in ((16, "float16"), (32, "float32"), (64, "float64")):
        ieee = gmpy2.ieee(bits)
        assert (ieee.precision, ieee.emin, ieee.emax) == tuple(CONTEXT[dtype][k] for k in ("precision", "emin", "emax"))
    for dtype, f in FORMATS.items():
        largest = float(ml_dtypes.finfo(NP[dtype]).max)
        with fmt_context(dtype):
            top = mpfr(2) ** (f.emax + 1)
            assert float(top) == math.inf and float(gmpy2.next_below(top)) == largest
            tiny = mpfr(2) ** (f.emin - f.precision + 1)
            assert float(tiny) == 2.0 ** (f.emin - f.precision + 1)
            assert float(tiny * mpfr("0.75")) == float(tiny)            # rounds to the smallest subnormal
            assert float(tiny * mpfr("0.25")) == 0.0


@pytest.mark.parametrize("label, dtype", BANK_CASES, ids=[f"{op}-{d}" for op, d in BANK_CASES])
def test_bank_equals_mpfr(label, dtype):
    op = label.split("@")[0]
    rows, dtype = read_bank(label, dtype)          # from here on, dtype is the result's
    assert rows, (label, dtype)
    differs, documented = SEMANTIC.get(op, (lambda xs: False, None))
    composed = label in COMPOSED
    zero_sign = op not in ZERO_SIGN_OPEN
    bad, checked, undecided = [], 0, 0
    for xs, want in rows:
        if composed and not all(math.isfinite(x) for x in xs):
            continue
        if differs(xs):
            got = to_bits(documented(xs), dtype)
        else:
            got = mpfr_bits(label if composed else op, xs, dtype)
        if got is None:
            undecided += 1
            continue
        checked += 1
        if not _same(got, want, dtype, zero_sign):
            bad.append((xs, hex(want), hex(got)))
    assert not bad, f"{label} {dtype}: {len(bad)} of {checked} bank cases differ from MPFR " \
                    f"(inputs, bank, MPFR): {bad[:5]}"
    assert checked >= len(rows) // 2 and undecided <= 1, (checked, undecided, len(rows))



SPECIAL_OPS = sorted(op for op in set(MPFR_OPS) | {k for k in COMPOSED if "@" not in k} if ORACLES[op].specials)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_special_value_tables_equal_mpfr(dtype):
    """Each row of the oracles' special tables (nbx/oracles/*.py: values at zeros, infinities, NaN and the
    rows' constants, pi, pi/2, log 2, -scale*alpha), rounded by nbx's Ziv loop as the bank is, equals
    MPFR at the same inputs: the bank holds only some of these inputs."""
    bad, n = [], 0
    for op in SPECIAL_OPS:
        differs, documented = SEMANTIC.get(op, (lambda xs: False, None))
        for xs, _ in ORACLES[op].specials:
            xs = tuple(float(x) for x in xs)
            if differs(xs):
                want = to_bits(documented(xs), dtype)
            elif op in MPFR_OPS or all(math.isfinite(x) for x in xs):
                want = mpfr_bits(op, xs, dtype)
            else:
                want = _composed_at_infinity(op, xs, dtype)
            if want is None:
                continue
            n += 1
            got = nbx_bits(op, xs, dtype)
            if not _same(got, want, dtype, op not in ZERO_SIGN_OPEN):
                bad.append((op, xs, hex(got), hex(want)))
    assert n > 100 and not bad, \
        f"{dtype}: {len(bad)} of {n} special rows differ from MPFR (op, inputs, nbx, MPFR): {bad}"


def _composed_at_infinity(op, xs, dtype):
    """A composed op at an infinite input: MPFR's formula there, or where it forms inf * 0 (NaN),
    the limit nbx's oracle takes, as MPFR's values at +-2^64 and +-2^128 rounded (None if those
    disagree, or for a NaN input)."""
    if any(math.isnan(x) for x in xs):
        return None
    with wide_context():
        y = COMPOSED[op](*(exact(x) for x in xs))
    if not gmpy2.is_nan(y):
        with fmt_context(dtype):
            return to_bits(float(mpfr(y)), dtype)
    probes = set()
    for e in (64, 128):
        with wide_context():
            y = COMPOSED[op](*(exact(math.copysign(2.0 ** e, x)) if math.isinf(x) else exact(x) for x in xs))
        with fmt_context(dtype):
            probes.add(to_bits(float(mpfr(y)), dtype))
    return probes.pop() if len(probes) == 1 else None


# ---------------------------------------------------------------------------------------- hard cases
def nbx_bits(op: str, xs: tuple, dtype: str) -> int:
    """nbx's correct rounding: Ziv's loop (nbx/oracles/rounding.round_correctly) on the op's mpmath
    oracle, as the bank is made. An exact tie comes back unresolved, rounded to even: kept."""
    oracle = ORACLES[op]
    rr = round_correctly(lambda *_: evaluate_mp(oracle, xs, {}), xs, FORMATS[dtype])
    return rr.bits


def _check_cases(op, dtype, cases):
    bad = []
    for xs in cases:
        xs = tuple(float(x) for x in xs)
        got, want = nbx_bits(op, xs, dtype), mpfr_bits(op, xs, dtype)
        if not _same(got, want, dtype):
            bad.append(([x.hex() for x in xs], hex(got), hex(want)))
    assert not bad, f"{op} {dtype}: {len(bad)} of {len(cases)} differ from MPFR (inputs, nbx, MPFR): {bad[:5]}"


# Inputs are facts: CORE-MATH's worst cases (src/binary32/atan2/atan2f.wc: y,x with 48 to 52 identical
# bits after the round bit; src/binary32/hypot/hypotf.wc: the cases for several libraries, overflow,
# and others; src/binary32/pow/powf.wc: non-regression cases and those with 48 to 51 identical bits;
# src/binary64/exp/exp.wc and src/binary64/log/log.wc, the latter from Lefevre's hrcases).
WORST = {
    ("atan2", "float32"): [
        "0x1.b8748cp-2,-0x1.9cf606p23", "0x1.df84fp-2,-0x1.7a931p21", "0x1.5f325p3,-0x1.09e3e8p21",
        "0x1.b874ecp5,-0x1.f2a172p23", "0x1.0d70ap11,-0x1.618a88p21", "0x1.c84ca8p21,-0x1.00b24ap23",
        "0x1.9cf606p49,0x1.b8748cp23", "0x1.824c46p37,0x1.96c50cp23", "0x1.3ee9f4p37,0x1.7e87d2p23",
        "0x1.24c4e8p45,0x1.caab8ap23", "0x1.426a12p45,-0x1.ce2106p23", "0x1.b89206p+0,0x1.461a6p+24"],
    ("hypot", "float32"): [
        "0x1.b8e50ap-52,-0x1.db1e78p-64", "0x1.03b54cp-33,0x1.6ca6bep-45", "0x1.e2eff6p+97,-0x1.044cb2p+108",
        "-0x1.6b05c4p-127,0x1.6b3146p-126", "0x1.26b188p-127,-0x1.a4f2fp-128", "0x1.3ac98p+67,-0x1.ba5ec2p+77",
        "0x1.fffffep127,0x1.fffffep115", "0x1.fffffep127,0x1p-149", "0x1.0000ap+26,0x1.db0a7ap+23",
        "0x1.87fffcp+35,0x1.bffffep+23", "0x1.c1fff8p+35,0x1.dffffcp+23", "0x1.fffffap+34,0x1.fffffep+23"],
    ("pow", "float32"): [
        "0x1.1058p+0,0x1.ap+64", "0x1.1058p+0,-0x1.ap+64", "-0x1.4p+0,0x1.c6992p+19", "0x1.8fdb0ep-21,0x1.a31bp-102",
        "0x1.9a1p-20,0x1.ep+0", "0x1.767d72p-31,0x1.002808p+0", "0x1.2e9178p-119,0x1.023178p+0",
        "0x1.aa25fp-122,0x1.04d8e4p+0", "0x1.9b35c6p+6,0x1.053cc8p+0", "0x1.49b684p-69,0x1.1509f6p+0",
        "0x1.cc53e8p-96,0x1.1bb752p+0", "0x1.95c6c2p+113,0x1.1f771cp+0", "0x1.f4ff26p-81,0x1.2a584p+0",
        "0x1.4ec09p-72,0x1.27766ep+0"],
    ("exp", "float64"): [
        "0x1.0122ef37212ebp-1", "0x1.00d48a707b93ep-1", "0x1.0036671ff87efp-1", "0x1.01ae25c609a38p-1",
        "0x1.0303c5638675fp-1", "0x1.0582220d9645ep-1", "0x1.1058a8cd8e069p-1", "0x1.075a4eac01d43p+0"],
    ("log", "float64"): [
        "0x1.a6ae5142326b5p+0", "0x1.b072ab04ee9bfp+0", "0x1.bbfff9457d5c3p+0", "0x1.1e852e6951306p+1",
        "0x1.dafdb40362537p+0", "0x1.000976581ce4ep+1", "0x1.2c86090791524p+1", "0x1.967e2d739876bp+1"],
}


@pytest.mark.parametrize("op, dtype", sorted(WORST), ids=[f"{o}-{d}" for o, d in sorted(WORST)])
def test_published_worst_cases_round_as_mpfr(op, dtype):
    cases = [tuple(float.fromhex(h) for h in line.split(",")) for line in WORST[(op, dtype)]]
    for xs in cases:
        assert all(float(np.array(x).astype(NP[dtype])) == x for x in xs), xs   # values of the dtype
    _check_cases(op, dtype, cases)


def _in(dtype, x):
    with np.errstate(all="ignore"):
        return np.unique(np.asarray(x, np.float64).astype(NP[dtype]).astype(np.float64))


def _near(dtype, center, ulps, n, rng):
    """n values of the dtype within `ulps` of its value nearest `center`, both sides."""
    c = np.array(center, np.float64).astype(NP[dtype]).view(UINT[dtype]).astype(np.int64)
    k = rng.integers(-ulps, ulps + 1, n)
    return (c + k).astype(UINT[dtype]).view(NP[dtype]).astype(np.float64)


def _regions(op, dtype, rng, n=24):
    """Inputs where op is hardest to round or nearest its range's edges, for dtype."""
    f = FORMATS[dtype]
    big, emin = float(np.finfo(np.float32).max) if dtype != "float16" else 65504.0, f.emin
    u = rng.uniform
    ln_max = math.log(big)
    ln_sub = (emin - f.precision) * math.log(2)
    near1 = _near(dtype, 1.0, 1 << min(10, f.precision - 2), n, rng)
    tiny = u(1, 2, n) * 2.0 ** rng.integers(emin + 1, -f.precision, n) * rng.choice([-1, 1], n)
    pick = {
        "exp": [u(ln_max - 0.5, ln_max + 0.1, n), u(ln_sub - 0.5, emin * math.log(2), n), tiny],
        "exp2": [u(f.emax - 0.5, f.emax + 1.1, n), u(emin - f.precision - 1, emin, n), tiny],
        "expm1": [tiny, u(ln_max - 0.5, ln_max + 0.1, n), u(-1e-3, 1e-3, n)],
        "log": [near1, u(0, 1, n) * 2.0 ** (emin - rng.integers(0, f.precision, n))],
        "log2": [near1], "log10": [near1, 10.0 ** rng.integers(-4, 5, n) * (1 + u(-1e-3, 1e-3, n))],
        "log1p": [tiny, u(-1 + 2.0 ** -(f.precision - 1), -0.99, n)],
        "sin": [u(1, 2, n) * 2.0 ** rng.integers(10, 30 if dtype == "float16" else 120, n),
                rng.integers(1, 1000, n) * math.pi / 2, tiny],
        "cos": [u(1, 2, n) * 2.0 ** rng.integers(10, 120, n), (rng.integers(0, 1000, n) + 0.5) * math.pi],
        "tan": [u(1, 2, n) * 2.0 ** rng.integers(10, 120, n), (rng.integers(0, 1000, n) + 0.5) * math.pi],
        "sinh": [u(ln_max, ln_max + 0.8, n), tiny], "cosh": [u(ln_max, ln_max + 0.8, n), tiny, u(-12, 12, n)],
        "tanh": [tiny, u(8, 10, n)],
        "asin": [_near(dtype, 1.0, 64, n, rng), tiny], "acos": [_near(dtype, 1.0, 64, n, rng)],
        "atanh": [_near(dtype, 1.0, 64, n, rng), tiny],
        "acosh": [_near(dtype, 1.0, 64, n, rng), u(1, 2, n) * 2.0 ** rng.integers(0, 14, n)],
        "asinh": [tiny, u(1, 2, n) * 2.0 ** rng.integers(60, 127, n)],
        "erf": [tiny, u(3.5, 4.5, n)], "erfc": [u(9, 10.1, n), u(-4, -3, n), u(3.5, 4, n)],
        "cbrt": [tiny, u(0, 1, n) * 2.0 ** (emin - rng.integers(0, f.precision, n))],
        "rsqrt": [u(0, 1, n) * 2.0 ** (emin - rng.integers(0, f.precision, n)), u(0.25, 1, n) * big],
        "pow": [(near1, u(-1, 1, n) * 2.0 ** rng.integers(8, 24, n)),
                (u(0.5, 2, n), u(-1, 1, n) * (f.emax + 30)),
                (u(1, 2, n) * 2.0 ** rng.integers(emin, f.emax, n), u(-1.5, 1.5, n))],
        "atan2": [(tiny, u(1, 2, n) * 2.0 ** rng.integers(10, f.emax, n)),
                  (u(1, 2, n) * 2.0 ** rng.integers(10, f.emax, n), tiny),
                  (u(-1, 1, n), -u(0.5, 2, n))],
        "hypot": [(u(1, 2, n) * big / 2, u(1, 2, n) * big / 2),
                  (u(1, 2, n), u(1, 2, n) * 2.0 ** -rng.integers(f.precision // 2, f.precision + 4, n)),
                  (tiny, tiny)],
    }[op]
    out = []
    for p in pick:
        if isinstance(p, tuple):
            with np.errstate(over="ignore"):
                a, b = (np.asarray(x, np.float64).astype(NP[dtype]).astype(np.float64) for x in p)
            keep = np.isfinite(a) & np.isfinite(b)
            out += list(zip(a[keep], b[keep]))
        else:
            out += [(x,) for x in _in(dtype, p) if math.isfinite(x)]
    return out


REGION_OPS = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh",
              "asin", "acos", "atanh", "acosh", "asinh", "erf", "erfc", "cbrt", "rsqrt", "pow", "atan2", "hypot")
REGION_CASES = [(op, d) for op in REGION_OPS for d in ("float32", "float16", "bfloat16")]


@pytest.mark.parametrize("op, dtype", REGION_CASES, ids=[f"{o}-{d}" for o, d in REGION_CASES])
def test_sampled_hard_regions_round_as_mpfr(op, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{op}-{dtype}".encode()))
    cases = _regions(op, dtype, rng)
    assert len(cases) >= 20, (op, dtype, len(cases))
    _check_cases(op, dtype, cases)


# ---------------------------------------------------------------------------------------- constants
def _decimal_error(text: str, true) -> float:
    """|text - true| / |true| for a decimal string, at 400 bits."""
    with wide_context(400):
        return float(abs(mpfr(text) - true) / abs(true))


def _float64(true) -> float:
    with fmt_context("float64"):
        return float(mpfr(true))


def _value(c):
    return float(getattr(c, "value", c))


def test_activation_constants_from_their_definitions():
    import nbx.ops.activations as kernel
    import nbx.oracles.activations as host
    import nbx.oracles.device.activations as device
    with wide_context(400):
        alpha, scale = selu_constants()
        sqrt_2_over_pi = gmpy2.sqrt(2 / gmpy2.const_pi())
        sqrt_half = 1 / gmpy2.sqrt(2)
        coeff = mpfr("0.044715")                   # GELU's tanh form defines it as this decimal
        scale_alpha = scale * alpha
    # SELU: ATen's 32-digit decimals (oracles) within their last digit; float64 constants correctly
    # rounded (kernels, device oracles, the oracles' float64 form); the device's product scale*alpha
    # one rounding of the rounded factors' product (within one float64 ulp of the true product)
    assert _decimal_error(host.SELU_ALPHA, alpha) < 1e-31 and _decimal_error(host.SELU_SCALE, scale) < 1e-31
    for a, s in ((host.SELU_ALPHA_F, host.SELU_SCALE_F), (device.SELU_ALPHA, device.SELU_SCALE),
                 (_value(kernel.SELU_ALPHA), _value(kernel.SELU_SCALE)), (_value(device.SELU_SCALE_C), None)):
        assert a == _float64(alpha if s is not None else scale)
        if s is not None:
            assert s == _float64(scale)
    assert abs(_value(device.SELU_SCALE_ALPHA) - float(scale_alpha)) <= math.ulp(float(scale_alpha))
    import mpmath
    with mpmath.workprec(200):                      # the -scale*alpha nbx's oracle returns at -inf
        at_ninf = mpmath.nstr(host.SELU_AT_NINF.mp(), 60)
    assert at_ninf.startswith("-") and _decimal_error(at_ninf[1:], scale_alpha) < 1e-30
    # GELU
    for k in (kernel, device):
        assert _value(k.SQRT_2_OVER_PI) == _float64(sqrt_2_over_pi)
        assert _value(k.SQRT_HALF) == _float64(sqrt_half)
        assert _value(k.GELU_TANH_COEFF) == _float64(coeff)
    assert _decimal_error(host.GELU_TANH_COEFF, coeff) == 0.0


@pytest.mark.parametrize("op, xs", [("selu", (-1.0,)), ("selu", (-0.3,)), ("selu", (2.5,)),
                                    ("gelu", (-1.5,)), ("gelu", (0.75,)), ("sigmoid", (-3.0,)),
                                    ("silu", (1.25,)), ("softplus", (-2.0,)), ("mish", (0.5,))])
def test_oracle_values_at_200_bits_equal_mpfr(op, xs):
    """The mpmath oracles themselves (not their roundings) against MPFR, to 2^-100: a wrong
    constant or formula shows long before it moves a rounded result."""
    import mpmath
    with mpmath.workprec(200):
        v = evaluate_mp(ORACLES[op], xs, {})
        text = mpmath.nstr(v, 60)
    with wide_context(400):
        want = COMPOSED[op](*(exact(x) for x in xs))
    tol = 1e-30 if op == "selu" else 2.0 ** -100              # selu: ATen's 32-digit constants
    assert _decimal_error(text, want) < tol, (op, xs, text, str(want))


# ---------------------------------------------------------------------------------------- mpmath on gmpy2
def test_exact_oracles_under_mpmaths_gmpy_backend():
    """fmod and remainder of exact operands (nbx's oracles, evaluate_mp) equal MPFR's fmod and the
    exact floor remainder, with mpmath on the gmpy backend as whenever gmpy2 is installed (before
    52e37d2, nbx/oracles/base.to_fraction kept mpmath's mpz mantissa, and Fraction(mpz) * mpz raised
    SystemError('Object does not appear to be Fraction'))."""
    assert mpmath.libmp.BACKEND == "gmpy"
    from fractions import Fraction
    a, b = -5.3152971801199236, 14.124164762999079
    with mpmath.workprec(80):
        fm = float(evaluate_mp(ORACLES["fmod"], (a, b), {}))
        rem = float(evaluate_mp(ORACLES["remainder"], (a, b), {}))
    with fmt_context("float64"):
        assert fm == float(gmpy2.fmod(exact(a), exact(b)))
    qa, qb = Fraction(a), Fraction(b)
    assert rem == float(qa - qb * math.floor(qa / qb))
