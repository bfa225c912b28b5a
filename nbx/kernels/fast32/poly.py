"""Coefficients of the fast paths: their data file, kernel parameters, Horner evaluation.

The coefficients are fitted by tools/fit_fast32.py, which writes coefficients.json beside this
file; each body reads its own entry (coefficients(name)). Constants reach a kernel as parameters
(the FastPath's table): each float64 as its int64 bit pattern, because Triton passes a Python float
as a float32; param() decodes one with a bitcast, one ULDC.64 where an immediate costs two UMOVs.
"""
import json
from pathlib import Path

import numpy as np
import triton
import triton.language as tl

COEFFICIENTS = Path(__file__).with_name("coefficients.json")
_FITS = json.loads(COEFFICIENTS.read_text())


def coefficients(name: str) -> tuple:
    """The fitted coefficients `name` (lowest degree first), exactly as float64s."""
    return tuple(float(c) for c in _FITS[name]["coefficients"])


def fit_error_log2(name: str) -> float:
    """log2 of the fit's maximum (weighted or relative) error, as tools/fit_fast32.py printed it."""
    return float(_FITS[name]["error_log2"])


def param_bits(values) -> tuple:
    """float64 values as the int64 bit patterns param() decodes (kernel parameters)."""
    return tuple(int(v) for v in np.asarray(values, dtype=np.float64).view(np.int64))


@triton.jit
def param(c):
    """A float64 kernel parameter from its int64 bit pattern (launch.device_table)."""
    return tl.cast(c, tl.int64).to(tl.float64, bitcast=True)


@triton.jit
def horner4(z, c0, c1, c2, c3):
    return c0 + z * (c1 + z * (c2 + z * c3))


@triton.jit
def horner6(z, c0, c1, c2, c3, c4, c5):
    return c0 + z * (c1 + z * (c2 + z * (c3 + z * (c4 + z * c5))))


@triton.jit
def horner(z, C: tl.constexpr, N: tl.constexpr):
    """Horner's rule over the N >= 2 constant coefficients C (a constexpr tuple, lowest degree
    first), as hornerp over kernel parameters."""
    acc = z * C[N - 1] + C[N - 2]
    for i in tl.static_range(N - 3, -1, -1):
        acc = acc * z + C[i]
    return acc


@triton.jit
def hornerp(z, c, OFF: tl.constexpr, N: tl.constexpr):
    """Horner's rule over the N parameters c[OFF] .. c[OFF + N - 1] (lowest degree first), N >= 2."""
    acc = z * param(c[OFF + N - 1]) + param(c[OFF + N - 2])
    for i in tl.static_range(N - 3, -1, -1):
        acc = acc * z + param(c[OFF + i])
    return acc
