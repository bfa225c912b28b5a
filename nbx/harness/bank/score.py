"""Measuring an op against its bank (the `bank` suite): no mpmath, only the stored bits."""
from __future__ import annotations

import numpy as np

from oracles import ORACLES
from oracles.formats import FORMATS

from ... import dtype as D
from .. import ulp
from ..measure import Batch, misrounded, oracle_params
from ..order import order_error
from ..targets import Target
from . import storage
from .text import BankError


def measure_bank(t: Target, acc) -> None:
    bf = storage.load(t, manifest=storage.cached_manifest())
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
    not_cr = misrounded(got, exp, fmt, ORACLES[t.op].zero_sign_matters)
    order = order_error(t, t.oracle_values(bf.inputs, out), oracle_params(t, out), got)
    acc.add(bf.inputs, got, Batch(np.where(special, np.inf, err), special, not_cr, exp, False, order=order))
