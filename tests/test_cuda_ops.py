"""Every op once on the device (marked `cuda`: skipped unless nbx chose the CUDA backend).

This is the kernel workload `make gpu-sanitize` runs under compute-sanitizer (tools/gpu_sanitize.sh),
so it is small: each op on float32, float64, bfloat16 and int32 where it has them (else its first
dtype), with its first measured parameter set, N elements, a size that leaves the last tile
partial. Each runs
- contiguous (the fast path where the op has one, else the generic kernel's flat case),
- into a poisoned `out=` (every element written, the same bits),
- on stride-2 views of its operands (the generic kernel's strided case): the same bits,
and the integer-division ops once more with a zero divisor (the fault flag).
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import nbx
from nbx.testing import assert_bits_equal

pytestmark = pytest.mark.cuda

N = 4099          # two full 2048-element tiles and one partial one


DTYPES = ("float32", "float64", "bfloat16", "int32")


def _cases():
    out = []
    for name in sorted(nbx.OPS):
        names = [d.name for d in nbx.OPS[name].dtypes]
        out += [(name, d) for d in DTYPES if d in names] or [(name, names[0])]
    return out


def _target(name, dt):
    from nbx.harness.targets import target
    return next(iter(target.targets(ops=[name], dtypes=[dt])), None)


def _operands(t, rng):
    from nbx.harness.inputs import cases
    dts = t.operand_dtypes()
    if t.dtype.is_float:
        return cases.float_operands(t, N, rng, dts)
    return [cases.int_operand(t, i, N, rng, d) if not d.is_bool or t.dtype.is_bool else
            rng.integers(0, 2, N).astype(bool) for i, d in enumerate(dts)]


def _poison(d):
    return 7 if not d.is_bool else True


# Seen on an H200 (make gpu-sanitize, 2026-12-04): log_sigmoid float64 on stride-2 views gave a NaN
# whose bits differ from the contiguous result's at one special input (element 4069). A finding for
# the op's owner; not strict until it is known to be deterministic.
_KNOWN = {("log_sigmoid", "float64"): "device: NaN bits differ between contiguous and strided"}


def _params():
    return [pytest.param(n, d, id=f"{n}-{d}", marks=[pytest.mark.xfail(reason=_KNOWN[n, d], strict=False)]
                         if (n, d) in _KNOWN else []) for n, d in _cases()]


@pytest.mark.parametrize("name, dt", _params())
def test_op_on_device(name, dt):
    from nbx.harness.targets import target
    t = _target(name, dt)
    assert t is not None, (name, dt)
    rng = np.random.default_rng(zlib.crc32(f"{name}|{dt}".encode()))
    arrays = _operands(t, rng)
    want = t.run(arrays)                                     # contiguous
    assert want.size, name
    if t.split:
        return                                               # glu, silu_and_mul: halves of one operand
    ops = [nbx.from_numpy(a) for a in arrays]
    first = target.call(t, ops)
    assert_bits_equal(first.numpy(), want, context=f"{name} {dt} again")
    out = nbx.full(first.shape, _poison(first.dtype), dtype=first.dtype.name)
    target.call(t, ops, out=out)
    assert_bits_equal(out.numpy(), want, context=f"{name} {dt} out=")
    strided = []
    for a in arrays:                                        # the values at even places of a buffer
        big = np.empty(2 * a.size, dtype=a.dtype)
        big[0::2], big[1::2] = a, a[::-1]
        strided.append(nbx.from_numpy(big)[0::2])
    got = target.call(t, strided)
    assert_bits_equal(got.numpy(), want, context=f"{name} {dt} strided")


@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
def test_integer_division_fault_on_device(name):
    a = nbx.from_numpy(np.arange(1, N + 1, dtype=np.int32))
    b = np.ones(N, dtype=np.int32)
    b[N - 1] = 0                                            # in the partial tile
    out = nbx.full((N,), 5, dtype="int32")
    with pytest.raises(ZeroDivisionError, match=rf"nbx\.{name}"):
        getattr(nbx, name)(a, nbx.from_numpy(b), out=out)
    assert out.numpy().tolist() == [5] * N
