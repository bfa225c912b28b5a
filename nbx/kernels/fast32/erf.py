"""erf of float32 x as one rational in float64: x P(t) / Q(t), t = x^2, degrees 7/8.

x is clamped to [-ERF_CLAMP, ERF_CLAMP] in float32 first: erf(3.921875) = 1 - 2.92e-8 rounds to 1.0f
as erf does from 3.9192 on, and lies 2^-30.5 from the rounding midpoint 1 - 2^-25, far outside the
window, so clamped inputs (infinities too) take the fast path with no select. The clamp propagates
NaN (FMNMX.NAN); NaN and float32-subnormal results are read from the rounded value (keys.tiny_or_nan),
with no test of x. Every coefficient is positive (tools/fit_fast32.py: near-minimax in relative
error, 2^-41.01), so neither Horner sum cancels. The division is quotient()'s step on D = -Q, built
from negated coefficients: fma(D, r, 1) = 1 - Q r, and r = rcp(Q) is rcp(D) with its sign bit
flipped. 21 float64 operations per element, where libdevice's erf takes 41 (two polynomials and an
exp). Inside, |erf x| is 0 or in [2^-126, 1], and erf(-0) = -0 P(0) / Q(0) = -0.

The window: 2^-41.01 measured over every float32 input on the H200 (bench/fast32_exhaustive.py);
ERF_K = 8192 float64 ulps is E = 2^-40, 2.0x that. About 1 in 16 of its 2048-element tiles holds a
hard element, so a flagged tile recomputes only its pieces that hold one (FastPath.pieces).
"""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from ..fastpath import FastPath
from .keys import tiny_or_nan
from .poly import coefficients, hornerp

ERF_CLAMP = tl.constexpr(3.921875)             # 251/64: erf rounds to 1.0f from 3.9192 on
ERF_K = 8192
ERF_P = coefficients("ERF_P")
ERF_Q = coefficients("ERF_Q")
ERF_NP = tl.constexpr(len(ERF_P))
ERF_NQ = tl.constexpr(len(ERF_Q))
ERF_PARAMS = ERF_P + tuple(-c for c in ERF_Q)  # kernel parameters: P, then -Q


@triton.jit
def erf(x, c):
    """x float32, c = ERF_PARAMS -> (float64 erf(x), relative error < 2^-41.0; NaN and float32
    subnormal results, which the rounding test cannot judge)."""
    X = tl.minimum(tl.maximum(x, -ERF_CLAMP, propagate_nan=tl.PropagateNan.ALL), ERF_CLAMP,
                   propagate_nan=tl.PropagateNan.ALL).to(tl.float64)
    t = X * X
    n = X * hornerp(t, c, 0, ERF_NP)
    d = hornerp(t, c, ERF_NP, ERF_NQ)                           # -Q(t) <= -1
    r = (libdevice.rcp64h(d).to(tl.int64, bitcast=True) ^ (-0x7FFFFFFFFFFFFFFF - 1)).to(tl.float64, bitcast=True)
    e = tl.fma(d, r, 1.0)                                       # 1 - Q r
    y = n * tl.fma(r, tl.fma(e, e, e), r)                       # quotient()'s step: ~2^-52
    return y, tiny_or_nan(y.to(tl.float32))


@triton.jit
def erf_clamped64(w):
    """What erf() approximates: erf of x clamped as erf() clamps it."""
    return libdevice.erf(tl.minimum(tl.maximum(w, -ERF_CLAMP), ERF_CLAMP))


# 2048-element tiles (16 elements per thread) spread the per-thread cost of the 17 parameters over
# more elements, and the kernel is capped at 56 registers: 0.91 of copy on the H200
# (reports/h200/gpu-check-20261204.md; the choice: docs/DECISIONS.md)
ERF = FastPath(erf, table=ERF_PARAMS, k=ERF_K, reference=erf_clamped64, pieces=True, block=2048,
               max_registers=56)
