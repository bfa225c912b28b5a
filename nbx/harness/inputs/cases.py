"""Input generators, every one a pure function of (format, dtype or target, size, seed).

- `special_values`: the values docs/PRECISION.md lists for the bank (signed zeros, infinities, NaN, the
  normal/subnormal edges, max finite, +-1, half-integers ...);
- `exhaustive16`: all 65,536 bit patterns of a 16-bit format;
- `stratified`: bit patterns drawn with a uniform exponent field, so every binade, both signs and
  the subnormals are equally represented (a uniform draw of VALUES would miss all small binades),
  optionally confined to the op's domain;
- `integers`: bit lengths drawn uniformly, so every magnitude up to the dtype's limit is covered;
- `exhaustive32_chunks`: all 2^32 float32 patterns, in chunks (for the GPU);
- `int_operand`, `float_operands`: the operands of one target's batch, from the generators above
  (divisors nonzero, shift counts in and just outside range, the specials crossed), and
  `role_specials`: the special values of an operand that its role admits (the roles an op declares
  in OpSpec.verify, nbx/ops/verify.py);
- `PROFILES`, `PROFILE_SIZES`: how many cases each profile draws, for the value suites and the
  structural suites.
"""
from __future__ import annotations

import math

import numpy as np

from nbx.oracles import ORACLES
from nbx.oracles.formats import FORMATS, from_bits

from nbx.dtype import DType
from nbx.ops.verify import DIVISOR, EXPONENT, SHIFT
from nbx.harness.targets.target import Target

# Case counts of the value suites per profile. float64 results take the mpmath truth for every
# case, hence fewer. pairs16: binary float16/bfloat16 ops over every operand pair, decided on the
# device (exhaustive.py). pairs32: binary and ternary float32 ops with a device oracle, a stratified
# sample of that many tuples made and decided on the device (exhaustive.sample), on CUDA;
# pairs32_interpreter: the same under Triton's interpreter (two binary rounds of the generator,
# stratified.ROUND: every binade pair and special crossing, in seconds); pairs32_host: the most
# undecided tuples of one such job that mpmath decides on the host (~130 us each, 68 s for 2^19;
# atan2's 2^32 tuples leave ~2.7e5 undecided on an H100; the rest are left out of the sample and
# counted on stderr); sweep_host: the same for a unary job over every
# input or a 16-bit binary one over every pair. int: integer operands, scored on the host by exact
# Python oracles at 5-20 us a case (2^20 took 5-22 s a job on the H200's host, 2026-12-04, ~840
# jobs with torch's): 8 times the nightly's, so the profile keeps to minutes.
PROFILES = {
    "ci": {"sweep": 1 << 13, "sweep64": 256, "pairs": 1 << 12, "pairs64": 192, "int": 1 << 11},
    "nightly": {"sweep": 1 << 17, "sweep64": 2048, "pairs": 1 << 16, "pairs64": 1024, "int": 1 << 14},
    "exhaustive": {"sweep": 1 << 32, "sweep64": 1 << 14, "pairs": 1 << 24, "pairs64": 1 << 12, "int": 1 << 17,
                   "pairs16": 1 << 32, "pairs32": 1 << 32, "pairs32_interpreter": 1 << 20,
                   "pairs32_host": 1 << 19, "sweep_host": 1 << 17},
}
# Sizes of the structural suites (layout.py, intdiv.py) per profile.
PROFILE_SIZES = {
    "ci": {"full_all_dtypes": False, "rand_ranks": (1, 5), "rand_groups": 1, "rand_layouts": 1, "score": 2048,
           "score64": 64, "grid_reps": 1, "divisible": 256, "float_n": 1024, "float_wrong": 512, "mixed": 256},
    "nightly": {"full_all_dtypes": True, "rand_ranks": (1, 8), "rand_groups": 8, "rand_layouts": 2, "score": 8192,
                "score64": 256, "grid_reps": 4, "divisible": 2048, "float_n": 4096, "float_wrong": 2048,
                "mixed": 1024},
}
PROFILE_SIZES["exhaustive"] = PROFILE_SIZES["nightly"]

# Integer exponents are drawn from [0, EXPONENT_STOP): a negative one faults, and the range reaches
# past 64, the widest integer width (where 2**64 has wrapped to 0).
EXPONENT_STOP = 70


def rng_for(seed: int, *key) -> np.random.Generator:
    """A generator seeded by the run seed and a key (op, dtype, suite): reproducible per slice."""
    material = [seed] + [int.from_bytes(str(k).encode()[:8].ljust(8, b"\0"), "little") for k in key]
    return np.random.default_rng(material)


def special_values(dt: DType) -> np.ndarray:
    """Edge values of a dtype, as an array of that dtype."""
    if dt.is_bool:
        return np.array([False, True])
    if dt.is_int:
        lo, hi = dt.min, dt.max
        vals = {0, 1, 2, 3, 7, 10, hi, hi - 1, hi // 2, hi // 2 + 1}
        vals |= {1 << k for k in range(dt.bits - (0 if dt.kind == "u" else 1))}
        if lo < 0:
            vals |= {-v for v in list(vals) if -v >= lo} | {lo, lo + 1, lo // 2}
        return np.array(sorted(vals), dtype=dt.np)
    fmt = FORMATS[dt.name]
    tiny = 2.0 ** (fmt.emin - fmt.precision + 1)
    mn = 2.0 ** fmt.emin
    mx = float(np.finfo(np.float64).max) if fmt.name == "float64" else \
        (2 - 2.0 ** (1 - fmt.precision)) * 2.0 ** fmt.emax
    largest_sub = mn - tiny
    base = [0.0, math.inf, 1.0, 2.0, 0.5, 1.5, 2.5, 3.5, 0.25, 3.0, 10.0, 100.0, math.pi, math.pi / 2, math.e,
            mn, largest_sub, tiny, mx, 1.0 + 2.0 ** (1 - fmt.precision), 1.0 - 2.0 ** -fmt.precision,
            0.1, 1e-3, 20.0, 88.0, 89.0, 710.0, 11.0, 65504.0]
    vals = np.array(base + [-v for v in base] + [math.nan], dtype=np.float64)
    with np.errstate(all="ignore"):
        out = vals.astype(dt.np)
    return np.unique(out.view(dt.uint_np)).view(dt.np)   # distinct bit patterns (the two zeros stay)


def exhaustive16(dt: DType) -> np.ndarray:
    """All values of a 16-bit (or 8-bit, or bool) dtype."""
    if dt.is_bool:
        return np.array([False, True])
    n = 1 << dt.bits
    return np.arange(n, dtype=np.uint64).astype(dt.uint_np).view(dt.np)


def _domain_exponent_cap(lo: float, hi: float) -> float:
    m = max(abs(lo), abs(hi))
    return math.inf if math.isinf(m) else m


def stratified(dt: DType, n: int, rng: np.random.Generator, domain=(-math.inf, math.inf),
               in_domain: float = 0.8) -> np.ndarray:
    """n values of float dtype dt: sign and exponent field uniform, mantissa uniform.

    A fraction `in_domain` is folded into the op's domain (absolute value when the domain is
    non-negative; binades capped at the domain's magnitude), the rest is unrestricted so NaN results
    outside the domain are measured too.
    """
    fmt = FORMATS[dt.name]
    ebits, mbits = fmt.exponent_bits, fmt.mantissa_bits
    exp = rng.integers(0, (1 << ebits) - 1, n, dtype=np.uint64)          # never the inf/NaN field
    man = rng.integers(0, 1 << mbits, n, dtype=np.uint64)
    sign = rng.integers(0, 2, n, dtype=np.uint64)
    bits = (sign << np.uint64(fmt.bits - 1)) | (exp << np.uint64(mbits)) | man
    x = from_bits(bits.astype(fmt.uint_dtype), fmt).astype(np.float64)
    lo, hi = domain
    k = int(n * in_domain)
    if k and (lo > -math.inf or hi < math.inf):
        cap = _domain_exponent_cap(lo, hi)
        part = x[:k]
        if lo >= 0:
            part = np.abs(part)
        if cap < math.inf:
            # rescale the binade into [0, log2(cap)]: keep the mantissa, pick the exponent anew
            emax = math.floor(math.log2(cap)) if cap > 0 else fmt.emin
            m, _ = np.frexp(part)
            e = rng.integers(fmt.emin - fmt.precision + 2, emax + 1, k)
            part = np.ldexp(m, e)
        part = np.where((part >= lo) & (part <= hi), part, x[:k])
        x[:k] = part
    with np.errstate(all="ignore"):
        return x.astype(dt.np)


def integers(dt: DType, n: int, rng: np.random.Generator, *, nonzero: bool = False) -> np.ndarray:
    """Integers with the bit length uniform over the dtype's range, both signs for signed types."""
    if dt.is_bool:
        return rng.integers(0, 2, n).astype(bool)
    signed = dt.kind == "i"
    width = dt.bits - (1 if signed else 0)
    k = rng.integers(0, width + 1, n)
    mag = np.array([int(rng.integers(0, 1 << int(b))) | ((1 << int(b)) >> 1) if b else 0 for b in k],
                   dtype=object)
    if signed:
        neg = rng.integers(0, 2, n).astype(bool)
        vals = np.where(neg, -mag - 1 * (k == width), mag)      # reach INT_MIN at the top length
    else:
        vals = mag
    vals = np.array([max(dt.min, min(dt.max, int(v))) for v in vals], dtype=object)
    if nonzero:
        vals = np.where(vals == 0, 1, vals)
    return vals.astype(dt.np)


def close_to(x: np.ndarray, rng: np.random.Generator, dt: DType) -> np.ndarray:
    """Values near x (relative perturbations down to one ulp): cancellation cases for sub, fmod ..."""
    with np.errstate(all="ignore"):
        scale = np.ldexp(1.0, -rng.integers(0, FORMATS[dt.name].precision + 1, x.shape[0]))
        return (x.astype(np.float64) * (1 + rng.choice([-1, 1], x.shape[0]) * scale)).astype(dt.np)


def exhaustive32_chunks(chunk: int = 1 << 24, start: int = 0, stop: int = 1 << 32):
    """All float32 bit patterns in [start, stop), chunk by chunk (memory stays at one chunk)."""
    for lo in range(start, stop, chunk):
        yield np.arange(lo, min(stop, lo + chunk), dtype=np.uint64).astype(np.uint32).view(np.float32)


def int_operand(t: Target, i: int, n: int, rng, d: DType) -> np.ndarray:
    """Operand i of an integer target: `integers`, with shift counts in range and just outside it,
    exponents non-negative and divisors nonzero."""
    role = t.role(i)
    if role == SHIFT:
        return rng.integers(-2, d.bits + 3, n).astype(d.np)        # in range, and just outside it
    if role == EXPONENT:
        return rng.integers(0, EXPONENT_STOP, n).astype(d.np)       # negative integer exponents raise
    return integers(d, n, rng, nonzero=(role == DIVISOR))


def role_specials(t: Target, i: int, s: np.ndarray, d: DType) -> np.ndarray:
    """The special values `s` of operand i (dtype d) that its role admits: shift counts at the edges
    of the width (and -1 for signed types) instead; for integer and bool dtypes, divisors nonzero and
    exponents in [0, EXPONENT_STOP)."""
    role = t.role(i)
    if role == SHIFT:
        return np.array([0, 1, d.bits - 1, d.bits, d.bits + 1] + ([-1] if d.kind == "i" else []), dtype=d.np)
    if d.is_float:
        return s
    if role == DIVISOR:
        return s[s != 0]
    if role == EXPONENT:
        return s[(s >= 0) & (s < EXPONENT_STOP)]
    return s


def float_operands(t: Target, n: int, rng, dts) -> list[np.ndarray]:
    """The first batch of a float target: stratified operands in the op's domain, a quarter of the
    second operand close to the first, and the last cases the special values crossed."""
    oracle = ORACLES[t.op]
    arrs = []
    for i, d in enumerate(dts):
        if d.is_bool:
            arrs.append(rng.integers(0, 2, n).astype(bool))
        else:
            arrs.append(stratified(d, n, rng, oracle.domain[i]))
    if len(arrs) >= 2 and not dts[1].is_bool and n >= 8:
        k = n // 4                                                   # a quarter near each other
        arrs[1][:k] = close_to(arrs[0][:k], rng, dts[1])
    # the specials: a cross product for binary ops, one operand at a time for ternary
    sp = [special_values(d) for d in dts]
    if len(dts) == 2:
        grid = np.meshgrid(sp[0], sp[1], indexing="ij")
        rows = [g.reshape(-1) for g in grid]
    else:
        rows = [np.resize(sp[i], 0) for i in range(len(dts))]
        for j in range(len(dts)):
            m = len(sp[j])
            rows = [np.concatenate([rows[i], sp[i] if i == j else arrs[i][:m]]) for i in range(len(dts))]
    m = min(len(rows[0]), n // 2)
    for i in range(len(dts)):
        arrs[i][n - m:] = rows[i][:m]
    return arrs
