"""nbx.verify: any callable on arrays, measured against nbx's oracle of an op, or against the user's
own mpmath definition of an op nbx does not have, over the value suites; a `Verification` back.

    import numpy as np, nbx
    v = nbx.verify(np.exp, "exp", "float32")                       # nbx's op: bank and sweep
    print(v); v.passed; v["sweep"].max_ulp; v.write("reports/mine")

    import mpmath
    v = nbx.verify(my_quick_gelu, reference=lambda x: x / (1 + mpmath.exp(-1.702 * x)),
                   dtype="float16", name="quick_gelu")           # all 65,536 float16 inputs

The callable gets the operands as arrays of `arrays` through DLPack and the parameters by name
(nbx.harness.targets.callables), and is scored by the runner's own jobs (api.measure): the same
inputs, oracles and rule as nbx's own row, decided on the device where the row is (a float32 `bits`
range with a device oracle). A user op's oracle is lent to the harness for the call only
(userop.registered).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from nbx.dtype import DTYPES, DType, float32
from nbx.backend import backend_id
from nbx.ops import OPS
from nbx.harness import api
from nbx.harness.inputs import cases
from nbx.harness.suites import exhaustive
from nbx.harness.targets.callables import CallableTarget, converter
from nbx.harness.verify.result import Verification
from nbx.harness.verify.userop import FLOATS, UserOp, arity_of, registered

USER_SUITES = ("exhaustive16", "sweep", "pairs")


def verify(fn: Callable, op: str | None = None, dtype="float32", *, suites=None, profile: str = "ci", bits=None,
           params: dict | None = None, arrays="numpy", name: str | None = None, seed: int = 0,
           max_ulp: float | None = None, correctly_rounded: bool = False,
           reference: Callable | None = None, float64: Callable | None = None, bound: float | None = None,
           device=None, device_k: float | None = None, specials=None, domain=None,
           arity: int | None = None) -> Verification:
    """Measure `fn` as the op `op` on `dtype` and return a Verification (its `.passed`, `str()`,
    `.markdown()`, `.write(dir)`).

    fn: a callable taking the op's operands as arrays of `arrays` ("numpy", "torch", "cupy", "jax",
      "nbx", or a function of an nbx Tensor) and `params` by name, returning an array of the op's
      result dtype and shape that speaks DLPack (numpy included).
    op: a name of nbx.OPS, measured against nbx's oracle; or, with `reference`, the name of an op nbx
      does not have (default: `name`).
    suites: names among bank, exhaustive16, sweep, pairs (default: the row's value suites: bank, then
      exhaustive16 for a 16-bit unary dtype, sweep for another unary one, pairs for more operands; a
      user op has no bank). profile: ci, nightly or exhaustive (the case counts of nbx run).
    bits: (lo, hi), the bit patterns lo .. hi - 1 of a unary float32 sweep or 16-bit exhaustive16
      (a float32 binary or ternary op with a device oracle: the stratified tuples lo .. hi - 1).
    name: labels the measurements (default: the callable's module.qualname).
    max_ulp, correctly_rounded: criteria of `.passed` beyond "no special mismatch, no suite raised".

    An op nbx does not have (`reference`, an mpmath function of mpf operands and the parameters by
    name, the truth):
    float64, bound: a vectorized float64 (numpy) function of the op and its relative error bound E,
      the host's fast truth (the mpmath function decides where E leaves the rounding in doubt);
      without them every case is evaluated in mpmath.
    device, device_k: a @triton.jit float64 form (x, p0, p1) -> value within k float64 ulps (exact at
      NaN, infinities and zeros), with which a float32 `bits` range is decided on the device.
    specials: rows ((inputs...), value) that override the mpmath definition (default: limits at
      infinities, NaN at NaN); domain: per operand the (lo, hi) interval the sweeps draw from;
      arity: the number of operands (default: read from reference's signature).
    """
    if not callable(fn):
        raise TypeError(f"nbx.verify: fn must be callable, got {type(fn).__name__}")
    d = _dtype(dtype)
    params = dict(params or {})
    label = name or _label(fn)
    if reference is None:
        for arg, value in (("float64", float64), ("bound", bound), ("device", device), ("specials", specials),
                           ("domain", domain), ("arity", arity)):
            if value is not None:
                raise TypeError(f"nbx.verify: {arg}= belongs to a user op's definition; pass reference= (an "
                                f"mpmath function) with it, or leave it out for nbx's op {op!r}")
        if op is None:
            raise TypeError("nbx.verify: name the op fn implements: op= a name of nbx.OPS (`nbx ops` lists them), "
                            "or reference= an mpmath function for an op nbx does not have")
        t = api.target(op, d, params=params, fn=fn, arrays=arrays, name=label)
        return _measure(t, suites, profile, bits, seed, max_ulp, correctly_rounded, f"nbx's oracle for {op}", None)
    user = _user_op(fn, op, name, d, params, reference, float64, bound, device, device_k, specials, domain, arity)
    label = (name or _label(fn)) if op else _label(fn)
    t = CallableTarget(user.name, params, d, fn=fn, convert=converter(arrays), name=label, op_spec=user.spec(),
                       arrays=arrays if isinstance(arrays, str) else "")
    with registered(user, d.name):
        return _measure(t, suites, profile, bits, seed, max_ulp, correctly_rounded,
                        f"the mpmath reference of {user.name}", user)


def _measure(t: CallableTarget, suites, profile, bits, seed, max_ulp, correctly_rounded, what: str,
             user: UserOp | None) -> Verification:
    if profile not in cases.PROFILES:
        raise ValueError(f"nbx.verify: profile={profile!r}; allowed: {', '.join(cases.PROFILES)}")
    default = _suites(t, user)
    wanted = list(default if suites is None else ([suites] if isinstance(suites, str) else suites))
    allowed = ("bank",) + USER_SUITES if user is None else USER_SUITES
    for s in wanted:
        if s not in allowed:
            raise ValueError(f"nbx.verify: suite {s!r} is not a value suite{' of a user op' if user else ''}; "
                             f"allowed: {', '.join(allowed)}")
    bits = _bits(t, bits, user)
    if user is not None:
        _probe_reference(t, user)
    _probe(t)
    out = Verification(t.name, t.op, t.dtype.name, dict(t.params), what, backend_id(), profile, seed,
                       max_ulp=max_ulp, correctly_rounded=correctly_rounded,
                       operand_dtypes=tuple(x.name for x in t.operand_dtypes()), out_dtype=t.out_dtype.name)
    for s in wanted:
        with np.errstate(all="ignore"):         # a callable's IEEE overflow and NaN are its results
            m = api.measure(t, s, profile=profile, seed=seed, bits=bits, backend=backend_id())
        if user is not None and user.raised:
            inputs, e = user.raised[0]
            raise ValueError(f"nbx.verify: the reference of {user.name} raised {type(e).__name__}: {e} at "
                             f"{', '.join(f'{x!r} ({x.hex()})' for x in inputs)} ({s} suite); return its value "
                             f"there (mpmath has inf and nan) or give a row of specials=") from e
        out.measurements[s] = m
        if m.worst and not m.error:
            out.repro[s] = _repro(t, s, m, user)
    return out


def _dtype(dtype) -> DType:
    if isinstance(dtype, DType):
        return dtype
    try:
        return DTYPES[str(dtype)]
    except KeyError:
        raise ValueError(f"nbx.verify: dtype={dtype!r} is not a dtype of nbx; allowed: {', '.join(DTYPES)}") from None


def _label(fn) -> str:
    module, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None) or type(fn).__name__
    return f"{module}.{qual}" if module else qual


def _suites(t, user) -> list[str]:
    if user is None:
        return [s for s in api.suites_for(t) if s in api.VALUE_SUITES]
    if t.oracle_arity > 1:
        return ["pairs"]
    return ["exhaustive16" if t.dtype.itemsize == 2 else "sweep"]


def _bits(t, bits, user):
    """bits as (lo, hi), checked against what the row's suites can take."""
    if bits is None:
        return None
    try:
        lo, hi = (int(b) for b in bits)
    except (TypeError, ValueError):
        raise ValueError(f"nbx.verify: bits={bits!r} must be a pair (lo, hi) of ints") from None
    if t.oracle_arity == 1 and t.dtype.is_float and t.dtype.itemsize <= 4:
        top = 1 << (8 * t.dtype.itemsize)
        what = f"the bit patterns of {t.dtype.name}"
    elif t.oracle_arity > 1 and exhaustive.device_oracle(t) is not None and (t.dtype is float32 or t.dtype.itemsize == 2):
        top = 1 << 32
        what = "the operand pairs" if t.dtype.itemsize == 2 else "the stratified tuples"
    else:
        raise ValueError(f"nbx.verify: bits= takes a range of a unary float32, float16 or bfloat16 op's bit patterns "
                         f"(or of a binary op's tuples decided on the device); {t.label} on {t.dtype.name} has none")
    if not 0 <= lo < hi <= top:
        raise ValueError(f"nbx.verify: bits=({lo:#x}, {hi:#x}) is out of range: need 0 <= lo < hi <= {top:#x} "
                         f"({what})")
    return lo, hi


def _probe(t: CallableTarget) -> None:
    """fn once on a few of the dtype's special values: a result of the wrong dtype, shape or device, or
    one DLPack cannot read, raises here (TypeError, ValueError) instead of failing every suite."""
    n = 4
    arrays = [np.zeros(n, bool) if d.is_bool else np.resize(cases.special_values(d), n) for d in t.operand_dtypes()]
    with np.errstate(all="ignore"):
        t.run(arrays)


def _probe_reference(t: CallableTarget, user: UserOp) -> None:
    """The reference at the specials and a few values of the dtype: one that raises there (a pole it
    does not define as inf) raises here, naming the input."""
    import math
    xs = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0]
    rows = [tuple([x] * user.arity) for x in xs]
    f64 = user.f64_fn(t.dtype.name)
    for row in rows:
        try:
            f64(*[np.array([v]) for v in row], **{**user.params, **t.params})
        except Exception as e:  # noqa: BLE001 (named, with its input)
            raise ValueError(f"nbx.verify: {e}; return the value there (mpmath has inf and nan) or give a row "
                             f"of specials=") from e
    user.raised.clear()


def _user_op(fn, op, name, d, params, reference, float64, bound, device, device_k, specials, domain, arity) -> UserOp:
    if not callable(reference):
        raise TypeError(f"nbx.verify: reference must be an mpmath function, got {type(reference).__name__}")
    op_name = op or name or getattr(reference, "__name__", "")
    if not op_name or not op_name.isidentifier():
        raise ValueError(f"nbx.verify: name the user op with op= or name= (an identifier), got {op_name!r}")
    if op_name in OPS:
        raise ValueError(f"nbx.verify: {op_name!r} is an op of nbx: verify against its oracle with "
                         f"op={op_name!r} and no reference=, or name the user op otherwise")
    if d not in FLOATS:
        raise ValueError(f"nbx.verify: a user op is measured on float dtypes ({', '.join(x.name for x in FLOATS)}), "
                         f"not {d.name}")
    if float64 is not None and not callable(float64):
        raise TypeError(f"nbx.verify: float64 must be a vectorized float64 function, got {type(float64).__name__}")
    if (float64 is None) != (bound is None):
        raise ValueError("nbx.verify: float64= and bound= go together: the float64 function and its relative "
                         "error bound E (e.g. 2**-50)")
    if bound is not None and not 0 <= float(bound) < 2 ** -10:
        raise ValueError(f"nbx.verify: bound={bound!r} must be a relative error bound in [0, 2^-10)")
    if (device is None) != (device_k is None):
        raise ValueError("nbx.verify: device= and device_k= go together: the @triton.jit float64 form and its "
                         "bound in float64 ulps")
    if device is not None and not hasattr(device, "fn"):
        raise TypeError("nbx.verify: device= must be a @triton.jit function of float64 operands (x, p0, p1)")
    n = arity if arity is not None else arity_of(reference, params)
    if not isinstance(n, int) or not 1 <= n <= 3:
        raise ValueError(f"nbx.verify: arity={arity!r}; an element-wise op takes 1 to 3 operands")
    rows = []
    for row in specials or ():
        try:
            inputs, value = row
            inputs = tuple(float(x) for x in (inputs if isinstance(inputs, (tuple, list)) else (inputs,)))
        except (TypeError, ValueError):
            raise ValueError(f"nbx.verify: specials row {row!r} must be ((inputs...), value)") from None
        if len(inputs) != n:
            raise ValueError(f"nbx.verify: specials row {row!r} has {len(inputs)} inputs; the op takes {n}")
        rows.append((inputs, value))
    dom = None if domain is None else _domain(domain, n)
    return UserOp(op_name, reference, n, float64, None if bound is None else float(bound), device,
                  None if device_k is None else float(device_k), tuple(rows), dom, params)


def _domain(domain, n: int) -> tuple:
    """domain= as one (lo, hi) per operand; a unary op's may be a bare (lo, hi)."""
    try:
        intervals = [domain] if n == 1 and len(domain) == 2 and not isinstance(domain[0], (tuple, list)) else domain
        dom = tuple((float(lo), float(hi)) for lo, hi in intervals)
    except (TypeError, ValueError):
        dom = ()
    if len(dom) != n or not all(lo < hi for lo, hi in dom):
        raise ValueError(f"nbx.verify: domain={domain!r} must give each of the {n} operand(s) an interval "
                         f"(lo, hi) with lo < hi")
    return dom


def _repro(t, suite: str, m, user) -> str:
    """A line that measures the first worst input alone."""
    w = m.worst[0]
    fn = t.name if t.name.replace(".", "").replace("_", "").isalnum() else "fn"
    head = f"nbx.verify({fn}, " + (f"{t.op!r}" if user is None else f"reference=..., name={t.op!r}")
    rest = f", dtype={t.dtype.name!r}" + (f", params={dict(t.params)!r}" if t.params else "")
    if t.oracle_arity == 1 and t.dtype.itemsize <= 4 and t.dtype.is_float:
        b = int(w.inputs[0], 16)
        s = "exhaustive16" if t.dtype.itemsize == 2 else "sweep"
        return f"{head}{rest}, suites=[{s!r}], bits=({b:#x}, {b + 1:#x}))"
    note = f" [{w.note}]" if w.note else ""
    return f"inputs {', '.join(w.inputs)}{note}: {head}{rest}, suites=[{suite!r}])"
