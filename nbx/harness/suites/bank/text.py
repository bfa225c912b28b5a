"""The text of a bank file: three header lines, then one line per generator input, in the
generator's order:

    # nbx reference bank: op=exp params={} dtype=float32 operands=float32 out=float32
    # generator=1 seed=20261202 mpmath=1.4.1 rounding=ziv(p+32 .. 1024 bits) cases=155 unresolved=0
    # inputs (hex bits) -> expected output (hex bits)   # tag
    0x3f800000 -> 0x402df854   # special

An input whose value Ziv's loop could not decide keeps its line, with `unresolved` for the output
and the reason after the tag, so that every input the generator draws is in the file:

    0x3f800000 0x40000000 -> unresolved   # random; Ziv undecided at 1024 bits, not exact (last rounding 0x402df854)
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import NamedTuple

import mpmath
import numpy as np

from nbx.dtype import DTYPES, DType
from nbx.harness.scoring.host import bits_of
from nbx.harness.targets.target import Target
from nbx.harness.suites.bank.generate import GENERATOR_VERSION, ROUNDING, SEED

COLUMNS = "# inputs (hex bits) -> expected output (hex bits)   # tag"
UNRESOLVED = "unresolved"
HEADER_LINES = 3


class BankError(RuntimeError):
    """A corrupted, stale or missing bank: never a pass."""


class Unresolved(NamedTuple):
    """An input listed without an expected value: its line, operand bits, tag and the reason."""

    line: int
    inputs: tuple
    tag: str
    reason: str


@dataclass
class BankFile:
    operands: list[DType]
    out: DType
    inputs: list[np.ndarray]      # the decided cases, one array per operand
    expected: np.ndarray          # their expected outputs' bits
    tags: list[str]
    unresolved: list[Unresolved]
    rows: list[tuple]             # (operand bits..., tag) of every line, decided or not, in file order
    header: dict                  # parse_header's fields


def header(t: Target, out: DType, count: int, unresolved: int) -> list[str]:
    return [f"# nbx reference bank: op={t.op} params={json.dumps(t.params, sort_keys=True)} "
            f"dtype={t.dtype.name} operands={','.join(d.name for d in t.operand_dtypes())} out={out.name}",
            f"# generator={GENERATOR_VERSION} seed={SEED} mpmath={mpmath.__version__} "
            f"rounding={ROUNDING} cases={count} unresolved={unresolved}",
            COLUMNS]


def unresolved_reason(bits: int) -> str:
    return f"Ziv undecided at 1024 bits, not exact (last rounding {hex(bits)})"


def render(t: Target, arrays, tags, bits, ok, out: DType) -> str:
    lines = header(t, out, int(ok.sum()), int((~ok).sum()))
    in_bits = [bits_of(a) for a in arrays]
    for i in range(len(bits)):
        ins = " ".join(hex(int(b[i])) for b in in_bits)
        if ok[i]:
            lines.append(f"{ins} -> {hex(int(bits[i]))}   # {tags[i]}")
        else:
            lines.append(f"{ins} -> {UNRESOLVED}   # {tags[i]}; {unresolved_reason(int(bits[i]))}")
    return "\n".join(lines) + "\n"


_HEAD = (re.compile(r"# nbx reference bank: op=(?P<op>\S+) params=(?P<params>\{.*\}) dtype=(?P<dtype>\S+) "
                    r"operands=(?P<operands>\S+) out=(?P<out>\S+)$"),
         re.compile(r"# generator=(?P<generator>\d+) seed=(?P<seed>\d+) mpmath=(?P<mpmath>\S+) "
                    r"rounding=(?P<rounding>.+) cases=(?P<cases>\d+) unresolved=(?P<unresolved>\d+)$"))


def parse_header(text: str, path: str = "") -> dict:
    """The fields of a bank file's header (header()); its third line must be COLUMNS."""
    lines = text.split("\n", HEADER_LINES)[:HEADER_LINES]
    out = {}
    for n, rx in enumerate(_HEAD):
        m = rx.match(lines[n]) if n < len(lines) else None
        if m is None:
            got = lines[n] if n < len(lines) else "end of file"
            raise BankError(f"{path}:{n + 1}: malformed bank header {got!r} (expected {rx.pattern!r})")
        out.update(m.groupdict())
    if len(lines) < HEADER_LINES or lines[2] != COLUMNS:
        got = lines[2] if len(lines) == HEADER_LINES else "end of file"
        raise BankError(f"{path}:3: malformed bank header {got!r} (expected {COLUMNS!r})")
    try:
        out["params"] = json.loads(out["params"])
    except json.JSONDecodeError as e:
        raise BankError(f"{path}:1: malformed params in the bank header ({e})") from None
    if out["operands"] and not all(x in DTYPES for x in out["operands"].split(",")) \
            or out["out"] not in DTYPES:
        raise BankError(f"{path}:1: unknown dtype in operands={out['operands']} out={out['out']} "
                        f"(allowed: {', '.join(DTYPES)})")
    for k in ("generator", "seed", "cases", "unresolved"):
        out[k] = int(out[k])
    return out


def parse(text: str, path: str = "") -> BankFile:
    """A bank file's header and lines; anything but the three header lines and one line per input
    (a case or an unresolved input) is a BankError naming the line."""
    head = parse_header(text, path)
    operands = [DTYPES[x] for x in head["operands"].split(",")]
    out = DTYPES[head["out"]]
    ins, exp, tags, rows, unresolved = [], [], [], [], []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    for n, line in enumerate(lines[HEADER_LINES:], HEADER_LINES + 1):
        try:
            body, sep, note = line.partition("   # ")
            left, right = body.split(" -> ")
            bits = tuple(int(x, 16) for x in left.split(" "))
            if not sep or len(bits) != len(operands):
                raise ValueError(f"expected {len(operands)} operand(s), ' -> ', output and '   # tag'")
            right = right.strip()
            if right == UNRESOLVED:
                tag, _, reason = note.partition("; ")
                if not reason:
                    raise ValueError("an unresolved input needs its reason after the tag ('tag; reason')")
                unresolved.append(Unresolved(n, bits, tag, reason))
            else:
                tag = note
                ins.append(bits)
                exp.append(int(right, 16))
                tags.append(tag)
            rows.append((*bits, tag))
        except ValueError as e:
            raise BankError(f"{path}:{n}: malformed bank line {line!r} ({e})") from None
    return BankFile(operands, out, arrays_of(operands, ins), np.array(exp, dtype=np.uint64), tags,
                    unresolved, rows, head)


def arrays_of(operands: list[DType], rows: list[tuple]) -> list[np.ndarray]:
    """Operand arrays from rows of operand bit patterns."""
    cols = list(zip(*rows)) if rows else [[] for _ in operands]
    arrays = []
    for d, col in zip(operands, cols):
        u = np.array(col, dtype=np.uint64).astype(d.uint_np if d.itemsize > 1 or d.is_bool else np.uint8)
        arrays.append(u.view(d.np) if not d.is_bool else u.astype(bool))
    return arrays
