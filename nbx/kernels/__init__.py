"""The Triton kernels. Under Triton's interpreter each libdevice symbol must be answered by numpy
(backend/interpreter_libdevice.py) before a kernel here runs; this package installs that on its
first import, whichever of its modules is imported first."""
from .. import backend as _backend

if not _backend.IS_CUDA:
    _backend.active.install_libdevice()
