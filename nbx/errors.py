"""nbx's exceptions. Errors name the op, the argument and what was allowed."""


class BackendError(RuntimeError):
    """The backend asked for cannot be used here."""


class DeviceOOMError(MemoryError):
    """An allocation the backend could not make. `where` is the memory (host, cuda:0); an op that
    allocates re-raises it through `for_op`, so the message starts with the op and says what the
    memory was for."""

    def __init__(self, nbytes: int, where: str, detail: str = "", *, op: str = "", what: str = ""):
        self.nbytes, self.where, self.detail, self.op = nbytes, where, detail, op
        msg = f"out of memory on {where}: asked for {nbytes} bytes ({nbytes / 2**30:.3f} GiB)"
        if op:
            msg = f"nbx.{op}: {what + ': ' if what else ''}{msg}"
        super().__init__(msg + (f"; {detail}" if detail else ""))

    def for_op(self, op: str, what: str = "") -> "DeviceOOMError":
        return DeviceOOMError(self.nbytes, self.where, self.detail, op=op, what=what)


class SizeLimitError(MemoryError):
    """An op's result over the element limit of the backend that would compute it (the
    interpreter's NBX_INTERPRETER_MAX_ELEMENTS); raised before anything is allocated."""
