"""Measuring an op against its bank (the `bank` suite): correct rounding against the stored bits; the
ulp error and special classes against the truth, as `host.score` (and so `nbx repro`) computes
them, so that one case has one figure wherever it is shown."""
from __future__ import annotations

import numpy as np

from nbx.oracles import ORACLES
from nbx.oracles.formats import FORMATS

from nbx.dtype import from_numpy_dtype
from nbx.harness.scoring.host import Batch, misrounded, score
from nbx.harness.targets.target import Target
from nbx.harness.suites.bank import storage
from nbx.harness.suites.bank.text import BankError


def measure_bank(t: Target, acc) -> None:
    bf = storage.load(t, manifest=storage.cached_manifest())
    if not bf.expected.size:
        return
    got = t.run(bf.inputs)
    out = from_numpy_dtype(got.dtype)
    if out is not bf.out:
        raise BankError(f"{t.label} {t.dtype.name}: the op now returns {out.name}, the bank holds {bf.out.name}")
    exp = bf.expected.astype(out.uint_np if out.itemsize > 1 or out.is_bool else np.uint8)
    if not out.is_float:
        e = exp.view(out.np) if not out.is_bool else exp.astype(bool)
        wrong = got != e
        acc.add(bf.inputs, got, Batch(wrong.astype(float), np.zeros(len(got), bool), wrong, exp, True))
        return
    fmt = FORMATS[out.name]
    b = score(t, bf.inputs, got)
    not_cr = misrounded(got, exp, fmt, ORACLES[t.op].zero_sign_matters) & ~b.special
    acc.add(bf.inputs, got, Batch(b.err, b.special, not_cr, exp, False, b.close_calls, b.unresolved, b.order))
