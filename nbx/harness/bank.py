"""The reference bank: per op (variant) and dtype, inputs and correctly rounded outputs as bits.

Layout: reference_bank/<op>[@k=v,...]/<dtype>.txt, one case a line:
    0x3f800000 -> 0x402df854   # special
(inputs as hex bit patterns in their operand dtypes, then the expected output's bits), and
reference_bank/MANIFEST.json with the provenance (generator version, mpmath version and precision,
seed) and per file its sha256 and case count. Loading needs no mpmath.

A refresh computes everything first, then writes each file and the new manifest to temporary
siblings (fsync), then commits by writing a journal of the renames (atomically); the renames follow.
Killed before the journal exists, the old bank is whole; killed after, the next reader of the bank
finishes the renames (roll_forward) and the new bank is whole. `nbx bank check` reports any file
whose hash does not match the manifest.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import mpmath
import numpy as np

from oracles import ORACLES
from oracles.formats import FORMATS

from .. import dtype as D
from . import cases as C
from . import ulp
from .measure import Batch, bits_of, exact_expected, oracle_params, round_exact_or_ziv
from .progress import Progress
from .targets import Target, targets

GENERATOR_VERSION = 1
SEED = 20261202
ROOT = Path(__file__).resolve().parents[2] / "reference_bank"
MANIFEST = "MANIFEST.json"
N_RANDOM = 96
N_SPECIAL_PAIRS = 14


class BankError(RuntimeError):
    """A corrupted, stale or missing bank: never a pass."""


def root() -> Path:
    return Path(os.environ.get("NBX_BANK", ROOT))


def relpath(t: Target) -> str:
    label = t.label.replace(":", "@")
    return f"{label}/{t.dtype.name}.txt"


def out_dtype(t: Target) -> D.DType:
    return t.out_dtype


# ---------------------------------------------------------------- cases and expected values
def bank_inputs(t: Target) -> tuple[list[np.ndarray], list[str]]:
    rng = C.rng_for(SEED, t.label, t.dtype.name, "bank")
    dts = t.operand_dtypes()
    arity = len(dts)

    def sample(d, n, i):
        if d.is_bool:
            return rng.integers(0, 2, n).astype(bool)
        if d.is_float:
            return C.stratified(d, n, rng, ORACLES[t.op].domain[i])
        return C.int_operand(t, i, n, rng, d)

    if arity == 1:
        sp = C.role_specials(t, 0, C.special_values(t.dtype), t.dtype)
        rnd = sample(t.dtype, N_RANDOM, 0)
        return [np.concatenate([sp, rnd])], ["special"] * len(sp) + ["random"] * N_RANDOM
    sps = []
    for i, d in enumerate(dts):
        s = C.special_values(d)
        if len(s) > N_SPECIAL_PAIRS:
            s = s[np.linspace(0, len(s) - 1, N_SPECIAL_PAIRS).astype(int)]
        sps.append(C.role_specials(t, i, s, d))
    if arity == 2:
        g = np.meshgrid(sps[0], sps[1], indexing="ij")
        special = [x.reshape(-1) for x in g]
    else:
        m = max(len(s) for s in sps)
        special = [np.resize(s, m) for s in sps]
    rnd = [sample(d, N_RANDOM, i) for i, d in enumerate(dts)]
    arrays = [np.concatenate([s, r]) for s, r in zip(special, rnd)]
    return arrays, ["special"] * len(special[0]) + ["random"] * N_RANDOM


def expected_bits(t: Target, arrays, out: D.DType) -> tuple[np.ndarray, np.ndarray]:
    """Correctly rounded expected outputs (mpmath, Ziv) as bits, and which cases resolved."""
    oracle = ORACLES[t.op]
    params = oracle_params(t, out)
    if not out.is_float:
        e = exact_expected(t, arrays, out, params)
        return bits_of(e).astype(np.uint64), np.ones(len(e), bool)
    fmt = FORMATS[out.name]
    vals = t.oracle_values(arrays, out)
    bits = np.zeros(len(vals[0]), dtype=np.uint64)
    ok = np.ones(len(vals[0]), bool)
    for i, row in enumerate(zip(*vals)):
        row = tuple(float(v) for v in row)
        rr = round_exact_or_ziv(oracle, row, params, fmt)
        bits[i], ok[i] = rr.bits, rr.resolved
    return bits, ok


# ---------------------------------------------------------------- file format
def _header(t: Target, out: D.DType, count: int, unresolved: int) -> list[str]:
    return [f"# nbx reference bank: op={t.op} params={json.dumps(t.params, sort_keys=True)} "
            f"dtype={t.dtype.name} operands={','.join(d.name for d in t.operand_dtypes())} out={out.name}",
            f"# generator={GENERATOR_VERSION} seed={SEED} mpmath={mpmath.__version__} "
            f"rounding=ziv(p+32 .. 1024 bits) cases={count} unresolved_dropped={unresolved}",
            "# inputs (hex bits) -> expected output (hex bits)   # tag"]


def render(t: Target, arrays, tags, bits, ok, out: D.DType) -> str:
    lines = _header(t, out, int(ok.sum()), int((~ok).sum()))
    in_bits = [bits_of(a) for a in arrays]
    for i in range(len(bits)):
        if not ok[i]:
            continue
        ins = " ".join(hex(int(b[i])) for b in in_bits)
        lines.append(f"{ins} -> {hex(int(bits[i]))}   # {tags[i]}")
    return "\n".join(lines) + "\n"


@dataclass
class BankFile:
    operands: list[D.DType]
    out: D.DType
    inputs: list[np.ndarray]
    expected: np.ndarray          # bits
    tags: list[str]


def parse(text: str, path: str = "") -> BankFile:
    operands = out = None
    ins, exp, tags = [], [], []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            if "operands=" in line:
                kv = dict(w.split("=", 1) for w in line[1:].split() if "=" in w)
                operands = [D.DTYPES[x] for x in kv["operands"].split(",")]
                out = D.DTYPES[kv["out"]]
            continue
        if not line.strip():
            continue
        try:
            body, _, tag = line.partition("#")
            left, right = body.split("->")
            ins.append([int(x, 16) for x in left.split()])
            exp.append(int(right.strip(), 16))
            tags.append(tag.strip())
        except ValueError as e:
            raise BankError(f"{path}:{n}: malformed bank line {line!r} ({e})") from None
    if operands is None:
        raise BankError(f"{path}: no header naming the operand and output dtypes")
    cols = list(zip(*ins)) if ins else [[] for _ in operands]
    arrays = []
    for d, col in zip(operands, cols):
        u = np.array(col, dtype=np.uint64).astype(d.uint_np if d.itemsize > 1 or d.is_bool else np.uint8)
        arrays.append(u.view(d.np) if not d.is_bool else u.astype(bool))
    return BankFile(operands, out, arrays, np.array(exp, dtype=np.uint64), tags)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


JOURNAL = ".refresh-journal.json"


def roll_forward(base: Path) -> None:
    """Finish a refresh that was stopped after its journal was written (idempotent)."""
    j = base / JOURNAL
    if not j.exists():
        return
    for tmp, dest in json.loads(j.read_text())["renames"]:
        if (base / tmp).exists():
            os.replace(base / tmp, base / dest)
    _fsync_dir(base)
    j.unlink()
    _fsync_dir(base)


def load_manifest(base: Path | None = None) -> dict:
    base = base or root()
    roll_forward(base)
    p = base / MANIFEST
    if not p.exists():
        raise BankError(f"{p}: no bank manifest; run `nbx bank refresh`")
    try:
        return json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise BankError(f"{p}: corrupted manifest ({e})") from None


def load(t: Target, base: Path | None = None, manifest: dict | None = None) -> BankFile:
    base = base or root()
    rel = relpath(t)
    p = base / rel
    if not p.exists():
        raise BankError(f"{p}: no bank file for {t.label} {t.dtype.name}; run `nbx bank refresh --op {t.op}`")
    data = p.read_bytes()
    manifest = manifest if manifest is not None else load_manifest(base)
    entry = manifest.get("files", {}).get(rel)
    if entry is None or entry["sha256"] != sha256(data):
        raise BankError(f"{p}: sha256 does not match the manifest (edited, corrupted or an interrupted "
                        "refresh); run `nbx bank refresh` for it")
    return parse(data.decode(), str(p))


# ---------------------------------------------------------------- measuring against the bank
def measure_bank(t: Target, acc) -> None:
    bf = load(t, manifest=_manifest_cache())
    if not bf.expected.size:
        return
    got = t.run(bf.inputs)
    out = D.from_numpy_dtype(got.dtype)
    if out is not bf.out:
        raise BankError(f"{t.label} {t.dtype.name}: the op now returns {out.name}, the bank holds {bf.out.name}")
    exp = bf.expected.astype(out.uint_np if out.itemsize > 1 or out.is_bool else np.uint8)
    if not out.is_float:
        e = exp.view(out.np) if not out.is_bool else exp.astype(bool)
        wrong = got != e
        acc.add(bf.inputs, got, Batch(wrong.astype(float), np.zeros(len(got), bool), wrong, exp, True))
        return
    fmt = FORMATS[out.name]
    ev = exp.view(out.np).astype(np.float64)
    with np.errstate(all="ignore"):
        err = ulp.ulp_error(got, ev, fmt)
    special = ulp.classify_specials(got, ev, fmt, zero_sign_matters=ORACLES[t.op].zero_sign_matters)["special"]
    not_cr = ~ulp.correctly_rounded(bits_of(got), exp, fmt)
    acc.add(bf.inputs, got, Batch(np.where(special, np.inf, err), special, not_cr, exp, False))


_MANIFEST = {}


def _manifest_cache() -> dict:
    key = str(root())
    if key not in _MANIFEST:
        _MANIFEST[key] = load_manifest()
    return _MANIFEST[key]


# ---------------------------------------------------------------- refresh and check
def _atomic_write_bytes(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return tmp


def refresh(ops=None, dtypes=None, base: Path | None = None, progress=True, log=print) -> dict:
    """Regenerate the bank files of the selected targets with mpmath; returns a change summary."""
    base = base or root()
    try:
        manifest = load_manifest(base)
    except BankError:
        manifest = {"files": {}}
    if manifest.get("generator_version", GENERATOR_VERSION) != GENERATOR_VERSION:
        # entries of another generator stay stale: a partial refresh must not re-label them current
        log(f"bank refresh: manifest generator {manifest.get('generator_version')} != {GENERATOR_VERSION}; "
            "dropping its entries (refresh every op to rebuild them)")
        manifest = {"files": {}}
    chosen = targets(ops, dtypes)
    bar = Progress(len(chosen), "nbx bank refresh") if progress else None
    new_files = {}
    for t in chosen:
        out = out_dtype(t)
        arrays, tags = bank_inputs(t)
        bits, ok = expected_bits(t, arrays, out)
        new_files[relpath(t)] = (t, out, render(t, arrays, tags, bits, ok, out).encode())
        if bar:
            bar.step(f"{t.label} {t.dtype.name}")
    summary = {"added": [], "changed": [], "unchanged": [], "cases": 0, "changed_cases": 0}
    temps = []
    files = dict(manifest.get("files", {}))
    for rel, (t, out, data) in new_files.items():
        p = base / rel
        old = p.read_bytes() if p.exists() else None
        summary["cases"] += data.count(b"\n") - 3
        if old == data:
            summary["unchanged"].append(rel)
        else:
            (summary["changed"] if old is not None else summary["added"]).append(rel)
            if old is not None:
                a = set(old.decode().splitlines()[3:])
                b = set(data.decode().splitlines()[3:])
                summary["changed_cases"] += len(a ^ b)
            temps.append((_atomic_write_bytes(p, data), p))
        files[rel] = {"sha256": sha256(data), "cases": data.count(b"\n") - 3, "op": t.op,
                      "params": t.params, "dtype": t.dtype.name, "out": out.name}
    new_manifest = {"generator_version": GENERATOR_VERSION, "seed": SEED, "mpmath": mpmath.__version__,
                    "precision": "Ziv: p+32 bits doubling to 1024; unresolved cases dropped",
                    "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "files": dict(sorted(files.items()))}
    mtmp = _atomic_write_bytes(base / MANIFEST, (json.dumps(new_manifest, indent=1) + "\n").encode())
    # the commit point: a journal of the renames still to do, written atomically. Before it exists
    # the old bank is untouched; after it, any reader rolls the refresh forward (roll_forward).
    plan = {"renames": [[str(t.relative_to(base)), str(p.relative_to(base))] for t, p in temps]
            + [[str(mtmp.relative_to(base)), MANIFEST]]}
    jtmp = _atomic_write_bytes(base / JOURNAL, json.dumps(plan).encode())
    os.replace(jtmp, base / JOURNAL)
    _fsync_dir(base)
    roll_forward(base)
    _MANIFEST.clear()
    log(f"bank refresh: {len(new_files)} files, {summary['cases']} cases; added {len(summary['added'])}, "
        f"changed {len(summary['changed'])} ({summary['changed_cases']} case lines differ), "
        f"unchanged {len(summary['unchanged'])}")
    for rel in summary["changed"][:20]:
        log(f"  changed: {rel}")
    return summary


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def check(base: Path | None = None, sample: int = 64, ops=None, verify=True, dtypes=None) -> list[str]:
    """Problems with the bank (empty list: healthy): hashes, coverage of OPS x dtypes, a sample
    of cases re-verified against mpmath."""
    base = base or root()
    problems = []
    try:
        manifest = load_manifest(base)
    except BankError as e:
        return [str(e)]
    if manifest.get("generator_version") != GENERATOR_VERSION:
        problems.append(f"bank generator version {manifest.get('generator_version')} != {GENERATOR_VERSION}: stale")
    chosen = targets(ops, dtypes)
    loaded = []
    for t in chosen:
        try:
            loaded.append((t, load(t, base, manifest)))
        except BankError as e:
            problems.append(str(e))
    for rel in manifest.get("files", {}):
        if not (base / rel).exists():
            problems.append(f"{base / rel}: listed in the manifest but missing")
    if verify and loaded:
        rng = np.random.default_rng(SEED)
        picks = rng.choice(len(loaded), min(sample, len(loaded)), replace=False)
        for k in picks:
            t, bf = loaded[k]
            if not bf.expected.size:
                continue
            i = int(rng.integers(0, bf.expected.size))
            arrays = [a[i:i + 1] for a in bf.inputs]
            bits, ok = expected_bits(t, arrays, bf.out)
            if ok[0] and int(bits[0]) != int(bf.expected[i]):
                problems.append(f"{relpath(t)} case {i}: stored {hex(int(bf.expected[i]))} but mpmath gives "
                                f"{hex(int(bits[0]))}")
    return problems
