"""The command line: `nbx run | gate | bank refresh | bank check | report merge | report diff | ops | repro`.

`python -m nbx ...` is the same program. Exit codes: 0 success, 1 a failing gate or check, 2 a
usage error (argparse's convention).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REPORTS = REPO / "reports"


class UsageError(Exception):
    pass


def _git_commit() -> str:
    """HEAD, with "+dirty" when tracked files differ from it (a copied working tree, as the GPU
    machine gets, carries an older .git: its HEAD alone would name code that did not run)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "nbx", "oracles"], cwd=REPO,
                               capture_output=True, timeout=10).returncode == 1
    except (OSError, subprocess.SubprocessError):
        return ""
    return head + "+dirty" if head and dirty else head


def _shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard must look like i/n, got {text!r}") from None
    if not (n >= 1 and 0 <= i < n):
        raise argparse.ArgumentTypeError(f"--shard {text}: need 0 <= i < n")
    return i, n


def _check_names(ops, dtypes):
    import nbx
    for o in ops or []:
        if o not in nbx.OPS:
            raise UsageError(f"unknown op {o!r}; `nbx ops` lists them")
    for d in dtypes or []:
        if d not in nbx.DTYPES:
            raise UsageError(f"unknown dtype {d!r}; allowed: {', '.join(nbx.DTYPES)}")


def _load_report(path):
    from .harness.report import load_report
    p = Path(path) if path else REPORTS / "latest"
    if not p.exists():
        raise UsageError(f"no report at {p}; run `nbx run` first")
    return load_report(p)


# ---------------------------------------------------------------------- commands
def cmd_run(a) -> int:
    import nbx
    from .harness import runner
    from .harness.report import Report, write_report
    _check_names(a.op, a.dtype)
    import signal

    def _stop(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, _stop)   # a time limit (timeout, a scheduler) still gets a report
    ms = runner.run(a.op, a.dtype, a.suite, a.profile, a.seed, a.shard, progress=not a.quiet)
    info = nbx.backend_info()
    argv = sys.argv[1:] + [f"--interrupted={d}/{n}" for d, n in runner.INTERRUPTED]
    rep = Report(backend=info, git_commit=_git_commit(), profile=a.profile, argv=argv, measurements=ms)
    run_dir = Path(a.out) if a.out else REPORTS / "runs" / rep.run_id
    latest = None if a.out else REPORTS / "latest"
    write_report(rep, run_dir, latest)
    errors = sum(1 for m in ms if m.error)
    print(f"nbx run: {len(ms)} measurements on {info['id']} ({info['device']}), profile {a.profile}; "
          f"{errors} raised; report in {run_dir}")
    for m in [m for m in ms if m.error][:10]:
        print(f"  {m.op} {m.dtype} {m.suite}: {m.error}")
    return 0


def cmd_gate(a) -> int:
    import nbx
    from .harness import bank, budgets as B, gate
    from .harness.report import write_report
    rep = _load_report(a.report)
    bid = rep.backend_id or nbx.backend_id()
    bpath = Path(a.budgets) if a.budgets else B.path_for(bid)
    data = B.load(bpath)
    if a.update:
        src = {"run_id": rep.run_id, "profile": rep.profile, "commit": rep.git_commit, "backend": bid}
        new, changes = B.update(data, rep.measurements, everything=a.all, raise_only=a.raise_only, source=src)
        new["backend"] = bid
        B.save(new, bpath)
        print(f"budgets {bpath}: {len(changes)} change(s)")
        for k, old, v in changes:
            print(f"  {k:<40} {old if old is not None else '(new)'} -> {v}")
        return 0
    ops = a.op or _ops_of(rep)
    dtypes = a.dtype or _dtypes_of(rep)
    problems = [] if a.no_bank else bank.check(ops=ops, dtypes=dtypes, verify=False)
    ms = [m for m in rep.measurements if (not a.op or m.op.split(":")[0] in a.op)
          and (not a.dtype or m.dtype in a.dtype)]
    fails = gate.decide(ms, data, ops=ops, dtypes=dtypes, bank_problems=problems,
                        suites=_argv_values(rep, "--suite"))
    print(f"nbx gate: report {rep.run_id} ({bid}, profile {rep.profile}) against {bpath}")
    print(gate.format_failures(fails))
    if a.report and Path(a.report).is_dir():     # the report's junit/summary now show the failures
        write_report(rep, Path(a.report), None, failures=gate.failures_by_key(fails))
    return 1 if fails else 0


def _argv_values(rep, flag: str) -> list[str] | None:
    argv = rep.argv or []
    vals = [argv[i + 1] for i, x in enumerate(argv[:-1]) if x == flag]
    vals += [x.split("=", 1)[1] for x in argv if x.startswith(flag + "=")]
    return vals or None


def _ops_of(rep) -> list[str] | None:
    """The ops a run was asked for (from its argv), so a partial run is gated on its own ops."""
    return _argv_values(rep, "--op")


def _dtypes_of(rep) -> list[str] | None:
    """The dtypes a run was asked for (from its argv), likewise."""
    return _argv_values(rep, "--dtype")


def cmd_bank(a) -> int:
    from .harness import bank
    if a.bank_cmd == "refresh":
        _check_names(a.op, a.dtype)
        bank.refresh(a.op, a.dtype, progress=not a.quiet)
        return 0
    _check_names(a.op, a.dtype)
    problems = bank.check(sample=a.sample, ops=a.op, dtypes=a.dtype)
    if problems:
        print(f"nbx bank check: {len(problems)} problem(s)")
        for p in problems[:50]:
            print(f"  {p}")
        return 1
    m = bank.load_manifest()
    print(f"nbx bank check: {len(m['files'])} files, hashes match, every op and dtype present, "
          f"{a.sample} sampled cases agree with mpmath")
    return 0


def cmd_report(a) -> int:
    from .harness.report import diff_reports, format_diff, load_report, merge_reports, write_report
    if a.report_cmd == "merge":
        merged = merge_reports([load_report(p) for p in a.shards])
        write_report(merged, Path(a.out), REPORTS / "latest" if a.latest else None)
        print(f"merged {len(a.shards)} shards ({len(merged.measurements)} measurements) into {a.out}")
        return 0
    d = diff_reports(load_report(a.old), load_report(a.new), tolerance=a.tolerance)
    print(format_diff(d))
    return 1 if d.has_regressions else 0


def cmd_ops(a) -> int:
    import nbx
    from .harness import budgets as B
    data = B.load(B.path_for(nbx.backend_id()))["budgets"]
    rows = []
    for name, spec in nbx.OPS.items():
        bud = [f"{d.name}:{data[B.key(name, d.name)]['max_ulp']}" for d in spec.dtypes
               if B.key(name, d.name) in data]
        rows.append((name, spec.family, spec.arity, ",".join(spec.dtype_names), " ".join(bud)))
    if a.json:
        print(json.dumps([dict(zip(("op", "family", "arity", "dtypes", "budgets"), r)) for r in rows], indent=1))
        return 0
    print(f"{len(rows)} ops; budgets for {nbx.backend_id()}")
    print(f"{'op':<22} {'family':<12} {'n':<2} {'dtypes':<70} budgets (max ulp)")
    for r in rows:
        print(f"{r[0]:<22} {r[1]:<12} {r[2]:<2} {r[3]:<70} {r[4]}")
    return 0


def _where(fn) -> str:
    """path:line of a function (a @triton.jit one through its .fn), relative to the checkout."""
    import inspect
    fn = getattr(fn, "fn", fn)
    try:
        path, line = inspect.getsourcefile(fn), inspect.getsourcelines(fn)[1]
    except (TypeError, OSError):
        return repr(fn)
    return f"{_rel(path)}:{line} ({fn.__name__})"


def _rel(path) -> str:
    root = Path(__file__).resolve().parents[1]
    p = Path(str(path).split(":")[0]).resolve()
    rest = str(path)[len(str(path).split(":")[0]):]
    return (str(p.relative_to(root)) if p.is_relative_to(root) else str(p)) + rest


def cmd_where(a) -> int:
    """Where an op lives: its spec, body, fast path, oracle, bank files and budgets."""
    import math
    import nbx
    from oracles import ORACLES
    from .harness import bank as K
    from .harness import budgets as B
    _check_names([a.op], None)
    spec = nbx.OPS[a.op]
    print(f"{spec.name}: family {spec.family}, {spec.arity} operand(s), dtypes {', '.join(spec.dtype_names)}")
    print(f"  spec     {_rel(spec.declared_at)}")
    print(f"  body     {_where(spec.body)}")
    for params, fast, _ in spec.fast32_variants():
        label = "".join(f" {k}={v}" for k, v in params.items())
        e = f"2^{math.log2(fast.bound):g}" if fast.k else "exact values"
        hints = [f"window k={fast.k} (E = {e})"]
        if fast.table is not None:
            hints.append(f"table of {len(fast.table)}")
        hints += [h for h, on in (("piece mask", fast.pieces), (f"tile {fast.block}", fast.block),
                                  (f"at most {fast.max_registers} registers", fast.max_registers)) if on]
        print(f"  fast32  {label} {_where(fast.evaluate)}: {', '.join(hints)}")
    o = ORACLES[spec.name]
    print(f"  oracle   {_rel(o.declared_at) if getattr(o, 'declared_at', '') else 'oracles/'} "
          f"(ORACLES[{spec.name!r}])")
    root = K.root()
    dirs = sorted(d for d in root.glob(f"{spec.name}*") if d.name == spec.name or d.name.startswith(spec.name + "@"))
    for d in dirs:
        print(f"  bank     {_rel(d)}/: {', '.join(sorted(f.stem for f in d.glob('*.txt')))}")
    for path in sorted(B.ROOT.glob("*.json")):
        data = B.load(path)["budgets"]
        keys = [k for k in data if k.split("|")[0].split(":")[0] == spec.name]
        labels = sorted({k.split("|")[0] for k in keys})
        for label in labels:
            row = ", ".join(f"{k.split('|')[1]} {data[k]['max_ulp']:g}" for k in keys if k.split("|")[0] == label)
            print(f"  budgets  {_rel(path)} \"{label}|<dtype>\": {row}")
    print(f"  docs     docs/OPS.md ({spec.family})")
    return 0


def cmd_repro(a) -> int:
    import numpy as np
    import nbx
    from .harness.measure import score
    from .harness.targets import Target
    _check_names([a.op], [a.dtype])
    params = {}
    for kv in a.param:
        k, _, v = kv.partition("=")
        params[k] = json.loads(v) if v[:1] in "-0123456789[{tn" and v not in ("trunc",) else v
    t = Target(a.op, params, nbx.DTYPES[a.dtype])
    dts = t.operand_dtypes()
    if len(a.bits) != len(dts):
        raise UsageError(f"{a.op} takes {len(dts)} operand(s) ({', '.join(d.name for d in dts)}), got {len(a.bits)}")
    arrays = []
    for b, d in zip(a.bits, dts):
        u = np.array([int(b, 16)], dtype=np.uint64).astype(d.uint_np if d.itemsize > 1 or d.is_bool else np.uint8)
        arrays.append(u.view(d.np) if not d.is_bool else u.astype(bool))
    got = t.run(arrays)
    s = score(t, arrays, got)
    print(f"{t.label} {a.dtype} on {nbx.backend_id()}")
    for i, (b, arr) in enumerate(zip(a.bits, arrays)):
        print(f"  input {i}: {b} = {arr[0]!r}")
    exp = s.expected_bits[0]
    print(f"  got      {hex(int(got.view(got.dtype)[:1].view(np.uint8 if got.itemsize == 1 else f'u{got.itemsize}')[0]))} = {got[0]!r}")
    print(f"  expected {hex(int(exp))}")
    print(f"  ulp error {s.err[0]:.6g}{' (special mismatch)' if s.special[0] else ''}; "
          f"{'correctly rounded' if not s.not_cr[0] else 'NOT correctly rounded'}")
    return 0


# ---------------------------------------------------------------------- parser
def parser() -> argparse.ArgumentParser:
    from .harness.runner import PROFILES
    p = argparse.ArgumentParser(prog="nbx", description="nbx: element-wise Triton ops and their precision harness")
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="measure op x dtype x suite and write a report")
    r.add_argument("--op", action="append", help="an op name (repeatable); default: every op")
    r.add_argument("--dtype", action="append", help="a dtype name (repeatable)")
    r.add_argument("--suite", action="append", help="bank, exhaustive16, sweep, pairs, layout, intdiv")
    r.add_argument("--profile", default="ci", choices=list(PROFILES))
    r.add_argument("--out", help="report directory (default reports/runs/<run-id>, and reports/latest)")
    r.add_argument("--shard", type=_shard, default=(0, 1), help="i/n: run every n-th job starting at i")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.set_defaults(fn=cmd_run)

    g = sub.add_parser("gate", help="compare a report with the budgets; exit 1 on a regression")
    g.add_argument("--report", help="report.json or its directory (default reports/latest)")
    g.add_argument("--budgets", help="budget file (default reports/budgets/<backend-id>.json)")
    g.add_argument("--op", action="append", help="gate only these ops (default: the report's own)")
    g.add_argument("--dtype", action="append")
    g.add_argument("--update", action="store_true", help="write new budgets for improvements and new entries")
    g.add_argument("--all", action="store_true", help="with --update: also raise budgets (review the diff!)")
    g.add_argument("--raise-only", action="store_true",
                   help="with --update: only raise budgets and add new ones (the max over several runs)")
    g.add_argument("--no-bank", action="store_true", help="skip the bank staleness check")
    g.set_defaults(fn=cmd_gate)

    b = sub.add_parser("bank", help="the reference bank")
    bs = b.add_subparsers(dest="bank_cmd", required=True)
    br = bs.add_parser("refresh", help="regenerate bank files with mpmath (atomic)")
    br.add_argument("--op", action="append")
    br.add_argument("--dtype", action="append")
    br.add_argument("--quiet", action="store_true")
    bc = bs.add_parser("check", help="hashes, coverage, a re-verified sample")
    bc.add_argument("--op", action="append")
    bc.add_argument("--dtype", action="append")
    bc.add_argument("--sample", type=int, default=64)
    b.set_defaults(fn=cmd_bank)

    rp = sub.add_parser("report", help="merge shards, diff reports")
    rs = rp.add_subparsers(dest="report_cmd", required=True)
    rm = rs.add_parser("merge", help="join shard reports")
    rm.add_argument("out")
    rm.add_argument("shards", nargs="+")
    rm.add_argument("--latest", action="store_true", help="point reports/latest at the merged report")
    rd = rs.add_parser("diff", help="regressions and improvements between two reports")
    rd.add_argument("old")
    rd.add_argument("new")
    rd.add_argument("--tolerance", type=float, default=0.0)
    rp.set_defaults(fn=cmd_report)

    o = sub.add_parser("ops", help="the op table with dtypes and current budgets")
    o.add_argument("--json", action="store_true")
    o.set_defaults(fn=cmd_ops)

    w = sub.add_parser("where", help="where an op lives: spec, body, fast path, oracle, bank, budgets")
    w.add_argument("op")
    w.set_defaults(fn=cmd_where)

    x = sub.add_parser("repro", help="one case: inputs, got, expected, ulp error")
    x.add_argument("op")
    x.add_argument("dtype")
    x.add_argument("bits", nargs="+", help="operand bit patterns in hex")
    x.add_argument("--param", action="append", default=[], help="k=v (JSON value), e.g. alpha=2")
    x.set_defaults(fn=cmd_repro)
    return p


def main(argv=None) -> int:
    import signal
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)    # `nbx ... | head` ends quietly
    p = parser()
    a = p.parse_args(argv)
    try:
        return a.fn(a)
    except UsageError as e:
        p.exit(2, f"nbx: error: {e}\n")
    except (ValueError, FileNotFoundError) as e:
        print(f"nbx: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
