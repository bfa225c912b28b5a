"""Progress of long harness commands (`nbx run`, `nbx bank refresh`), on stderr.

Two forms, chosen per stream unless configured: on a terminal, one line redrawn in place (a bar,
done/total, the rate, elapsed time and the ETA, and the job in hand), at most 10 times a second;
anywhere else (a CI log, a file, several shards sharing one terminal), a plain line at the start,
every `interval` seconds and at the end, each written whole with one write() so that lines of
processes sharing a stream do not cut into each other.

`configure` sets the form, interval and a tag for every Progress made afterwards: the CLI calls it
so that a caller of runner.run or bank.refresh need not pass anything through.
"""
from __future__ import annotations

import os
import shutil
import sys
import time

MODES = ("auto", "bar", "lines")
_settings = {"mode": "auto", "interval": 30.0, "tag": ""}


def configure(mode: str | None = None, interval: float | None = None, tag: str | None = None) -> None:
    """mode: auto (a bar on a terminal, lines otherwise), bar or lines. interval: seconds between
    plain lines. tag: put after the label (`shard 1/4`), to tell processes apart."""
    if mode is not None:
        if mode not in MODES:
            raise ValueError(f"progress mode {mode!r} is not one of {', '.join(MODES)}")
        _settings["mode"] = mode
    if interval is not None:
        if not interval > 0:
            raise ValueError(f"progress interval must be > 0 seconds, got {interval!r}")
        _settings["interval"] = float(interval)
    if tag is not None:
        _settings["tag"] = tag


def fmt_duration(seconds: float) -> str:
    """12s, 4m05s, 2h03m."""
    s = int(round(max(seconds, 0.0)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def fmt_rate(per_s: float) -> str:
    """Jobs per second, or seconds per job when slower than one a second."""
    if per_s <= 0:
        return "-"
    return f"{per_s:.2f} jobs/s" if per_s >= 1 else f"{1 / per_s:.1f} s/job"


class Progress:
    """Counts steps of a known total and shows them as the module docstring says."""

    def __init__(self, total: int, label: str, stream=None, *, mode: str | None = None,
                 interval: float | None = None, clock=time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.total, self.n = max(int(total), 1), 0
        tag = _settings["tag"]
        self.label = f"{label} [{tag}]" if tag else label
        mode = mode or _settings["mode"]
        if mode == "auto":
            tty = getattr(self.stream, "isatty", None)
            mode = "bar" if tty is not None and tty() and os.environ.get("TERM") != "dumb" else "lines"
        self.bar = mode == "bar"
        self.interval = float(interval if interval is not None else _settings["interval"])
        self.clock = clock
        self.start = self.last = clock()
        if not self.bar:
            self._write(self._line("started") + "\n")

    # ------------------------------------------------------------------ figures
    def _figures(self) -> tuple[str, str, str]:
        """(rate, elapsed, eta) as text."""
        el = self.clock() - self.start
        rate = self.n / el if el > 0 else 0.0
        eta = fmt_duration((self.total - self.n) / rate) if rate > 0 else "?"
        return fmt_rate(rate), fmt_duration(el), eta

    def _line(self, what: str = "") -> str:
        rate, el, eta = self._figures()
        pct = 100 * self.n / self.total
        if self.n == 0:
            return f"{self.label}: 0/{self.total} jobs, {what}"
        end = f"done in {el}" if self.n >= self.total else f"elapsed {el}, ETA {eta}"
        return f"{self.label}: {self.n}/{self.total} jobs ({pct:.0f}%), {rate}, {end}" + \
            (f"; last: {what}" if what and self.n < self.total else "")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):       # a closed pipe or stream: progress is not worth dying for
            pass

    # ------------------------------------------------------------------ steps
    def step(self, what: str = "") -> None:
        self.n = min(self.n + 1, self.total)
        now = self.clock()
        done = self.n >= self.total
        if self.bar:
            if done or now - self.last >= 0.1:
                self.last = now
                self._write("\r" + self._bar(what) + "\x1b[K" + ("\n" if done else ""))
        elif done or now - self.last >= self.interval:
            self.last = now
            self._write(self._line(what) + "\n")

    def _bar(self, what: str) -> str:
        rate, el, eta = self._figures()
        frac = self.n / self.total
        width = shutil.get_terminal_size((100, 24)).columns - 1
        head = f"{self.label} [{'#' * int(20 * frac):<20}] {self.n}/{self.total} {100 * frac:3.0f}% "
        tail = f"{rate} {el}" + (f" ETA {eta}" if self.n < self.total else "")
        text = f"{head}{tail}  {what}" if what and self.n < self.total else head + tail
        return text[:max(width, 20)]
