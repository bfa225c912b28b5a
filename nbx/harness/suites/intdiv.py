"""The integer-division suite (docs/PRECISION.md, "The integer-division suite").

Which targets: those of an op with a divisor operand (Verify.roles, the operand a zero faults) on
uint8/int8/int16/int32/int64 whose result is an integer (floor_divide, div with a rounding mode,
remainder, fmod; div's true division gives a float), and float32/float64 targets of an op whose
Verify.exact_float asks for exact checks (floor_divide, remainder). The exact values are the op's
oracle's `exact_int`, on Python ints, and for floats on the inputs' exact Fractions.

Integer targets, against exact Python integers: every sign combination, |a| and |b| over every
bit length (a grid of bit lengths; int64 beyond 2^53), divisible pairs and pairs off by one, the
special values crossed (INT_MIN // -1 wraps to INT_MIN, INT_MIN % -1 = 0), division by zero
(ZeroDivisionError, also for a 0-dim, a Python-scalar, a broadcast and a strided divisor; with out=
the out tensor is untouched; a zero only in storage a view skips does not raise), broadcast and
strided operands. Float targets: Python's exact semantics through fractions (and host.score, for
ulp and specials), with pairs where floor(a/b) is wrong (1.0 // 0.1 == 9), stratified values of
every sign and binade, the special values crossed, and mixed integer/float operands (an int tensor
with a float tensor: the result dtype must be the float's, the int converts first as ATen, scored
in ulp). An exact expectation that is representable and missed counts as wrong. Sizes per profile
(cases.PROFILE_SIZES): ci one pair per (bit length, bit length, signs), nightly four.
"""
from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np

from nbx.oracles import ORACLES

from nbx.dtype import DType, INTS, float32, float64, int32, int64, int8, uint8
from nbx.ops.verify import DIVISOR
from nbx.tensor import Tensor, from_numpy
from nbx.harness.inputs import cases
from nbx.harness.inputs.cases import PROFILE_SIZES
from nbx.harness.scoring.host import Batch, flat_bits, hexes, oracle_params, score
from nbx.harness.records.measurement import Worst
from nbx.harness.targets.target import Target, call, scalar_positions

INT_DTYPES = INTS
INTDIV_FLOAT_DTYPES = (float32, float64)
DIVISOR_AT = 1                      # the suite's cases are (dividend, divisor) pairs


def applies(t: Target) -> bool:
    """Integer division (a divisor operand, an integer result) on INT_DTYPES; the exact float checks
    an op asks for (Verify.exact_float) on INTDIV_FLOAT_DTYPES."""
    if t.role(DIVISOR_AT) != DIVISOR:
        return False
    if t.dtype in INT_DTYPES:
        return t.out_dtype.is_int
    return t.dtype in INTDIV_FLOAT_DTYPES and t.verify.exact_float


# ====================================================================== the integer-division suite
def exact_rule(t: Target, out: DType):
    """The op's exact value as a function of (a, b), Python ints or (for float inputs) Fractions:
    its oracle's `exact_int` with the target's parameters."""
    fn, params = ORACLES[t.op].exact_int, oracle_params(t, out)
    return lambda a, b: fn(a, b, **params)


def _wrap(v: int, d: DType) -> int:
    span = 1 << d.bits
    return (v - d.min) % span + d.min


def _int_cases(d: DType, reps: int, n_div: int, r: random.Random):
    """(a, b) Python-int pairs, b != 0: the bit-length grid with every sign combination, divisible
    pairs and off by one, and the special values crossed."""
    signed = d.kind == "i"
    W = d.bits - 1 if signed else d.bits

    def mag(L):
        return 0 if L == 0 else (1 << (L - 1)) | r.getrandbits(L - 1)

    signs = [(1, 1), (1, -1), (-1, 1), (-1, -1)] if signed else [(1, 1)]
    A, B = [], []
    for la in range(0, W + 1):
        for lb in range(1, W + 1):
            for sa, sb in signs:
                for _ in range(reps):
                    A.append(sa * mag(la))
                    B.append(sb * mag(lb))
    for _ in range(n_div):
        lb = r.randint(1, W)
        lq = r.randint(0, max(0, W - lb + 1))
        q, b = mag(lq), mag(lb)
        if signed:
            q *= r.choice((1, -1))
            b *= r.choice((1, -1))
        for a in (q * b, q * b + 1, q * b - 1):
            if d.min <= a <= d.max:
                A.append(a)
                B.append(b)
    sp = [int(x) for x in cases.special_values(d)]
    if signed:
        sp += [d.min, -1]
    sp = sorted(set(sp))
    for a in sp:
        for b in sp:
            if b != 0:
                A.append(a)
                B.append(b)
    return A, B


def _check_int_batch(t: Target, acc, a: np.ndarray, b: np.ndarray, got, desc: str, out_dtype: DType) -> None:
    """Scores an integer result against the exact Python-integer rule, into acc (cases, wrong, worst)."""
    ab, bb = np.broadcast_arrays(a, b)
    ab, bb = ab.reshape(-1), bb.reshape(-1)
    if not isinstance(got, Tensor) or got.dtype is not out_dtype or got.shape != tuple(np.broadcast_shapes(a.shape,
                                                                                                            b.shape)):
        acc.cases += len(ab)
        acc.wrong += len(ab)
        what = f"{got.shape} {got.dtype.name}" if isinstance(got, Tensor) else type(got).__name__
        acc.push_worst(Worst([], "", "", math.inf, f"intdiv {desc}: result {what}, expected "
                                                   f"{tuple(np.broadcast_shapes(a.shape, b.shape))} {out_dtype.name}"))
        return
    g = got.numpy().reshape(-1)
    rule = exact_rule(t, out_dtype)
    exp = np.array([_wrap(rule(int(x), int(y)), out_dtype)
                    for x, y in zip(ab.tolist(), bb.tolist())], dtype=object).astype(out_dtype.np)
    wrong = g != exp
    gb, eb = flat_bits(g), flat_bits(exp)
    acc.add([ab, bb], g, Batch(wrong.astype(np.float64), np.zeros(len(g), bool), wrong, eb, True))
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        acc.push_worst(Worst([str(int(ab[i])), str(int(bb[i]))], str(int(g[i])), str(int(exp[i])), math.inf,
                             f"intdiv {desc}: {int(wrong.sum())} wrong (got {hex(int(gb[i]))})"))


def _expect_fault(t: Target, acc, desc: str, operands, out=None, must_raise: bool = True) -> None:
    """One zero-division case: the op must raise ZeroDivisionError (and leave out= untouched)."""
    acc.cases += 1
    before = flat_bits(out.numpy()).copy() if out is not None else None
    try:
        call(t, operands, out=out)
        raised = None
    except ZeroDivisionError as e:
        raised = e
    except Exception as e:  # noqa: BLE001
        acc.wrong += 1
        acc.push_worst(Worst([], "", "", math.inf, f"intdiv {desc}: raised {type(e).__name__}: {e} "
                                                   f"(ZeroDivisionError expected)"))
        return
    if must_raise and raised is None:
        acc.wrong += 1
        acc.push_worst(Worst([], "", "", math.inf, f"intdiv {desc}: no ZeroDivisionError for a zero divisor"))
        return
    if not must_raise and raised is not None:
        acc.wrong += 1
        acc.push_worst(Worst([], "", "", math.inf, f"intdiv {desc}: raised ZeroDivisionError ({raised}) though "
                                                   "no element the view covers is zero"))
        return
    if out is not None and not np.array_equal(flat_bits(out.numpy()), before):
        acc.wrong += 1
        acc.push_worst(Worst([], "", "", math.inf, f"intdiv {desc}: out= was written although the op raised"))


def run_intdiv(t: Target, profile: str, seed: int, acc) -> None:
    if t.dtype.is_float:
        return _run_intdiv_float(t, profile, seed, acc)
    sizes = PROFILE_SIZES[profile]
    d = t.dtype
    rng = cases.rng_for(seed, t.label, d.name, "intdiv")
    r = random.Random(int(rng.integers(0, 2 ** 63)))
    A, B = _int_cases(d, sizes["grid_reps"], sizes["divisible"], r)
    a = np.array(A, dtype=object).astype(d.np)
    b = np.array(B, dtype=object).astype(d.np)

    def guarded(desc, fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 (a failure is a result: counted, named)
            acc.cases += 1
            acc.wrong += 1
            acc.push_worst(Worst([], "", "", math.inf, f"intdiv {desc}: raised {type(e).__name__}: {e}"))

    # 1. the bit-length grid x signs, divisible +-1, specials crossed (contiguous, one launch)
    guarded("grid", lambda: _check_int_batch(t, acc, a, b, call(t, [from_numpy(a), from_numpy(b)]),
                                             "grid/divisible/specials", d))

    # 2. broadcast and strided operands: a (16,1) as a transposed view, b (1,24) as a step-3 view whose
    #    skipped storage holds zeros (which must not fault)
    m, k = 16, 24
    sel_a = r.sample(range(len(A)), m)
    sel_b = r.sample(range(len(B)), k)
    av, bv = a[sel_a].reshape(m, 1), b[sel_b].reshape(1, k)

    def strided():
        base_b = np.zeros((1, 3 * k), dtype=d.np)
        base_b[:, ::3] = bv
        tb = from_numpy(base_b)[:, ::3]
        ta = from_numpy(np.ascontiguousarray(av.reshape(1, m))).transpose(0, 1)
        _check_int_batch(t, acc, av, bv, call(t, [ta, tb]), "broadcast (16,1)x(1,24), transposed and step-3 views", d)
        acc.layouts += 1

    def broadcast_plain():
        ta, tb = from_numpy(av), from_numpy(bv)
        _check_int_batch(t, acc, av, bv, call(t, [ta, tb]), "broadcast (16,1)x(1,24)", d)
        acc.layouts += 1

    guarded("broadcast", broadcast_plain)
    guarded("strided", strided)

    # 3. division by zero
    n = 257
    x = a[:n].copy()
    y = b[:n].copy()
    y[n // 3] = 0
    _expect_fault(t, acc, "a zero in a contiguous divisor", [from_numpy(x), from_numpy(y)])
    sentinel = np.full(n, 7, dtype=d.np)
    out = from_numpy(sentinel)
    _expect_fault(t, acc, "a zero in the divisor with out= (out must stay untouched)",
                  [from_numpy(x), from_numpy(y)], out=out)
    _expect_fault(t, acc, "a 0-dim zero divisor", [from_numpy(x), from_numpy(np.zeros((), d.np))])
    if 1 in scalar_positions(t):
        _expect_fault(t, acc, "a Python scalar 0 divisor", [from_numpy(x), 0])
    yb = np.array(b[:k], dtype=d.np).reshape(1, k)
    yb[0, k - 1] = 0
    _expect_fault(t, acc, "a zero in a broadcast divisor (1,24) against (16,1)", [from_numpy(av), from_numpy(yb)])
    big = 70000                                                      # past one interpreter tile (2^16)
    xs = np.resize(a, big)
    ys = np.zeros(2 * big, dtype=d.np)
    ys[::2] = np.resize(b, big)
    ys[2 * (big - 1)] = 0
    _expect_fault(t, acc, "a zero at the last element of a step-2 divisor of 70000 elements",
                  [from_numpy(xs), from_numpy(ys)[::2]])
    ys[2 * (big - 1)] = 1
    _expect_fault(t, acc, "zeros only in storage a step-2 divisor view skips", [from_numpy(xs), from_numpy(ys)[::2]],
                  must_raise=False)


# ---------------------------------------------------------------------- float floor_divide / remainder
def _naive_wrong_pairs(d: DType, n: int, rng):
    """Pairs near a*b = q*b where floor(a/b) of the rounded quotient can differ from floor of the exact
    quotient (1.0 // 0.1 == 9 while floor(1.0 / 0.1) == 10): a = fl(q*b) and its neighbours."""
    npd = d.np
    p = 24 if d is float32 else 53
    m = max(1, n // 3)
    b = (1 + rng.random(m)) * np.ldexp(1.0, rng.integers(-8, 9, m)) * rng.choice([-1.0, 1.0], m)
    q = np.array([int(rng.integers(1, 1 << int(L))) for L in rng.integers(1, min(p - 2, 30), m)], dtype=np.float64)
    q *= rng.choice([-1.0, 1.0], m)
    bb = b.astype(npd)
    a0 = (q.astype(npd) * bb).astype(npd)
    with np.errstate(all="ignore"):
        a_dn = np.nextafter(a0, np.zeros_like(a0))
        a_up = np.nextafter(a0, np.copysign(np.full_like(a0, np.inf), a0))
    A = np.concatenate([a0, a_dn, a_up])
    Bv = np.concatenate([bb, bb, bb])
    classic = np.array([(1.0, 0.1), (-1.0, 0.1), (1.0, -0.1), (2.0, 0.2), (3.0, 0.3), (0.7, 0.1), (1.1, 0.1),
                        (5.0, 0.5), (0.3, 0.1), (4.35, 0.05), (1e16, 3.0), (-1e-300, 1e300)], dtype=np.float64)
    with np.errstate(all="ignore"):
        A = np.concatenate([classic[:, 0].astype(npd), A])
        Bv = np.concatenate([classic[:, 1].astype(npd), Bv])
    return A, Bv


def _fraction_check(t: Target, acc, arrays, got: np.ndarray, out: DType, desc: str) -> None:
    """Exact semantics through fractions: where the exact value is representable in `out`, the result
    must equal it. An integer value is a quotient, checked below 2^p (every integer there is
    representable; beyond, the format's rounding of a large quotient is score's to measure); any
    other value (a remainder) where it is exactly a value of `out`."""
    p = 24 if out is float32 else 53
    vals = t.oracle_values(arrays, out)
    g = got.astype(np.float64)
    rule = exact_rule(t, out)
    wrong = 0
    first = None
    for i, (x, y) in enumerate(zip(vals[0].tolist(), vals[1].tolist())):
        if not (math.isfinite(x) and math.isfinite(y)) or y == 0:
            continue
        want = rule(Fraction(x), Fraction(y))
        quotient = isinstance(want, int)
        if quotient:
            if abs(want) >= 1 << p:
                continue
            want = Fraction(want)
        else:
            w = float(want)
            if Fraction(w) != want or (out is float32 and float(np.float32(w)) != w):
                continue
        if not (math.isfinite(g[i]) and Fraction(g[i]) == want):
            wrong += 1
            if first is None:
                first = (i, x, y, g[i], want, "//" if quotient else "%")
    acc.wrong += wrong
    if first is not None:
        i, x, y, gv, want, symbol = first
        acc.push_worst(Worst(hexes(arrays, i), repr(gv), repr(float(want)), math.inf,
                             f"intdiv {desc}: {wrong} results differ from the exact value "
                             f"({x!r} {symbol} {y!r} = {float(want)!r}, got {gv!r})"))


def _run_intdiv_float(t: Target, profile: str, seed: int, acc) -> None:
    sizes = PROFILE_SIZES[profile]
    d = t.dtype
    rng = cases.rng_for(seed, t.label, d.name, "intdiv")
    f64 = d is float64
    shrink = 4 if f64 else 1                  # float64 results take the mpmath truth per case

    def measure_batch(desc, arrays, out_dtype=d):
        try:
            res = call(t, [from_numpy(x) for x in arrays])
        except Exception as e:  # noqa: BLE001
            acc.cases += len(arrays[0])
            acc.wrong += len(arrays[0])
            acc.push_worst(Worst([], "", "", math.inf, f"intdiv {desc}: raised {type(e).__name__}: {e}"))
            return
        if res.dtype is not out_dtype or res.shape != arrays[0].shape:
            acc.cases += len(arrays[0])
            acc.wrong += len(arrays[0])
            acc.push_worst(Worst([], "", "", math.inf, f"intdiv {desc}: result {res.shape} {res.dtype.name}, "
                                                       f"expected {arrays[0].shape} {out_dtype.name}"))
            return
        got = res.numpy()
        acc.add(arrays, got, score(t, arrays, got))
        _fraction_check(t, acc, arrays, got, out_dtype, desc)

    # 1. where floor(a/b) is wrong
    a, b = _naive_wrong_pairs(d, sizes["float_wrong"] // shrink, rng)
    measure_batch("pairs where floor(a/b) of the rounded quotient is wrong", [a, b])
    # 2. every sign and binade (stratified), and pairs close to a multiple
    n = sizes["float_n"] // shrink
    a = cases.stratified(d, n, rng)
    b = cases.stratified(d, n, rng)
    k = n // 4
    with np.errstate(all="ignore"):
        b[:k] = np.abs(b[:k]).clip(np.asarray(2.0 ** -20, d.np), np.asarray(2.0 ** 20, d.np)) * np.sign(b[:k])
        a[:k] = (b[:k].astype(np.float64) * rng.integers(-1000, 1000, k)).astype(d.np)
    b = np.where(b == 0, np.asarray(1.5, d.np), b)
    measure_batch("stratified, every sign and binade", [a, b])
    # 3. the special values crossed (zeros, infinities, NaN, extremes)
    sp = cases.special_values(d)
    if f64:
        sp = sp[:: max(1, len(sp) // 30)]
    ga, gb = np.meshgrid(sp, sp, indexing="ij")
    measure_batch("special values crossed", [ga.reshape(-1), gb.reshape(-1)])
    # 4. mixed integer / float operands: the result dtype is the float's; the int converts first (ATen)
    m = sizes["mixed"] // shrink
    for di, int_first in ((int32, True), (int64, False), (int8, True), (uint8, False)):
        xi = cases.integers(di, m, rng, nonzero=not int_first)
        xf = cases.stratified(d, m, rng)
        if int_first:
            xf = np.where(xf == 0, np.asarray(3.0, d.np), xf)
        arrays = [xi, xf] if int_first else [xf, xi]
        measure_batch(f"mixed {arrays[0].dtype} with {arrays[1].dtype}", arrays)
