"""What a bank file holds: the generator's inputs (a pure function of SEED and the target) and their
correctly rounded outputs (mpmath, Ziv). Refresh writes these; check derives the same inputs again
and holds every file to them."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nbx.oracles import ORACLES
from nbx.oracles.formats import FORMATS

from nbx.harness.inputs import cases
from nbx.harness.scoring.host import bits_of, exact_expected, oracle_params, round_exact_or_ziv
from nbx.harness.targets.target import Target

GENERATOR_VERSION = 1
SEED = 20261202
N_RANDOM = 96
N_SPECIAL_PAIRS = 14
# How expected values are rounded (scoring/host.py, round_exact_or_ziv: Ziv's loop from p + 32 bits up to
# round_correctly's 1024, then the exact-value rule), as every header and the manifest record it.
ROUNDING = "ziv(p+32 .. 1024 bits)"
# A file may list at most this many inputs that Ziv could not decide (0 in the committed bank):
# a few exact ties the exact-value rule misses are tolerable, more means a broken oracle.
MAX_UNRESOLVED = 4


class Expected(NamedTuple):
    """Per case: the output's bits (for an unresolved case, the rounding of the last evaluation)
    and whether Ziv's loop (or the exact-value rule) decided it."""

    bits: np.ndarray
    resolved: np.ndarray


def bank_inputs(t: Target) -> tuple[list[np.ndarray], list[str]]:
    """The target's bank inputs, one array per operand, and a tag per case ("special" or "random")."""
    rng = cases.rng_for(SEED, t.label, t.dtype.name, "bank")
    dts = t.operand_dtypes()
    arity = len(dts)

    def sample(d, n, i):
        if d.is_bool:
            return rng.integers(0, 2, n).astype(bool)
        if d.is_float:
            return cases.stratified(d, n, rng, ORACLES[t.op].domain[i])
        return cases.int_operand(t, i, n, rng, d)

    if arity == 1:
        sp = cases.role_specials(t, 0, cases.special_values(t.dtype), t.dtype)
        rnd = sample(t.dtype, N_RANDOM, 0)
        return [np.concatenate([sp, rnd])], ["special"] * len(sp) + ["random"] * N_RANDOM
    sps = []
    for i, d in enumerate(dts):
        s = cases.special_values(d)
        if len(s) > N_SPECIAL_PAIRS:
            s = s[np.linspace(0, len(s) - 1, N_SPECIAL_PAIRS).astype(int)]
        sps.append(cases.role_specials(t, i, s, d))
    if arity == 2:
        g = np.meshgrid(sps[0], sps[1], indexing="ij")
        special = [x.reshape(-1) for x in g]
    else:
        m = max(len(s) for s in sps)
        special = [np.resize(s, m) for s in sps]
    rnd = [sample(d, N_RANDOM, i) for i, d in enumerate(dts)]
    arrays = [np.concatenate([s, r]) for s, r in zip(special, rnd)]
    return arrays, ["special"] * len(special[0]) + ["random"] * N_RANDOM


def input_rows(arrays: list[np.ndarray], tags: list[str]) -> list[tuple]:
    """One (operand bits..., tag) tuple per case: how check compares a file with the generator."""
    return list(zip(*[bits_of(a).tolist() for a in arrays], tags))


def expected_bits(t: Target, arrays, out) -> Expected:
    """Correctly rounded expected outputs (mpmath, Ziv) as bits, and which cases resolved."""
    oracle = ORACLES[t.op]
    params = oracle_params(t, out)
    if not out.is_float:
        e = exact_expected(t, arrays, out, params)
        return Expected(bits_of(e).astype(np.uint64), np.ones(len(e), bool))
    fmt = FORMATS[out.name]
    vals = t.oracle_values(arrays, out)
    bits = np.zeros(len(vals[0]), dtype=np.uint64)
    ok = np.ones(len(vals[0]), bool)
    for i, row in enumerate(zip(*vals)):
        row = tuple(float(v) for v in row)
        rr = round_exact_or_ziv(oracle, row, params, fmt)
        bits[i], ok[i] = rr.bits, rr.resolved
    return Expected(bits, ok)
