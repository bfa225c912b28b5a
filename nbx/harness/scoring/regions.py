"""Where over a sweep's range of bit patterns the errors lie: the job's range [lo, hi) in at most
LIMIT bins of equal width, each with its cases, misrounded results, special mismatches and largest
ulp error, so a report shows the region of a failure and not only a sample of it.

The figures come from the device scorer's per-program rows (scoring/device.py, DeviceScore.rows),
never from the elements: a bin is a whole number of rows wide where the rows start on multiples of
the row's width from lo (the chunks of exhaustive.sweep do), else a row counts in the bin of its
first element. Inputs the device left undecided are added one by one where the host decides them.
"""
from __future__ import annotations

import numpy as np

LIMIT = 256


def tiles_for(span: int, block: int, most: int, limit: int = LIMIT) -> int:
    """The tiles of `block` elements a score program takes so that a range of `span` elements has
    about `limit` rows or more: a power of two, 1 .. most (a shorter row costs a CUDA sweep of 2^32
    inputs its copy of rows, so the default stays where the range is long)."""
    tiles = 1
    while tiles * 2 <= most and span // (block * tiles * 2) >= limit:
        tiles *= 2
    return tiles


class RangeBins:
    """Per-bin figures over bit patterns lo .. hi - 1, the bins a whole number of rows of `row`
    elements wide."""

    def __init__(self, lo: int, hi: int, row: int, limit: int = LIMIT):
        self.lo, self.hi = int(lo), int(hi)
        span = max(1, self.hi - self.lo)
        rows = -(-span // max(1, row))
        self.width = max(1, row) * -(-rows // limit)
        k = -(-span // self.width)
        self.count = np.zeros(k, np.int64)
        self.misrounded = np.zeros(k, np.int64)
        self.special = np.zeros(k, np.int64)
        self.max_ulp = np.zeros(k, np.float64)

    def _bin(self, at) -> np.ndarray:
        at = np.asarray(at, np.int64)
        return np.clip((at - self.lo) // self.width, 0, len(self.count) - 1)

    def add_rows(self, start: int, rows: np.ndarray) -> None:
        """A chunk's DeviceScore.rows; its element 0 is bit pattern `start`."""
        rows = np.asarray(rows, np.float64).reshape(-1, 5)
        if not len(rows):
            return
        b = self._bin(start + rows[:, 0].astype(np.int64))
        np.add.at(self.count, b, rows[:, 1].astype(np.int64))
        np.add.at(self.misrounded, b, rows[:, 2].astype(np.int64))
        np.add.at(self.special, b, rows[:, 3].astype(np.int64))
        np.maximum.at(self.max_ulp, b, rows[:, 4])

    def add_points(self, at, batch) -> None:
        """Elements decided on the host (host.Batch) at bit patterns `at`."""
        at = np.asarray(at, np.int64)
        if not at.size:
            return
        b = self._bin(at)
        np.add.at(self.count, b, 1)
        np.add.at(self.misrounded, b, np.asarray(batch.not_cr, bool).astype(np.int64))
        if batch.exact:
            return
        special = np.asarray(batch.special, bool)
        np.add.at(self.special, b, special.astype(np.int64))
        err = np.asarray(batch.err, np.float64)
        ok = ~special & np.isfinite(err)
        np.maximum.at(self.max_ulp, b[ok], err[ok])

    def to_dict(self) -> dict:
        """Measurement.bins."""
        return {"lo": self.lo, "hi": self.hi, "width": self.width, "count": self.count.tolist(),
                "misrounded": self.misrounded.tolist(), "special": self.special.tolist(),
                "max_ulp": [float(v) for v in self.max_ulp]}


def edges(bins: dict) -> list[int]:
    """The bit patterns at the bins' edges: lo, lo + width, ..., hi."""
    k = len(bins.get("count") or [])
    return [min(int(bins["lo"]) + i * int(bins["width"]), int(bins["hi"])) for i in range(k + 1)]

