"""Logical ops: any dtype in, bool out, compared exactly.

A value is true when it is nonzero, so NaN is true and -0.0 is false.
"""
from __future__ import annotations

import operator

import numpy as np

from .base import INF, NAN, oracle, truth_rows, unary_rows

LOGICAL_INPUTS = ((NAN, 0.0), (0.0, -0.0), (-0.0, 1.0), (INF, NAN), (0.0, 0.0), (1.0, 2.0),
                  (NAN, NAN), (-INF, 0.0))

LOGICAL = (  # name, numpy ufunc, scalar function on truth values, truth over LOGICAL_INPUTS
    ("logical_and", np.logical_and, lambda p, q: p and q, "FFFTFTTF"),
    ("logical_or", np.logical_or, lambda p, q: p or q, "TFTTFTTT"),
    ("logical_xor", np.logical_xor, operator.xor, "TFTFFFFT"),
)


def _logical(fn):
    return lambda a, b: fn(bool(a != 0), bool(b != 0))


ORACLES = [
    oracle(name, 2, "bool", ufunc, _logical(fn), _logical(fn),
           specials=truth_rows(LOGICAL_INPUTS, truth), notes="nonzero is true (NaN is true)")
    for name, ufunc, fn, truth in LOGICAL
] + [
    oracle("logical_not", 1, "bool", np.logical_not, lambda x: x == 0, lambda a: a == 0,
           specials=unary_rows(False, False, False, True, True, (2.0, False)),
           notes="x == 0: NaN is true, so logical_not(NaN) is False"),
]
