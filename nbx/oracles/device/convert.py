"""Device oracles of the value-preserving ops with one dtype in and out: copy and angle (of a real
input). Casts between dtypes (to, bf16_to_fp16) and nan_to_num have none: see
tests/test_device_oracles.py's NO_DEVICE_ORACLE."""
import math

import triton
import triton.language as tl

from . import device

PI = tl.constexpr(math.pi)          # float64 pi: within 2^-53 |pi|, rounded once


@triton.jit
def _copy(x, p0, p1):
    return x


@triton.jit
def _angle(x, p0, p1):
    pi = tl.full(x.shape, PI, tl.float64)
    return tl.where(x != x, x, tl.where(x < 0, pi, tl.zeros_like(x)))


device("copy", _copy, 0, why="the identity")
device("angle", _angle, 2, why="0, or float64 pi (one rounding of pi) for x < 0; NaN stays NaN")
