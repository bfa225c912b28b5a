"""Where memory lives: the backend is chosen once, at import, before any kernel is decorated.

`NBX_BACKEND=auto|cuda|interpreter` (default auto: cuda when cuda-bindings imports and a device is
visible, else Triton's interpreter on host memory). The interpreter needs `TRITON_INTERPRET=1` in the
environment before `@triton.jit` runs, so this module sets it before nbx imports a kernel module.
"""
from __future__ import annotations

import os
import platform

from ..errors import BackendError

_CHOICES = ("auto", "cuda", "interpreter")


def _cuda_visible() -> tuple[bool, str]:
    try:
        from cuda.bindings import runtime as cudart
    except ImportError as e:
        return False, f"cuda-bindings not importable ({e})"
    try:
        err, n = cudart.cudaGetDeviceCount()
    except Exception as e:  # a broken driver install raises rather than returning an error code
        return False, f"cudaGetDeviceCount failed ({e})"
    if int(err) != 0 or n == 0:
        return False, f"no CUDA device visible ({err}, count {n})"
    return True, ""


def _select():
    choice = os.environ.get("NBX_BACKEND", "auto").strip().lower() or "auto"
    if choice not in _CHOICES:
        raise BackendError(f"NBX_BACKEND={choice!r} is not one of {', '.join(_CHOICES)}")
    if choice in ("auto", "cuda"):
        ok, why = _cuda_visible()
        if ok:
            return "cuda", ""
        if choice == "cuda":
            raise BackendError(f"NBX_BACKEND=cuda but {why}")
        return "interpreter", why
    return "interpreter", "NBX_BACKEND=interpreter"


NAME, WHY = _select()
if NAME == "interpreter":
    os.environ["TRITON_INTERPRET"] = "1"
    from . import interpreter as active
else:
    os.environ.pop("TRITON_INTERPRET", None)
    from . import cuda as active

IS_CUDA = NAME == "cuda"


def backend_id() -> str:
    """'interpreter-numpy<ver>' or 'cuda-sm<cc>-triton<ver>': the key of the budget file."""
    import numpy
    import triton
    if IS_CUDA:
        return f"cuda-sm{active.capability_str()}-triton{triton.__version__}"
    return f"interpreter-numpy{numpy.__version__}"


def backend_info() -> dict:
    import ml_dtypes
    import mpmath
    import numpy
    import triton
    info = {
        "backend": NAME,
        "id": backend_id(),
        "device": active.device_name(),
        "triton": triton.__version__,
        "numpy": numpy.__version__,
        "ml_dtypes": ml_dtypes.__version__,
        "mpmath": mpmath.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    if WHY and not IS_CUDA:
        info["why_not_cuda"] = WHY
    info.update(active.extra_info())
    return info
