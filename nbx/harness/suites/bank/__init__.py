"""The reference bank: per op (variant) and dtype, inputs and correctly rounded outputs as bits.

reference_bank/<op>[@k=v,...]/<dtype>.txt holds one line per input the generator draws (text.py
gives the format), and reference_bank/MANIFEST.json the provenance and per file its sha256 and
metadata. By role:

- generate.py: the inputs (a pure function of SEED and the target) and their expected bits;
- text.py: the file format (render, parse);
- storage.py: paths, the manifest, the lock, staged temp files and the journal that publishes them
  (roll_forward, finish), and loading a file against its hash;
- refresh.py: `nbx bank refresh`; check.py: `nbx bank check`; score.py: the `bank` suite.

Loading needs no mpmath.
"""
from __future__ import annotations

from nbx.harness.suites.bank import generate, storage, text
from nbx.harness.suites.bank.check import check
from nbx.harness.suites.bank.generate import GENERATOR_VERSION, MAX_UNRESOLVED, ROUNDING, SEED, bank_inputs, expected_bits
from nbx.harness.suites.bank.refresh import refresh
from nbx.harness.suites.bank.score import measure_bank
from nbx.harness.suites.bank.storage import (JOURNAL, LOCK, MANIFEST, ROOT, BankNotWritable, finish, is_temp, load,
                      load_manifest, relpath, roll_forward, root, sha256)
from nbx.harness.suites.bank.text import BankError, BankFile, parse, parse_header, render

# The manifest cache of the `bank` suite, cleared by refresh and finish (and by tests that
# point NBX_BANK elsewhere).
_MANIFEST = storage.MANIFESTS


def out_dtype(t):
    return t.out_dtype


__all__ = ["GENERATOR_VERSION", "JOURNAL", "LOCK", "MANIFEST", "MAX_UNRESOLVED", "ROOT", "ROUNDING",
           "SEED", "BankError", "BankFile", "BankNotWritable", "bank_inputs", "check", "expected_bits",
           "finish", "generate", "is_temp", "load", "load_manifest", "measure_bank", "out_dtype", "parse",
           "parse_header", "refresh", "relpath", "render", "roll_forward", "root", "sha256", "storage",
           "text"]
