"""Comparisons: bool results, compared exactly.

Comparisons are IEEE: NaN is unordered (only ne is True), -0 == +0.
"""
from __future__ import annotations

import operator

import numpy as np

from .base import INF, NAN, oracle, truth_rows

CMP_INPUTS = ((NAN, NAN), (NAN, 1.0), (1.0, NAN), (0.0, -0.0), (-0.0, 0.0), (INF, INF),
              (-INF, INF), (1.0, 2.0), (2.0, 1.0), (-INF, -INF))

COMPARISONS = (  # name, numpy ufunc, Python operator, truth over CMP_INPUTS
    ("eq", np.equal, operator.eq, "FFFTTTFFFT"),
    ("ne", np.not_equal, operator.ne, "TTTFFFTTTF"),
    ("lt", np.less, operator.lt, "FFFFFFTTFF"),
    ("le", np.less_equal, operator.le, "FFFTTTTTFT"),
    ("gt", np.greater, operator.gt, "FFFFFFFFTF"),
    ("ge", np.greater_equal, operator.ge, "FFFTTTFFTT"),
)


ORACLES = [
    oracle(name, 2, "bool", ufunc, op, op, specials=truth_rows(CMP_INPUTS, truth),
           notes="IEEE comparison; integers compared exactly (no rounding through a float)")
    for name, ufunc, op, truth in COMPARISONS
]
