"""Scalar math helpers the op bodies call: the exact paths. Precision decisions live here, with their reasons.

One source for both backends: calls go to libdevice, which on the GPU is NVIDIA's and under the
interpreter is numpy's (backend/interpreter_libdevice.py). Launches pass `enable_reflect_ftz=False`:
Triton links libdevice with flush-to-zero on by default, which returns zero for sin, tanh, erf and
sqrt of subnormal inputs on the H200.

float32 transcendentals are evaluated in float64 and rounded once. libdevice's float64 functions
are within ~1 float64 ulp, i.e. 2^-29 float32 ulp, so the float32 result is correctly rounded except
when the exact value lies within 2^-29 ulp of a rounding boundary. Ops whose float64 evaluation
costs more than the H200's bandwidth leaves (log, sin, cos, tan, rsqrt, erf, floor and trunc
division) carry a float32 fast path on their spec (OpSpec.fast32, kernels/fast32/): a short float64
evaluation under a rounding test, with these bodies for any tile the test cannot vouch for, so
results are the same bit for bit. tl.exp is `ex2.approx(x*log2e)`, 60 ulp: never used here.
"""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from . import double_double
from .double_double import product_rn, two_sum  # noqa: F401  (re-exported: m.product_rn, m.two_sum)
from .hard32 import near_midpoint


@triton.jit
def _wide(x):
    """float32 -> float64 for evaluation; float64 stays."""
    return x.to(tl.float64)


# ---------------------------------------------------------------- exact IEEE operations
@triton.jit
def div(a, b):
    # fp32 `/` in Triton is div.full.f32 (~2 ulp); div_rn is IEEE division. fp64 `/` is div.rn.f64.
    if a.dtype == tl.float32:
        return tl.div_rn(a, b)
    else:
        return a / b


@triton.jit
def sqrt(x):
    # tl.sqrt is sqrt.approx with subnormals flushed (1.7e7 ulp on the H200); sqrt_rn is IEEE.
    if x.dtype == tl.float32:
        return tl.sqrt_rn(x)
    else:
        return libdevice.sqrt(x)


@triton.jit
def reciprocal(x):
    return div(tl.full(x.shape, 1.0, x.dtype), x)


@triton.jit
def rsqrt(x):
    # float32: libdevice's float32 rsqrt returns inf on subnormal inputs (H200); 1/sqrt in float64 is
    # within an ulp, and its hard cases are settled from rsqrt's table (hard32.py) by the store
    if x.dtype == tl.float32:
        return rounded_later(1.0 / libdevice.sqrt(_wide(x)), x)
    else:
        return libdevice.rsqrt(x)


@triton.jit
def floor(x):
    return libdevice.floor(x)


@triton.jit
def ceil(x):
    return libdevice.ceil(x)


@triton.jit
def trunc(x):
    return libdevice.trunc(x)


@triton.jit
def rint(x):
    """Round half to even (IEEE roundToIntegralTiesToEven)."""
    return libdevice.rint(x)


@triton.jit
def fmod(a, b):
    return libdevice.fmod(a, b)


@triton.jit
def copysign(a, b):
    return libdevice.copysign(a, b)


@triton.jit
def is_nan(x):
    return x != x


@triton.jit
def signbit(x):
    """True for -0.0 and negative values (and NaNs with the sign bit), from the bits."""
    if x.dtype == tl.float64:
        return (x.to(tl.int64, bitcast=True) < 0)
    else:
        return (x.to(tl.int32, bitcast=True) < 0)


@triton.jit
def round_to_odd(s, e):
    """The float64 s moved to odd where the exact value is s + e with e != 0 (|e| below half an ulp
    of s; only e's sign is read): s itself where e == 0, else the odd one of s's two neighbours
    around the exact value. A value rounded to odd with q >= p + 2 bits rounds to nearest p-bit
    value exactly as the exact value does (ties and overflow included), so the store's one rounding
    to float32 (p = 24), float16 (11) or bfloat16 (8) is correct. Non-finite s stays."""
    bits = s.to(tl.int64, bitcast=True)
    inexact = (e != 0) & (s - s == 0)
    bits = tl.where(inexact & ((e > 0) != (s > 0)), bits - 1, bits)
    bits = tl.where(inexact, bits | 1, bits)
    return bits.to(tl.float64, bitcast=True)


@triton.jit
def _sum_round_to_odd(p, c):
    """p + c (float64, both exact) rounded to odd: TwoSum gives the exact error e of s = p + c."""
    s, e = two_sum(p, c)
    return round_to_odd(s, e)


@triton.jit
def with_residual(v, lo):
    """v + lo rounded to odd, for a result stored narrower than float64: v a float64 value that is
    exact where it could be a rounding tie of the storage format (x/2, y/x), lo the first term the
    float64 evaluation lost below v's last bit (x^2/4 of silu(x) = x/2 + x^2/4 - ...). Rounded to
    nearest, v + lo is v again, the tie, and ties-to-even picks the side lo does not point to half
    the time (bfloat16 subnormal x of silu, gelu, hardswish: 128 of 65,536 inputs each); rounded to
    odd it keeps lo's side through the store's one rounding. Zeros keep their sign (lo = 0), and
    infinities and NaN stay v. v must be exact or rounded on its own (product_rn), never a product
    the compiler can fuse into the sum."""
    return tl.where((lo == 0) | (v - v != 0), v, _sum_round_to_odd(v, lo))


@triton.jit
def fma(a, b, c):
    """a * b + c rounded once where it matters. float32 operands (float32, and float16/bfloat16
    computed in float32): the product of two float32 values is exact in float64 and the float64 sum
    is rounded to odd, returned as float64 for the store's one rounding to the result's format (a
    finite a + 2*b does not overflow through an infinite 2*b). Rounded to nearest in float32 first,
    the store to float16/bfloat16 rounded twice: sub with alpha=3, 285,637,548 bfloat16 and
    15,408,468 float16 pairs of 2^32 misrounded on the H200 (e.g. float16 -2^-10 - 3 * -21840).
    float64: libdevice's fma (DFMA on the GPU, emulated under the interpreter, where tl.fma computes
    x*y + z unfused: inf + 2 * -max would be NaN, not inf)."""
    if a.dtype == tl.float32:
        return _sum_round_to_odd(_wide(a) * _wide(b), _wide(c))
    elif a.dtype == tl.float64:
        return libdevice.fma(a, b, c)
    else:
        return a * b + c


# ---------------------------------------------------------------- transcendentals (float32 via float64)
@triton.jit
def rounded_later(y, x):
    """A float64 evaluation y at x: y itself for float32 x (float32, and float16/bfloat16 computed in
    float32), which the store rounds once, after the op's hard cases (hard32.settle); float64 x's
    value otherwise."""
    if x.dtype == tl.float32:
        return y
    else:
        return y.to(x.dtype)


@triton.jit
def exp(x):
    return rounded_later(libdevice.exp(_wide(x)), x)


@triton.jit
def exp2(x):
    return rounded_later(libdevice.exp2(_wide(x)), x)


@triton.jit
def expm1(x):
    return rounded_later(libdevice.expm1(_wide(x)), x)


@triton.jit
def log(x):
    return rounded_later(libdevice.log(_wide(x)), x)


@triton.jit
def log2(x):
    return rounded_later(libdevice.log2(_wide(x)), x)


@triton.jit
def log10(x):
    return rounded_later(libdevice.log10(_wide(x)), x)


@triton.jit
def log1p(x):
    return rounded_later(libdevice.log1p(_wide(x)), x)


@triton.jit
def sin(x):
    return rounded_later(libdevice.sin(_wide(x)), x)


@triton.jit
def cos(x):
    return rounded_later(libdevice.cos(_wide(x)), x)


@triton.jit
def tan(x):
    return rounded_later(libdevice.tan(_wide(x)), x)


@triton.jit
def sinh(x):
    return rounded_later(libdevice.sinh(_wide(x)), x)


@triton.jit
def cosh(x):
    return rounded_later(libdevice.cosh(_wide(x)), x)


@triton.jit
def tanh(x):
    return rounded_later(libdevice.tanh(_wide(x)), x)


@triton.jit
def asin(x):
    return rounded_later(libdevice.asin(_wide(x)), x)


@triton.jit
def acos(x):
    return rounded_later(libdevice.acos(_wide(x)), x)


@triton.jit
def atan(x):
    return rounded_later(libdevice.atan(_wide(x)), x)


@triton.jit
def asinh(x):
    return rounded_later(libdevice.asinh(_wide(x)), x)


@triton.jit
def acosh(x):
    return rounded_later(libdevice.acosh(_wide(x)), x)


@triton.jit
def atanh(x):
    return rounded_later(libdevice.atanh(_wide(x)), x)


@triton.jit
def cbrt(x):
    return rounded_later(libdevice.cbrt(_wide(x)), x)


@triton.jit
def erf(x):
    return rounded_later(libdevice.erf(_wide(x)), x)


@triton.jit
def erfc(x):
    return rounded_later(libdevice.erfc(_wide(x)), x)


@triton.jit
def atan2(y, x, NARROW: tl.constexpr):
    """atan2 in float64. For a result stored narrower than float64 (float32 operands, or NARROW:
    float16/bfloat16 computed in float64), x > 0 and 0 < |y/x| < 2^-20 take y/x - (y/x)^3/3 (the
    next term is 2^-80 of the first): where y/x is a rounding tie M of the narrow format it is exact
    in float64 (y = M x has at most 25 + 24 bits), and the cubic term, t^2/3 of it, is within a few
    float64 ulps of M up to t ~ 2^-25, where libdevice may return M itself; added rounded to odd
    (with_residual) it keeps the side the exact value lies on. From t = 2^-20 on the term is 2^-41.6
    of M, far beyond libdevice's error. Through float32 and without the term: float16 716,930 and
    bfloat16 26,078 of 2^32 pairs misrounded on the H200."""
    wy = _wide(y)
    wx = _wide(x)
    r = libdevice.atan2(wy, wx)
    if NARROW or y.dtype == tl.float32:
        q = wy / wx
        small = (wx > 0) & (tl.abs(q) < 2.0 ** -20) & (q != 0)
        r = tl.where(small, with_residual(q, q * q * q * (-1.0 / 3.0)), r)
    if y.dtype == tl.float32:
        r = _atan2_settle(wy, wx, r)
    return r.to(y.dtype)


# atan2's float64 value is settled against a float32 midpoint M within ATAN2_K of it by the sign of
# y cos M - x sin M = |(x, y)| sin(theta - M) (|theta - M| < pi), in double-double (sincos_dd:
# ~2^-100 absolute, ~2^-104 relative for small M; x and y exact): above ATAN2_EPS times the two
# products' magnitudes it decides (so a tiny angle, y cos M ~ x sin M, is judged on its own scale),
# below it the float64 value stands. Without it float32 atan2(0x109b1331, 0x8bd93d26) = pi/2 + 0.00137 misrounded, 1 of
# 2^32 stratified tuples on an H100.
ATAN2_K = tl.constexpr(8)
ATAN2_EPS = tl.constexpr(2.0 ** -95)


@triton.jit
def _float32_midpoint(r):
    """The float32 rounding midpoint in the float32 interval that holds the float64 r (r's sign): an
    odd multiple of half a float32 ulp at |r| (2^-150 below 2^-126)."""
    a = tl.abs(r)
    e = ((a.to(tl.int64, bitcast=True) >> 52) & 0x7FF) - 1023
    u = ((tl.maximum(e, -126) - 23 + 1023).to(tl.int64) << 52).to(tl.float64, bitcast=True)
    mid = (libdevice.floor(a / u) + 0.5) * u
    return tl.where(r < 0, mid * -1.0, mid)


@triton.jit
def _atan2_settle(wy, wx, r):
    """r moved off the float32 midpoint M nearest it, to the side of M the exact angle lies on, where
    r is within ATAN2_K float64 ulps of M and the double-double sign is clear."""
    near = near_midpoint(r, ATAN2_K) & (r - r == 0) & (r != 0) & (wx - wx == 0) & (wy - wy == 0)
    if tl.max(tl.ravel(near.to(tl.int32)), 0) > 0:
        mid = _float32_midpoint(tl.where(near, r, 1.0))
        sh, sl, ch, cl = double_double.sincos_dd(mid)
        ph, pl = double_double.two_prod(wy, ch)
        qh, ql = double_double.two_prod(wx, sh)
        dh, dl = double_double.add(ph, pl + wy * cl, qh * -1.0, (ql + wx * sl) * -1.0)
        eps = (tl.abs(ph) + tl.abs(qh)) * ATAN2_EPS                        # the products' own scale
        above = tl.where(dh > eps, 1, tl.where(dh < eps * -1.0, -1, 0))     # theta above M: +1
        step = tl.where(mid > 0, above, above * -1)                         # in M's bit pattern
        moved = (mid.to(tl.int64, bitcast=True) + step.to(tl.int64)).to(tl.float64, bitcast=True)
        r = tl.where(near & (above != 0), moved, r)
    return r


@triton.jit
def _exact_product(x, y, exact):
    """x*y in float64, and whether it and every product before it were exact (fma residual 0)."""
    p = x * y
    return p, exact & (libdevice.fma(x, y, p * -1.0) == 0)


@triton.jit
def _exact_power(a, b):
    """|a|^b where b = m / 2^k (k <= 3, 0 < |m| <= 64) and every step is exact: k exact square roots
    of |a| (sqrt is correctly rounded, so a perfect square's root is exact; checked by fma), then
    the root to the |m| by repeated squaring (each product checked), and 1/x for m < 0. Returns
    (value, exact); where exact is False the value is not used."""
    root = tl.abs(a)
    t = b
    found = b != b                            # all False
    value = root
    for k in tl.static_range(4):
        m = tl.abs(t)
        take = (~found) & (m == libdevice.floor(m)) & (m <= 64.0) & (m > 0)
        e = tl.where(take, m, 0.0).to(tl.int32)
        ok = take
        res = tl.full(root.shape, 1.0, tl.float64)
        base = root
        for _ in tl.static_range(7):
            prod, ok_prod = _exact_product(res, base, ok)
            res = tl.where((e & 1) != 0, prod, res)
            ok = tl.where((e & 1) != 0, ok_prod, ok)
            e = e >> 1
            sq, ok_sq = _exact_product(base, base, ok)
            base = sq
            ok = tl.where(e != 0, ok_sq, ok)
        inv = 1.0 / res
        ok = tl.where(t < 0, ok & (libdevice.fma(inv, res, tl.full(res.shape, -1.0, tl.float64)) == 0), ok)
        res = tl.where(t < 0, inv, res)
        value = tl.where(take & ok, res, value)
        found = found | (take & ok)
        if k < 3:
            r2 = libdevice.sqrt(root)
            root = tl.where(libdevice.fma(r2, r2, root * -1.0) == 0, r2, float("nan"))
            t = t * 2.0
    return value, found


# pow's float64 value (libdevice: 2 ulp in NVIDIA's table) is settled against a float32 midpoint
# within POW_K of it by the sign of b ln|a| - ln M, in double-double (log_dd: ~2^-71 absolute each,
# b ln|a| at most ~104 in magnitude for a float32 result that is neither 0 nor inf): |D| above
# POW_EPS decides; below it (f within ~2^-60 of M) the float64 value stands.
POW_K = tl.constexpr(8)
POW_EPS = tl.constexpr(2.0 ** -60)


@triton.jit
def _pow_settle(wa, wb, r):
    """r (libdevice's float64 a^b, or the exact power) moved off the float32 midpoint M nearest it,
    to M's side the exact value lies on, where r is within POW_K float64 ulps of M: the sign of
    D = b ln|a| - ln M decides (|a^b| > M iff D > 0)."""
    near = near_midpoint(r, POW_K) & (r - r == 0) & (r != 0) & (wa != 0) & (wa - wa == 0)
    if tl.max(tl.ravel(near.to(tl.int32)), 0) > 0:
        mid = _float32_midpoint(tl.abs(r))                # M: the midpoint nearest |r|
        ah, al = double_double.log_dd(tl.where(near, tl.abs(wa), 1.0))
        ph, pl = double_double.two_prod(wb, ah)
        mh, ml = double_double.log_dd(tl.where(near, mid, 1.0))
        dh, dl = double_double.add(ph, pl + wb * al, -mh, -ml)
        side = tl.where(dh > POW_EPS, 1, tl.where(dh < -POW_EPS, -1, 0))
        bits = mid.to(tl.int64, bitcast=True) + side.to(tl.int64)
        moved = bits.to(tl.float64, bitcast=True)
        r = tl.where(near & (side != 0), tl.where(r < 0, -moved, moved), r)
    return r


@triton.jit
def pow(a, b):
    """libdevice's float64 pow. float32 operands (float32, float16 and bfloat16 computations) get the
    float64 value, for the store's one rounding to the result's format; where a^b is exact in
    float64 by k <= 3 square roots and a power |m| <= 64 (b = m/2^k), that exact value: libdevice's
    pow is not exact there on the GPU (pow(0.095703125, 2) = 2401/2^18, a float16 midpoint, came
    back above it; 9 float16 and 46 bfloat16 of 2^32 pairs misrounded on an H100), and an exact
    rounding tie of the result's format can only be such a value (b is dyadic; a^(m/2^k) rational
    needs a = c^(2^k), so every root along the way is exact)."""
    wa = _wide(a)
    wb = _wide(b)
    r = libdevice.pow(wa, wb)
    if a.dtype == tl.float32:
        # the exact path (4 x 14 checked float64 products, 4 divisions, 3 square roots) only for a
        # block holding some b = m/2^k, |b| <= 64: without this branch every element paid it, and
        # float32 pow ran at 0.06 of a device copy on an H100 (reports/h100/bandwidth-20261205.txt)
        b8 = wb * 8.0
        maybe = (b8 == libdevice.floor(b8)) & (tl.abs(wb) <= 64.0)
        if tl.max(tl.ravel(maybe.to(tl.int32)), 0) > 0:
            v, exact = _exact_power(wa, wb)
            odd = (wb == libdevice.floor(wb)) & (libdevice.fmod(tl.abs(wb), tl.full(wb.shape, 2.0, tl.float64)) == 1.0)
            v = tl.where((wa < 0) & odd, v * -1.0, v)
            # a negative a only with an integer b (k = 0); zeros, infinities and NaN stay libdevice's
            use = exact & (wa - wa == 0) & (wa != 0) & ((wa > 0) | (wb == libdevice.floor(wb))) & (r - r == 0) & (r != 0)
            r = tl.where(use, v, r)
            # an exact power is its own value: a midpoint there is a tie, never settled
            r = tl.where(use, r, _pow_settle(wa, wb, r))
        else:
            r = _pow_settle(wa, wb, r)
    return r


# ---------------------------------------------------------------- conversions
@triton.jit
def _f32_round_to_odd(x):
    """float64 -> float32 rounded to odd: the nearest-even result, moved to the odd neighbour toward
    zero when inexact. Rounding that to bfloat16 (8 bits <= 24 - 2) is then a single correct
    rounding; the direct float64->float32->bfloat16 path rounds twice."""
    r = x.to(tl.float32)
    back = r.to(tl.float64)
    bits = r.to(tl.uint32, bitcast=True)
    over = tl.abs(back) > tl.abs(x)            # nearest went away from zero: step back toward zero
    bits = tl.where(over & (x == x), bits - 1, bits)
    inexact = (back != x) & (x == x)
    bits = tl.where(inexact, bits | 1, bits)
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def to_float16(x):
    """Round float32/float64 to float16, nearest even, once: float64 goes to float32 rounded to odd
    (24 bits >= 11 + 2), then to float16 rounded to nearest (cvt.rn.f16.f32 on the GPU, numpy under
    the interpreter), which is then the correct rounding of the float64 value; no backend's
    float64 -> float16 conversion is relied on."""
    if x.dtype == tl.float64:
        return _f32_round_to_odd(x).to(tl.float16)
    else:
        return x.to(tl.float16)


@triton.jit
def to_bfloat16(x):
    """Round float32/float64 to bfloat16, nearest even, with integer bit operations.

    The interpreter's float32->bfloat16 `.to()` truncates (seen on Triton 3.9: 49% of exp results one
    bf16 ulp off); the GPU rounds to nearest even. This helper is what both backends run.
    """
    if x.dtype == tl.float64:
        f = _f32_round_to_odd(x)
    else:
        f = x.to(tl.float32)
    bits = f.to(tl.uint32, bitcast=True)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16       # carries into the exponent: overflow -> inf
    quiet_nan = (bits >> 16) | 0x0040
    out = tl.where(f != f, quiet_nan, rounded)
    return out.to(tl.uint16).to(tl.bfloat16, bitcast=True)


@triton.jit
def load_as(x, DST: tl.constexpr):
    """Convert a loaded operand to its compute dtype. bfloat16 widens through its bits (a float32 is
    the bfloat16 bits shifted up by 16, exactly): Triton 3.6's interpreter converts bfloat16 subnormals
    to float32 wrongly (9.18e-41 -> 0, 1.157e-38 -> 1.139e-38, 2.755e-40 -> 5.877e-39, seen in
    tests/test_ops_values.py add-bfloat16); the GPU's cvt is exact, and the shift is exact on both."""
    if x.dtype == tl.bfloat16:
        f = (x.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)
        return f.to(DST)
    else:
        return x.to(DST)


@triton.jit
def cast(x, DST: tl.constexpr):
    """Convert a computed value to the output dtype, the same way on both backends.

    floats -> float16 and bfloat16: nbx's rounding helpers, one rounding from float64 (a body that
    computes a 16-bit result in float64 returns the float64 value and this is its only rounding).
    float -> integer: truncate toward zero, saturate at the
    integer range, NaN -> 0 (nbx's definition; ATen leaves it undefined). anything -> bool: x != 0.
    """
    if DST == tl.int1:
        return x != 0
    elif DST == tl.float16 and x.dtype == tl.float64:
        return to_float16(x)
    elif DST == tl.bfloat16:
        if x.dtype.is_floating():
            return to_bfloat16(x)
        else:
            return to_bfloat16(x.to(tl.float64))
    elif DST.is_int() and x.dtype.is_floating():
        return _float_to_int(x, DST)
    else:
        return x.to(DST)


@triton.jit
def _float_to_int(x, DST: tl.constexpr):
    # Bounds are powers of two, exact in float64: t < HI means t <= the integer maximum.
    if DST == tl.uint8:
        LO: tl.constexpr = 0.0
        HI: tl.constexpr = 256.0
        MN: tl.constexpr = 0
        MX: tl.constexpr = 255
    elif DST == tl.int8:
        LO: tl.constexpr = -128.0
        HI: tl.constexpr = 128.0
        MN: tl.constexpr = -128
        MX: tl.constexpr = 127
    elif DST == tl.int16:
        LO: tl.constexpr = -32768.0
        HI: tl.constexpr = 32768.0
        MN: tl.constexpr = -32768
        MX: tl.constexpr = 32767
    elif DST == tl.int32:
        LO: tl.constexpr = -2147483648.0
        HI: tl.constexpr = 2147483648.0
        MN: tl.constexpr = -2147483648
        MX: tl.constexpr = 2147483647
    else:
        LO: tl.constexpr = -9223372036854775808.0
        HI: tl.constexpr = 9223372036854775808.0
        MN: tl.constexpr = -9223372036854775807 - 1
        MX: tl.constexpr = 9223372036854775807
    t = libdevice.trunc(x.to(tl.float64))
    inside = (t >= LO) & (t < HI)
    v = tl.where(inside, t, 0.0).to(DST)
    v = tl.where(t >= HI, tl.full(t.shape, MX, DST), v)
    v = tl.where(t < LO, tl.full(t.shape, MN, DST), v)
    return tl.where(t != t, tl.full(t.shape, 0, DST), v)


# ---------------------------------------------------------------- helpers for whole formulas in float64
@triton.jit
def widen(x):
    """float32 -> float64, float64 stays: an activation or ternary formula evaluated whole in
    float64 and rounded once to float32 is correctly rounded except within ~2^-29 ulp of a rounding
    boundary (the same argument as the transcendentals above)."""
    return x.to(tl.float64)


@triton.jit
def maximum_nan(a, b):
    """max with NaN propagating and -0 < +0 (IEEE maximum); integers: plain max."""
    if a.dtype.is_floating():
        r = tl.where(a > b, a, b)
        r = tl.where(a == b, tl.where(signbit(a), b, a), r)
        return tl.where(a != a, a, tl.where(b != b, b, r))
    else:
        return tl.maximum(a, b)


@triton.jit
def minimum_nan(a, b):
    """min with NaN propagating and -0 < +0 (IEEE minimum); integers: plain min."""
    if a.dtype.is_floating():
        r = tl.where(a < b, a, b)
        r = tl.where(a == b, tl.where(signbit(a), a, b), r)
        return tl.where(a != a, a, tl.where(b != b, b, r))
    else:
        return tl.minimum(a, b)


@triton.jit
def softplus_stable(u):
    """log(1 + exp(u)) = max(u, 0) + log1p(exp(-|u|)): exp never overflows, and log1p keeps the
    small correction at large |u| (log(1 + e) would round it away). NaN propagates."""
    pos = tl.where(u > 0, u, tl.zeros_like(u))
    return pos + log1p(exp(-tl.abs(u)))


@triton.jit
def sigmoid_stable(x):
    """1/(1+exp(-x)) in two branches on e = exp(-|x|) <= 1: no overflow at either end, and for
    x << 0 the result e/(1+e) keeps its relative accuracy down to the underflow."""
    e = exp(-tl.abs(x))
    return tl.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
