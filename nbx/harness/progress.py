"""A progress bar for long harness commands (`nbx run`, `nbx bank refresh`)."""
from __future__ import annotations

import sys
import time


class Progress:
    """A one-line progress bar on a terminal; a line every 10% otherwise (CI logs stay short)."""

    def __init__(self, total: int, label: str, stream=sys.stderr):
        self.total, self.label, self.stream, self.n = max(total, 1), label, stream, 0
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.start = time.perf_counter()
        self.last_decile = -1

    def step(self, what: str = "") -> None:
        self.n += 1
        frac = self.n / self.total
        el = time.perf_counter() - self.start
        if self.tty:
            bar = "#" * int(30 * frac)
            self.stream.write(f"\r{self.label} [{bar:<30}] {self.n}/{self.total} {el:6.1f}s {what[:40]:<40}")
            if self.n == self.total:
                self.stream.write("\n")
            self.stream.flush()
        elif int(frac * 10) > self.last_decile:
            self.last_decile = int(frac * 10)
            self.stream.write(f"{self.label}: {self.n}/{self.total} ({100 * frac:.0f}%) {el:.1f}s\n")
            self.stream.flush()
