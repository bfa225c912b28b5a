"""Oracles of the composition: the documented evaluation order of each op that declares one
(nbx.ops.verify.Order), as Triton code run on the backend under test.

An op such as addcdiv is not meant to give the correctly rounded value of input + value*t1/t2 in
float64 (that needs an exact three-term sum); it is meant to give the composition its docs state,
each step rounded as written. These functions state that composition independently of the op's
kernel, step by step, and the harness runs them on the same backend with fp fusion off, as the
launcher runs the op: every arithmetic step is then one IEEE operation on both sides, and a libm
step (exp, erfc) is the backend's own (libdevice on CUDA, numpy's under the interpreter), the same
function the op calls. A faithful kernel matches bit for bit (0 ulp); a changed order, a contracted
a*b + c or a perturbed result does not. The error against the exact value is the oracle's business
(nbx/oracles/ternary.py, nbx/oracles/activations.py) and is reported beside.

Signatures follow nbx/oracles/device: (x, p0, p1), (a, b, p0, p1), (a, b, c, p0, p1), float64 in and
out; p0, p1 the op's parameters named in `params`, in order.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from .device.activations import GELU_TANH_COEFF, SQRT_2_OVER_PI, SQRT_HALF, neg_zero, sigmoid64

ORDER_ORACLES: dict[str, "OrderOracle"] = {}


@dataclass(frozen=True)
class OrderOracle:
    name: str            # the op, or its target label ("gelu:approximate=tanh")
    fn: Any
    arity: int
    params: tuple = ()


def order(name: str, fn, arity: int, params: tuple = ()) -> OrderOracle:
    if name in ORDER_ORACLES:
        raise ValueError(f"order oracle {name!r} registered twice")
    o = OrderOracle(name, fn, arity, tuple(params))
    ORDER_ORACLES[name] = o
    return o


@triton.jit
def _addcmul(x, t1, t2, p0, p1):
    prod = p0 * t1
    prod = prod * t2
    return x + prod


@triton.jit
def _addcdiv(x, t1, t2, p0, p1):
    num = p0 * t1
    q = num / t2
    return x + q


@triton.jit
def _lerp(s, e, w, p0, p1):
    diff = e - s
    near_start = s + w * diff
    one_minus = 1.0 - w
    near_end = e - diff * one_minus
    return tl.where(tl.abs(w) < 0.5, near_start, near_end)


@triton.jit
def _glu(a, b, p0, p1):
    return a * sigmoid64(b)


@triton.jit
def _gated_silu(g, u, p0, p1):
    # g * (sigmoid(g) * u); at g = -inf the limit -0 * u
    s = sigmoid64(g) * u
    return tl.where(g == -float("inf"), neg_zero(g) * u, g * s)


@triton.jit
def _gelu(x, p0, p1):
    half_x = 0.5 * x
    z = -x * SQRT_HALF
    return tl.where(x == -float("inf"), neg_zero(x), half_x * libdevice.erfc(z))


@triton.jit
def _gelu_tanh(x, p0, p1):
    cube = x * x * x
    inner = x + cube * GELU_TANH_COEFF
    u = inner * SQRT_2_OVER_PI
    d = 1.0 + libdevice.exp(-2.0 * u)
    return tl.where(x == -float("inf"), neg_zero(x), x / d)


order("addcmul", _addcmul, 3, ("value",))
order("addcdiv", _addcdiv, 3, ("value",))
order("lerp", _lerp, 3)
order("glu", _glu, 2)
order("swiglu", _gated_silu, 2)
order("silu_and_mul", _gated_silu, 2)
order("gelu", _gelu, 1)
order("gelu:approximate=tanh", _gelu_tanh, 1)
