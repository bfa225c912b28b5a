"""An op nbx does not have, defined by its user: `UserOp`, and `registered`, the context that lends
its oracle (and device oracle) to the harness for one verification.

The truth is the user's mpmath function, decided as nbx decides its own ops: the host's float64
truth of each case, then, where that cannot decide the rounding, Ziv's loop
(oracles/rounding.round_correctly) around the mpmath function. The float64 truth is

- the user's vectorized float64 function with its stated relative bound E (`float64=`, `bound=`):
  where E is wider than the host's window (rule.host_bound, 2^-(p+19)), the elements within E of a
  rounding boundary of the result format (the rule's undecided test with E) take the mpmath value
  instead, so that the rule, run with its own window, decides every element correctly;
- otherwise the mpmath function itself, evaluated at 64 and 128 bits (doubling up to 1024 until
  the two round to the same float64), so a cancellation inside the user's expression (exp(x) - 1
  near 0) costs precision, not correctness.

Specials come from the mpmath definition unless a row of `specials=` gives the input: at an
infinite input mpmath's own value where it is real and not NaN (log(inf) = inf), else the limit,
taken as the value at +-2^1100 and +-2^1200 (beyond every format's range) when both agree, to a
finite value, an infinity or a signed zero, else NaN (sin has no limit); a NaN input gives NaN;
a zero result at a zero input has the sign of the value at +-2^-1100 on that zero's side
(x * sigmoid(x) at -0 is -0, x * x is +0); any other zero is +0.
"""
from __future__ import annotations

import inspect
import math
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

import mpmath
import numpy as np
from mpmath import mp

from nbx.oracles.device import DEVICE_ORACLES, DeviceOracle
from nbx.oracles import ORACLES, Oracle
from nbx.oracles.base import lookup_special, quiet

from nbx import dtype
from nbx.ops.registry import OpSpec, Param
from nbx.ops.verify import Verify
from nbx.harness.scoring import rule

FLOATS = (dtype.float16, dtype.bfloat16, dtype.float32, dtype.float64)
# Inputs standing in for an infinity and for a zero's side: beyond every format (float64's largest
# is below 2^1024, its least subnormal 2^-1074), so a limit the function approaches is reached there
# to far more than any format's precision, while two of them disagree where there is no limit.
FAR = (mp.mpf(2) ** 1100, mp.mpf(2) ** 1200)
NEAR = mp.mpf(2) ** -1100
BEYOND = mp.mpf(2) ** 1030      # a value past this is an infinity of every format
BELOW = mp.mpf(2) ** -1080      # a value under this is a zero of every format
_LOCK = threading.RLock()


class ReferenceRaised(ValueError):
    """The user's mpmath reference raised at an input."""


def _show(values) -> str:
    """Inputs as decimal and hex floats; a far input as the infinity it stands in for."""
    out = []
    for v in values:
        if isinstance(v, mpmath.mpf) and mp.isfinite(v) and abs(v) >= BEYOND:
            out.append(f"{mpmath.nstr(v, 5)} (standing in for {'-' if v < 0 else ''}inf: its limit)")
        else:
            out.append(f"{float(v)!r} ({float(v).hex()})")
    return ", ".join(out)


@dataclass
class UserOp:
    """The user's definition of an op: `reference` (mpmath, the truth; parameters by name), its
    arity, optional float64 function with relative bound E, optional device form (a @triton.jit
    function of float64 operands (x, p0, p1), bound k float64 ulps, exact at NaN, infinities and
    zeros), special rows ((inputs...), value), the domain of each operand, and the parameters with
    their values."""
    name: str
    reference: Callable
    arity: int
    float64: Callable | None = None
    bound: float | None = None
    device: Any = None
    device_k: float | None = None
    specials: tuple = ()
    domain: tuple | None = None
    params: dict = field(default_factory=dict)
    raised: list = field(default_factory=list)     # (inputs, exception) where the reference raised

    # ------------------------------------------------------------------ the mpmath truth
    def _call(self, xs, kw):
        try:
            return self.reference(*xs, **kw)
        except Exception as e:  # noqa: BLE001 (any failure of the user's function is reported with its input)
            self.raised.append((tuple(float(x) for x in xs), e))
            raise ReferenceRaised(f"{self.name}: the reference raised {type(e).__name__}: {e} at "
                                  f"{_show(xs)}") from e

    def value(self, xs: tuple, kw: dict):
        """The reference at mpf inputs xs, with limits at infinities and NaN at a NaN: an mpf, or a
        float (an infinity, NaN or signed zero)."""
        if any(mp.isnan(x) for x in xs):
            return math.nan
        if any(mp.isinf(x) for x in xs):
            return self.limit(xs, kw)
        return _real(self._call(xs, kw))

    def limit(self, xs: tuple, kw: dict):
        """The value at inputs some of which are infinite: mpmath's own at the infinities where it
        is real and not NaN (log(inf) = inf, tanh(-inf) = -1; a zero takes its sign from the far
        inputs), else the limit at the far inputs FAR (x * sigmoid(x) at -inf: inf * 0 is NaN to
        mpmath, -0 as a limit), NaN where they disagree (sin)."""
        try:
            y = _real(self.reference(*xs, **kw))
        except Exception:  # noqa: BLE001 (mpmath without a value at infinity: the limit decides)
            y = math.nan
        far = [_kind(self._call([mp.sign(x) * f if mp.isinf(x) else x for x in xs], kw)) for f in FAR]
        if not mp.isnan(y):
            if y != 0:
                return y
            sides = [math.copysign(1.0, v) if isinstance(v, float) else float(mp.sign(v)) for v in far]
            return -0.0 if all(s < 0 for s in sides) else 0.0
        return far[0] if _same_kind(*far) else math.nan

    def zero_sign(self, xs: tuple, kw: dict) -> float:
        """The sign of a zero result at xs: at a zero input, the sign of the value on that zero's side."""
        if not any(x == 0 for x in xs):
            return 0.0
        side = [math.copysign(1.0, float(x)) * NEAR if x == 0 else mp.mpf(x) for x in xs]
        with mp.workprec(64):
            y = self._call(side, kw)
        return -0.0 if (isinstance(y, mpmath.mpf) and y < 0) or (isinstance(y, float) and y < 0) else 0.0

    def mp_fn(self, *xs, **kw):
        """Oracle.mp: the value at the working precision (evaluate_mp rounds it)."""
        return self.value(tuple(xs), kw)

    def truth64(self, row: tuple, kw: dict) -> float:
        """The value at float inputs `row`, rounded to float64: evaluations at doubling precision
        (64 .. 1024 bits) until two round alike."""
        xs = tuple(mp.mpf(v) for v in row)
        if any(math.isnan(v) for v in row):
            return math.nan
        previous = None
        for prec in (64, 128, 256, 512, 1024):
            with mp.workprec(prec):
                y = self.value(xs, kw)
            v = _to_float(y)
            if v == 0 and not isinstance(y, float):
                # a nonzero value under float64's range keeps its sign; an exact zero takes its side's
                v = math.copysign(0.0, y) if y != 0 else self.zero_sign(row, kw)
            if previous is not None and _same_float(v, previous):
                return v
            previous = v
        return previous

    def f64_fn(self, fmt):
        """Oracle.f64 for results of format fmt (vectorized): the user's float64 function made
        exact enough for the rule's window, or the mpmath truth (module docstring)."""
        table = self.specials

        def f64(*arrays, **kw):
            arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
            flat = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
            n = flat[0].size if flat else 0
            if self.float64 is not None:
                with np.errstate(all="ignore"):
                    v = np.array(np.broadcast_to(self.float64(*arrays, **kw), shape), dtype=np.float64).reshape(-1)
                redo = ~np.all([np.isfinite(a) for a in flat], axis=0) if flat else np.zeros(0, bool)
                if self.bound is not None and self.bound > rule.host_bound(fmt):
                    redo |= rule.classify_arrays(v, v, fmt, bound=self.bound).undecided
            else:
                v = np.empty(n)
                redo = np.ones(n, bool)
            for i in np.flatnonzero(redo):
                v[i] = self.truth64(tuple(float(a[i]) for a in flat), kw)
            for inputs, out in table:
                hit = np.all([_matches(a, x) for a, x in zip(flat, inputs)], axis=0)
                if hit.any():
                    v[hit] = float(lookup_special(self.oracle(fmt), tuple(inputs), kw))
            return v.reshape(shape)
        return f64

    # ------------------------------------------------------------------ what the harness reads
    def oracle(self, fmt) -> Oracle:
        return Oracle(name=self.name, arity=self.arity, kind="real", f64=quiet(self.f64_fn(fmt)), mp=self.mp_fn,
                      exact_int=None, domain=self.domain or ((-math.inf, math.inf),) * self.arity,
                      specials=tuple((tuple(i), o) for i, o in self.specials), params=dict(self.params),
                      notes="user op (nbx.verify)", declared_at=_where(self.reference))

    def spec(self) -> OpSpec:
        """Rule F (a float result of the operands' dtype), no body (the callable runs), declared
        correctly rounded nowhere (verify's criteria judge it)."""
        return OpSpec(self.name, self.arity, "F", FLOATS, None,
                      params=tuple(Param(k, v) for k, v in self.params.items()),
                      doc=f"user op {self.name} (nbx.verify)", family="user", declared_at=_where(self.reference),
                      verify=Verify(correctly_rounded=()), operand_names=_operand_names(self.reference, self.arity))

    def device_oracle(self):
        if self.device is None:
            return None
        return DeviceOracle(self.name, self.device, float(self.device_k), tuple(self.params)[:2],
                               f"user device form of {self.name} (nbx.verify), k = {self.device_k:g}", self.arity)


@contextmanager
def registered(user: UserOp, fmt):
    """user's oracle (for results of fmt) and device oracle in nbx's tables while the block runs, and
    out of them after it; one such block at a time (the tables are the process's)."""
    with _LOCK:
        if user.name in ORACLES or user.name in DEVICE_ORACLES:
            raise ValueError(f"nbx.verify: op {user.name!r} has an oracle already: name the user op otherwise")
        ORACLES[user.name] = user.oracle(fmt)
        d = user.device_oracle()
        if d is not None:
            DEVICE_ORACLES[user.name] = d
        try:
            yield user
        finally:
            ORACLES.pop(user.name, None)
            DEVICE_ORACLES.pop(user.name, None)


def arity_of(reference: Callable, params: dict) -> int:
    """The operands of a reference: its positional parameters without a default, less `params`."""
    try:
        sig = inspect.signature(reference)
    except (TypeError, ValueError):
        raise TypeError(f"nbx.verify: reference {reference!r} has no signature to read its operands from; "
                        f"pass arity=") from None
    n = sum(1 for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            and p.default is p.empty and p.name not in params)
    if any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()) or not 1 <= n <= 3:
        raise ValueError(f"nbx.verify: reference {getattr(reference, '__name__', reference)!r} takes {n} operands "
                         f"(read from its signature); an element-wise op takes 1 to 3: pass arity=")
    return n


def _operand_names(reference, arity: int) -> tuple:
    try:
        names = [p.name for p in inspect.signature(reference).parameters.values()][:arity]
    except (TypeError, ValueError):
        names = []
    return tuple(names) if len(names) == arity else tuple(f"x{i}" for i in range(arity))


def _where(fn) -> str:
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else ""


def _real(y):
    """The reference's value as an mpf (or a float: inf, NaN, a signed zero); a complex value
    (mpmath's log(-1)) is NaN, the real function's value outside its domain."""
    if isinstance(y, (float, mpmath.mpf)):
        return y
    if isinstance(y, mpmath.mpc):
        return y.real if y.imag == 0 else math.nan
    return mp.mpf(y)


def _kind(y):
    """A value at a far input as the limit it indicates: an infinity, a signed zero or the mpf."""
    y = _real(y)
    if isinstance(y, float):
        return y
    if mp.isnan(y) or mp.isinf(y):
        return float(y)
    if abs(y) >= BEYOND:
        return math.copysign(math.inf, y)
    if abs(y) <= BELOW:
        return -0.0 if y < 0 else 0.0
    return y


def _same_kind(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, float) and isinstance(b, float) and _same_float(a, b)
    return abs(a - b) <= abs(a) * mp.mpf(2) ** -(mp.prec - 8)


def _to_float(y) -> float:
    if isinstance(y, float):
        return y
    if mp.isnan(y):
        return math.nan
    if abs(y) >= mp.mpf(2) ** 1024:
        return math.copysign(math.inf, y)
    return float(y)


def _same_float(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _matches(a: np.ndarray, x: float) -> np.ndarray:
    x = float(x)
    if math.isnan(x):
        return np.isnan(a)
    return (a == x) & (np.signbit(a) == (math.copysign(1.0, x) < 0))
