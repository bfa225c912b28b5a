"""FastPath: what an op's float32 fast path is, as the op's spec holds it (OpSpec.fast32).

A fast path evaluates the op in float64 with a known relative error (its `evaluate`, one of the
bodies in kernels/fast32/) and keeps a value only where a rounding test proves it equal to the op's
exact body (the correctly rounded path: libdevice's float64 function rounded once). The launcher
(launch.py) stores the fast values, takes the least of the tile's keys (fast32/keys.py) and runs the
exact body over a tile that holds a hard element, in pieces reloaded from memory, so results are
the exact body's bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .fast32.keys import HARD_K


@dataclass(frozen=True)
class FastPath:
    """evaluate: @triton.jit (x, table) -> (float64 y, outside) for a fast path with a table, else
    (operands...) -> (float64 y, outside); y within E |y| of the exact value wherever not outside.
    table: a float64 numpy array (kept on the device, passed as a pointer) or a tuple of floats
    (passed as kernel parameters, int64 bit patterns; fast32/poly.param decodes them); None: none.
    k: the rounding test's window in float64 ulps of y, E = k 2^-53; 0 where y is exact on the domain.
    reference: @triton.jit float64 -> float64, the function evaluate approximates (the probes of
    nbx/harness/suites/fastpath.py measure evaluate's error against it; unary fast paths only).
    pieces: the flat kernel keeps a mask of the tile's pieces that hold a hard element and recomputes
    only those (flat.piece_mask: ~2 more instructions per element; for a window wide enough that
    tiles are often flagged).
    store_first: the fast values are stored before the tile's key reduction, so no register holds
    them across it (where out= aliases no input).
    max_registers: the kernel's register cap on CUDA (0: ptxas's choice); block: the flat kernel's
    tile on CUDA (0: the launcher's 1024)."""
    evaluate: Any
    table: Any = None
    k: int = int(HARD_K)
    reference: Any = None
    pieces: bool = False
    store_first: bool = True
    max_registers: int = 0
    block: int = 0

    def __post_init__(self):
        object.__setattr__(self, "k", int(self.k))
        if self.k < 0 or self.k >= 2 ** 26:
            raise ValueError(f"FastPath: k={self.k} is outside [0, 2^26): the keys are int32 (16 k < 2^31)")

    @property
    def bound(self) -> float:
        """E, the relative error of evaluate that the rounding test allows for."""
        return self.k * 2.0 ** -53

    @property
    def options(self) -> dict:
        """The Triton launch options of the fast path's kernels on CUDA."""
        return {"maxnreg": self.max_registers} if self.max_registers else {}
