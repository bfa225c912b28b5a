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
    from helpers import assert_bits_equal, specials
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
