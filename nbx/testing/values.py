"""Values that find bugs, per nbx dtype: the special values of each format (signed zeros, rounding
ties, subnormals, the extremes, NaN and the infinities) and of each integer type (0, +-1, the
extremes and their neighbours), and random values over many magnitudes with some of those mixed in.
Pure functions of their arguments (and of the numpy Generator given)."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from nbx.dtype import as_dtype


def specials(dtype) -> np.ndarray:
    """The special values of `dtype` (a DType, its name or a numpy dtype), as an array of it."""
    d = as_dtype(dtype, op="specials")
    if d.is_bool:
        return np.array([False, True])
    if d.is_int:
        lo, hi = d.min, d.max
        vals = {0, 1, 2, 3, 7, 100, 127, hi, hi - 1, hi // 2, lo, lo + 1, lo // 2, -1, -2, -3, -7, -100}
        if d.bits >= 32:
            vals |= {2**31 - 1, -(2**31), 2**24 + 1}
        if d.bits == 64:
            vals |= {2**53 + 1, -(2**53) - 3, 2**62 + 12345, 2**63 - 2}
        return np.array(sorted(v for v in vals if lo <= v <= hi), dtype=d.np)
    fi = ml_dtypes.finfo(d.np)
    mx, tiny = float(fi.max), float(fi.smallest_normal)
    sub = float(fi.smallest_subnormal)
    eps = float(fi.eps)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 2.0, 3.0, -3.0, 10.0, 0.1, -0.1,
            1.0 + eps, 1.0 - eps / 2, -(1.0 + eps), math.pi, -math.e, 100.5, -7.25, 0.7, 1e-3,
            math.nan, math.inf, -math.inf, mx, -mx, mx / 3, tiny, -tiny, sub, -sub, tiny - sub, 3 * sub, -5 * sub]
    with np.errstate(over="ignore"):
        return np.array(vals, dtype=np.float64).astype(d.np)


def integers(dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    """n values of an integer or bool dtype, uniform over its whole range."""
    d = as_dtype(dtype, op="integers")
    if d.is_bool:
        return rng.integers(0, 2, n).astype(np.bool_)
    if d.is_int:
        return rng.integers(d.min, d.max, n, dtype=np.int64, endpoint=True).astype(d.np)
    raise TypeError(f"integers: dtype={d.name} is a float dtype; allowed: bool and the integer dtypes")


def randoms(dtype, shape, rng: np.random.Generator) -> np.ndarray:
    """Values of `dtype` of `shape`: floats log-uniform over 1e-4..1e4 of either sign with one in 12
    a special value, integers over the whole range."""
    d = as_dtype(dtype, op="randoms")
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(shape)
    n = int(np.prod(shape)) if shape else 1
    if d.is_float:
        mag = rng.uniform(-4, 4, n)
        v = rng.choice([-1.0, 1.0], n) * 10.0 ** mag
        pick = rng.integers(0, 12, n)
        sp = specials(d).astype(np.float64)
        v = np.where(pick == 0, sp[rng.integers(0, sp.size, n)], v)
        return v.astype(d.np).reshape(shape)
    return integers(d, n, rng).reshape(shape)
