"""The Measurement record: one op x dtype x suite on one backend, as the report layer stores it.

JSON cannot hold inf or nan, and ulp figures are often inf (a special mismatch) or nan (a
measurement that went wrong), so every float travels as a number or as one of the strings
"inf", "-inf", "nan", and is decoded back on load.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, fields
from typing import Any

SCHEMA_VERSION = 1

# the bins of Measurement.hist, in ulps (the last is open: inf)
HIST_EDGES = [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0, 4096.0, 2.0 ** 20, math.inf]

SUITES = ("bank", "exhaustive16", "sweep", "pairs", "layout", "intdiv")


def encode_float(value: float) -> float | str:
    """A float as JSON can carry it: inf/nan become the strings "inf", "-inf", "nan"."""
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def decode_float(value: Any) -> float:
    """The inverse of encode_float; also accepts plain ints."""
    if isinstance(value, str):
        if value in ("inf", "-inf", "nan"):
            return float(value)
        raise ValueError(f"not an encoded float: {value!r} (allowed: a number, 'inf', '-inf', 'nan')")
    return float(value)


def _encode_series(series: dict | None) -> dict | None:
    if series is None:
        return None
    return {name: [int(v) if isinstance(v, numbers.Integral) and not isinstance(v, bool)
                   else encode_float(v) for v in values]
            for name, values in series.items()}


def _decode_series(series: dict | None, int_keys: tuple[str, ...] = ()) -> dict | None:
    if series is None:
        return None
    return {name: [int(v) if name in int_keys else decode_float(v) for v in values]
            for name, values in series.items()}


_BIN_SCALARS = ("lo", "hi", "width")
_BIN_COUNTS = ("count", "misrounded", "special")


def _encode_bins(bins: dict) -> dict:
    out: dict[str, Any] = {k: int(bins[k]) for k in _BIN_SCALARS}
    out.update({k: [int(v) for v in bins.get(k) or []] for k in _BIN_COUNTS})
    out["max_ulp"] = [encode_float(v) for v in bins.get("max_ulp") or []]
    return out


def _decode_bins(bins: dict | None) -> dict | None:
    if bins is None:
        return None
    out: dict[str, Any] = {k: int(bins[k]) for k in _BIN_SCALARS}
    out["count"] = [int(v) for v in bins.get("count") or []]
    out.update({k: [int(v) for v in bins.get(k, [0] * len(out["count"]))] for k in _BIN_COUNTS[1:]})
    out["max_ulp"] = [decode_float(v) for v in bins.get("max_ulp") or []]
    if any(len(out[k]) != len(out["count"]) for k in _BIN_COUNTS[1:] + ("max_ulp",)) or out["width"] < 1:
        raise ValueError("Measurement.from_dict: bins' series differ in length, or a width below 1")
    return out


@dataclass
class Worst:
    """One of the worst inputs of a measurement, everything as hex bit patterns."""
    inputs: list[str]
    got: str
    expected: str
    ulp: float
    note: str = ""

    def to_dict(self) -> dict:
        return {"inputs": list(self.inputs), "got": self.got, "expected": self.expected,
                "ulp": encode_float(self.ulp), "note": self.note}

    @classmethod
    def from_dict(cls, d: dict) -> "Worst":
        return cls(inputs=[str(x) for x in d["inputs"]], got=str(d["got"]),
                   expected=str(d["expected"]), ulp=decode_float(d["ulp"]),
                   note=str(d.get("note", "")))


_FLOAT_FIELDS = ("max_ulp", "mean_ulp", "p999_ulp", "order_max_ulp", "wall_s")
_INT_FIELDS = ("cases", "not_correctly_rounded", "special_mismatches", "wrong",
               "close_calls", "unresolved", "layouts", "decided_on_device", "undecided",
               "order_cases", "order_differ", "left_out")


@dataclass
class Measurement:
    op: str
    dtype: str
    suite: str
    backend: str
    cases: int = 0
    max_ulp: float = 0.0
    mean_ulp: float = 0.0
    p999_ulp: float = 0.0
    not_correctly_rounded: int = 0
    special_mismatches: int = 0
    wrong: int = 0
    close_calls: int = 0
    unresolved: int = 0
    layouts: int = 0
    decided_on_device: int = 0      # cases decided and scored on the device (harness/suites/exhaustive.py)
    undecided: int = 0              # cases the device could not decide, scored on the host (mpmath)
    left_out: int = 0               # undecided cases beyond the host's quota (a sample): in no figure
    # compound ops (nbx.ops.verify.Order): the figure against the documented evaluation order, which
    # the gate holds; max_ulp and the counts above stay the figures against the exact value
    order_cases: int = 0            # cases compared with the order (0: the op has none on this dtype)
    order_max_ulp: float = 0.0      # inf: a special-value class differs from the order's
    order_differ: int = 0           # cases whose bits differ from the order's
    wall_s: float = 0.0
    worst: list[Worst] = field(default_factory=list)
    plot: dict | None = None
    hist: dict | None = None
    # a sweep over bit patterns: its range in equal bins, per bin the cases, misrounded results,
    # special mismatches and largest ulp error (scoring/regions.py); None for other suites
    bins: dict | None = None
    error: str = ""
    # who produced the results: "nbx", or a peer measured beside it on the same inputs
    # (`nbx run --target torch`, harness/targets/peers.py); peers are reported, never gated
    target: str = "nbx"
    target_info: str = ""           # a peer's library, version and device: "torch 2.13.0+cpu on cpu"

    @property
    def is_nbx(self) -> bool:
        return self.target == "nbx"

    @property
    def frac_not_correctly_rounded(self) -> float:
        return self.not_correctly_rounded / self.cases if self.cases else 0.0

    def key(self) -> tuple:
        """(op, dtype, suite) for nbx's measurements; a peer's adds its target, (op, dtype, suite,
        "torch"), so both live in one report (merge, diff and the gate's failures key on this)."""
        if self.target == "nbx":
            return (self.op, self.dtype, self.suite)
        return (self.op, self.dtype, self.suite, self.target)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"op": self.op, "dtype": self.dtype, "suite": self.suite,
                             "backend": self.backend}
        for name in _INT_FIELDS:
            d[name] = int(getattr(self, name))
        for name in _FLOAT_FIELDS:
            d[name] = encode_float(getattr(self, name))
        d["worst"] = [w.to_dict() for w in self.worst]
        d["plot"] = _encode_series(self.plot)
        d["hist"] = _encode_series(self.hist)
        if self.bins is not None:
            d["bins"] = _encode_bins(self.bins)
        d["error"] = self.error
        d["target"] = self.target
        if self.target_info:
            d["target_info"] = self.target_info
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Measurement":
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"Measurement.from_dict: unknown fields {sorted(unknown)}")
        missing = {"op", "dtype", "suite", "backend"} - set(d)
        if missing:
            raise ValueError(f"Measurement.from_dict: missing fields {sorted(missing)}")
        kwargs: dict[str, Any] = {name: str(d[name]) for name in ("op", "dtype", "suite", "backend")}
        for name in _INT_FIELDS:
            if name in d:
                kwargs[name] = int(d[name])
        for name in _FLOAT_FIELDS:
            if name in d:
                kwargs[name] = decode_float(d[name])
        kwargs["worst"] = [Worst.from_dict(w) for w in d.get("worst", [])]
        kwargs["plot"] = _decode_series(d.get("plot"))
        kwargs["hist"] = _decode_series(d.get("hist"), int_keys=("counts",))
        kwargs["bins"] = _decode_bins(d.get("bins"))       # reports made before bins: None
        kwargs["error"] = str(d.get("error", ""))
        kwargs["target"] = str(d.get("target") or "nbx")      # reports made before peers: nbx's
        kwargs["target_info"] = str(d.get("target_info", ""))
        return cls(**kwargs)
