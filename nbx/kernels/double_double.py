"""Double-double arithmetic in float64 (a value as hi + lo, |lo| <= half an ulp of hi), for the few
elements whose float64 evaluation lands too close to a float32 rounding midpoint to decide it.

Every product's error comes from an fma (exact: libdevice's fma is DFMA on the GPU and rounds once
under the interpreter), every sum's from TwoSum (additions only, which no contraction can touch).
`log_dd` of a float32 value is good to ~2^-71 absolute over the float32 range.
"""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

# ln 2 and the series' constants 1/3, 1/5, 1/7 as hi + lo (mpmath at 300 bits)
LN2_HI = tl.constexpr(0.6931471805599453)
LN2_LO = tl.constexpr(2.3190468138462996e-17)
THIRD_HI = tl.constexpr(0.3333333333333333)
THIRD_LO = tl.constexpr(1.850371707708594e-17)
FIFTH_HI = tl.constexpr(0.2)
FIFTH_LO = tl.constexpr(-1.1102230246251566e-17)
SEVENTH_HI = tl.constexpr(0.14285714285714285)
SEVENTH_LO = tl.constexpr(7.93016446160826e-18)
SQRT2 = tl.constexpr(1.4142135623730951)


@triton.jit
def two_sum(a, b):
    """a + b = s + e exactly (Knuth's TwoSum: additions only, so no contraction can touch it)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@triton.jit
def two_prod(a, b):
    """a * b = p + e exactly (the fma's residual)."""
    p = a * b
    return p, libdevice.fma(a, b, -p)


@triton.jit
def add(ah, al, bh, bl):
    """(ah + al) + (bh + bl), renormalized."""
    s, e = two_sum(ah, bh)
    return two_sum(s, e + (al + bl))


@triton.jit
def mul(ah, al, bh, bl):
    """(ah + al) * (bh + bl) to ~2^-104 relative, renormalized."""
    p, e = two_prod(ah, bh)
    return two_sum(p, e + (ah * bl + al * bh))


@triton.jit
def _const(like, v):
    return tl.full(like.shape, v, tl.float64)


@triton.jit
def log_dd(x):
    """ln x as hi + lo for a positive finite float64 x holding a float32 value (24 bits). x = 2^k m
    with m in [sqrt(1/2), sqrt(2)); ln m = 2s (1 + s^2/3 + s^4/5 + ...), s = (m - 1)/(m + 1) and
    |s| <= 0.1716, z = s^2 <= 0.0295: the terms 1/3, 1/5, 1/7 in double-double, the rest
    T = 1/9 + z/11 + ... + z^12/33 (~0.115; the next term is under 2^-64) in float64 to ~2^-55,
    entering after z^3 <= 2^-15.2 and 2s <= 0.34: ln m to ~2^-71; k ln 2 adds at most 2^-98."""
    bits = x.to(tl.int64, bitcast=True)
    k = ((bits >> 52) & 0x7FF) - 1023                 # a float32 value is normal in float64
    m = ((bits & 0xFFFFFFFFFFFFF) | (1023 << 52)).to(tl.float64, bitcast=True)
    big = m >= SQRT2
    m = tl.where(big, m * 0.5, m)
    k = tl.where(big, k + 1, k)
    num = m - 1.0                                  # exact: m has 24 bits and lies in [0.7, 1.5)
    den = m + 1.0                                  # exact
    sh = num / den
    sl = libdevice.fma(-sh, den, num) / den
    zh, zl = mul(sh, sl, sh, sl)
    r = _const(zh, 1.0 / 33.0)
    for c in tl.static_range(31, 7, -2):           # 1/9 + z/11 + ... + z^12/33, Horner in float64
        r = r * zh + 1.0 / c
    r = r * zh
    qh, ql = add(_const(zh, SEVENTH_HI), _const(zh, SEVENTH_LO), r, r * 0.0)
    qh, ql = mul(qh, ql, zh, zl)
    qh, ql = add(_const(zh, FIFTH_HI), _const(zh, FIFTH_LO), qh, ql)
    qh, ql = mul(qh, ql, zh, zl)
    qh, ql = add(_const(zh, THIRD_HI), _const(zh, THIRD_LO), qh, ql)
    qh, ql = mul(qh, ql, zh, zl)                   # Q = z/3 + z^2/5 + ...
    th, tlo = mul(sh, sl, qh, ql)                  # s Q
    lh, ll = add(sh, sl, th, tlo)                  # s (1 + Q)
    lh, ll = lh * 2.0, ll * 2.0                    # ln m
    kf = k.to(tl.float64)
    ph, pl = two_prod(kf, _const(kf, LN2_HI))
    return add(ph, pl + kf * LN2_LO, lh, ll)
