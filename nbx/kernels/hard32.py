"""The exact fallback of float32 results evaluated in float64: a rounding test and a table of hard cases.

A float32 op evaluated in float64 (a libdevice function, or a short composition of them) gives y
with |y - f(x)| <= K float64 ulps, K = HARD32_K. y rounds to a float32 other than f(x)'s only where
a float32 rounding midpoint lies between them, i.e. where |f(x) - midpoint| <= K ulps. The inputs
where that can happen are facts about f, not about the backend, and a float32 function has only
2^32 inputs: tools/hard_cases.py lists, over all of them, every x with |f(x) - midpoint| <= K + 1
ulps (candidates from the device oracle's interval, each decided by mpmath), with its correctly
rounded result, in hard32_cases/<op>.json. That is CORE-MATH's way for binary32 functions
(an exceptions table behind a rounding test).

In the kernel (launch.py, flat.py: every exact-body call of a float32 launch of an op with a
table), `settle` applies the rounding test to y (near_midpoint: y within K ulps of a midpoint, a
fraction 2K / 2^29 of random results); only a tile with a near element compares its inputs with
the table, and a listed input takes the listed result. An unflagged y rounds as f(x) does (a
midpoint between them would lie within K ulps of y), and an unlisted x has no midpoint within
K + 1 ulps of f(x): the test only keeps the comparison off the tiles that cannot need it.
tests/test_hard_cases.py checks every entry against mpmath and every op's results on its entries.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import triton
import triton.language as tl

from .fast32.keys import near_midpoint  # noqa: F401  (re-exported: hard32.near_midpoint)

# the window in float64 ulps of y: libdevice's float64 functions are within 1-5 ulps (CUDA's
# published maxima; erfc 5), glibc's within 1-4, and a composition such as sigmoid's 1/(1 + exp(-x))
# adds half an ulp per rounding: 8 leaves 1.6x over the largest
HARD32_K = 8
WINDOW = tl.constexpr(HARD32_K)             # the same, as the kernels read a global
CASES_DIR = Path(__file__).with_name("hard32_cases")


@dataclass(frozen=True)
class HardCases:
    """The hard cases of a float32 op: xs the inputs' bit patterns and rs the correctly rounded
    results', as signed int32 (the kernel compares int32 bit patterns); k the window they cover."""
    op: str                     # the table's name (table_name): the op, and its parameters where not the defaults
    xs: tuple
    rs: tuple
    k: int = HARD32_K

    @property
    def n(self) -> int:
        return len(self.xs)


def _signed(bits: int) -> int:
    return bits - (1 << 32) if bits >= 1 << 31 else bits


def table_name(op: str, params: dict | None = None, defaults: dict | None = None) -> str:
    """The table of an op at these parameter values: the op's name at its defaults, else
    `op@k=v,...` over the values that differ, numbers as float (the bank names its folders the same
    way), a choice as its name (`gelu@approximate=tanh`)."""
    defaults = defaults or {}

    def value(v):
        return v if isinstance(v, str) else float(v)

    moved = {k: value(v) for k, v in (params or {}).items()
             if k in defaults and (defaults[k] is None or value(v) != value(defaults[k]))}
    return op + ("@" + ",".join(f"{k}={v}" for k, v in sorted(moved.items())) if moved else "")


def parse_table_name(name: str) -> tuple[str, dict]:
    """table_name's inverse: (op, the parameters that differ from the defaults), numbers as float
    and a choice as its name ("gelu@approximate=tanh" -> ("gelu", {"approximate": "tanh"}))."""
    op, _, moved = name.partition("@")

    def value(v: str):
        try:
            return float(v)
        except ValueError:
            return v

    return op, {k: value(v) for k, v in (kv.split("=", 1) for kv in moved.split(",") if kv)}


def path(op: str) -> Path:
    return CASES_DIR / f"{op}.json"


@functools.cache
def cases(op: str) -> HardCases | None:
    """The table named `op` (hard32_cases/<op>.json; table_name gives the name at parameter values),
    or None where there is none. A table written for another window than HARD32_K is refused: its
    entries would not cover the test."""
    p = path(op)
    if not p.exists():
        return None
    doc = json.loads(p.read_text())
    if doc.get("op") != op or doc.get("k") != HARD32_K:
        raise ValueError(f"{p}: a table of op {doc.get('op')!r} for window k={doc.get('k')!r}; expected "
                         f"op {op!r} and k={HARD32_K} (rerun tools/hard_cases.py --op {op})")
    entries = doc["entries"]
    return HardCases(op, tuple(_signed(int(e[0], 16)) for e in entries),
                     tuple(_signed(int(e[1], 16)) for e in entries), HARD32_K)


@triton.jit
def settle(x, y, XS: tl.constexpr, RS: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """y (float64, the evaluation of f at the float32 x) rounded to float32, and the table's result
    where x is one of its N inputs XS, in a tile that holds an element near a midpoint."""
    r = y.to(tl.float32)
    if y.dtype == tl.float64:       # else a body that rounds itself (an IEEE operation): nothing to settle
        near = near_midpoint(y, K)
        if tl.max(tl.ravel(near.to(tl.int32)), 0) > 0:
            bits = x.to(tl.int32, bitcast=True)
            rb = r.to(tl.int32, bitcast=True)
            for i in tl.static_range(N):
                rb = tl.where(bits == XS[i], RS[i], rb)
            r = rb.to(tl.float32, bitcast=True)
    return r
