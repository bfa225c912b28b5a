"""Shared test helpers: special values per dtype, bit patterns, rounding to a format, ulp distances;
running the CLI in a subprocess."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

import nbx
from nbx import dtype as D

# (precision p including the implicit bit, smallest normal exponent) per float format
FORMAT = {"float16": (11, -14), "bfloat16": (8, -126), "float32": (24, -126), "float64": (53, -1022)}


def dt_id(d) -> str:
    return d.name


def bits(a) -> np.ndarray:
    """The raw bit patterns of an array (nbx Tensor or numpy), as the same-width unsigned ints."""
    if isinstance(a, nbx.Tensor):
        a = a.numpy()
    a = np.array(a, order="C")
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def finfo(d: D.DType):
    return ml_dtypes.finfo(d.np)


def specials(d: D.DType) -> np.ndarray:
    """Values that find bugs: signed zeros, +-1, halves (rounding ties), subnormals, dtype extremes,
    NaN, +-inf for floats; 0, +-1, the extremes and their neighbours for integers."""
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
    fi = finfo(d)
    mx, tiny = float(fi.max), float(fi.smallest_normal)
    sub = float(fi.smallest_subnormal)
    eps = float(fi.eps)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 2.0, 3.0, -3.0, 10.0, 0.1, -0.1,
            1.0 + eps, 1.0 - eps / 2, -(1.0 + eps), math.pi, -math.e, 100.5, -7.25, 0.7, 1e-3,
            math.nan, math.inf, -math.inf, mx, -mx, mx / 3, tiny, -tiny, sub, -sub, tiny - sub, 3 * sub, -5 * sub]
    out = np.array(vals, dtype=np.float64).astype(d.np)
    return out


def int_like(d: D.DType, n: int, rng) -> np.ndarray:
    if d.is_bool:
        return rng.integers(0, 2, n).astype(np.bool_)
    if d.is_int:
        return rng.integers(d.min, d.max, n, dtype=np.int64, endpoint=True).astype(d.np)
    raise TypeError(d)


def randoms(d: D.DType, shape, rng) -> np.ndarray:
    """Values of d: floats over many magnitudes (with a few specials), integers over the whole range."""
    n = int(np.prod(shape)) if shape else 1
    if d.is_float:
        mag = rng.uniform(-4, 4, n)
        v = rng.choice([-1.0, 1.0], n) * 10.0 ** mag
        pick = rng.integers(0, 12, n)
        sp = specials(d).astype(np.float64)
        v = np.where(pick == 0, sp[rng.integers(0, sp.size, n)], v)
        return v.astype(d.np).reshape(shape)
    return int_like(d, n, rng).reshape(shape)


def round_to(x: np.ndarray, d: D.DType) -> np.ndarray:
    """float64 values correctly rounded (nearest even) to float dtype d.

    numpy rounds float64 -> float16/float32 once. For bfloat16 the float64 is first rounded to
    float32 with round-to-odd, which makes the following float32 -> bfloat16 rounding a single
    correct rounding (8 <= 24 - 2 bits)."""
    x = np.asarray(x, dtype=np.float64)
    if d is not D.bfloat16:
        with np.errstate(over="ignore"):
            return x.astype(d.np)
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(np.float32)
    back = r.astype(np.float64)
    b = r.view(np.uint32).copy()
    finite = np.isfinite(x) & np.isfinite(back)
    over = finite & (np.abs(back) > np.abs(x))
    b = np.where(over, b - 1, b)
    inexact = finite & (back != x)
    b = np.where(inexact, b | 1, b).astype(np.uint32)
    return b.view(np.float32).astype(ml_dtypes.bfloat16)


def ulp(y: np.ndarray, d: D.DType) -> np.ndarray:
    """ulp of the format d at float64 values y (subnormals: the fixed quantum; 0: the quantum)."""
    p, emin = FORMAT[d.name]
    y = np.abs(np.asarray(y, dtype=np.float64))
    _, e = np.frexp(y)                      # y = m 2^e, m in [0.5, 1): floor(log2 y) = e - 1
    e = np.where(y == 0, emin, e - 1)
    return np.ldexp(1.0, np.maximum(e, emin) - p + 1)


def ulp_distance(got: np.ndarray, ref: np.ndarray, d: D.DType) -> np.ndarray:
    """|got - ref| in ulps of d at the reference (both finite); float64 arithmetic."""
    g = np.asarray(got).astype(np.float64)
    r = np.asarray(ref).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.abs(g - r) / ulp(r, d)


def host(x) -> np.ndarray:
    return x.numpy() if isinstance(x, nbx.Tensor) else np.asarray(x)


def host_blind(op: str, xs, d: D.DType) -> np.ndarray:
    """Where the host's mpmath takes swiglu's (silu_and_mul's) value for an exact tie: gate >= 600
    with gate up a midpoint of d. The value is gate up (1 - e^-gate + ...); Ziv's last two
    evaluations, at 896 and 1024 bits, both sit on the midpoint once e^-gate < 2^-888 (gate > 615),
    and the exact-value rule (measure.round_exact_or_ziv) then calls it a tie. The device's residual
    decides these; tests/test_device_residuals.py holds it against mpmath at the precision e^-gate
    needs."""
    if op not in ("swiglu", "silu_and_mul"):
        return np.zeros(len(xs[0]), bool)
    with np.errstate(all="ignore"):
        g, u = (np.asarray(x).astype(np.float64) for x in xs[:2])
        m = g * u
        q = m / ulp(m, d)
        return (g >= 600) & np.isfinite(m) & (np.abs(q - np.floor(q)) == 0.5)


def assert_bits_equal(got, want, *, context=""):
    """Identical bit patterns (NaN payloads included) and identical shapes and dtypes."""
    g, w = host(got), host(want)
    assert g.dtype == w.dtype, f"{context}: dtype {g.dtype} != {w.dtype}"
    assert g.shape == w.shape, f"{context}: shape {g.shape} != {w.shape}"
    bad = bits(g) != bits(w)
    if bad.any():
        idx = np.argwhere(bad)[:5]
        raise AssertionError(f"{context}: {int(bad.sum())} of {bad.size} differ, e.g. at {idx.tolist()}: "
                             f"got {g[tuple(idx[0])]!r} want {w[tuple(idx[0])]!r}")


# ---------------------------------------------------------------------- the CLI in a subprocess
REPO = Path(__file__).resolve().parents[1]


def nbx_cmd(*args, cwd: Path, bank_dir: Path | None = None, pre: str | None = None,
            timeout=300) -> subprocess.CompletedProcess:
    """`python -m nbx ARGS` in a subprocess of this checkout, with NBX_BANK = bank_dir (None: the
    committed bank); pre: Python run first in that process (then the CLI runs through nbx.cli.main)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NBX_BANK", None)
    if bank_dir is not None:
        env["NBX_BANK"] = str(bank_dir)
    head = ["-m", "nbx"] if pre is None else \
        ["-c", f"import sys; {pre}; from nbx.cli import main; sys.argv[0] = 'nbx'; sys.exit(main(sys.argv[1:]))"]
    return subprocess.run([sys.executable, *head, *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def ok(p: subprocess.CompletedProcess, code=0) -> subprocess.CompletedProcess:
    assert p.returncode == code, f"exit {p.returncode} (wanted {code})\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p

