"""Oracles: the meaning of every nbx op, keyed by op name.

Each Oracle has a float64 numpy function, an mpmath function, an exact integer function where
the op takes integers, its domain, and its values at special inputs as a table. Imports need
numpy and mpmath only.
"""
from __future__ import annotations

from . import activations, arithmetic, binary_math, bitwise, compare, convert, logical, ternary, unary
from .base import MpConst, Oracle, evaluate_mp, lookup_special


def _registry(*families) -> dict[str, Oracle]:
    table: dict[str, Oracle] = {}
    for family in families:
        for entry in family.ORACLES:
            if entry.name in table:
                raise ValueError(f"oracle {entry.name!r} is declared twice "
                                 f"(second time in {family.__name__})")
            table[entry.name] = entry
    return table


ORACLES: dict[str, Oracle] = _registry(activations, arithmetic, binary_math, bitwise, compare, convert,
                                       logical, ternary, unary)
ORACLE_NAMES = tuple(ORACLES)

__all__ = ["ORACLES", "ORACLE_NAMES", "MpConst", "Oracle", "evaluate_mp", "lookup_special"]
