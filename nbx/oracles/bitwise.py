"""Bitwise ops on integers and bool (integer-only: there is no mpmath function).

exact_int returns the mathematical result of the operation on Python ints; the harness wraps it
to the dtype (two's complement). The dtype enters through two keywords every function here
accepts: `bits` (1 for bool, 8, 16, 32, 64) and `signed`. bool is bits=1: bitwise_not is then
logical not (the seed records a model broken by the byte complement ~True == -2).
"""
from __future__ import annotations

import numpy as np

from .base import INF, oracle

EXACT = "exactly-representable"
ANY = (-INF, INF)


def _not(a, bits=64, signed=True):
    if bits == 1 or isinstance(a, bool):
        return not a
    return ~a


def _left_shift(a, b, bits=64, signed=True):
    # ATen: a count >= the bit width or negative gives 0.
    return 0 if b < 0 or b >= bits else a << b


def _right_shift(a, b, bits=64, signed=True):
    # ATen: a count >= the bit width or negative gives the sign fill (arithmetic for signed
    # types; the harness passes unsigned values as non-negative ints, so their fill is 0).
    if b < 0 or b >= bits:
        return -1 if a < 0 else 0
    return a >> b


def _binary(fn):
    return lambda a, b, bits=64, signed=True: fn(a, b)


def _on_floats(exact_int):
    """The float64 function: the exact function element by element on the integer values."""
    def f64(*arrays, **kw):
        scalar = np.vectorize(lambda *xs: float(exact_int(*(int(x) for x in xs), **kw)),
                              otypes=[np.float64])
        return scalar(*arrays)
    return f64


def _ints(rows):
    return tuple((tuple(float(v) for v in ins), float(out)) for ins, out in rows)


TABLE = (  # name, arity, exact function, rows on integer values, notes
    ("bitwise_and", 2, _binary(lambda a, b: a & b), (((0, 0), 0), ((-1, 5), 5), ((6, 3), 2)), ""),
    ("bitwise_or", 2, _binary(lambda a, b: a | b), (((0, 0), 0), ((-1, 5), -1), ((6, 3), 7)), ""),
    ("bitwise_xor", 2, _binary(lambda a, b: a ^ b), (((5, 3), 6), ((-1, 0), -1), ((7, 7), 0)), ""),
    ("bitwise_not", 1, _not, (((0,), -1), ((-1,), 0), ((5,), -6)),
     "~a; on bool (bits=1) logical not"),
    ("bitwise_left_shift", 2, _left_shift,
     (((1, 3), 8), ((1, 64), 0), ((1, -1), 0), ((-1, 1), -2), ((3, 0), 3)),
     "a << b (math value, the harness wraps); b < 0 or b >= bits gives 0"),
    ("bitwise_right_shift", 2, _right_shift,
     (((-8, 1), -4), ((-8, 64), -1), ((8, 64), 0), ((8, -1), 0), ((-1, -1), -1), ((9, 1), 4)),
     "a >> b arithmetic; b < 0 or b >= bits gives the sign fill (-1 or 0)"),
)

ORACLES = [
    oracle(name, arity, EXACT, _on_floats(fn), None, fn,
           domain=(ANY,) if arity == 1 else (ANY, (0.0, 64.0)), specials=_ints(rows),
           zero_sign_matters=False,
           notes=(notes + "; " if notes else "") + "integer and bool dtypes only; keywords bits, "
                 "signed; the shift-count domain is the in-range one, counts outside are defined")
    for name, arity, fn, rows, notes in TABLE
]
