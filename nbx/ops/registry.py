"""The op set as data: `OpSpec` and `OPS`.

An op is a spec: its name, arity, scalar parameters, dtype rule, supported dtypes, a scalar
`@triton.jit` body (the exact path), where it has one its float32 fast path (`fast32`, a
kernels.fastpath.FastPath), and what the precision harness must know of it (`verify`, a
verify.Verify). `make_function(spec)` turns a spec into the public function (`nbx.exp`,
`nbx.add(a, b, alpha=2)`); every function runs through the one launcher in kernels/launch.py.
"""
from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from ..dtype import DEFAULT_FLOAT, DTYPES, DType, bfloat16, bool_, float16, float32, float64, int16, int32, int8, uint8
from ..errors import DeviceOOMError, SizeLimitError
from ..kernels import hard32, iterate, launch
from ..kernels.fastpath import FastPath
from ..kernels.hard32 import HardCases
from ..promotion import is_scalar, result_type
from ..tensor import Tensor
from .verify import Verify

OPS: dict[str, "OpSpec"] = {}
# specs an op's composition launches without registering them (glu's two halves): listed so that
# their float32 fast paths are probed with the registered ones
COMPOSED: list["OpSpec"] = []



@dataclass(frozen=True)
class Param:
    """A scalar parameter. kind 'number': sent to the kernel as a scalar in `dtype` (default: the
    op's compute dtype); kind 'choice': chosen on the host from `choices` (selects the body)."""
    name: str
    default: Any
    kind: str = "number"
    choices: tuple = ()
    dtype: str | None = None
    doc: str = ""


@dataclass(frozen=True)
class Typing:
    common: DType            # the dtype the op is checked against and reported under
    out: DType               # result dtype
    compute: tuple             # per operand: the dtype its values are converted to on load


def compute_dtype(d: DType) -> DType:
    """Where values of dtype d are computed: 16-bit floats in float32 (ATen's opmath), small
    integers and bool in int32 (stores wrap back to the dtype), others as themselves."""
    if d in (float16, bfloat16):
        return float32
    if d in (bool_, uint8, int8, int16):
        return int32
    return d


NARROW_FLOATS = (float16, bfloat16)


def float_math_dtype(d: DType) -> DType:
    """Where rule F (float math) computes a result of dtype d: float16 and bfloat16 in float64, so
    that the store's rounding (kernels/math.cast) is the only one. A float64 value within k float64
    ulps of the exact one (relative error k 2^-53) rounds to the wrong 16-bit neighbour only where
    the exact value lies within that of a midpoint without being one; midpoints lie 2^-10 (float16;
    bfloat16 2^-7) of the value apart at most, so about k 2^-42 (k 2^-45) of inputs at random: for
    libdevice's k <= 16, under 0.02 expected among all 2^32 float16 pairs, and none of the 65,536
    inputs of any unary op (`nbx run --suite exhaustive16 --profile nightly`). Rounded to float32
    first, the result is rounded twice (silu_and_mul: 17,302,119 of 2^32 bfloat16 pairs misrounded
    on the H200). float32 and float64 stay themselves."""
    return float64 if d in NARROW_FLOATS else compute_dtype(d)


class Select:
    """The one way a spec field (rule, body, fast32, order) depends on the launch: `pick(params,
    typing)` gives the field's value (typing is None where the field is chosen before typing: rule,
    fast32's listing, order). A field is either its value or a Select; nothing else is probed.
    `__module__` is the module that declared it (the op's family module)."""
    def __init__(self, pick: Callable, module: str | None = None):
        self.pick = pick
        self.__module__ = module or sys._getframe(1).f_globals["__name__"]

    def __call__(self, params: dict, typing: "Typing | None" = None):
        return self.pick(params, typing)


class Choices(Select):
    """A field chosen by a 'choice' parameter, as an explicit table: one row per value of `param`
    (div's three rounding modes are three rows), each row the field's value or a Select."""
    def __init__(self, param: str, table: dict):
        self.param, self.table = param, dict(table)
        super().__init__(self._row, sys._getframe(1).f_globals["__name__"])

    def _row(self, params: dict, typing=None):
        return resolve(self.table[params[self.param]], params, typing)


def resolve(value, params: dict, typing=None):
    """A spec field's value for a launch: the field itself, or its Select's choice."""
    return value(params, typing) if isinstance(value, Select) else value


def by_storage(body, narrow) -> Select:
    """An op body chosen by where the result is stored: `narrow` for float16/bfloat16 results
    (computed in float64 by rule F, rounded once on the store), which must keep a rounding tie's
    side that float64 cannot (math.with_residual); `body` otherwise."""
    return Select(lambda params, t: narrow if t.out in NARROW_FLOATS else body, sys._getframe(1).f_globals["__name__"])


def by_compute(float_body, int_body) -> Select:
    """An op body chosen by the compute dtype of the first operand: float or integer."""
    return Select(lambda params, t: float_body if t.compute[0].is_float else int_body,
                  sys._getframe(1).f_globals["__name__"])


# ---------------------------------------------------------------------- dtype rules (docs/OPS.md's D)
def rule_float(operands, params=None) -> Typing:              # F
    common = result_type(*operands)
    out = common if common.is_float else DEFAULT_FLOAT
    return Typing(common, out, (float_math_dtype(out),) * len(operands))


def rule_promote(operands, params=None) -> Typing:            # P, and S (its unary name)
    common = result_type(*operands)
    return Typing(common, common, (compute_dtype(common),) * len(operands))


def rule_bool(operands, params=None) -> Typing:               # B: computed in the promoted dtype, bool out
    common = result_type(*operands)
    return Typing(common, bool_, (compute_dtype(common),) * len(operands))


def rule_logical(operands, params=None) -> Typing:            # any dtype in, each operand tested against 0
    common = result_type(*operands)
    ops = [DTYPES[str(o.dtype)] if isinstance(o, Tensor) else common for o in operands]
    return Typing(common, bool_, tuple(compute_dtype(d) for d in ops))


RULES = {"F": rule_float, "P": rule_promote, "S": rule_promote, "B": rule_bool, "L": rule_logical}


def table_param(p, value) -> bool:
    """Whether a parameter's value can name a float32 hard-case table (hard32.table_name): a
    number (not a bool) or a choice's name."""
    if p.kind == "choice":
        return isinstance(value, str)
    return p.kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class OpSpec:
    name: str
    arity: int
    rule: Any                                   # key of RULES, a function (operands, params) -> Typing, or a Select of them
    dtypes: tuple                               # supported `common` dtypes
    body: Any                                   # @triton.jit body, or a Select (by typing, or Choices by a parameter)
    params: tuple = ()
    doc: str = ""
    family: str = ""
    operand_names: tuple = ()
    fault: Any = None                           # @triton.jit predicate(a, b, c) -> bool tile (integer division by zero)
    scalar_operands: tuple = ()                 # operand positions that may be Python scalars
    check: Callable | None = None               # check(spec, operands, params, typing): op-specific validation
    kernel_params: Callable | None = None       # (params, typing) -> [(value, dtype)] sent to the kernel
    compose: Callable | None = None             # an op that is a composition runs this instead of one launch
    fast32: Any = None                          # FastPath, None, or a Select (Choices) of them: the float32 fast path
    declared_at: str = ""                       # "path:line" of the module-level statement that registered it
    verify: Verify = field(default_factory=Verify)  # what the precision harness must know (verify.py)
    order: Any = None                           # Order, None, or a Select (Choices) of them (verify.py)

    def __post_init__(self):
        if inspect.isfunction(self.body):       # a plain (params, typing) -> body function is a Select
            object.__setattr__(self, "body", Select(self.body, self.body.__module__))
        for what, value in (("fast32", self.fast32), ("order", self.order)):
            if inspect.isfunction(value):
                raise TypeError(f"op {self.name!r}: {what} is a plain function; a field that depends on "
                                "the launch is a Select (or Choices, by a parameter)")

    @property
    def dtype_names(self) -> tuple:
        return tuple(d.name for d in self.dtypes)

    def typing(self, operands, params: dict) -> Typing:
        rule = resolve(self.rule, params)
        rule = RULES[rule] if isinstance(rule, str) else rule
        return rule(operands, params)

    def select_body(self, params: dict, typing: Typing):
        return resolve(self.body, params, typing)

    def select_hard32(self, params: dict, typing: Typing) -> HardCases | None:
        """The op's float32 hard cases at these parameter values (kernels/hard32.py,
        hard32_cases/<table_name>.json) for a float32 result of a unary op whose parameters are
        numbers or choices, else None."""
        if self.arity != 1 or typing.compute != (float32,) or typing.out is not float32 or \
                not all(table_param(p, params.get(p.name)) for p in self.params):
            return None
        return hard32.cases(hard32.table_name(self.name, params, {p.name: p.default for p in self.params}))

    def select_fast32(self, params: dict, typing: Typing) -> FastPath | None:
        """The fast path of a launch: the op's, where every operand computes in float32 and the
        result is float32 (the rounding test judges the rounding to float32 only: a float16 pow,
        computed in float32, would round twice)."""
        if self.fast32 is None or any(d is not float32 for d in typing.compute) or typing.out is not float32:
            return None
        return resolve(self.fast32, params, typing)

    def select_order(self, params: dict, dtype: DType):
        """The documented evaluation order (verify.Order) the op follows on `dtype`, or None."""
        order = resolve(self.order, params)
        return order if order is not None and order.applies(dtype) else None

    def scalar_tensors(self, params: dict, typing: Typing) -> list:
        """The op's number parameters as its kernels take them: one-element tensors on the device,
        in the order of self.params (kernel_params's values and dtypes where the op has it)."""
        kparams = self.kernel_params(params, typing) if self.kernel_params else [
            (params[p.name], DTYPES[p.dtype] if p.dtype else typing.compute[0])
            for p in self.params if p.kind == "number"]
        names = [p.name for p in self.params if p.kind == "number"] + ["param"] * 3
        return [iterate.scalar_tensor(v, dt, op=self.name, arg=n) for (v, dt), n in zip(kparams, names)]

    def fast32_variants(self) -> list[tuple[dict, FastPath, Any]]:
        """(parameters, fast path, exact body) for every choice of the op's 'choice' parameters, with
        its number parameters at their defaults and at each float32 variant of its Verify, whose
        float32 launch takes a fast path (parameters at their default omitted)."""
        if self.fast32 is None:
            return []
        f32 = Typing(float32, float32, (float32,) * self.arity)
        choices = [p for p in self.params if p.kind == "choice"]
        numbers = {p.name: p.default for p in self.params if p.kind == "number"}
        settings = [{}] + [{k: v for k, v in var.params.items() if k in numbers}
                           for var in self.verify.variants if var.applies(float32)]
        settings = [d for i, d in enumerate(settings) if d not in settings[:i]]
        out = []
        for values in itertools.product(*[p.choices for p in choices]):
            for setting in settings:
                params = {**numbers, **setting, **{p.name: v for p, v in zip(choices, values)}}
                fast = self.select_fast32(params, f32)
                if fast is not None:
                    named = {p.name: params[p.name] for p in self.params if params[p.name] != p.default}
                    out.append((named, fast, self.select_body(params, f32)))
        return out


def _declaring_frame():
    """The frame of the module-level statement that is registering an op (through any helpers)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back
    return frame


def op(name: str, arity: int, rule, dtypes, body, doc: str = "", **fields) -> OpSpec:
    """Register one op, the one way: its OpSpec from these arguments and OpSpec's other fields by
    name; its family is the declaring module's name (nbx/ops/<family>.py)."""
    family = _declaring_frame().f_globals["__name__"].rsplit(".", 1)[-1]
    return register(OpSpec(name, arity, rule, tuple(dtypes), body, doc=doc, family=family, **fields))


def composed(spec: OpSpec) -> OpSpec:
    """Record a spec that an op's compose function launches (not an op of its own: not in OPS)."""
    COMPOSED.append(spec)
    return spec


def register(spec: OpSpec) -> OpSpec:
    """Add a built OpSpec to OPS (op() builds and registers; a spec built elsewhere comes here)."""
    if spec.name in OPS:
        raise ValueError(f"op {spec.name!r} registered twice")
    if not spec.declared_at:
        frame = _declaring_frame()
        object.__setattr__(spec, "declared_at", f"{frame.f_code.co_filename}:{frame.f_lineno}")
    if not spec.operand_names:
        names = ("input",) if spec.arity == 1 else ("input", "other") if spec.arity == 2 else \
            ("input", "tensor1", "tensor2")
        object.__setattr__(spec, "operand_names", names)
    OPS[spec.name] = spec
    return spec


def binary(name, rule, dtypes, body, doc, **kw) -> OpSpec:
    """op() for a two-operand op whose operands may be Python scalars."""
    return op(name, 2, rule, dtypes, body, doc, scalar_operands=(0, 1), **kw)


# ---------------------------------------------------------------------- validation
def _check_operands(spec: OpSpec, operands):
    for i, (x, name) in enumerate(zip(operands, spec.operand_names)):
        if isinstance(x, Tensor):
            continue
        if is_scalar(x) and i in spec.scalar_operands:
            continue
        allowed = "an nbx Tensor or a Python bool/int/float" if i in spec.scalar_operands else "an nbx Tensor"
        raise TypeError(f"nbx.{spec.name}: argument '{name}' must be {allowed}, got {type(x).__name__}")
    if not any(isinstance(x, Tensor) for x in operands):
        raise TypeError(f"nbx.{spec.name}: at least one operand must be an nbx Tensor")


def _check_params(spec: OpSpec, params: dict) -> dict:
    known = {p.name: p for p in spec.params}
    for k in params:
        if k not in known:
            allowed = ", ".join(known) or "none"
            raise TypeError(f"nbx.{spec.name}: unexpected argument '{k}' (parameters: {allowed})")
    out = {}
    for p in spec.params:
        v = params.get(p.name, p.default)
        if p.kind == "choice":
            # by identity or same-type equality: `v in choices` would call a Tensor's __eq__ (an
            # nbx.eq launch that fails naming nbx.eq), and would take True for 1
            if not any(v is c or (type(v) is type(c) and v == c) for c in p.choices):
                shown = repr(v) if v is None or isinstance(v, (str, bool, int, float)) else \
                    f"<{type(v).__name__}>"
                raise ValueError(f"nbx.{spec.name}: {p.name}={shown} is not allowed; choose one of "
                                 f"{', '.join(repr(c) for c in p.choices)}")
        elif p.kind == "number":
            # None only where it is the default (an optional parameter); elsewhere it would reach
            # the op's arithmetic
            if not (is_scalar(v) or (v is None and p.default is None)):
                allowed = "a Python number" + (" or None" if p.default is None else "")
                raise TypeError(f"nbx.{spec.name}: {p.name} must be {allowed} (bool, int or float), "
                                f"got {type(v).__name__}")
        out[p.name] = v
    return out


def _check_size(spec: OpSpec, shape, dt: DType) -> None:
    """Refuse, before allocating, a result the backend cannot hold or compute in reasonable time:
    over the backend's element limit (the interpreter's, see backend/interpreter.py), or past
    2**63 bytes, beyond any memory and beyond numpy's and CUDA's size types."""
    from .. import backend
    numel = math.prod(shape)
    limit = backend.active.max_elements() if hasattr(backend.active, "max_elements") else None
    if limit is not None and numel > limit:
        raise SizeLimitError(
            f"nbx.{spec.name}: the result has {numel} elements (shape {tuple(shape)}, {dt.name}), over "
            f"the {backend.NAME} backend's limit of {limit} elements; raise the limit with "
            f"{backend.active.MAX_ELEMENTS_ENV}=N if the run may take that long")
    nbytes = numel * dt.itemsize
    if nbytes >= 1 << 63:
        where = "host (interpreter)" if not backend.IS_CUDA else "cuda"
        raise DeviceOOMError(nbytes, where, "more than any memory holds", op=spec.name,
                             what=f"the result of shape {tuple(shape)} ({dt.name})")


def check_dtype(spec: OpSpec, typing: Typing, operands):
    if typing.common not in spec.dtypes:
        got = ", ".join(f"{n}={x.dtype.name if isinstance(x, Tensor) else type(x).__name__}"
                        for n, x in zip(spec.operand_names, operands))
        raise TypeError(f"nbx.{spec.name}: dtype {typing.common.name} ({got}) is not supported; "
                        f"allowed: {', '.join(spec.dtype_names)}")


def _check_out(spec: OpSpec, out, shape, typing: Typing, inputs):
    if not isinstance(out, Tensor):
        raise TypeError(f"nbx.{spec.name}: out must be an nbx Tensor, got {type(out).__name__}")
    if out.shape != tuple(shape):
        raise ValueError(f"nbx.{spec.name}: out has shape {out.shape} but the result has shape {tuple(shape)}")
    if out.dtype is not typing.out:
        raise TypeError(f"nbx.{spec.name}: out has dtype {out.dtype.name} but the result dtype is {typing.out.name}")
    if any(s == 0 and n > 1 for s, n in zip(out.stride(), out.shape)) or (
            out.numel() and not _non_overlapping(out)):
        raise ValueError(f"nbx.{spec.name}: out overlaps itself (stride 0 or overlapping strides): "
                         "each output element needs its own memory")
    for name, t in zip(spec.operand_names, inputs):
        if t.untyped_storage() is not out.untyped_storage() or t.numel() == 0:
            continue
        lo, hi = t.span()
        olo, ohi = out.span()
        if hi <= olo or ohi <= lo:
            continue
        same = t.shape == out.shape and t.stride() == out.stride() and t.storage_offset() == out.storage_offset()
        if not same:
            raise ValueError(f"nbx.{spec.name}: out partially overlaps argument '{name}'; out may alias an "
                             "input only as the identical view")


def _non_overlapping(t: Tensor) -> bool:
    dims = sorted((st, n) for n, st in zip(t.shape, t.stride()) if n > 1)
    reach = 0
    for st, n in dims:
        if st <= reach:
            return False
        reach = st * (n - 1) + reach
    return True


# ---------------------------------------------------------------------- running an op
def run(spec: OpSpec, operands, params: dict, out=None, *, config: launch.LaunchConfig = launch.DEFAULT) -> Tensor:
    """Validate and launch. config: how fast paths run (benchmarks and tests pass variants)."""
    _check_operands(spec, operands)
    params = _check_params(spec, params)
    if spec.compose is not None:
        return spec.compose(spec, operands, params, out)
    typing = spec.typing(operands, params)
    check_dtype(spec, typing, operands)
    if spec.check is not None:
        spec.check(spec, operands, params, typing)
    names = spec.operand_names
    tensors = []
    for i, x in enumerate(operands):
        if isinstance(x, Tensor):
            tensors.append(x)
        else:
            if typing.out.is_int:
                # ATen refuses an int scalar outside the result dtype ("value cannot be converted to
                # type uint8_t without overflow"); the compute dtype (int32 for uint8) would hold it and
                # the store would wrap silently (uint8 tensor + 300 gave 1 + 300 - 256)
                iterate.scalar_to_numpy(x, typing.out, op=spec.name, arg=names[i])
            tensors.append(iterate.scalar_tensor(x, typing.compute[i], op=spec.name, arg=names[i]))
    shape = iterate.broadcast_shapes([t.shape for t in tensors], op=spec.name, names=names)
    ptensors = spec.scalar_tensors(params, typing)
    body = spec.select_body(params, typing)
    fault = spec.fault if (spec.fault is not None and typing.compute[-1].is_int and spec.arity > 1) else None
    if out is not None:
        _check_out(spec, out, shape, typing, [t for t in tensors if t.ndim or t.numel()])
    _check_size(spec, shape, typing.out)
    # a faulting op writes into a fresh tensor first, so `out` is untouched when it raises
    try:
        target = iterate.make_output(shape, typing.out, tensors) if (out is None or fault is not None) else out
    except DeviceOOMError as e:
        if e.op:
            raise
        raise e.for_op(spec.name, f"the result of shape {tuple(shape)} ({typing.out.name})") from None
    if spec.select_order(params, typing.out) is not None:
        # a documented order rounds every step: no a*b + c contracted into an fma (CUDA; the
        # interpreter's numpy never contracts)
        config = dataclasses.replace(config, options=config.options + (("enable_fp_fusion", False),))
    faulted = launch.launch(body, target, tensors, ptensors, compute=typing.compute, op=spec.name, fault=fault,
                            fast=spec.select_fast32(params, typing), hard=spec.select_hard32(params, typing), config=config)
    if faulted:
        raise ZeroDivisionError(f"nbx.{spec.name}: integer division by zero (argument '{names[1]}' has a "
                                f"zero element; dtype {typing.common.name})")
    if out is not None and target is not out:
        run(OPS["copy"], [target], {}, out=out)
        return out
    return target


def make_function(spec: OpSpec) -> Callable:
    names = spec.operand_names

    def fn(*args, out=None, **kwargs):
        args = list(args)
        for n in names[len(args):]:
            if n in kwargs:
                args.append(kwargs.pop(n))
        extra = args[spec.arity:]
        if len(extra) > len(spec.params):
            extra = []   # reported below as an arity error
        else:
            for p, v in zip(spec.params, extra):
                if p.name in kwargs:
                    raise TypeError(f"nbx.{spec.name}: got {p.name} both by position and by keyword")
                kwargs[p.name] = v
            args = args[:spec.arity]
        if len(args) != spec.arity:
            raise TypeError(f"nbx.{spec.name}: takes {spec.arity} operand(s) ({', '.join(names)}), "
                            f"got {len(args)}")
        return run(spec, args, kwargs, out=out)

    fn.__name__ = fn.__qualname__ = spec.name
    fn.__doc__ = spec.doc
    sig = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    sig += [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default) for p in spec.params]
    sig += [inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)]
    fn.__signature__ = inspect.Signature(sig)
    fn.spec = spec
    return fn
