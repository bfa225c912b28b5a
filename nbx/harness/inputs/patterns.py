"""Operand and result arrays made or gathered on the device: every bit pattern of a range, every
16-bit operand pair of a range of 32-bit indices, and the few listed elements of a result that come back to the host."""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from nbx.dtype import DTYPES
from nbx.kernels import launch
from nbx.tensor import Tensor, empty, from_numpy

BLOCK = 1024 if launch.backend.IS_CUDA else 1 << 16


@triton.jit
def _bit_patterns_kernel(out_ptr, start, n, UT: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    bits = (start + i).to(UT)
    tl.store(out_ptr + i, bits.to(out_ptr.dtype.element_ty, bitcast=True), mask=m)


def bit_patterns(dtype: str, start: int, n: int) -> Tensor:
    """The n values of `dtype` whose bit patterns are start, start + 1, ... (made on the device)."""
    d = DTYPES[dtype]
    out = empty(n, dtype=dtype)
    ut = {2: tl.uint16, 4: tl.uint32}[d.itemsize]
    _bit_patterns_kernel[(max(1, triton.cdiv(n, BLOCK)),)](out, start, n, UT=ut, BLOCK=BLOCK,
                                                           **launch.kernel_options())
    return out


@triton.jit
def _pair_patterns_kernel(a_ptr, b_ptr, start, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    k = start + i
    tl.store(a_ptr + i, (k >> 16).to(tl.uint16).to(a_ptr.dtype.element_ty, bitcast=True), mask=m)
    tl.store(b_ptr + i, (k & 0xFFFF).to(tl.uint16).to(b_ptr.dtype.element_ty, bitcast=True), mask=m)


def pair_patterns(dtype: str, start: int, n: int) -> tuple[Tensor, Tensor]:
    """Operand pairs of a 16-bit dtype for the 32-bit indices start .. start + n - 1: the first
    operand's bits are the index's high 16, the second's its low 16 (every pair over 0 .. 2^32)."""
    if DTYPES[dtype].itemsize != 2:
        raise ValueError(f"pair_patterns: {dtype} is not a 16-bit dtype")
    a, b = empty(n, dtype=dtype), empty(n, dtype=dtype)
    _pair_patterns_kernel[(max(1, triton.cdiv(n, BLOCK)),)](a, b, start, n, BLOCK=BLOCK, **launch.kernel_options())
    return a, b


@triton.jit
def _take_kernel(x_ptr, at_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    k = tl.load(at_ptr + i, mask=m, other=0)
    tl.store(out_ptr + i, tl.load(x_ptr + k, mask=m), mask=m)


def take(x: Tensor, at) -> np.ndarray:
    """x's elements at positions `at` (a contiguous 1-D tensor), gathered on the device: only those
    come back to the host."""
    at = np.ascontiguousarray(at, dtype=np.int64).reshape(-1)
    if not at.size:
        return np.zeros(0, dtype=x.dtype.np)
    out = empty(at.size, dtype=x.dtype)
    _take_kernel[(triton.cdiv(at.size, BLOCK),)](x, from_numpy(at), out, at.size, BLOCK=BLOCK,
                                                 **launch.kernel_options())
    return out.numpy()


def evenly(n: int, k: int) -> np.ndarray:
    """Positions of at most k of n items spread evenly over them (the first and the last among
    them), for a quota that must leave some out without favouring one end."""
    if k <= 0 or n <= 0:
        return np.zeros(0, np.int64)
    return np.unique(np.linspace(0, n - 1, min(k, n)).astype(np.int64))
