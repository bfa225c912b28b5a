"""Float64 oracles that run as Triton code on the device, each with a stated error bound.

A device oracle is a `@triton.jit` function of float64 operands (and up to two float64 parameters)
that returns a float64 value v with |v - f(x)| <= E |v|, E = k 2^-53, wherever f(x) is finite and
at least 2^-151 in magnitude (below it, |v| < 2^-150: both round to a zero in every target format,
and the bounds of forms with a rounded argument, gelu's, are taken there), and exactly f(x) where f(x)
is NaN, an infinity or zero. From v and E the device decides
the correctly rounded result for float32, float16 and bfloat16 (nbx/harness/scoring/device.py): v's
interval either rounds to one value of the format, the correctly rounded one, or holds a rounding
boundary, and only then does the case go to mpmath on the host. k is a promise checked by tests
against mpmath (tests/test_device_oracles.py), on both backends; it is set with room, because a
bound that is too tight decides a case wrongly while one that is too loose only sends more cases
to mpmath (a fraction 2k / 2^29 of float32 results).

This package defines Triton kernels, so it is imported after nbx: the backend (and Triton's
interpreter switch, which must be set before any kernel is decorated) is chosen at `import nbx`.
It imports nothing of nbx itself.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

if "nbx.backend" not in sys.modules:
    raise ImportError("oracles.device defines Triton kernels: import nbx first (it chooses the backend "
                      "and switches Triton's interpreter on before any kernel is decorated)")

DEVICE_ORACLES: dict[str, "DeviceOracle"] = {}


@dataclass(frozen=True)
class DeviceOracle:
    """fn: @triton.jit (x, p0, p1) -> float64 for unary ops, (a, b, p0, p1) for binary ones,
    (a, b, c, p0, p1) for ternary ones; k: the bound in float64 ulps of the value (E = k 2^-53; 0:
    exact); params: the op's parameter names passed as p0, p1 (with the oracle's defaults); why: how
    k follows from the evaluation; exact_at: for binary and ternary oracles, a @triton.jit function
    of the same arguments -> bool, true where the value is exact (a tie there is a tie)."""
    name: str
    fn: Any
    k: float
    params: tuple = ()
    why: str = ""
    arity: int = 1
    exact_at: Any = None        # @triton.jit (operands, p0, p1) -> bool: where the value is exact
    residual: Any = None        # @triton.jit (operands, p0, p1) -> lo: the exact value is v + lo where
                                # lo is not NaN (a double-double), so a tie of v is decided by lo's sign
    args: Any = None            # (target) -> (p0, p1): parameters taken from the target (a cast's range,
                                # the result format's largest value) instead of the op's by name; None
                                # from it: the target's parameters are beyond this oracle

    @property
    def bound(self) -> float:
        return self.k * 2.0 ** -53


def device(name: str, fn, k: float, params: tuple = (), why: str = "", arity: int = 1,
           exact_at=None, residual=None, args=None) -> DeviceOracle:
    if name in DEVICE_ORACLES:
        raise ValueError(f"device oracle {name!r} registered twice")
    if len(params) > 2:
        raise ValueError(f"device oracle {name!r}: at most 2 parameters, got {params}")
    d = DeviceOracle(name, fn, float(k), tuple(params), why, arity, exact_at, residual, args)
    DEVICE_ORACLES[name] = d
    return d


from . import activations, arithmetic, binary_math, convert, division, exact, ternary, unary  # noqa: E402,F401  (registration)
