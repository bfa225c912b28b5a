"""`nbx bank refresh`: regenerate bank files with mpmath and publish them atomically."""
from __future__ import annotations

import json
from pathlib import Path

import mpmath

from nbx.harness.progress import Progress
from nbx.harness.targets.target import targets
from nbx.harness.suites.bank import generate, storage
from nbx.harness.suites.bank.generate import GENERATOR_VERSION, MAX_UNRESOLVED, ROUNDING, SEED
from nbx.harness.suites.bank.storage import MANIFEST, relpath
from nbx.harness.suites.bank.text import HEADER_LINES, BankError, render


def manifest_document(files: dict) -> dict:
    """The manifest: provenance shared by every file (each header repeats it) and per file its
    sha256, case count, op, params, dtype and output dtype. check() reads every field."""
    return {"generator_version": GENERATOR_VERSION, "seed": SEED, "mpmath": mpmath.__version__,
            "rounding": ROUNDING, "files": dict(sorted(files.items()))}


def refresh(ops=None, dtypes=None, base: Path | None = None, progress=True, log=print) -> dict:
    """Regenerate the bank files of the selected targets with mpmath; returns a change summary.
    Raises BankNotWritable before computing anything if the bank cannot be written, and BankError,
    publishing nothing, if a file would list more than MAX_UNRESOLVED undecided inputs."""
    base = base or storage.root()
    chosen = targets(ops, dtypes)
    storage.check_writable([base] + sorted({(base / relpath(t)).parent for t in chosen}))
    bar = Progress(len(chosen), "nbx bank refresh") if progress else None
    new_files, crowded = {}, []
    for t in chosen:
        out = t.out_dtype
        arrays, tags = generate.bank_inputs(t)
        bits, ok = generate.expected_bits(t, arrays, out)
        new_files[relpath(t)] = (t, out, render(t, arrays, tags, bits, ok, out).encode(), int(ok.sum()))
        if (~ok).sum() > MAX_UNRESOLVED:
            crowded.append(f"{relpath(t)} ({int((~ok).sum())})")
        if bar:
            bar.step(f"{t.label} {t.dtype.name}")
    if crowded:
        raise BankError(f"{len(crowded)} file(s) would list more than {MAX_UNRESOLVED} inputs Ziv cannot "
                        f"decide: {', '.join(crowded[:10])}; nothing was written. Check the oracle (an "
                        "mpmath function that loses precision, or exact ties the exact-value rule misses)")
    base.mkdir(parents=True, exist_ok=True)
    # Everything from reading the manifest to the last rename happens under the lock: a concurrent
    # refresh (of other ops) publishes wholly before or after this one, and its manifest entries
    # are kept; a concurrent roll-forward cannot interleave with these renames.
    with storage.lock(base):
        storage.roll_forward_locked(base)
        storage.remove_temps(base)
        try:
            manifest = storage.read_manifest(base)
        except BankError:
            manifest = {"files": {}}
        if manifest.get("generator_version", GENERATOR_VERSION) != GENERATOR_VERSION:
            # entries of another generator stay stale: a partial refresh must not re-label them current
            log(f"bank refresh: manifest generator {manifest.get('generator_version')} != "
                f"{GENERATOR_VERSION}; dropping its entries (refresh every op to rebuild them)")
            manifest = {"files": {}}
        summary = _stage_and_publish(base, manifest, new_files)
    storage.MANIFESTS.clear()
    log(f"bank refresh: {len(new_files)} files, {summary['cases']} cases; added {len(summary['added'])}, "
        f"changed {len(summary['changed'])} ({summary['changed_cases']} case lines differ), "
        f"unchanged {len(summary['unchanged'])}")
    for rel in summary["changed"][:20]:
        log(f"  changed: {rel}")
    return summary


def _stage_and_publish(base: Path, manifest: dict, new_files: dict) -> dict:
    """Stage the changed files and the new manifest as temp files, then publish them (the caller
    holds the lock)."""
    summary = {"added": [], "changed": [], "unchanged": [], "cases": 0, "changed_cases": 0}
    staged = []
    files = dict(manifest.get("files", {}))
    for rel, (t, out, data, cases) in new_files.items():
        p = base / rel
        old = p.read_bytes() if p.exists() else None
        summary["cases"] += cases
        digest = storage.sha256(data)
        if old == data:
            summary["unchanged"].append(rel)
        else:
            (summary["changed"] if old is not None else summary["added"]).append(rel)
            if old is not None:
                a = set(old.decode().splitlines()[HEADER_LINES:])
                b = set(data.decode().splitlines()[HEADER_LINES:])
                summary["changed_cases"] += len(a ^ b)
            staged.append((storage.stage(p, data), p, digest))
        files[rel] = {"sha256": digest, "cases": cases, "op": t.op, "params": t.params,
                      "dtype": t.dtype.name, "out": out.name}
    data = (json.dumps(manifest_document(files), indent=1) + "\n").encode()
    staged.append((storage.stage(base / MANIFEST, data), base / MANIFEST, storage.sha256(data)))
    storage.publish(base, staged)
    return summary
