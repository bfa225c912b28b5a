"""nbx's exceptions. Errors name the op, the argument and what was allowed."""


class BackendError(RuntimeError):
    """The backend asked for cannot be used here."""


class DeviceOOMError(MemoryError):
    def __init__(self, nbytes: int, where: str, detail: str = ""):
        self.nbytes = nbytes
        msg = f"out of memory on {where}: asked for {nbytes} bytes ({nbytes / 2**30:.3f} GiB)"
        super().__init__(msg + (f"; {detail}" if detail else ""))
