"""Comparisons and logical ops: bool results, compared exactly.

Comparisons are IEEE: NaN is unordered (only ne is True), -0 == +0. Logical ops take any dtype;
a value is true when it is nonzero, so NaN is true and -0.0 is false.
"""
from __future__ import annotations

import operator

import numpy as np

from .base import INF, NAN, oracle, unary_rows

CMP_INPUTS = ((NAN, NAN), (NAN, 1.0), (1.0, NAN), (0.0, -0.0), (-0.0, 0.0), (INF, INF),
              (-INF, INF), (1.0, 2.0), (2.0, 1.0), (-INF, -INF))
LOGICAL_INPUTS = ((NAN, 0.0), (0.0, -0.0), (-0.0, 1.0), (INF, NAN), (0.0, 0.0), (1.0, 2.0),
                  (NAN, NAN), (-INF, 0.0))


def _rows(inputs, truth: str):
    """The truth column as a string of T/F, one letter per row of `inputs`."""
    assert len(truth) == len(inputs)
    return tuple((pair, letter == "T") for pair, letter in zip(inputs, truth))


COMPARISONS = (  # name, numpy ufunc, Python operator, truth over CMP_INPUTS
    ("eq", np.equal, operator.eq, "FFFTTTFFFT"),
    ("ne", np.not_equal, operator.ne, "TTTFFFTTTF"),
    ("lt", np.less, operator.lt, "FFFFFFTTFF"),
    ("le", np.less_equal, operator.le, "FFFTTTTTFT"),
    ("gt", np.greater, operator.gt, "FFFFFFFFTF"),
    ("ge", np.greater_equal, operator.ge, "FFFTTTFFTT"),
)

LOGICAL = (  # name, numpy ufunc, scalar function on truth values, truth over LOGICAL_INPUTS
    ("logical_and", np.logical_and, lambda p, q: p and q, "FFFTFTTF"),
    ("logical_or", np.logical_or, lambda p, q: p or q, "TFTTFTTT"),
    ("logical_xor", np.logical_xor, operator.xor, "TFTFFFFT"),
)


def _logical(fn):
    return lambda a, b: fn(bool(a != 0), bool(b != 0))


ORACLES = [
    oracle(name, 2, "bool", ufunc, op, op, specials=_rows(CMP_INPUTS, truth),
           notes="IEEE comparison; integers compared exactly (no rounding through a float)")
    for name, ufunc, op, truth in COMPARISONS
] + [
    oracle(name, 2, "bool", ufunc, _logical(fn), _logical(fn),
           specials=_rows(LOGICAL_INPUTS, truth), notes="nonzero is true (NaN is true)")
    for name, ufunc, fn, truth in LOGICAL
] + [
    oracle("logical_not", 1, "bool", np.logical_not, lambda x: x == 0, lambda a: a == 0,
           specials=unary_rows(False, False, False, True, True, (2.0, False)),
           notes="x == 0: NaN is true, so logical_not(NaN) is False"),
]
