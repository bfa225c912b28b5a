"""The CUDA backend (marked `cuda`: skipped unless nbx chose it), and backend selection through
NBX_BACKEND in a fresh interpreter (runs everywhere)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import nbx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python(code: str, backend: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NBX_BACKEND=backend, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TRITON_INTERPRET", None)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_bogus_backend_is_a_clear_error():
    r = _python("import nbx", "bogus")
    assert r.returncode != 0
    assert "BackendError" in r.stderr
    assert "NBX_BACKEND='bogus' is not one of auto, cuda, interpreter" in r.stderr


def test_interpreter_backend_is_named_with_versions():
    code = "import json, nbx; print(json.dumps(nbx.backend_info())); print(nbx.backend_id())"
    r = _python(code, "interpreter")
    assert r.returncode == 0, r.stderr
    info_line, bid = r.stdout.strip().splitlines()[-2:]
    info = json.loads(info_line)
    import numpy
    import triton
    assert info["backend"] == "interpreter"
    assert info["triton"] == triton.__version__ and info["numpy"] == numpy.__version__
    assert bid == info["id"] == f"interpreter-numpy{numpy.__version__}"
    assert "interpreter" in info["device"].lower()


# ---------------------------------------------------------------------- on a GPU


@pytest.mark.cuda
def test_backend_id_and_info():
    info = nbx.backend_info()
    assert info["backend"] == "cuda"
    assert nbx.backend_id().startswith("cuda-sm")
    assert info["id"] == nbx.backend_id()


@pytest.mark.cuda
@pytest.mark.parametrize("d", nbx.DTYPES.values(), ids=lambda d: d.name)
def test_device_round_trip(d):
    from nbx.testing import assert_bits_equal, specials
    a = specials(d)
    t = nbx.from_numpy(a)
    assert t.device != "cpu"
    assert_bits_equal(t.numpy(), a, context=d.name)
    assert_bits_equal(t[1::2].numpy(), a[1::2], context=d.name)


@pytest.mark.cuda
def test_device_oom_names_the_size():
    with pytest.raises(nbx.DeviceOOMError, match=r"asked for 1000000000000000 bytes") as e:
        nbx.empty(10**15 // 4, dtype="float32")
    assert e.value.nbytes == 10**15
    nbx.empty(16)                          # the device is still usable afterwards


@pytest.mark.cuda
def test_op_equals_numpy_reference():
    from helpers import ulp_distance
    rng = np.random.default_rng(0)
    x = rng.uniform(-10, 10, 4096).astype(np.float32)
    y = rng.uniform(0.5, 2, 4096).astype(np.float32)
    tx, ty = nbx.from_numpy(x), nbx.from_numpy(y)
    # exact IEEE operations: bit for bit
    assert np.array_equal(nbx.add(tx, ty).numpy(), x + y)
    assert np.array_equal(nbx.mul(tx, ty).numpy(), x * y)
    assert np.array_equal(nbx.div(tx, ty).numpy(), x / y)
    assert np.array_equal(nbx.sqrt(ty).numpy(), np.sqrt(y))
    assert np.array_equal(nbx.floor_divide(tx, ty).numpy(), np.floor_divide(x, y))
    # a transcendental: within 1 float32 ulp of the float64 value
    got = nbx.exp(tx).numpy()
    assert ulp_distance(got, np.exp(x.astype(np.float64)), nbx.float32).max() <= 1.0
    # integer division exactness and the fault flag on the device
    a = nbx.from_numpy(np.array([2**62 + 1, -7, -(2**63)], np.int64))
    assert nbx.floor_divide(a, 3).numpy().tolist() == [(2**62 + 1) // 3, -7 // 3, -(2**63) // 3]
    with pytest.raises(ZeroDivisionError, match="nbx.floor_divide"):
        nbx.floor_divide(a, 0)


# ---------------------------------------------------------------------- out of memory on the device
_OOM = (r"nbx\.{op}: the result of shape \({shape},\) \({dt}\): out of memory on cuda:\d+: asked for "
        r"{nbytes} bytes \([\d.]+ GiB\); [\d.]+ GiB free of [\d.]+ GiB")


def _still_runs():
    """The process can still allocate and run ops after an out-of-memory error."""
    x = nbx.from_numpy(np.array([1.0, -2.0, 4.0], np.float32))
    assert nbx.neg(x).numpy().tolist() == [-1.0, 2.0, -4.0]
    y = nbx.exp(nbx.full((1 << 28,), 0.0))               # 1 GiB
    assert y.shape == (1 << 28,)
    assert nbx.add(x, 1).numpy().tolist() == [2.0, -1.0, 5.0]


@pytest.mark.cuda
def test_oom_result_larger_than_the_device():
    # 2^36 float32 = 256 GiB, over any H200 (139 GiB): cudaMalloc fails, the op is named, with the
    # shape, the bytes asked for and what the device has free (what is allowed)
    n = 1 << 36
    with pytest.raises(nbx.DeviceOOMError, match=_OOM.format(op="neg", shape=n, dt="float32",
                                                              nbytes=4 * n)) as e:
        nbx.neg(nbx.tensor([1.0]).expand(n))
    assert isinstance(e.value, MemoryError)
    assert e.value.op == "neg" and e.value.nbytes == 4 * n and e.value.where.startswith("cuda:")
    _still_runs()


@pytest.mark.cuda
def test_oom_size_guard_on_the_device():
    # past 2^63 bytes: refused before any allocation, naming the op; no element limit on the device
    with pytest.raises(nbx.DeviceOOMError, match=r"nbx\.neg: .*out of memory on cuda: asked for "
                                                 r"\d+ bytes .*more than any memory holds"):
        nbx.neg(nbx.tensor([1.0]).expand(2**62))
    r = nbx.isnan(nbx.tensor([1.0]).expand(2**27))       # over the interpreter's 2^26 limit: runs
    assert r.shape == (2**27,) and r.dtype.name == "bool"
    _still_runs()


@pytest.mark.cuda
def test_oom_device_full_then_recovers():
    # fill the device, then an op whose result does not fit: the op is named; `out=` of a faulting op
    # untouched; after the memory is dropped the same op runs (the allocator empties its cache and
    # retries). It takes the whole device: only in a serial run, never beside xdist workers.
    if os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("fills the device: run serially (make gpu-sanitize runs it)")
    n = 1 << 24                                          # 64 MiB of int32
    a = nbx.from_numpy(np.arange(1, n + 1, dtype=np.int32))
    b = nbx.full((n,), 3, dtype="int32")
    out = nbx.full((n,), 7, dtype="int32")
    want = (np.arange(1, n + 1, dtype=np.int32) // 3).tolist()
    hold = []
    for chunk in (1 << 32, 1 << 28, 1 << 24):            # 4 GiB, then 256 MiB, then 16 MiB blocks
        while True:
            try:
                hold.append(nbx.empty(chunk, dtype="uint8"))
            except nbx.DeviceOOMError:
                break
    held = sum(h.numel() for h in hold)
    assert held > 64 << 30, f"only {held / 2**30:.1f} GiB could be held"
    try:
        with pytest.raises(nbx.DeviceOOMError, match=_OOM.format(op="floor_divide", shape=n, dt="int32",
                                                                  nbytes=4 * n)):
            nbx.floor_divide(a, b, out=out)              # writes a fresh tensor first: that fails
        assert out.numpy()[:5].tolist() == [7] * 5 and (out.numpy() == 7).all()
        with pytest.raises(nbx.DeviceOOMError, match=_OOM.format(op="sqrt", shape=n, dt="float32",
                                                                  nbytes=4 * n)):
            nbx.sqrt(a)
    finally:
        del hold
    nbx.floor_divide(a, b, out=out)
    assert out.numpy().tolist() == want
    _still_runs()
