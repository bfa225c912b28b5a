"""nbx: a Triton element-wise op library on a torch-free tensor, and the harness that verifies it.

The backend is chosen at import (`NBX_BACKEND=auto|cuda|interpreter`), before any kernel module is
loaded, because Triton's interpreter must be switched on before `@triton.jit` runs.

The rest (dtypes, Tensor, the ops, and with them Triton) loads on the first use of a public name
(`nbx.exp`, `nbx.OPS`, `from nbx import float32`), so that importing a light submodule (`nbx.cli`,
`nbx.harness.report`) stays light: `nbx --help` imports no Triton. A submodule imported directly
brings what it needs; nbx/kernels/__init__.py installs the interpreter's libdevice.
"""
from . import backend as _backend  # noqa: I001  (must come first: sets TRITON_INTERPRET)

__version__ = "0.1.0"

_loaded = False


def _load() -> None:
    """Import the library and bind its public names here (once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    try:
        from .backend import backend_id, backend_info
        from .dtype import (DTYPES, DType, bfloat16, bool_, float16, float32, float64, int8, int16,
                            int32, int64, uint8)
        from .errors import BackendError, DeviceOOMError, SizeLimitError
        from .promotion import promote_types, result_type
        from .tensor import Tensor, empty, from_dlpack, from_numpy, full, ones, tensor, zeros
        from . import ops
        from .ops import OPS, FUNCTIONS, contiguous
    except BaseException:
        _loaded = False
        raise
    names = {k: v for k, v in locals().items() if k != "names"}
    names.update(FUNCTIONS)
    names["bool"] = bool_   # nbx.bool, as torch.bool
    globals().update(names)


# The harness's documented errors, importable as nbx.<Name>: each loads its own module on first use
# (the harness is above the ops; `nbx.exp` must not import it).
_HARNESS_ERRORS = {"BankError": "nbx.harness.suites.bank", "DirectoryInUse": "nbx.harness.report.json_report"}
# The harness's public functions, likewise: nbx.verify(fn, op, dtype) and its result.
_HARNESS_API = {"verify": "nbx.harness.verify", "Verification": "nbx.harness.verify"}
_HARNESS_NAMES = {**_HARNESS_ERRORS, **_HARNESS_API}

# Submodules a module of nbx imports as `from .. import dtype`: Python asks the package for the
# attribute first, which must import the submodule rather than load the library (that would import
# the very module asking, half-initialized). `tensor` is a public function as well, bound by _load.
_SUBMODULES = ("backend", "dtype", "errors", "promotion", "kernels", "ops", "harness", "cli")


def __getattr__(name: str):
    if name in _HARNESS_NAMES:
        import importlib
        value = getattr(importlib.import_module(_HARNESS_NAMES[name]), name)
        globals()[name] = value
        return value
    # Dunder probes (copy, pickle, inspect, doctest) must not load the library.
    if name.startswith("__") or _loaded:
        raise AttributeError(f"module 'nbx' has no attribute {name!r}")
    if name in _SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    _load()
    try:
        return globals()[name]
    except KeyError:
        raise AttributeError(f"module 'nbx' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    _load()
    return sorted(set(globals()) | set(_HARNESS_NAMES))


def synchronize() -> None:
    _backend.active.synchronize()
