"""`nbx bank check`: the bank against the generator, the registry and its own metadata, and its
expected values against mpmath (a sample, or every case with --full)."""
from __future__ import annotations

import json
import secrets
import time
from collections import Counter
from pathlib import Path

import numpy as np

from nbx.harness.scoring.host import bits_of
from nbx.harness.progress import Progress
from nbx.harness.targets.target import Target, targets
from nbx.harness.suites.bank import generate, storage
from nbx.harness.suites.bank.generate import GENERATOR_VERSION, MAX_UNRESOLVED, ROUNDING, SEED
from nbx.harness.suites.bank.storage import JOURNAL, LOCK, MANIFEST, relpath
from nbx.harness.suites.bank.text import HEADER_LINES, BankError, BankFile, arrays_of

MANIFEST_FIELDS = ("generator_version", "seed", "mpmath", "rounding", "files")
ENTRY_FIELDS = ("sha256", "cases", "op", "params", "dtype", "out")
SHOWN = 4                       # missing inputs named in a problem, before the count


def check(base: Path | None = None, sample: int = 64, ops=None, verify=True, dtypes=None, *,
          seed: int | None = None, full: bool = False, log=None, progress: bool = False) -> list[str]:
    """Problems with the bank (empty list: healthy).

    Without mpmath: a pending journal (validated; nothing else is judged mid-publish) or a malformed
    one, a lock file or temp files left by a killed writer, files the manifest does not list, every
    manifest field (generator version, seed, rounding, mpmath version against every header; per
    entry sha256, case count, op, params, dtype and output dtype against its file and the registry's
    target for its path), every header field, every generator input present in its file (as a case
    or as an unresolved input, at most MAX_UNRESOLVED of those), and every target's file present.
    With verify: `sample` cases drawn with `seed` (default: a fresh one, logged) are recomputed with
    mpmath; with full, every case is, and every unresolved input is tried again. `log` receives the
    seed and the timing."""
    base = base or storage.root()
    log = log or (lambda *_a, **_k: None)
    if not base.is_dir():
        return [f"{base}: no bank directory; run `nbx bank refresh`"]
    try:
        pending = storage.read_journal(base)
        if pending is not None:
            storage.validate_journal(base, pending)
    except BankError as e:
        return [str(e)]
    if pending is not None:
        # mid-publish the files and the manifest disagree by construction: judge the bank after
        return [f"{base / JOURNAL}: a refresh was interrupted after its commit point with renames "
                f"pending; run `nbx bank finish` to complete it (any reader of the bank, such as "
                f"`nbx run`, also does), then `nbx bank check` again"]
    problems = []
    state = storage.lock_state(base)
    if state == "left":
        problems.append(f"{base / LOCK}: lock file left by a killed refresh or finish (no process holds "
                        "it); `nbx bank finish` removes it")
    elif state == "held":
        problems.append(f"{base / LOCK}: a refresh or finish is running now; check again when it ends")
    try:
        manifest = storage.read_manifest(base)
    except BankError as e:
        return problems + [str(e)]
    files = manifest["files"]
    problems += _manifest_problems(base / MANIFEST, manifest)

    reg = storage.registry_paths()
    for p in sorted(base.rglob("*")):
        if not p.is_file() and not p.is_symlink():
            continue
        rel = p.relative_to(base).as_posix()
        if rel in (MANIFEST, LOCK):
            continue
        if storage.is_temp(p.name):
            problems.append(f"{p}: leftover temp file of a killed refresh (the bank is whole without it); "
                            "`nbx bank finish` removes it")
        elif rel not in files:        # whatever ops were asked for: a stray is never a bank file
            problems.append(f"{p}: stray file, not listed in {MANIFEST}"
                            + ("" if rel in reg else
                               " and no target of the registry has this path (op, params or dtype)"))

    for rel in files:
        if rel not in reg:
            problems.append(f"{MANIFEST} entry {rel}: no target of the registry has this path "
                            "(unknown op, params or dtype)")
        if _in_scope(rel, ops, dtypes) and not (base / rel).exists():
            problems.append(f"{base / rel}: listed in the manifest but missing")

    provenance = {}                 # (field, manifest value, header value) -> files
    loaded = []
    for t in targets(ops, dtypes):
        rel = relpath(t)
        try:
            bf = storage.load(t, base, manifest)
        except BankError as e:
            problems.append(str(e))
            continue
        head = bf.header
        problems += _entry_problems(rel, files[rel], t, bf)
        for k, mk in (("generator", "generator_version"), ("seed", "seed"), ("mpmath", "mpmath"),
                      ("rounding", "rounding")):
            if head[k] != manifest.get(mk):
                provenance.setdefault((k, manifest.get(mk), head[k]), []).append(rel)
        bad = _coverage_problem(t, bf)
        if bad:
            problems.append(f"{base / rel}: {bad}")
        loaded.append((t, bf))
    for (k, mv, hv), rels in provenance.items():
        problems.append(f"{base / MANIFEST}: records {k} {mv!r} but {len(rels)} file header(s) record "
                        f"{hv!r} (first: {rels[0]})")

    if full and loaded:
        problems += _verify_full(loaded, log, progress)
    elif verify and loaded and sample > 0:
        problems += _verify_sample(loaded, sample, seed, log)
    return problems


def _in_scope(rel: str, ops, dtypes) -> bool:
    top, _, name = rel.partition("/")
    return ((not ops or top.split("@")[0] in ops)
            and (not dtypes or name.removesuffix(".txt") in dtypes))


def _manifest_problems(path: Path, manifest: dict) -> list[str]:
    out = [f"{path}: field {k!r} is not one nbx writes ({', '.join(MANIFEST_FIELDS)})"
           for k in manifest if k not in MANIFEST_FIELDS]
    if manifest.get("generator_version") != GENERATOR_VERSION:
        out.append(f"bank generator version {manifest.get('generator_version')} != "
                   f"{GENERATOR_VERSION}: stale")
    if manifest.get("seed") != SEED:
        out.append(f"{path}: seed {manifest.get('seed')!r} is not the generator's {SEED}")
    if manifest.get("rounding") != ROUNDING:
        out.append(f"{path}: rounding {manifest.get('rounding')!r} is not the rule expected values are "
                   f"computed by, {ROUNDING!r}")
    if not isinstance(manifest.get("mpmath"), str):
        out.append(f"{path}: no mpmath version recorded")
    return out


def _entry_problems(rel: str, entry, t: Target, bf: BankFile) -> list[str]:
    """A manifest entry against the registry's target for its path and against the file; the
    file's header against its lines and the bound on unresolved inputs."""
    where = f"{MANIFEST} entry {rel}"
    if not isinstance(entry, dict):
        return [f"{where}: not an object"]
    missing = [k for k in ENTRY_FIELDS if k not in entry]
    if missing:
        return [f"{where}: lacks {', '.join(missing)}"]
    out = [f"{where}: field {k!r} is not one nbx writes ({', '.join(ENTRY_FIELDS)})"
           for k in entry if k not in ENTRY_FIELDS]
    head = bf.header
    want = {"op": t.op, "params": t.params, "dtype": t.dtype.name, "out": t.out_dtype.name}
    for k, v in want.items():
        if json.dumps(entry[k], sort_keys=True) != json.dumps(v, sort_keys=True):
            out.append(f"{where}: {k} is {entry[k]!r} but the registry's target for this path has {v!r}")
        if json.dumps(entry[k], sort_keys=True) != json.dumps(head[k], sort_keys=True):
            out.append(f"{where}: {k} is {entry[k]!r} but the file's header says {head[k]!r}")
    operands = ",".join(d.name for d in t.operand_dtypes())
    if head["operands"] != operands:
        out.append(f"{rel}: header operands={head['operands']} but the registry's target has {operands}")
    n = len(bf.expected)
    if entry["cases"] != head["cases"] or entry["cases"] != n:
        out.append(f"{where}: cases is {entry['cases']!r}; the file's header says {head['cases']} "
                   f"and it holds {n} case lines")
    if head["unresolved"] != len(bf.unresolved):
        out.append(f"{rel}: header unresolved={head['unresolved']} but the file lists "
                   f"{len(bf.unresolved)} unresolved inputs")
    if head["rounding"] != ROUNDING:
        out.append(f"{rel}: header rounding={head['rounding']} is not the rule expected values are "
                   f"computed by, {ROUNDING}")
    if len(bf.unresolved) > MAX_UNRESOLVED:
        out.append(f"{rel}: {len(bf.unresolved)} unresolved inputs, more than the {MAX_UNRESOLVED} "
                   f"allowed (first: line {bf.unresolved[0].line}, {bf.unresolved[0].reason}); "
                   "the oracle cannot decide its cases")
    return out


def _show(row: tuple) -> str:
    ins = " ".join(hex(x) for x in row[:-1])
    return f"{ins} ({row[-1]})"


def _coverage_problem(t: Target, bf: BankFile) -> str | None:
    """Every input the generator draws (bank_inputs, from SEED) must have its line, in the
    generator's order, as a case or as an unresolved input; anything else was edited, or the
    generator changed without a GENERATOR_VERSION bump."""
    gen = generate.input_rows(*generate.bank_inputs(t))
    if bf.rows == gen:
        return None
    missing = Counter(gen) - Counter(bf.rows)
    extra = Counter(bf.rows) - Counter(gen)
    parts = []
    for what, rows in ((f"of the generator's {len(gen)} inputs are missing (neither a case nor listed "
                        "unresolved)", missing),
                       ("inputs are not the generator's", extra)):
        if rows:
            names = list(rows.elements())
            shown = ", ".join(_show(r) for r in names[:SHOWN]) + (", ..." if len(names) > SHOWN else "")
            parts.append(f"{len(names)} {what}: {shown}")
    if not parts:
        i = next(i for i, (a, b) in enumerate(zip(bf.rows, gen)) if a != b)
        parts.append(f"line {i + HEADER_LINES + 1} ({_show(bf.rows[i])}) is out of the generator's order")
    return "; ".join(parts) + f" (edited, or the generator changed: run `nbx bank refresh --op {t.op}`)"


def _verify_sample(loaded, sample: int, seed: int | None, log) -> list[str]:
    """`sample` decided cases drawn uniformly from all loaded files: one wrong case among N is
    drawn with probability sample / N."""
    problems = []
    seed = secrets.randbits(32) if seed is None else seed
    sizes = np.array([bf.expected.size for _, bf in loaded])
    total = int(sizes.sum())
    rng = np.random.default_rng(seed)
    picks = np.sort(rng.choice(total, min(sample, total), replace=False))
    ends = np.cumsum(sizes)
    for g in picks:
        k = int(np.searchsorted(ends, g, side="right"))
        t, bf = loaded[k]
        i = int(g - (ends[k] - sizes[k]))
        bits, ok = generate.expected_bits(t, [a[i:i + 1] for a in bf.inputs], bf.out)
        if ok[0] and int(bits[0]) != int(bf.expected[i]):
            problems.append(f"{relpath(t)} case {i}: stored {hex(int(bf.expected[i]))} but mpmath gives "
                            f"{hex(int(bits[0]))} (sample seed {seed})")
    log(f"nbx bank check: {len(picks)} sampled cases of {total} re-verified with mpmath, seed {seed} "
        f"(repeat with --seed {seed}); a single wrong case is drawn with probability "
        f"{len(picks) / max(total, 1):.2%}, `--full` checks every case")
    return problems


def _verify_full(loaded, log, progress: bool) -> list[str]:
    """Every case of every loaded file recomputed with mpmath, as a refresh computes it, and every
    unresolved input tried again."""
    t0 = time.monotonic()
    bar = Progress(len(loaded), "nbx bank check --full") if progress else None
    problems, n, retried = [], 0, 0
    for t, bf in loaded:
        try:
            problems += _recompute(t, bf)
        except Exception as e:      # an oracle that raises fails its file, and the check goes on
            problems.append(f"{relpath(t)}: the oracle raised {type(e).__name__}: {e} while recomputing "
                            "its cases with mpmath")
        n += bf.expected.size
        retried += len(bf.unresolved)
        if bar:
            bar.step(f"{t.label} {t.dtype.name}")
    log(f"nbx bank check --full: {n} cases in {len(loaded)} files recomputed with mpmath"
        + (f" and {retried} unresolved inputs tried again" if retried else "")
        + f" in {time.monotonic() - t0:.1f} s")
    return problems


def _recompute(t: Target, bf: BankFile) -> list[str]:
    """One file's cases recomputed, and its unresolved inputs tried again."""
    problems = []
    if bf.expected.size:
        bits, ok = generate.expected_bits(t, bf.inputs, bf.out)
        wrong = np.flatnonzero(ok & (bits != bf.expected))
        if wrong.size:
            i = int(wrong[0])
            ins = " ".join(hex(int(x)) for x in (bits_of(a[i:i + 1])[0] for a in bf.inputs))
            problems.append(f"{relpath(t)}: {wrong.size} of {bf.expected.size} cases disagree with "
                            f"mpmath (first: case {i}, inputs {ins}: stored {hex(int(bf.expected[i]))}, "
                            f"mpmath gives {hex(int(bits[i]))})")
        if not ok.all():
            problems.append(f"{relpath(t)}: mpmath can no longer resolve {int((~ok).sum())} stored cases")
    if bf.unresolved:
        bits, ok = generate.expected_bits(t, arrays_of(bf.operands, [u.inputs for u in bf.unresolved]),
                                          bf.out)
        for u, b, k in zip(bf.unresolved, bits, ok):
            if k:
                problems.append(f"{relpath(t)}:{u.line}: listed unresolved, but mpmath now decides "
                                f"{_show((*u.inputs, u.tag))} as {hex(int(b))}; run "
                                f"`nbx bank refresh --op {t.op}`")
    return problems
