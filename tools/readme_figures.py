"""Print the README's figures: one table per op family, read from committed H200 reports.

Usage: python3 tools/readme_figures.py [--check README] [EXHAUSTIVE_REPORT GPU_CHECK_REPORT [PEERS_REPORT]]

The precision columns come from the last per-op table of an exhaustive report (every float32 input,
every 16-bit operand pair, 2^32 stratified float32 tuples, decided on the device, nbx and torch on
the same inputs); the bandwidth column from the bandwidth table of a gpu-check report
(`bench/elementwise.py`, 2^28 float32, fraction of a device copy). An exhaustive run of nbx alone
(torch's columns "-") takes torch's figures from a peers report whose per-op table measured torch
on the same inputs (the profile's inputs are fixed: every input, or the seeded stratified tuples),
matched by op, dtype and suite. The heading line names each report's path, machine, backend,
commit and date as the reports state them. Ops are grouped by their
spec's family (`nbx.OPS[op].family`). What is printed is the README's "## Figures" section, less its
title; tests/test_readme_figures.py holds the README to it, and --check exits 1 when README differs.
"""
from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXHAUSTIVE = "reports/h200/exhaustive-20261206.md"
GPU_CHECK = "reports/h200/gpu-check-20261204.md"
PEERS = "reports/h200/exhaustive-20261204.md"
DTYPES = ("float32", "float16", "bfloat16", "float64")
FAMILIES = ("unary", "activations", "arithmetic", "binary_math", "ternary", "compare", "logical",
            "bitwise", "convert")


def _table(lines: list[str], start: int) -> list[dict[str, str]]:
    """The Markdown table whose header is lines[start], as rows keyed by header cell."""
    head = [c.strip() for c in lines[start].strip().strip("|").split("|")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(head, (c.strip() for c in line.strip().strip("|").split("|")))))
    return rows


def _number(cell: str) -> int | None:
    """A count cell: "1,234", "1,234 wrong" (an exact result that differs) or "-" (not measured)."""
    return None if cell in ("", "-") else int(cell.split()[0].replace(",", ""))


def _provenance(text: str, commit: str) -> dict[str, str]:
    """Machine, backend and date as the report's title and first paragraph state them."""
    flat = " ".join(text.split())
    machine = re.search(r"one (NVIDIA \w+)", flat)
    backend = re.search(r"backend (cuda-[\w.-]*\w)", flat)
    date = re.search(r"\d{4}-\d{2}-\d{2}", text.splitlines()[0])
    if not (machine and backend and date):
        raise SystemExit("readme_figures: a report does not name its machine, backend and date")
    return {"machine": machine.group(1), "backend": backend.group(1), "date": date.group(0),
            "commit": commit}


def read_exhaustive(path: Path) -> tuple[dict[str, str], list[dict[str, str]]]:
    """The last per-op table (columns op, dtype, inputs, misrounded, torch misrounded) and the
    commit named in its section's heading ("## Call L, at 5adb55b: ...")."""
    text = path.read_text()
    lines = text.splitlines()
    section = None
    found = None
    for i, line in enumerate(lines):
        if line.startswith("## "):
            section = line
        if line.startswith("| op | dtype |") and "torch misrounded" in line:
            found = (section, i)
    if found is None:
        raise SystemExit(f"readme_figures: {path} holds no per-op table with torch's columns")
    commit = re.search(r"\bat ([0-9a-f]{7,40})\b", found[0] or "")
    if commit is None:
        raise SystemExit(f"readme_figures: the heading above {path}'s table names no commit")
    return _provenance(text, commit.group(1)), _table(lines, found[1])


def read_bandwidth(path: Path) -> tuple[dict[str, str], dict[str, float]]:
    """Case -> fraction of copy from the table of "op | of copy" pairs, and the title's commit."""
    text = path.read_text()
    lines = text.splitlines()
    commit = re.search(r"at commit ([0-9a-f]{7,40})", lines[0])
    if commit is None:
        raise SystemExit(f"readme_figures: {path}'s title names no commit")
    start = next((i for i, line in enumerate(lines) if line.startswith("| op | of copy |")), None)
    if start is None:
        raise SystemExit(f"readme_figures: {path} holds no bandwidth table")
    fractions = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for case, value in zip(cells[::2], cells[1::2]):
            if case:
                fractions[case] = float(value)
    return _provenance(text, commit.group(1)), fractions


def _count(n: int, jobs: int, of: int) -> str:
    if n == 0:
        return f"0 in {of} jobs"
    return f"{n:,} in {jobs} of {of} jobs"


def _span(values: list[float]) -> str:
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return f"{lo:.2f}" if lo == hi else f"{lo:.2f}-{hi:.2f}"


def _with_peers(rows: list[dict[str, str]], peers: list[dict[str, str]]) -> list[dict[str, str]]:
    """rows whose torch cells are "-" given the peers table's torch cells (same op, dtype, suite)."""
    theirs = {(r["op"], r["dtype"], r["suite"]): r for r in peers}
    out = []
    for r in rows:
        p = theirs.get((r["op"], r["dtype"], r["suite"]))
        if r["torch misrounded"] == "-" and p is not None:
            r = {**r, **{k: p[k] for k in ("torch misrounded", "torch specials", "torch max ulp")}}
        out.append(r)
    return out


def figures(exhaustive: Path, gpu_check: Path, peers: Path | None = None) -> str:
    import nbx

    ex_from, rows = read_exhaustive(exhaustive)
    bw_from, fractions = read_bandwidth(gpu_check)
    heading = (f"### {ex_from['machine']} ({ex_from['backend']}): `{exhaustive.relative_to(ROOT)}` "
               f"(commit {ex_from['commit']}, {ex_from['date']}) and `{gpu_check.relative_to(ROOT)}` "
               f"(commit {bw_from['commit']}, {bw_from['date']})")
    if peers is not None:
        peers_from, peer_rows = read_exhaustive(peers)
        rows = _with_peers(rows, peer_rows)
        heading += (f"; torch: `{peers.relative_to(ROOT)}` (commit {peers_from['commit']}, "
                    f"{peers_from['date']}, the same inputs)")
    lines = [
        heading,
        "",
        "| family (ops) | jobs, dtypes | inputs | nbx: not correctly rounded "
        "| torch: not correctly rounded | bandwidth, of copy |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for family in FAMILIES:
        ops = [name for name, spec in nbx.OPS.items() if spec.family == family]
        mine = [r for r in rows if r["op"].split(":")[0] in ops]
        dtypes = sorted({r["dtype"] for r in mine}, key=lambda d: (DTYPES + (d,)).index(d))
        inputs = sum(_number(r["inputs"]) for r in mine)
        nbx_bad = [_number(r["misrounded"]) + _number(r["wrong"]) + _number(r["specials"]) for r in mine]
        torch_bad = [_number(r["torch misrounded"]) + _number(r["torch specials"]) for r in mine
                     if _number(r["torch misrounded"]) is not None]
        # bench/elementwise.py passes one int32 tensor as every operand of an op without float32,
        # so such a binary op reads half the bytes it is credited with: its fraction is left out.
        measured = [fractions[name] for name in ops if name in fractions and
                    (nbx.float32 in nbx.OPS[name].dtypes or nbx.OPS[name].arity == 1)]
        lines.append(
            f"| {family} ({len(ops)}) | "
            + (f"{len(mine)}, {' '.join(dtypes)}" if mine else "-") + " | "
            + (f"{inputs:.2e}".replace("e+", "e") if mine else "-") + " | "
            + (_count(sum(nbx_bad), sum(1 for n in nbx_bad if n), len(mine)) if mine else "-") + " | "
            + (_count(sum(torch_bad), sum(1 for n in torch_bad if n), len(torch_bad)) if torch_bad else "-")
            + f" | {_span(measured)} |")
    # The layout cases ("add broadcast (N,1)+(N,M)", "add transposed (M,N).T+(N,M)"): one row.
    layouts = {case.split()[0]: value for case, value in fractions.items() if " " in case}
    if layouts:
        lines.append(f"| {', '.join(sorted(layouts))}, a broadcast or transposed operand | - | - | - | - "
                     f"| {_span([v for c, v in fractions.items() if ' ' in c])} |")
    note = ("A job is one op, variant and dtype over every input the exhaustive profile gives it (`make "
            "gpu-exhaustive`, value suites); \"not correctly rounded\" counts misrounded results, wrong "
            "exact results and special mismatches (torch's include its casts of float32 to integers, which wrap where nbx "
            "saturates); bandwidth is `bench/elementwise.py` on 2^28 float32 elements (int32 binary ops "
            "left out: it passes one tensor as both operands). `python3 tools/readme_figures.py` prints "
            "this section from the reports named above.")
    lines += [""] + textwrap.wrap(note, 100, break_on_hyphens=False)
    return "\n".join(lines) + "\n"


def readme_section(readme: Path) -> str:
    """The README's "## Figures" section without its title, up to the next "## " heading."""
    text = readme.read_text()
    m = re.search(r"^## Figures\n\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1) if m else ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="*",
                        help=f"EXHAUSTIVE GPU_CHECK [PEERS] (default {EXHAUSTIVE} {GPU_CHECK} {PEERS})")
    parser.add_argument("--check", metavar="README", help="exit 1 if README's table differs from the output")
    args = parser.parse_args(argv)
    if args.reports and len(args.reports) not in (2, 3):
        parser.error("name two or three reports, or none")
    named = args.reports or (ROOT / EXHAUSTIVE, ROOT / GPU_CHECK, ROOT / PEERS)
    paths = [Path(p).resolve() for p in named]
    out = figures(*paths)
    if args.check:
        if readme_section(Path(args.check)).rstrip("\n") + "\n" != out:
            print(f"{args.check}'s figures differ from tools/readme_figures.py's output:\n{out}")
            return 1
        print(f"{args.check}'s figures are the same as the reports'")
        return 0
    sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
