"""The interpreter's per-launch savings (nbx/backend/interpreter_launch.py) change no result: the
language modules are patched for a launch and restored after it, nested @jit helpers still see the
patched language, a launch that raises restores them, and int32 arithmetic still wraps as on the
GPU (the rounding keys depend on it: fast32/keys.py). The ci profile's 3,264 measurements are
identical with and without them (the commit that adds them)."""
import numpy as np
import pytest
import triton
import triton.language as tl

import nbx
from nbx import backend

pytestmark = pytest.mark.skipif(backend.IS_CUDA, reason="Triton's interpreter only")


@triton.jit
def _inner(x):
    return x * 3 + 1


@triton.jit
def _outer(x):
    return _inner(x) * -7 + _inner(x + 2)


@triton.jit
def _kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n)
    tl.store(y_ptr + i, _outer(x) * 65599, mask=i < n)       # wraps past 2^31


@triton.jit
def _raises(x_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK < 0, "raised on purpose")


def test_nested_helpers_wrap_int32_as_the_gpu_does_and_the_language_is_restored():
    from nbx.kernels import launch  # noqa: F401  (installs the interpreter's hooks)
    from triton.runtime import interpreter
    assert interpreter.interpreter_builder.options.sanitize_overflow is False
    add, mul = tl.add, tl.core.mul
    x = np.array([0, 1, -5, 2**31 - 1, -2**31, 123456789, 99991, -77], np.int32)
    for _ in range(2):                                          # the second launch patches afresh
        xs, ys = nbx.from_numpy(x), nbx.empty((x.size,), dtype=nbx.int32)
        _kernel[(2,)](xs, ys, x.size, BLOCK=4)
        w = x.astype(np.int64)
        want = (((w * 3 + 1) * -7 + ((w + 2) * 3 + 1)) * 65599 + 2**31) % 2**32 - 2**31
        np.testing.assert_array_equal(ys.numpy(), want.astype(np.int32))
        assert tl.add is add and tl.core.mul is mul             # restored after the launch
    with pytest.raises(Exception, match="raised on purpose"):
        _raises[(1,)](xs, x.size, BLOCK=4)
    assert tl.add is add and tl.core.mul is mul
    _kernel[(2,)](xs, ys, x.size, BLOCK=4)                      # and the next launch still runs
    np.testing.assert_array_equal(ys.numpy(), want.astype(np.int32))
