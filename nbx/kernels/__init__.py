"""The Triton kernels. Under Triton's interpreter each libdevice symbol must be answered by numpy
(backend/interpreter_libdevice.py) before a kernel here runs; this package installs that on its
first import, whichever of its modules is imported first. On CUDA it points Triton's driver at
cudart (backend/cuda.py) the same way."""
from .. import backend as _backend

if _backend.IS_CUDA:
    _backend.active.install_triton_driver()
else:
    _backend.active.install_libdevice()
