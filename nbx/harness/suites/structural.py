"""The structural suites: which apply to a target, and running one.

- `layout` (layout.py): the op on broadcast and strided views equals, bit for bit, the op on
  contiguous copies; the contiguous results are scored in ulp.
- `intdiv` (intdiv.py): integer division against exact Python integers, and float floor_divide /
  remainder against Python's exact semantics.
Sizes per profile: cases.PROFILE_SIZES.
"""
from __future__ import annotations

from nbx.harness.suites import intdiv

from nbx.harness.suites import layout
from nbx.harness.inputs.cases import PROFILE_SIZES
from nbx.harness.targets.target import Target


def structural_suites(t: Target) -> list[str]:
    out = ["layout"] if layout.applies(t) else []
    if intdiv.applies(t):
        out.append("intdiv")
    return out


def run_structural(t: Target, suite: str, profile: str, seed: int, acc) -> None:
    if profile not in PROFILE_SIZES:
        raise ValueError(f"profile {profile!r} is not one of {', '.join(PROFILE_SIZES)}")
    if suite == "layout":
        layout.run_layout(t, profile, seed, acc)
    elif suite == "intdiv":
        intdiv.run_intdiv(t, profile, seed, acc)
    else:
        raise ValueError(f"unknown structural suite {suite!r} (layout, intdiv)")
