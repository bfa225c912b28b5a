"""Correct rounding (to nearest, ties to even) of exact values into the four formats.

Everything here returns bit patterns as Python ints (or unsigned arrays) so that a result can be
compared bit for bit and written to the reference bank without another conversion.

- round_fraction: an exact rational -> bits. The reference every other path is tested against.
- round_mpf: an mpmath mpf (a dyadic rational man * 2^exp) -> bits, exactly.
- round_correctly: Ziv's loop around an mpmath function (docs/PRECISION.md, "Oracles").
- round_split_correctly: the same loop around a value given as an exact part plus a rest evaluated on
  its own (an oracle's split, oracles/base.py), which decides values within 2^-1016 of a midpoint.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Callable, NamedTuple, Sequence

import mpmath
import numpy as np
from mpmath import libmp

from nbx.oracles.formats import FloatFormat, from_bits, get_format, inf_bits, quiet_nan_bits

__all__ = [
    "RoundResult",
    "round_fraction",
    "round_mpf",
    "round_correctly",
    "round_split_correctly",
]


def _encode(negative: bool, m: int, q: int, f: FloatFormat) -> int:
    """Bits of (-1)^negative * m * 2^q where 0 <= m <= 2^p and q >= emin - p + 1 is the quantum
    (the weight of the last significand bit) that the rounding used."""
    p = f.precision
    sign = int(negative) << (f.bits - 1)
    if m == 1 << p:
        # Rounding carried into the next binade: 2^p * 2^q == 2^(p-1) * 2^(q+1).
        m, q = m >> 1, q + 1
    if m < 1 << (p - 1):
        # Subnormal (q is then emin - p + 1) or zero: exponent field 0, the significand as is.
        return sign | m
    e = q + p - 1  # exponent of the leading bit
    if e > f.emax:
        return sign | inf_bits(f)
    return sign | ((e + f.bias) << f.mantissa_bits) | (m - (1 << (p - 1)))


def round_fraction(q: numbers.Rational, fmt: FloatFormat | str, *, negative_zero: bool = False) -> int:
    """Bits of the round-to-nearest-even of the exact rational q in fmt.

    Subnormals keep fewer bits (the quantum never drops below 2^(emin - p + 1)); |q| >= max finite
    + half an ulp becomes inf (at exactly that midpoint the even neighbour is 2^(emax+1), i.e. inf);
    a nonzero q that rounds to zero keeps its sign; q == 0 is +0 unless negative_zero=True.
    """
    f = get_format(fmt)
    if not isinstance(q, numbers.Rational):
        raise TypeError(f"round_fraction: q must be a Fraction or int, got {type(q).__name__}")
    n, d = q.numerator, q.denominator  # d > 0, gcd 1
    negative = n < 0 or (n == 0 and negative_zero)
    n = abs(n)
    if n == 0:
        return int(negative) << (f.bits - 1)
    # e = floor(log2(n/d)): bit lengths put n/d in (2^(k-1), 2^(k+1)); one comparison decides.
    k = n.bit_length() - d.bit_length()
    e = k if (n << max(-k, 0)) >= (d << max(k, 0)) else k - 1
    if e > f.emax:
        return (int(negative) << (f.bits - 1)) | inf_bits(f)
    # Quantum of the result: fixed at 2^(emin-p+1) in the subnormal range, else p bits below e.
    quantum = max(e, f.emin) - f.precision + 1
    num = n << max(-quantum, 0)
    den = d << max(quantum, 0)
    m, r = divmod(num, den)  # n/d = (m + r/den) * 2^quantum
    if 2 * r > den or (2 * r == den and m & 1):
        m += 1
    return _encode(negative, m, quantum, f)


def _special_bits(value, f: FloatFormat) -> int | None:
    """Bits for NaN and +-inf given as mpf or float; None for anything else."""
    if mpmath.isnan(value):
        return quiet_nan_bits(f)
    if mpmath.isinf(value):
        return (int(value < 0) << (f.bits - 1)) | inf_bits(f)
    return None


def _round_dyadic(negative: bool, man: int, exp: int, f: FloatFormat) -> int:
    """Bits of (-1)^negative * man * 2^exp, man > 0. Decides far overflow and far underflow from
    the exponent alone, so that an mpf like 2^(10^9) never becomes a billion-bit Fraction."""
    top = exp + man.bit_length() - 1  # floor(log2 |x|)
    if top > f.emax:
        return (int(negative) << (f.bits - 1)) | inf_bits(f)
    if top < f.emin - f.precision - 1:
        # |x| < 2^(emin-p): below half the smallest subnormal, so it rounds to a signed zero.
        return int(negative) << (f.bits - 1)
    value = Fraction(man << exp) if exp >= 0 else Fraction(man, 1 << -exp)
    return round_fraction(-value if negative else value, f)


def round_mpf(x, fmt: FloatFormat | str) -> int:
    """Bits of the round-to-nearest-even of x in fmt, exactly (from the mpf's man and exp).

    x may also be a Python float (taken exactly; -0.0 gives -0). mpmath has no negative zero, so
    an mpf zero always gives +0."""
    f = get_format(fmt)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        special = _special_bits(x, f)
        if special is not None:
            return special
        return round_fraction(Fraction(x), f, negative_zero=math.copysign(1.0, x) < 0)
    if not isinstance(x, mpmath.mpf):
        raise TypeError(f"round_mpf: x must be an mpmath.mpf or float, got {type(x).__name__}")
    special = _special_bits(x, f)
    if special is not None:
        return special
    sign, man, exp, _ = x._mpf_
    if man == 0:
        return 0
    return _round_dyadic(bool(sign), man, exp, f)


class RoundResult(NamedTuple):
    """bits: the pattern in the format; value: it as a Python float; resolved: False when the
    loop gave up at max_bits; precision_used: mpmath bits of the last evaluation."""

    bits: int
    value: float
    resolved: bool
    precision_used: int


# Margin, in bits below the working precision, that an evaluation must keep from every rounding
# boundary before it is trusted: mpmath's functions are accurate to about one unit of the working
# precision, so 2^-(prec - 8) relative leaves a 256x allowance for that error.
_MARGIN_BITS = 8


def _exact_mpf(a) -> mpmath.mpf:
    """An argument as an mpf without rounding: mpf(float) rounds to the working precision, which
    at p+32 bits for float16 (43) would cut a float64 argument's 53 bits."""
    if isinstance(a, mpmath.mpf):
        return a
    if isinstance(a, (float, np.floating)):
        a = float(a)
        if math.isnan(a) or math.isinf(a):
            return mpmath.mpf(a)
        n, d = a.as_integer_ratio()
        return mpmath.mp.make_mpf(libmp.from_man_exp(n, -(d.bit_length() - 1)))
    if isinstance(a, (int, np.integer)):
        return mpmath.mp.make_mpf(libmp.from_int(int(a)))
    if isinstance(a, Fraction) and a.denominator & (a.denominator - 1) == 0:
        return mpmath.mp.make_mpf(libmp.from_man_exp(a.numerator, -(a.denominator.bit_length() - 1)))
    raise TypeError(f"round_correctly: argument {a!r} is not exactly representable as an mpf")


def _round_evaluation(y, f: FloatFormat, prec: int) -> tuple[int, bool]:
    """(bits, safe): the rounding of one evaluation y, and whether y lies far enough from every
    rounding boundary (midpoints, the overflow threshold) that its error cannot cross one."""
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
        y = mpmath.mp.make_mpf(libmp.from_int(int(y)))
    if isinstance(y, (float, np.floating)):
        y = float(y)
        special = _special_bits(y, f)
        if special is not None or y == 0.0:
            return round_mpf(y, f), True
        y = _exact_mpf(y)
    if not isinstance(y, mpmath.mpf):
        raise TypeError(f"round_correctly: fn returned {type(y).__name__}, expected mpf or float")
    special = _special_bits(y, f)
    if special is not None:
        return special, True
    sign, man, exp, _ = y._mpf_
    if man == 0:
        return 0, True
    bits = _round_dyadic(bool(sign), man, exp, f)
    # Perturb y by 2^-(prec - margin) relative, both ways, exactly: man*(2^s -+ 1) * 2^(exp-s).
    s = prec - _MARGIN_BITS
    lo = _round_dyadic(bool(sign), (man << s) - man, exp - s, f)
    hi = _round_dyadic(bool(sign), (man << s) + man, exp - s, f)
    return bits, lo == bits == hi


def round_correctly(
    fn: Callable[..., object],
    args: Sequence,
    fmt: FloatFormat | str,
    *,
    start_bits: int | None = None,
    max_bits: int = 1024,
) -> RoundResult:
    """Correctly rounded fn(*args) in fmt by Ziv's strategy.

    fn is called as fn(*mpf_args) inside mpmath.workprec(prec) and returns an mpf (or a Python
    float, e.g. for special values). prec starts at start_bits (default p + 32) and doubles,
    capped at max_bits. An evaluation is accepted when it rounds to the same bits as the previous
    one AND lies more than 2^-(prec-8) relative from every rounding boundary; the second test is
    what catches a value that sits on (or within the working precision of) a midpoint, where two
    evaluations can agree on the wrong side. If max_bits passes without acceptance, the rounding
    of the last evaluation is returned with resolved=False: an exact tie (true value exactly a
    midpoint) always ends that way, since no evaluation can tell it from a value just beside it.
    """
    f = get_format(fmt)
    start = f.precision + 32 if start_bits is None else start_bits
    if not isinstance(start, int) or start < 2:
        raise ValueError(f"round_correctly: start_bits={start_bits!r} must be an int >= 2")
    if not isinstance(max_bits, int) or max_bits < start:
        raise ValueError(f"round_correctly: max_bits={max_bits!r} must be an int >= start_bits ({start})")
    margs = [_exact_mpf(a) for a in args]

    prec, previous = start, None
    while True:
        with mpmath.workprec(prec):
            y = fn(*margs)
        bits, safe = _round_evaluation(y, f, prec)
        if safe and bits == previous:
            return _result(bits, f, True, prec)
        if prec >= max_bits:
            return _result(bits, f, False, prec)
        previous = bits
        prec = min(2 * prec, max_bits)


def _result(bits: int, f: FloatFormat, resolved: bool, prec: int) -> RoundResult:
    value = float(from_bits(np.asarray(bits, dtype=f.uint_dtype), f)[()])
    return RoundResult(bits, value, resolved, prec)


def _round_sum(main, rest, f: FloatFormat) -> int:
    """Bits of the rounding of main + rest (exact mpfs), without forming a sum of more bits than the
    decision needs. Write main = M 2^e (M odd) with leading bit 2^t. A rounding boundary within a factor
    2 of main (a midpoint, or the overflow threshold) is a multiple of 2^(max(t - 1, emin) - p), and
    main is a multiple of 2^e; so with g the smaller exponent, none lies strictly between main and
    main +- 2^g, and every rest with |rest| < 2^g rounds as rest = +-2^(g-1) of its sign does. A rest
    of e^-(10^30) relative thus costs a bit or two, not 10^30."""
    rs, rman, rexp, _ = rest._mpf_
    if rman == 0:
        return round_mpf(main, f)
    ms, mman, mexp, _ = main._mpf_
    if mman == 0:
        return round_mpf(rest, f)
    top = mexp + mman.bit_length() - 1
    g = min(mexp, max(top - 1, f.emin) - f.precision)
    if rexp + rman.bit_length() <= g:              # |rest| < 2^g
        rest = mpmath.mp.make_mpf(libmp.from_man_exp(-1 if rs else 1, g - 1))
    return round_mpf(mpmath.mp.fadd(main, rest, exact=True), f)


def _round_split_evaluation(main, rest, f: FloatFormat, prec: int) -> tuple[int, bool]:
    """(bits, safe) as _round_evaluation, for main + rest with only the rest in error: main + rest
    (1 -+ 2^-(prec - 8)) must round alike."""
    bits = _round_sum(main, rest, f)
    sign, man, exp, _ = rest._mpf_
    if man == 0:
        return bits, True
    s = prec - _MARGIN_BITS
    moved = [mpmath.mp.make_mpf(libmp.from_man_exp(-m if sign else m, exp - s))
             for m in ((man << s) - man, (man << s) + man)]
    return bits, all(_round_sum(main, r, f) == bits for r in moved)


def round_split_correctly(
    fn: Callable[..., object],
    args: Sequence,
    fmt: FloatFormat | str,
    *,
    start_bits: int | None = None,
    max_bits: int = 1024,
) -> RoundResult | None:
    """Correctly rounded main + rest in fmt by Ziv's strategy, where fn(*mpf_args), called inside
    mpmath.workprec(prec), returns (main, rest): main exact (a dyadic mpf or a float), rest the rest of
    the value evaluated to about one unit of prec relative to itself; or None (the form does not apply
    to args: None is returned). As round_correctly, with the error on the rest alone: an evaluation is
    accepted when main + rest (1 -+ 2^-(prec-8)) round alike and as the previous evaluation did. A rest
    far below main's distance to the nearest rounding boundary decides at once, by its sign where main
    is a midpoint; a rest of 0 gives main's rounding, an exact tie going to even."""
    f = get_format(fmt)
    start = f.precision + 32 if start_bits is None else start_bits
    margs = [_exact_mpf(a) for a in args]
    prec, previous = start, None
    while True:
        with mpmath.workprec(prec):
            split = fn(*margs)
        if split is None:
            return None
        main, rest = (_exact_mpf(v) if not isinstance(v, mpmath.mpf) else v for v in split)
        if not (mpmath.isfinite(main) and mpmath.isfinite(rest)):
            return None
        bits, safe = _round_split_evaluation(main, rest, f, prec)
        if safe and bits == previous:
            return _result(bits, f, True, prec)
        if prec >= max_bits:
            return _result(bits, f, False, prec)
        previous = bits
        prec = min(2 * prec, max_bits)
