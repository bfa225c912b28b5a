"""nbx.result_type against PyTorch's torch.result_type, case by case, and the PROMOTE lattice."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import nbx
from nbx.dtype import ALL, DTYPES, DType, bfloat16, bool_, float16, float32, float64, int16, int32, int64, int8, uint8
from nbx.promotion import PROMOTE

B, U8, I8, I16, I32, I64 = bool_, uint8, int8, int16, int32, int64
F16, BF16, F32, F64 = float16, bfloat16, float32, float64


def t(d):
    """A dimensioned tensor (shape (2,)) of dtype d."""
    return nbx.zeros(2, dtype=d)


def z(d):
    """A 0-dim tensor of dtype d."""
    return nbx.zeros((), dtype=d)


# (operands, expected), every expected value as torch.result_type gives it (default dtype float32).
CASES = [
    # dimensioned tensors: the promoteTypes lattice
    ((t(U8), t(I8)), I16),
    ((t(I8), t(U8)), I16),
    ((t(BF16), t(F16)), F32),
    ((t(F16), t(BF16)), F32),
    ((t(B), t(B)), B),
    ((t(B), t(U8)), U8),
    ((t(B), t(I32)), I32),
    ((t(I16), t(I32)), I32),
    ((t(I64), t(I32)), I64),
    ((t(U8), t(I64)), I64),
    ((t(I64), t(F16)), F16),
    ((t(I64), t(BF16)), BF16),
    ((t(F16), t(F32)), F32),
    ((t(BF16), t(F64)), F64),
    ((t(I32), t(F32)), F32),
    ((t(F32), t(F64)), F64),
    # Python scalars: only a higher category changes the result, and then as the default dtype
    ((t(I64), 2.5), F32),
    ((t(I32), 2**40), I32),
    ((t(B), True), B),
    ((t(B), 1), I64),
    ((t(B), 2.5), F32),
    ((t(U8), -1), U8),
    ((t(I8), 1000), I8),
    ((t(I32), True), I32),
    ((t(F16), 2.5), F16),
    ((t(BF16), 1), BF16),
    ((t(F16), 1e10), F16),
    ((t(F64), 1), F64),
    ((t(U8), 1.5), F32),
    ((2.5, t(I16)), F32),
    ((3, t(U8)), U8),
    # 0-dim tensors: like scalars, but of their own dtype when of a higher category
    ((z(F64), t(F16)), F16),
    ((t(F16), z(F64)), F16),
    ((t(U8), z(I8)), U8),
    ((t(I8), z(F64)), F64),
    ((t(F16), z(I64)), F16),
    ((t(I32), z(I64)), I32),
    ((t(B), z(I8)), I8),
    ((t(B), z(F16)), F16),
    ((t(I32), z(BF16)), BF16),
    ((t(U8), z(B)), U8),
    # only 0-dim tensors and scalars: the 0-dim tensors are the highest group
    ((z(I32), z(I64)), I64),
    ((z(U8), z(I8)), I16),
    ((z(F16), 2.5), F16),
    ((z(I32), 2.5), F32),
    ((z(B), 1), I64),
    ((z(I8), 1), I8),
    ((z(B), True), B),
    ((z(F16), z(BF16)), F32),
    # three operands: groups combine in priority order
    ((t(I8), z(F64), 2.5), F64),
    ((t(I8), z(I64), 2.5), F32),
    ((t(B), z(U8), 1), U8),
    ((t(U8), t(I8), z(F16)), F16),
]


def _name(x):
    if isinstance(x, nbx.Tensor):
        return f"{x.dtype.name}{'[0d]' if x.ndim == 0 else ''}"
    return repr(x)


@pytest.mark.parametrize("operands,expected", CASES,
                         ids=["+".join(_name(o) for o in ops) + f"->{e.name}" for ops, e in CASES])
def test_result_type_matches_pytorch(operands, expected):
    assert nbx.result_type(*operands) is expected


def test_at_least_40_cases():
    assert len(CASES) >= 40


def _torch_promote(a: DType, b: DType) -> DType:
    """PyTorch's promoteTypes restated from its rules, independently of nbx's table."""
    if a is b:
        return a
    if a.is_bool:
        return b
    if b.is_bool:
        return a
    if a.is_float and b.is_float:
        if {a, b} == {F16, BF16}:
            return F32
        return a if a.itemsize > b.itemsize else b
    if a.is_float:
        return a
    if b.is_float:
        return b
    if {a, b} == {U8, I8}:
        return I16
    return a if a.itemsize > b.itemsize else b


PAIRS = list(itertools.product(ALL, ALL))


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a.name}-{b.name}" for a, b in PAIRS])
def test_dimensioned_pairs_follow_the_lattice(a, b):
    got = nbx.result_type(t(a), t(b))
    assert got is DTYPES[PROMOTE[a.name, b.name]]
    assert got is nbx.result_type(t(b), t(a))          # symmetric
    assert got is nbx.promote_types(a, b)
    assert got is _torch_promote(a, b)


def test_promote_table_is_complete_symmetric_and_idempotent():
    assert len(PROMOTE) == 100
    for a, b in PAIRS:
        assert PROMOTE[a.name, b.name] == PROMOTE[b.name, a.name]
    for a in ALL:
        assert PROMOTE[a.name, a.name] == a.name
        assert PROMOTE["bool", a.name] == a.name


def test_result_type_rejects_non_operands():
    with pytest.raises(TypeError, match="result_type"):
        nbx.result_type(t(F32), [1, 2])
    with pytest.raises(TypeError, match="result_type"):
        nbx.result_type(t(F32), np.float32(1))
    with pytest.raises(TypeError, match="result_type"):
        nbx.result_type(np.zeros(3, np.float16), t(F32))
    with pytest.raises(TypeError, match="at least one operand"):
        nbx.result_type()


# ---------------------------------------------------------------------- op result dtypes
def _x(d, n=3):
    return nbx.from_numpy(np.ones(n, dtype=d.np))


OP_DTYPES = [
    ("div", (I32, I32), {}, F32),
    ("div", (I64, I64), {}, F32),
    ("div", (B, B), {}, F32),
    ("div", (I32, I32), {"rounding_mode": "floor"}, I32),
    ("div", (I16, I16), {"rounding_mode": "trunc"}, I16),
    ("div", (F16, F16), {}, F16),
    ("div", (U8, I8), {}, F32),
    ("exp", (I64,), {}, F32),
    ("exp", (B,), {}, F32),
    ("exp", (U8,), {}, F32),
    ("exp", (F16,), {}, F16),
    ("exp", (BF16,), {}, BF16),
    ("sqrt", (F64,), {}, F64),
    ("eq", (F32, F32), {}, B),
    ("lt", (I64, F16), {}, B),
    ("ne", (U8, I8), {}, B),
    ("isnan", (I32,), {}, B),
    ("isfinite", (F16,), {}, B),
    ("floor", (I32,), {}, I32),
    ("round", (BF16,), {}, BF16),
    ("neg", (I8,), {}, I8),
    ("abs", (U8,), {}, U8),
    ("add", (B, B), {}, B),
    ("add", (U8, I8), {}, I16),
    ("mul", (F16, BF16), {}, F32),
    ("floor_divide", (U8, I8), {}, I16),
    ("remainder", (I32, F64), {}, F64),
    ("maximum", (I64, F16), {}, F16),
    ("sub", (I32, I64), {}, I64),
]


@pytest.mark.parametrize("op,dts,kw,expected", OP_DTYPES,
                         ids=[f"{o}-{'-'.join(d.name for d in dts)}{'-' + str(list(kw.values())[0]) if kw else ''}"
                              for o, dts, kw, _ in OP_DTYPES])
def test_op_result_dtype(op, dts, kw, expected):
    out = getattr(nbx, op)(*[_x(d) for d in dts], **kw)
    assert out.dtype is expected


def test_op_result_dtype_with_scalars_and_0dim():
    assert nbx.add(_x(I32), 7).dtype is I32
    assert nbx.add(_x(I64), 2.5).dtype is F32
    assert nbx.mul(_x(F16), z(F64)).dtype is F16
    assert nbx.add(_x(I8), z(F64)).dtype is F64
    assert nbx.lt(_x(I64), 2**62).dtype is B
    assert nbx.div(_x(I32), 2).dtype is F32
    assert nbx.add(_x(B), True).dtype is B
    assert nbx.add(_x(B), 1).dtype is I64
