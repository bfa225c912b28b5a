"""nbx: a Triton element-wise op library on a torch-free tensor, and the harness that verifies it.

The backend is chosen at import (`NBX_BACKEND=auto|cuda|interpreter`), before any kernel module is
loaded, because Triton's interpreter must be switched on before `@triton.jit` runs.
"""
from . import backend as _backend  # noqa: I001  (must come first: sets TRITON_INTERPRET)

if not _backend.IS_CUDA:
    _backend.active.install_libdevice()

from .backend import backend_id, backend_info  # noqa: E402
from .dtype import (DTYPES, DType, bfloat16, bool_, float16, float32, float64, int8, int16,  # noqa: E402
                    int32, int64, uint8)
from .errors import BackendError, DeviceOOMError  # noqa: E402
from .promotion import promote_types, result_type  # noqa: E402
from .tensor import Tensor, empty, from_numpy, full, ones, tensor, zeros  # noqa: E402
from . import ops  # noqa: E402
from .ops import OPS, FUNCTIONS, contiguous  # noqa: E402

globals().update(FUNCTIONS)
bool = bool_  # noqa: A001  (nbx.bool, as torch.bool)

__version__ = "0.1.0"


def synchronize() -> None:
    _backend.active.synchronize()
