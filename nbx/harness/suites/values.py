"""The value suites: `bank` (the committed reference cases), `exhaustive16` (every input of a 16-bit
or smaller dtype, unary ops), `sweep` (float32/float64 or integer samples, or every float32 bit
pattern, unary ops) and `pairs` (operand pairs and tuples, binary and ternary ops). Which inputs a
job takes (batches on the host; a range of bit patterns, or of stratified tuples, decided on the
device by suites/exhaustive.py) is a pure function of (target, suite, profile, sizes, seed, bits).
Case counts per profile: inputs/cases.py (PROFILES), which `--tuples` and `--float64-cases`
override (sizes)."""
from __future__ import annotations

import sys

import numpy as np

from nbx.oracles import ORACLES

from nbx.dtype import float32, float64
from nbx.backend import IS_CUDA
from nbx.ops.verify import DIVISOR
from nbx.harness.inputs import cases
from nbx.harness.inputs.cases import PROFILES
from nbx.harness.scoring import regions
from nbx.harness.scoring.host import Accumulator, bits_of, score
from nbx.harness.suites import bank
from nbx.harness.suites import exhaustive
from nbx.harness.targets.target import Target

BATCH = 1 << 16
VALUE_SUITES = ("bank", "exhaustive16", "sweep", "pairs")


def profile_sizes(profile: str, sizes=None) -> dict:
    """The case counts of a profile (cases.PROFILES) with the overrides in sizes (a dict or pairs:
    `nbx run --tuples N` sets pairs32 and pairs32_interpreter, `--float64-cases N` sweep64 and
    pairs64)."""
    return {**PROFILES[profile], **dict(sizes or ())}


def batches(t: Target, suite: str, profile: str, seed: int, bits=None, sizes=None):
    """Operand arrays for one job, in batches of at most BATCH cases. bits (lo, hi): a unary sweep
    of float32, or exhaustive16, takes the bit patterns lo .. hi - 1 only. sizes: profile_sizes's
    overrides."""
    sizes = profile_sizes(profile, sizes)
    dts = t.operand_dtypes()
    rng = cases.rng_for(seed, t.label, t.dtype.name, suite)
    if suite == "exhaustive16":
        x = cases.exhaustive16(t.dtype)
        if bits is not None and t.dtype.itemsize == 2:
            x = x[bits[0]:bits[1]]
        if t.role(0) == DIVISOR:
            x = x[x != 0]
        for lo in range(0, len(x), BATCH):
            yield [x[lo:lo + BATCH]]
        return
    if suite == "sweep" and t.dtype is float32 and (sizes["sweep"] >= 1 << 32 or bits is not None):
        lo, hi = bits or (0, 1 << 32)
        for chunk in cases.exhaustive32_chunks(BATCH * 64, lo, hi):
            yield [chunk]
        return
    if t.dtype.is_float:
        key = "sweep" if suite == "sweep" else "pairs"
        n = sizes[key + "64"] if t.dtype is float64 else sizes[key]
    else:
        n = sizes["int"]
    done = 0
    while done < n:
        k = min(BATCH, n - done)
        if t.dtype.is_float:
            arrs = cases.float_operands(t, k, rng, dts) if done == 0 else \
                [cases.stratified(d, k, rng, ORACLES[t.op].domain[i]) if not d.is_bool
                 else rng.integers(0, 2, k).astype(bool) for i, d in enumerate(dts)]
        else:
            arrs = [cases.int_operand(t, i, k, rng, d) if not d.is_bool or t.dtype.is_bool else
                    rng.integers(0, 2, k).astype(bool) for i, d in enumerate(dts)]
            if done == 0 and suite == "sweep":
                sp = cases.special_values(t.dtype)
                arrs[0][: len(sp)] = sp[: k]
        done += k
        yield arrs


def bit_range(t: Target, suite: str, profile: str, bits):
    """The range of bit patterns a float job covers whole (None: it samples): a unary job over
    its dtype's patterns, a binary 16-bit job over the 2^32 operand pairs."""
    if suite not in ("sweep", "exhaustive16", "pairs"):
        return None
    if not t.dtype.is_float or t.dtype.itemsize > 4 or t.oracle_arity > 2:
        return None
    if t.oracle_arity == 2 and (suite != "pairs" or t.dtype.itemsize != 2):
        return None
    if bits is not None:
        return bits
    every = 1 << (8 * t.dtype.itemsize * t.oracle_arity)
    size = PROFILES[profile].get("pairs16", 0) if t.oracle_arity == 2 else PROFILES[profile].get(suite, 0)
    if suite == "exhaustive16" or (suite in ("sweep", "pairs") and size >= every):
        return 0, every
    return None


def sample_range(t: Target, suite: str, profile: str, bits, sizes=None):
    """The tuple indices a float32 binary or ternary pairs job takes from the stratified sample made
    on the device (exhaustive.sample; None: the host's batches): bits, else the profile's pairs32
    (pairs32_interpreter under the interpreter), which `--tuples` sets in any profile."""
    if suite != "pairs" or not exhaustive.sampled(t):
        return None
    if bits is not None:
        return bits
    n = profile_sizes(profile, sizes).get("pairs32" if IS_CUDA else "pairs32_interpreter", 0)
    return (0, n) if n else None


def swept_on_device(t: Target, span, profile: str, bits) -> bool:
    """Whether a job covering the range span of bit patterns (bit_range) is decided on the device
    (exhaustive.sweep): where t has a device oracle, for float32, a 16-bit pair, a --bits range, or
    anything in the exhaustive profile; else the host scores it."""
    return span is not None and exhaustive.device_oracle(t) is not None and (
        t.dtype is float32 or t.oracle_arity == 2 or bits is not None or profile == "exhaustive")


def measure_values(t: Target, suite: str, profile: str, seed: int, acc: Accumulator, bits=None,
                   sizes=None) -> None:
    """One value-suite job of t into acc. A unary float job over a whole range of bit patterns
    (float32 exhaustive, 16-bit in the exhaustive profile, or bits) is decided on the device where
    the op has a device oracle (exhaustive.py), as is a float32 binary or ternary pairs job in the
    exhaustive profile or with bits (a stratified sample, the tuples bits names); the rest is
    scored on the host, batch by batch."""
    if suite not in VALUE_SUITES:
        raise ValueError(f"{suite!r} is not a value suite ({', '.join(VALUE_SUITES)})")
    limits = profile_sizes(profile, sizes)
    span = bit_range(t, suite, profile, bits)
    tuples = sample_range(t, suite, profile, bits, sizes)
    if suite == "bank":
        bank.measure_bank(t, acc)
    elif tuples is not None:
        left_out = exhaustive.sample(t, tuples[0], tuples[1], acc, seed, max_host=limits.get("pairs32_host"))
        if left_out:
            print(f"nbx run: {t.label} {t.dtype.name} pairs: {left_out:,} undecided tuples beyond the "
                  f"host's {limits['pairs32_host']:,} left out of the sample", file=sys.stderr)
    elif swept_on_device(t, span, profile, bits):
        left_out = exhaustive.sweep(t, span[0], span[1], acc, max_host=limits.get("sweep_host"))
        if left_out:
            print(f"nbx run: {t.label} {t.dtype.name} {suite}: {left_out:,} undecided inputs beyond the "
                  f"host's {limits['sweep_host']:,} left out", file=sys.stderr)
    else:
        # a sampled unary sweep of a float32 or 16-bit dtype keeps its errors per range of bit
        # patterns too, as a device sweep does (the report's error-by-input-range chart)
        binned = suite == "sweep" and t.oracle_arity == 1 and t.dtype.is_float and t.dtype.itemsize <= 4
        if binned and acc.bins is None:
            acc.bins = regions.RangeBins(0, 1 << (8 * t.dtype.itemsize), 1)
        for arrays in batches(t, suite, profile, seed, bits, sizes):
            got = t.run(arrays)
            b = score(t, arrays, got)
            acc.add(arrays, got, b)
            if binned:
                acc.bins.add_points(bits_of(arrays[0]).astype(np.int64), b)
