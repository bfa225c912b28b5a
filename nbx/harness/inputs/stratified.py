"""The stratified float32 operand tuples of binary and ternary ops, made on the device, and their
numpy twin `tuples_host`, which regenerates any tuple on the host bit for bit (tests/test_stratified.py)."""
from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from nbx.kernels import launch
from nbx.tensor import Tensor, empty
from nbx.harness.inputs.patterns import BLOCK


@triton.jit
def _pow2(q):
    """2^q as float64 for an integer q in [-1022, 1023], from its bits."""
    return ((q + 1023).to(tl.int64) << 52).to(tl.float64, bitcast=True)


# ---------------------------------------------------------------------- stratified float32 tuples
# Operand tuples of a float32 binary or ternary op, made on the device from a 64-bit index and the
# run's key (a counter-based generator: splitmix64 of key + (3 i + k) 0x9E3779B97F4A7C15, k = 1, 2,
# 3), so tuple i is the same on every backend and `tuples_host` regenerates it on the host. The
# index space is cut in rounds of ROUND[arity] tuples; position j in a round picks the class:
#   grid      j < 2^18: operand a's sign and exponent field (9 bits: all 512 of them, subnormals,
#             and the inf/NaN field) are j's high 9 bits, b's its low 9 (every binade pair, both
#             signs, in every round); a ternary c takes (a + b + round) mod 512, so within a round
#             every pair of operands meets every binade pair, and 512 rounds meet every triple;
#   near      2^18 <= j < 2^18 + 2^17: near-equal operands (cancellation): a related operand is the
#             base times (1 +- 2^-k), k in 0..24, rounded to float32 once, or 1..4 float32 values
#             away along their order (across zero), its sign flipped at random; relations
#             b ~ +-a, a ~ +-(b m) (m an integer 1..1024: near multiples), b ~ +-1 (binary); b ~ +-a,
#             c ~ +-a, c ~ +-b, a ~ +-(b c), a ~ +-(b / c), c ~ +-1, b ~ +-1, b ~ c ~ +-a (ternary);
#             the base walks all 512 signs and exponents;
#   specials  the rest: SPECIALS32 crossed: every pair (triple) of them, and each at each position
#             with each other operand walking all 512 signs and exponents (ternary: one special
#             with one other operand walking, the third drawn; two specials with the third walking).
# Mantissas are drawn (hash bits); a quarter of them have their low t bits cleared (short
# significands: exact sums and products, rounding ties) and a quarter set. Ops see every class in
# every round, so a test-sized count (one round) covers every binade pair and every crossing.
SPECIALS32 = (0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,   # 0, -0, inf, -inf, NaN
              0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x80000001)                # +-largest, +-smallest
NS = len(SPECIALS32)
GRID = 1 << 18
NEAR = 1 << 17
ROUND = {2: GRID + NEAR + (1 << 17), 3: GRID + NEAR + (1 << 18)}
ENUM = {2: NS * NS + 2 * NS * 512, 3: NS ** 3 + 6 * NS * 512 + 3 * NS * NS * 512}
_SP_SE = tl.constexpr(tuple(b >> 23 for b in SPECIALS32))
_SP_M = tl.constexpr(tuple(b & 0x7FFFFF for b in SPECIALS32))
_NS = tl.constexpr(NS)
_GRID = tl.constexpr(GRID)
_NEAR = tl.constexpr(NEAR)
_GOLDEN = tl.constexpr(0x9E3779B97F4A7C15)
_M1 = tl.constexpr(0xBF58476D1CE4E5B9)
_M2 = tl.constexpr(0x94D049BB133111EB)
GOLDEN, M1, M2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


@triton.jit
def _mix64(z):
    """splitmix64's finalizer, uint64 in and out (wrapping products)."""
    z = (z ^ (z >> 30)) * _M1
    z = (z ^ (z >> 27)) * _M2
    return z ^ (z >> 31)


@triton.jit
def _word(key, idx, k: tl.constexpr):
    """Hash word k of tuple idx (key: uint64, idx: int64 >= 0)."""
    return _mix64(key + (idx * 3 + k).to(tl.uint64) * _GOLDEN)


@triton.jit
def _field(h, lo: tl.constexpr, width: tl.constexpr):
    return ((h >> lo) & ((1 << width) - 1)).to(tl.int64)


@triton.jit
def _mantissa(m, sel, t):
    """sel 0: the low t bits of m cleared, 1: set, else m (t in 0..31, at most 23 used)."""
    low = (tl.full(m.shape, 1, tl.int64) << tl.minimum(t, 23)) - 1
    return tl.where(sel == 0, m & ~low, tl.where(sel == 1, m | low, m))


@triton.jit
def _special(s):
    """The bit pattern of SPECIALS32[s] (int64)."""
    se = tl.zeros_like(s)
    m = tl.zeros_like(s)
    for k in tl.static_range(_NS):
        se = tl.where(s == k, _SP_SE[k], se)
        m = tl.where(s == k, _SP_M[k], m)
    return (se << 23) | m


@triton.jit
def _f64(bits):
    return bits.to(tl.uint32).to(tl.float32, bitcast=True).to(tl.float64)


@triton.jit
def _bits32(v):
    """float64 -> float32 (one rounding) -> its bit pattern as int64; a NaN as 0x7FC00000 (a GPU's
    NaN payloads are not the host's)."""
    b = v.to(tl.float32).to(tl.uint32, bitcast=True).to(tl.int64)
    return tl.where(v != v, 0x7FC00000, b)


@triton.jit
def _perturb(x, h):
    """x (bits) moved a little, from 12 random bits h: x (1 +- 2^-k) rounded once (k in 0..24), or
    1..4 float32 values along their order (across zero); inf and NaN stay."""
    k = tl.minimum(h >> 1 & 31, 24)
    neg = h >> 6 & 1
    f = 1.0 + (1 - 2 * neg).to(tl.float64) * _pow2(-k)
    rel = _bits32(_f64(x) * f)
    d = (h >> 7 & 3) + 1
    d = tl.where(neg == 1, -d, d)
    mag = x & 0x7FFFFFFF
    o = tl.where(x >> 31 == 1, -mag, mag) + d
    m2 = tl.minimum(tl.abs(o), 0x7F800000)
    ulps = tl.where(o < 0, m2 | 0x80000000, m2)
    return tl.where(mag >= 0x7F800000, x, tl.where((h & 1) == 0, rel, ulps))


@triton.jit
def _spec3(o: tl.constexpr, e, m, rnd):
    """Operand o of a ternary tuple of the specials class (enumeration index e; m: its mantissa,
    rnd: a drawn sign and exponent)."""
    all3 = e < _NS * _NS * _NS
    e2 = tl.maximum(e - _NS * _NS * _NS, 0)
    single = e2 < 6 * _NS * 512
    p = e2 // (2 * _NS * 512)
    rest = e2 % (2 * _NS * 512)
    q = rest // (_NS * 512)
    s = (rest % (_NS * 512)) // 512
    w = rest % 512
    rank = tl.where(p < o, o - 1, o)
    walk = tl.where((p != o) & (rank == q), w, rnd)
    one = tl.where(p == o, _special(s), (walk << 23) | m)
    e3 = tl.maximum(e2 - 6 * _NS * 512, 0)
    f = e3 // (_NS * _NS * 512)
    rest3 = e3 % (_NS * _NS * 512)
    s12 = tl.where(tl.where(f < o, o - 1, o) == 0, rest3 // (_NS * 512), (rest3 // 512) % _NS)
    two = tl.where(f == o, ((rest3 % 512) << 23) | m, _special(s12))
    if o == 0:
        s3 = e // (_NS * _NS)
    elif o == 1:
        s3 = (e // _NS) % _NS
    else:
        s3 = e % _NS
    return tl.where(all3, _special(s3), tl.where(single, one, two))


@triton.jit
def tuple_bits(idx, key, N_IN: tl.constexpr, R: tl.constexpr, ENUM_N: tl.constexpr):
    """Tuple idx (int64 >= 0) of the stratified sample of `key` (uint64): three float32 bit patterns
    as int64 (c unused for binary)."""
    h1 = _word(key, idx, 1)
    h2 = _word(key, idx, 2)
    h3 = _word(key, idx, 3)
    r = idx // R
    j = idx - r * R
    ma = _mantissa(_field(h1, 0, 23), _field(h1, 46, 2), _field(h1, 52, 5))
    mb = _mantissa(_field(h1, 23, 23), _field(h1, 48, 2), _field(h1, 57, 5))
    mc = _mantissa(_field(h2, 0, 23), _field(h1, 50, 2), _field(h2, 23, 5))
    ra = _field(h2, 28, 9)
    rb = _field(h2, 37, 9)
    rc = _field(h2, 46, 9)
    rel = _field(h2, 55, 3)
    flip = _field(h2, 58, 1) << 31
    flip2 = _field(h2, 59, 1) << 31
    p1 = _field(h3, 0, 12)
    p2 = _field(h3, 16, 12)
    # grid
    u = j >> 9
    v = j & 511
    ga = (u << 23) | ma
    gb = (v << 23) | mb
    gc = (((u + v + r) & 511) << 23) | mc
    # near-equal
    w = tl.maximum(j - _GRID, 0) & 511
    aw = (w << 23) | ma
    bw = (w << 23) | mb
    a_r = (ra << 23) | ma
    b_r = (rb << 23) | mb
    c_r = (rc << 23) | mc
    one = tl.full(aw.shape, 0x3F800000, tl.int64)
    if N_IN == 2:
        rel = rel & 3
        mult = _bits32(_f64(bw) * (1 + _field(h3, 32, 10)).to(tl.float64))
        na = tl.where(rel == 2, _perturb(mult, p1) ^ flip, aw)
        nb = tl.where(rel == 2, bw, tl.where(rel == 3, _perturb(one, p1), _perturb(aw, p1)) ^ flip)
        nc = c_r
    else:
        # b times a c near 1 (2^-16 .. 2^15): their product and quotient are in range
        cn = (((rc >> 8) << 8 | (111 + _field(h3, 42, 5))) << 23) | mc
        prod = _bits32(_f64(bw) * _f64(cn))
        quot = _bits32(_f64(bw) / _f64(cn))
        pa = _perturb(aw, p1) ^ flip
        na = tl.where((rel == 2), a_r, tl.where(rel == 3, _perturb(prod, p1) ^ flip,
                                                 tl.where(rel == 4, _perturb(quot, p1) ^ flip, aw)))
        nb = tl.where((rel == 0) | (rel == 7), pa, tl.where((rel == 2) | (rel == 3) | (rel == 4), bw,
                                                          tl.where(rel == 6, _perturb(one, p1) ^ flip, b_r)))
        nc = tl.where(rel == 1, pa, tl.where(rel == 2, _perturb(bw, p1) ^ flip,
                                             tl.where((rel == 3) | (rel == 4), cn,
                                                      tl.where(rel == 5, _perturb(one, p1) ^ flip,
                                                               tl.where(rel == 7, _perturb(aw, p2) ^ flip2,
                                                                        c_r)))))
    # specials
    e = tl.maximum(j - _GRID - _NEAR, 0) % ENUM_N
    if N_IN == 2:
        both = e < _NS * _NS
        e2 = tl.maximum(e - _NS * _NS, 0)
        p = e2 // (_NS * 512)
        s = (e2 % (_NS * 512)) // 512
        wv = e2 % 512
        sa = tl.where(both, _special(e // _NS), tl.where(p == 0, _special(s), (wv << 23) | ma))
        sb = tl.where(both, _special(e % _NS), tl.where(p == 1, _special(s), (wv << 23) | mb))
        sc = c_r
    else:
        sa = _spec3(0, e, ma, ra)
        sb = _spec3(1, e, mb, rb)
        sc = _spec3(2, e, mc, rc)
    in_grid = j < _GRID
    in_near = j < _GRID + _NEAR
    a = tl.where(in_grid, ga, tl.where(in_near, na, sa))
    b = tl.where(in_grid, gb, tl.where(in_near, nb, sb))
    c = tl.where(in_grid, gc, tl.where(in_near, nc, sc))
    return a, b, c


@triton.jit
def _tuples_kernel(a_ptr, b_ptr, c_ptr, start, n, key, N_IN: tl.constexpr, R: tl.constexpr,
                   ENUM_N: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    idx = tl.cast(start, tl.int64) + i
    a, b, c = tuple_bits(idx, tl.cast(key, tl.int64).to(tl.uint64, bitcast=True), N_IN, R, ENUM_N)
    tl.store(a_ptr + i, a.to(tl.uint32).to(tl.float32, bitcast=True), mask=m)
    tl.store(b_ptr + i, b.to(tl.uint32).to(tl.float32, bitcast=True), mask=m)
    if N_IN == 3:
        tl.store(c_ptr + i, c.to(tl.uint32).to(tl.float32, bitcast=True), mask=m)


def _key64(key: int) -> int:
    """The key as the int64 a kernel takes (its uint64 bits)."""
    key &= (1 << 64) - 1
    return key - (1 << 64) if key >> 63 else key


def stratified_tuples(arity: int, key: int, start: int, n: int, out=None) -> list[Tensor]:
    """Tuples start .. start + n - 1 of the stratified float32 sample of `key` (made on the
    device): `arity` float32 tensors of n elements (into `out`, contiguous tensors, when given)."""
    if arity not in ROUND:
        raise ValueError(f"stratified_tuples: arity {arity} is not 2 or 3")
    if start < 0 or start + n > 1 << 62:
        raise ValueError(f"stratified_tuples: indices {start} .. {start + n} out of [0, 2^62)")
    xs = list(out) if out is not None else [empty(n, dtype="float32") for _ in range(arity)]
    args = xs + [xs[0]] * (3 - arity)
    with np.errstate(all="ignore"):         # the interpreter's numpy: inf and NaN bases times (1 + e)
        _tuples_kernel[(max(1, triton.cdiv(n, BLOCK)),)](*args, start, n, _key64(key), N_IN=arity, R=ROUND[arity],
                                                         ENUM_N=ENUM[arity], BLOCK=BLOCK, **launch.kernel_options())
    return xs


def _mix64_np(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * np.uint64(M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(M2)
    return z ^ (z >> np.uint64(31))


def _special_np(s: np.ndarray) -> np.ndarray:
    return np.asarray(SPECIALS32, dtype=np.int64)[np.clip(s, 0, NS - 1)]     # (lanes not taken: any)


def _f64_np(bits: np.ndarray) -> np.ndarray:
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def _bits32_np(v: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(v), 0x7FC00000, v.astype(np.float32).view(np.uint32).astype(np.int64))


def _perturb_np(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    k = np.minimum(h >> 1 & 31, 24)
    neg = h >> 6 & 1
    rel = _bits32_np(_f64_np(x) * (1.0 + (1 - 2 * neg) * np.ldexp(1.0, -k)))
    d = (h >> 7 & 3) + 1
    d = np.where(neg == 1, -d, d)
    mag = x & 0x7FFFFFFF
    o = np.where(x >> 31 == 1, -mag, mag) + d
    m2 = np.minimum(np.abs(o), 0x7F800000)
    ulps = np.where(o < 0, m2 | 0x80000000, m2)
    return np.where(mag >= 0x7F800000, x, np.where((h & 1) == 0, rel, ulps))


def _spec3_np(o: int, e, m, rnd):
    all3 = e < NS ** 3
    e2 = np.maximum(e - NS ** 3, 0)
    single = e2 < 6 * NS * 512
    p = e2 // (2 * NS * 512)
    rest = e2 % (2 * NS * 512)
    q = rest // (NS * 512)
    s = (rest % (NS * 512)) // 512
    w = rest % 512
    rank = np.where(p < o, o - 1, o)
    walk = np.where((p != o) & (rank == q), w, rnd)
    one = np.where(p == o, _special_np(s), (walk << 23) | m)
    e3 = np.maximum(e2 - 6 * NS * 512, 0)
    f = e3 // (NS * NS * 512)
    rest3 = e3 % (NS * NS * 512)
    s12 = np.where(np.where(f < o, o - 1, o) == 0, rest3 // (NS * 512), (rest3 // 512) % NS)
    two = np.where(f == o, ((rest3 % 512) << 23) | m, _special_np(s12))
    s3 = (e // NS ** (2 - o)) % NS
    return np.where(all3, _special_np(s3), np.where(single, one, two))


def tuples_host(arity: int, key: int, indices) -> list[np.ndarray]:
    """The tuples of `indices` of the stratified float32 sample of `key`, regenerated on the host
    (tuple_bits in numpy, bit for bit): `arity` float32 arrays."""
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    R, n_enum = ROUND[arity], ENUM[arity]
    ku = np.uint64(key & ((1 << 64) - 1))
    with np.errstate(all="ignore"):
        h1, h2, h3 = (_mix64_np(ku + (idx * 3 + k).astype(np.uint64) * np.uint64(GOLDEN)) for k in (1, 2, 3))

        def field(h, lo, width):
            return ((h >> np.uint64(lo)) & np.uint64((1 << width) - 1)).astype(np.int64)

        def mantissa(m, sel, t):
            low = (np.int64(1) << np.minimum(t, 23)) - 1
            return np.where(sel == 0, m & ~low, np.where(sel == 1, m | low, m))

        r = idx // R
        j = idx - r * R
        ma = mantissa(field(h1, 0, 23), field(h1, 46, 2), field(h1, 52, 5))
        mb = mantissa(field(h1, 23, 23), field(h1, 48, 2), field(h1, 57, 5))
        mc = mantissa(field(h2, 0, 23), field(h1, 50, 2), field(h2, 23, 5))
        ra, rb, rc = field(h2, 28, 9), field(h2, 37, 9), field(h2, 46, 9)
        rel = field(h2, 55, 3)
        flip, flip2 = field(h2, 58, 1) << 31, field(h2, 59, 1) << 31
        p1, p2 = field(h3, 0, 12), field(h3, 16, 12)
        u, v = j >> 9, j & 511
        ga, gb, gc = (u << 23) | ma, (v << 23) | mb, (((u + v + r) & 511) << 23) | mc
        w = np.maximum(j - GRID, 0) & 511
        aw, bw = (w << 23) | ma, (w << 23) | mb
        a_r, b_r, c_r = (ra << 23) | ma, (rb << 23) | mb, (rc << 23) | mc
        one = np.full(idx.shape, 0x3F800000, np.int64)
        P = _perturb_np
        if arity == 2:
            rel = rel & 3
            mult = _bits32_np(_f64_np(bw) * (1 + field(h3, 32, 10)).astype(np.float64))
            na = np.where(rel == 2, P(mult, p1) ^ flip, aw)
            nb = np.where(rel == 2, bw, np.where(rel == 3, P(one, p1), P(aw, p1)) ^ flip)
            nc = c_r
        else:
            cn = ((((rc >> 8) << 8) | (111 + field(h3, 42, 5))) << 23) | mc
            prod = _bits32_np(_f64_np(bw) * _f64_np(cn))
            quot = _bits32_np(_f64_np(bw) / _f64_np(cn))
            pa = P(aw, p1) ^ flip
            na = np.where(rel == 2, a_r, np.where(rel == 3, P(prod, p1) ^ flip, np.where(rel == 4, P(quot, p1) ^ flip, aw)))
            nb = np.where((rel == 0) | (rel == 7), pa, np.where((rel >= 2) & (rel <= 4), bw,
                                                                np.where(rel == 6, P(one, p1) ^ flip, b_r)))
            nc = np.where(rel == 1, pa, np.where(rel == 2, P(bw, p1) ^ flip,
                                                 np.where((rel == 3) | (rel == 4), cn,
                                                          np.where(rel == 5, P(one, p1) ^ flip,
                                                                   np.where(rel == 7, P(aw, p2) ^ flip2, c_r)))))
        e = np.maximum(j - GRID - NEAR, 0) % n_enum
        if arity == 2:
            both = e < NS * NS
            e2 = np.maximum(e - NS * NS, 0)
            p, s, wv = e2 // (NS * 512), (e2 % (NS * 512)) // 512, e2 % 512
            sa = np.where(both, _special_np(e // NS), np.where(p == 0, _special_np(s), (wv << 23) | ma))
            sb = np.where(both, _special_np(e % NS), np.where(p == 1, _special_np(s), (wv << 23) | mb))
            sc = c_r
        else:
            sa, sb, sc = _spec3_np(0, e, ma, ra), _spec3_np(1, e, mb, rb), _spec3_np(2, e, mc, rc)
        in_grid, in_near = j < GRID, j < GRID + NEAR
        out = [np.where(in_grid, g, np.where(in_near, nr, sp)) for g, nr, sp in ((ga, na, sa), (gb, nb, sb), (gc, nc, sc))]
    return [o.astype(np.uint32).view(np.float32) for o in out[:arity]]


def tuple_class(arity: int, indices) -> np.ndarray:
    """The class of each tuple index: 'grid', 'near' or 'special' (for notes and tests)."""
    j = np.asarray(indices, dtype=np.int64) % ROUND[arity]
    return np.where(j < GRID, "grid", np.where(j < GRID + NEAR, "near", "special"))
