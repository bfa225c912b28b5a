"""The Oracle record, the special-value table lookup and the mpmath evaluation rule.

An oracle states what an op means: a float64 numpy function for bulk measurement, an mpmath
function for the truth, an exact integer function for integer dtypes, and the op's values at
special inputs as a table of rows. Family modules (unary, activations, ...) declare oracles as
data through `oracle(...)`.
"""
from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import mpmath
import numpy as np
from mpmath import mp
from mpmath.libmp import from_man_exp

NAN = float("nan")
INF = float("inf")

KINDS = ("real", "bool", "exactly-representable")
# What an oracle may be told about the output dtype, as keywords (Oracle.output_format):
# "int_range": int_min, int_max for an integer output and to_bool=True for bool (a cast, which
#   saturates: its results lie in that range);
# "float_max": fmt_max, the largest finite value of a float output (nan_to_num's default fills).
OUTPUT_FORMAT = ("int_range", "float_max")


@dataclass(frozen=True)
class Oracle:
    name: str
    arity: int
    kind: str
    f64: Callable
    mp: Callable | None
    exact_int: Callable | None
    domain: tuple
    specials: tuple
    params: dict
    zero_sign_matters: bool = True
    notes: str = ""
    declared_at: str = ""           # "path:line" of the oracle(...) call (nbx where)
    output_format: tuple = ()       # entries of OUTPUT_FORMAT: what the harness passes about the output
    splits: tuple = ()              # forms value = main + rest that keep a tiny rest (Oracle splits, below)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"oracle {self.name!r}: kind {self.kind!r} is not one of {KINDS}")
        if set(self.output_format) - set(OUTPUT_FORMAT):
            raise ValueError(f"oracle {self.name!r}: output_format {self.output_format!r} is not a subset "
                             f"of {OUTPUT_FORMAT}")
        if len(self.domain) != self.arity:
            raise ValueError(f"oracle {self.name!r}: domain has {len(self.domain)} intervals, "
                             f"arity is {self.arity}")
        for inputs, _ in self.specials:
            if len(inputs) != self.arity:
                raise ValueError(f"oracle {self.name!r}: special row {inputs!r} does not have "
                                 f"{self.arity} inputs")


class MpConst(float):
    """A table output that is not exact in float64 (pi, pi/2, log 2, selu's -scale*alpha).

    It is a float (its float64 value, correctly rounded) for the float64 side, and carries the
    exact constant for mpmath: evaluate_mp returns `value.mp()` at the working precision, so a
    narrower format is rounded from the true constant rather than from its float64 rounding.
    """

    def __new__(cls, mp_fn: Callable[[], mpmath.mpf]):
        with mp.workprec(120):
            value = float(mp_fn())
        self = super().__new__(cls, value)
        self.mp = mp_fn
        return self

    def __neg__(self):
        fn = self.mp
        return MpConst(lambda: -fn())


PI = MpConst(lambda: +mp.pi)
HALF_PI = MpConst(lambda: mp.pi / 2)
QUARTER_PI = MpConst(lambda: mp.pi / 4)
THREE_QUARTER_PI = MpConst(lambda: 3 * mp.pi / 4)
LN2 = MpConst(lambda: mp.log(2))


# ---------------------------------------------------------------------------------------------
# Building blocks for the family modules.

def quiet(fn: Callable) -> Callable:
    """f64 functions hit inf/NaN on purpose (exp overflow, 0/0): no warnings, ndarray out."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with np.errstate(all="ignore"):
            return np.asarray(fn(*(np.asarray(a) for a in args), **kwargs))
    return wrapped


def oracle(name, arity, kind, f64, mp=None, exact_int=None, domain=None, specials=(),
           params=None, zero_sign_matters=True, notes="", output_format=(), splits=()) -> Oracle:
    caller = sys._getframe(1)
    return Oracle(name=name, arity=arity, kind=kind, f64=quiet(f64), mp=mp, exact_int=exact_int,
                  domain=tuple(domain) if domain is not None else ((-INF, INF),) * arity,
                  specials=tuple((tuple(i), o) for i, o in specials),
                  params=dict(params or {}), zero_sign_matters=zero_sign_matters, notes=notes,
                  output_format=tuple(output_format), splits=tuple(splits),
                  declared_at=f"{caller.f_code.co_filename}:{caller.f_lineno}")


# Oracle splits. The host decides a close call by Ziv's loop up to 1024 bits and, where that cannot
# decide, by the exact-value rule: a value that mpmath gives identically at p + 32 and 2(p + 32) bits is
# exact, and an exact tie goes to even (scoring/host.py, round_exact_or_ziv). That holds for sums, products
# and quotients of floats and for dyadic constants. It does not hold for an exact part plus a rest below
# 2^-888 of it: every working precision up to 1024 bits returns the exact part, and where that part is a
# rounding midpoint only the rest's sign tells the side (float16 swiglu(711, 5) = 3555 - 3555/(1 + e^711)
# rounds to 3554, not to the even 3556). A split states such a form: a function of the op's mpf
# inputs and parameters that returns (main, rest), main the exact part (a dyadic mpf from exact_add,
# exact_mul, exact_half or from_fraction) and rest = value - main evaluated on its own, without
# cancellation, to within a few units of the working precision relative to itself; or None where the form
# does not apply. Where a split applies the value is exact only if its rest is 0 (a split returns None
# where the value could be dyadic otherwise). mpmath's exponents are unbounded, so a rest of e^-(10^30)
# keeps its sign, and main + rest rounds correctly (rounding.round_split_correctly); the exact-value rule
# is used only where no split applies.


def unary_rows(at_nan, at_inf, at_ninf, at_zero, at_nzero, *extra):
    """Rows for the inputs NaN, +inf, -inf, +0, -0 (in that order), then (x, y) extras."""
    base = zip((NAN, INF, -INF, 0.0, -0.0), (at_nan, at_inf, at_ninf, at_zero, at_nzero))
    return tuple(((x,), y) for x, y in base) + tuple(((x,), y) for x, y in extra)


def truth_rows(inputs, truth: str):
    """Rows for `inputs` with bool outputs: the truth column as a string of T/F, one letter per row."""
    assert len(truth) == len(inputs)
    return tuple((pair, letter == "T") for pair, letter in zip(inputs, truth))


def vectorize(fn: Callable) -> Callable:
    """A scalar math-module function (erf, erfc) as a float64 ufunc-like function."""
    return np.vectorize(fn, otypes=[np.float64])


# Exact arithmetic on mpf values: inputs are float64 values, so sums and products of a few of
# them are exact in a few thousand bits at most, and computing them exactly removes the double
# rounding a working-precision result could add before the harness rounds it to the format.
def exact_add(*xs):
    total = mp.mpf(0)
    for x in xs:
        total = mp.fadd(total, x, exact=True)
    return total


def exact_mul(*xs):
    product = mp.mpf(1)
    for x in xs:
        product = mp.fmul(product, x, exact=True)
    return product


def exact_sub(x, y):
    return mp.fsub(x, y, exact=True)


def exact_half(x):
    return mp.fmul(x, 0.5, exact=True)


def to_fraction(x) -> Fraction:
    """An mpf (or float, or int) as an exact Fraction."""
    if isinstance(x, (int, float, Fraction)):
        return Fraction(x)
    sign, man, exp, _ = x._mpf_
    # int(): under mpmath's gmpy2 backend man is an mpz, which Fraction arithmetic refuses
    value = Fraction(int(man)) * (Fraction(2) ** int(exp))
    return -value if sign else value


def from_fraction(q: Fraction):
    """An exact mpf for a dyadic Fraction (every value built from float inputs by +, -, * and
    integer parts is dyadic); a non-dyadic one is rounded at the working precision."""
    den = q.denominator
    if den & (den - 1) == 0:
        return mp.make_mpf(from_man_exp(q.numerator, -(den.bit_length() - 1)))
    return mp.mpf(q.numerator) / q.denominator


def floor_quotient(a, b) -> int:
    """floor(a / b) of the exact quotient of two finite values, b != 0."""
    return math.floor(to_fraction(a) / to_fraction(b))


# ---------------------------------------------------------------------------------------------
# Table lookup and the mpmath evaluation rule.

def _same(x, y) -> bool:
    x, y = float(x), float(y)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)


def resolve(output, params: dict):
    """A row's output: a value, or a function of the op's parameters (elu(-inf) = -alpha) that
    may return None where the row does not apply to these parameters."""
    return output(params) if callable(output) and not isinstance(output, MpConst) else output


def when(output, /, **conditions) -> Callable[[dict], object]:
    """A row output that holds only for these parameter values (add's rows for alpha=1)."""
    return lambda p: output if all(p.get(k) == v for k, v in conditions.items()) else None


def lookup_special(oracle: Oracle, inputs: tuple, params: dict | None = None):
    """The special-table value for these inputs (NaN matches NaN, -0.0 is not +0.0), or None.
    `params` are merged over oracle.params; rows whose output depends on them are resolved."""
    merged = {**oracle.params, **(params or {})}
    for row_inputs, output in oracle.specials:
        if len(row_inputs) == len(inputs) and all(map(_same, row_inputs, inputs)):
            value = resolve(output, merged)
            if value is not None:
                return value
    return None


def _f64_scalar(oracle: Oracle, values, params):
    result = oracle.f64(*(np.asarray(v, dtype=np.float64) for v in values), **params)
    return bool(result) if oracle.kind == "bool" else float(result)


def evaluate_mp(oracle: Oracle, inputs: tuple, params: dict | None = None):
    """The exact (or working-precision) value of the op at these inputs.

    The table decides first. Otherwise oracle.mp runs on mpf inputs, with three repairs for what
    mpmath cannot represent; each takes the float64 function's answer, which in those cases is
    exactly representable and carries the op's defined sign:
    - mpmath has no negative zero: a zero result gets the sign of the float64 result (returned
      as a Python float, +0.0 or -0.0), and where an input is a zero, a nonzero result whose sign
      disagrees with the float64 result is negated (atan2(-0, -2) = -pi, copysign(1, -0) = -1);
    - a NaN input, an mp function that raises (ZeroDivisionError, ValueError) or returns inf/NaN
      (pow(-0, -3), 1/0): the float64 value (infinities and NaN are exact);
    - an infinite input: mp is tried (mpmath has infinities: atan2(inf, 1) = pi/2) and kept only
      when it and the float64 function agree the result is finite and nonzero; else float64.
    """
    merged = {**oracle.params, **(params or {})}
    hit = lookup_special(oracle, inputs, merged)
    if hit is not None:
        return hit.mp() if isinstance(hit, MpConst) else hit
    values = tuple(float(v) for v in inputs)
    if oracle.mp is None or any(math.isnan(v) for v in values):
        return _f64_scalar(oracle, values, merged)
    fallback = functools.partial(_f64_scalar, oracle, values, merged)
    try:
        result = oracle.mp(*(mp.mpf(v) for v in values), **merged)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return fallback()
    if oracle.kind == "bool":
        return bool(result)
    if not isinstance(result, mpmath.mpf):
        result = mp.mpf(result)
    if mp.isnan(result) or mp.isinf(result):
        return fallback()
    reference = fallback()
    if any(math.isinf(v) for v in values):
        if result == 0 or not math.isfinite(reference) or reference == 0:
            return reference
    if result == 0:
        return math.copysign(0.0, reference)
    if any(v == 0 for v in values) and reference != 0 and (reference < 0) != (result < 0):
        return -result
    return result
