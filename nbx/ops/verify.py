"""What the precision harness must know about an op beyond its signature: `Verify` (OpSpec.verify).

Each op declares these facts where it is registered; nbx/harness reads them and names no op
(tests/test_meta.py holds both to that). Operand indices count the operands as the ORACLE sees
them: the two halves of a split op, then any `param_operands`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..dtype import ALL, DType, bfloat16, float16, float32, float64


@dataclass(frozen=True)
class Variant:
    """Parameter values measured besides the defaults, on `dtypes` (None: every dtype of the op)."""
    params: dict
    dtypes: tuple | None = None

    def applies(self, d: DType) -> bool:
        return self.dtypes is None or d in self.dtypes


def in_operand_dtype(**params) -> Variant:
    """A variant whose values are numbers of the dtype under test (alpha, a fill value, a bound): a
    float value applies to float dtypes only; an int value also to bool and to every integer dtype
    whose range holds it (an op refuses a value its dtype cannot hold)."""
    def fits(d: DType) -> bool:
        return d.is_float or all(isinstance(v, int) and (d.is_bool or d.min <= v <= d.max)
                                 for v in params.values())
    return Variant(params, tuple(d for d in ALL if fits(d)))


@dataclass(frozen=True)
class Role:
    """What an operand is, where it is not a value of the dtype under test."""
    kind: str
    fmt: DType | None = None        # BITS: the format whose raw bits the operand holds

    def __post_init__(self):
        if self.kind not in ROLE_KINDS:
            raise ValueError(f"operand role {self.kind!r} is not one of {ROLE_KINDS}")
        if (self.kind == "bits") != (self.fmt is not None):
            raise ValueError("a 'bits' role names its format, and only it does")


ROLE_KINDS = ("mask", "divisor", "exponent", "shift", "bits")
MASK = Role("mask")            # a bool mask or condition
DIVISOR = Role("divisor")      # nonzero for integer dtypes: an integer zero divisor faults (spec.fault)
EXPONENT = Role("exponent")    # non-negative for integer dtypes: a negative integer power faults (spec.fault)
SHIFT = Role("shift")          # an integer shift count: in range and just outside it are both defined


def bits_of(fmt: DType) -> Role:
    """An integer operand holding the raw bits of `fmt`: the oracle sees that format's value."""
    return Role("bits", fmt)


@dataclass(frozen=True)
class Split:
    """The op's single tensor operand is split in two halves, the oracle's two operands. With
    `dim_param` (the parameter naming the split dim) the harness splits dim 0, contiguous halves;
    without, the op splits the last dim and the harness lays the halves out along it."""
    dim_param: str | None = None


@dataclass(frozen=True)
class BigCase:
    """More than 2^31 elements (64-bit offsets; GPU, not the ci profile): the op on `dtype` with
    `scalars` as its further operands, compared with `reference(array, *scalars)`, numpy's own
    arithmetic in that dtype."""
    dtype: DType
    reference: Callable
    scalars: tuple = ()


@dataclass(frozen=True)
class Order:
    """The documented evaluation order of an op whose result on `dtypes` is not meant to be the
    correctly rounded exact value: `steps` in words, each operation rounded to the compute dtype as
    written and none contracted (the launcher compiles the op with fp fusion off on those dtypes, so
    a*b + c is two roundings on every backend). The harness measures such results twice: against
    this composition (nbx/oracles/order.py), gated at `budget` ulp, and against the exact value,
    reported beside it. `why`: what the exact value would cost, or what the order keeps."""
    steps: str
    why: str
    dtypes: tuple = (float64,)
    budget: float = 0.0

    def applies(self, d: DType) -> bool:
        return d in self.dtypes


@dataclass(frozen=True)
class Verify:
    variants: tuple = ()                  # Variants measured besides the defaults
    measure_default: bool = True          # False: the defaults are no target (to's dtype, clamp's bounds)
    roles: dict = field(default_factory=dict)       # oracle operand index -> Role
    param_operands: tuple = ()            # (parameter, value when None): scalars the oracle takes as
                                          # operands after the tensor operands (clamp's min, max)
    split: Split | None = None
    exhaustive16: bool = True             # unary on <= 16-bit dtypes: every input (False: a sweep)
    exact_float: bool = False             # float32/float64 results checked exactly (intdiv suite)
    ci_rank8: str = ""                    # why the ci layout suite gives the op a rank-8 group ("" none)
    big: BigCase | None = None
    # The dtypes (of the target's operands) on which every float result is declared the correctly
    # rounded one: the gate allows 0 misrounded results there. No default: every op with a float
    # dtype declares it (F32, CR16, CR_NARROW) or says why not (not_cr); tests/test_meta.py checks.
    correctly_rounded: tuple = ()
    not_cr: str = ""                      # why float32 is not declared (required where it is not)
    exact32: str = ""                     # why the float32 body is exact and needs no hard-case table

    def role(self, i: int) -> Role | None:
        return self.roles.get(i)


def check(spec: Any, oracle_arity: int) -> list[str]:
    """Inconsistencies between an op's Verify and its spec and oracle (empty: consistent)."""
    v, out = spec.verify, []
    names = {p.name for p in spec.params}
    for var in v.variants:
        if set(var.params) - names:
            out.append(f"variant {var.params} names no parameter of the op ({sorted(names)})")
        if var.dtypes is not None and not set(spec.dtypes) & set(var.dtypes):
            out.append(f"variant {var.params} applies to none of the op's dtypes")
    if not v.measure_default and not v.variants:
        out.append("no default target and no variant: the op is never measured")
    for name, _ in v.param_operands:
        if name not in names:
            out.append(f"parameter operand {name!r} is no parameter of the op")
    for i in v.roles:
        if not 0 <= i < oracle_arity:
            out.append(f"role of operand {i}: the oracle has {oracle_arity} operands")
    if v.split is not None and (spec.arity != 1 or oracle_arity != 2):
        out.append("a split op has one tensor operand and an oracle of two")
    if v.split is not None and v.split.dim_param not in (None, *names):
        out.append(f"split dim parameter {v.split.dim_param!r} is no parameter of the op")
    faulting = {r.kind for r in v.roles.values()} & {"divisor", "exponent"}
    if (spec.fault is not None) != bool(faulting):
        out.append("an op with a fault predicate has a divisor or exponent role, and only it")
    if v.exact_float and "divisor" not in faulting:
        out.append("exact float checks are for division ops (a divisor role)")
    if v.big is not None and v.big.dtype not in spec.dtypes:
        out.append(f"big case dtype {v.big.dtype.name} is not a dtype of the op")
    if float32 in spec.dtypes and (float32 not in v.correctly_rounded) != bool(v.not_cr.strip()):
        out.append("an op not declared correctly rounded on float32 says why (not_cr), and only it does")
    return out


# Declared correctly rounded on float32 (the results of 16-bit operands rounded twice, or not
# measured on every 16-bit input): the declaration of an op that makes no stronger one.
F32 = (float32,)
# Declared correctly rounded on float16 and bfloat16 too: one IEEE operation (* / sqrt 1/x, x*x,
# remainder's sum) of 16-bit operands computed in float32 and rounded again on the store (float32's
# 24 bits are at least 2p + 2 of the narrow format, so the second rounding is innocuous), or an
# exact result (selections, sign and rounding ops, fmod, frac). Every 16-bit input and operand pair
# of each: 0 misrounded on the H200 (reports/h200/exhaustive-20261204.md, call G). The unary
# selections, predicates and the bf16 -> fp16 cast (copy, nan_to_num, threshold, clamp, dropout,
# logical_not, isfinite, isinf, isnan, signbit, bf16_to_fp16: exact, or one rounding): every 16-bit
# input, 0 wrong on the interpreter (`nbx run --suite exhaustive16 --profile nightly`). The
# comparisons, logical_and/or/xor, where, masked_fill and floor_divide: every 16-bit operand pair
# (2^24 stratified triples for the selections), 0 wrong or misrounded on the H200 (the exhaustive
# profile at 547c92e, reports/h200/exhaustive-20261206.md); `to` from a 16-bit float: every input.
CR16 = (float32, float16, bfloat16)
# float16 and bfloat16 results rounded once from a float64 value (registry.float_math_dtype: rule F
# computes them in float64; math.fma, math.pow and addcdiv return their float64 value rounded to
# odd or to nearest for the store's one rounding; math.with_residual keeps the side of the ties
# float64 holds). A float64 value within k float64 ulps of the exact one is off by 2^-52 k relative,
# 2^-41 k of a float16 ulp: wrong only where the exact value lies that close to a midpoint without
# being one, about 2^-40 k of random inputs. Every 16-bit input of each unary op: 0 misrounded
# (`nbx run --suite exhaustive16 --dtype float16 --dtype bfloat16 --profile nightly`); the binary
# ops' nightly pairs (2^16 a target): 0; every operand pair: the H200's `make gpu-exhaustive`.
CR_NARROW = (float16, bfloat16)


def not_correctly_rounded(why: str, correctly_rounded: tuple = (), **kw) -> Verify:
    """The Verify of an op whose float32 results are not all correctly rounded, and why; the
    narrower dtypes it does round correctly (CR_NARROW), if any."""
    return Verify(correctly_rounded=tuple(correctly_rounded), not_cr=why, **kw)

