"""Writes that a reader, or a process killed at any instant (SIGKILL included), sees whole or not at
all: a temp file in the target's directory, flushed and fsynced, renamed over the target with
os.replace (atomic within a file system), the rename made durable by fsyncing the directory. A
kill before the rename leaves the target as it was (and at worst a stray .tmp file)."""
from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from nbx.paths import CHECKOUT, data_root  # noqa: F401  (CHECKOUT: the harness's name for it)

# The checkout (or site-packages) nbx runs from, and the root of its bank and budgets (nbx/paths.py).
DATA = data_root()


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _swap_in(tmp: str, path: Path) -> None:
    """os.replace(tmp, path), the temp removed if that fails, then the rename made durable."""
    try:
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(path.parent)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path`: the reader sees the old file or the whole new one, never a part."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
    except BaseException:
        os.unlink(tmp)
        raise
    _swap_in(tmp, path)


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` (UTF-8, newlines as written) to `path` as atomic_write_bytes writes bytes."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_symlink(target_dir: Path, link: Path) -> None:
    """Point `link` at `target_dir` with a relative symlink, swapped in atomically."""
    link = Path(link)
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.exists() and not link.is_symlink():
        raise ValueError(f"{link} exists and is not a symlink: refusing to replace it")
    target = os.path.relpath(Path(target_dir).resolve(), link.parent.resolve())
    tmp = str(link.parent / f".{link.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    os.symlink(target, tmp)
    _swap_in(tmp, link)
