"""Double-double arithmetic in float64 (a value as hi + lo, |lo| <= half an ulp of hi), for the few
elements whose float64 evaluation lands too close to a float32 rounding midpoint to decide it.

Every product's error comes from an fma (exact: libdevice's fma is DFMA on the GPU and rounds once
under the interpreter), every sum's from TwoSum (additions only); a product handed to TwoSum is
product_rn's, which the compiler cannot contract into the sum.
`log_dd` of a float32 value is good to ~2^-71 absolute over the float32 range.
"""
import mpmath
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


def _hi_lo(v) -> tuple:
    hi = float(v)
    return hi, float(v - mpmath.mpf(hi))


# pi/2 in three parts (to 2^-160), and the Taylor coefficients of sin(r)/r and cos(r) in z = r^2,
# (-1)^n/(2n+1)! and (-1)^n/(2n)!, n < 14, as hi, lo pairs (mpmath at 300 bits)
with mpmath.workprec(300):
    _PIO2 = mpmath.pi / 2
    PIO2_1 = tl.constexpr(float(_PIO2))
    PIO2_2 = tl.constexpr(float(_PIO2 - mpmath.mpf(PIO2_1.value)))
    PIO2_3 = tl.constexpr(float(_PIO2 - mpmath.mpf(PIO2_1.value) - mpmath.mpf(PIO2_2.value)))
    SIN_DD = tl.constexpr(tuple(c for n in range(14) for c in _hi_lo((-1) ** n / mpmath.factorial(2 * n + 1))))
    COS_DD = tl.constexpr(tuple(c for n in range(14) for c in _hi_lo((-1) ** n / mpmath.factorial(2 * n))))
TWO_OVER_PI = tl.constexpr(0.6366197723675814)
TRIG_TERMS = tl.constexpr(14)


@triton.jit
def two_sum(a, b):
    """a + b = s + e exactly (Knuth's TwoSum: additions only, so no contraction can touch it)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@triton.jit
def product_rn(a, b):
    """a*b rounded once, as a value the GPU compiler cannot fuse into a following addition
    (libdevice's mul_rn: PTX mul.rn is never contracted). With fp fusion on, a plain p = a*b that
    feeds p + c becomes fma(a, b, c), which skips the rounding TwoSum is handed: log_dd's
    k ln 2 came out with twice its residual on an H100 (2^-46 where 2^-71 holds), and leaky_relu's
    float16 ties misrounded (21 of 65,536 inputs)."""
    return libdevice.mul_rn(a, b)


@triton.jit
def two_prod(a, b):
    """a * b = p + e exactly (the fma's residual; p unfusable, product_rn)."""
    p = product_rn(a, b)
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
    r = product_rn(r, zh)                           # handed to TwoSum (add): unfused
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


@triton.jit
def _series(zh, zl, C: tl.constexpr, N: tl.constexpr):
    """C[0] + C[1] z + ... + C[N-1] z^(N-1) by Horner's rule in double-double (C: hi, lo pairs)."""
    ah = _const(zh, C[2 * N - 2])
    al = _const(zh, C[2 * N - 1])
    for i in tl.static_range(N - 2, -1, -1):
        ah, al = mul(ah, al, zh, zl)
        ah, al = add(_const(zh, C[2 * i]), _const(zh, C[2 * i + 1]), ah, al)
    return ah, al


@triton.jit
def sincos_dd(a):
    """(sin a hi, lo, cos a hi, lo) for a float64 |a| <= 3.2, to ~2^-100 absolute. r = a - k pi/2,
    k = rint(2a/pi) in [-2, 2] (k PIO2_1 and k PIO2_2 exact); the Taylor series of sin r and cos r
    on |r| <= pi/4 (14 terms each: the next is under 2^-107) in double-double; the quadrant k mod 4
    picks and signs them."""
    k = libdevice.rint(a * TWO_OVER_PI)
    rh, rl = two_sum(a, k * (-PIO2_1))
    rh, rl = add(rh, rl, k * (-PIO2_2), k * (-PIO2_3))
    zh, zl = mul(rh, rl, rh, rl)
    sh, sl = _series(zh, zl, SIN_DD, TRIG_TERMS)
    sh, sl = mul(sh, sl, rh, rl)
    ch, cl = _series(zh, zl, COS_DD, TRIG_TERMS)
    q = k.to(tl.int32) & 3                          # sin a: s, c, -s, -c; cos a: c, -s, -c, s
    odd = (q & 1) != 0
    sin_sign = tl.where(q >= 2, -1.0, 1.0)
    cos_sign = tl.where((q == 1) | (q == 2), -1.0, 1.0)
    return (tl.where(odd, ch, sh) * sin_sign, tl.where(odd, cl, sl) * sin_sign,
            tl.where(odd, sh, ch) * cos_sign, tl.where(odd, sl, cl) * cos_sign)
