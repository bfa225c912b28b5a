"""Binary math functions (C's <math.h>): fmod, fmax, fmin, atan2, hypot, copysign, pow."""
import triton
import triton.language as tl

from ..dtype import ALL, NUMERIC
from ..kernels import math as m
from ..kernels.fast32 import atan as fast_atan, pow as fast_pow
from ..promotion import is_scalar
from ..tensor import Tensor
from .arithmetic import int_division_fault
from .bitwise import plain_spec
from .registry import binary, by_compute, by_storage, run
from .verify import CR16, DIVISOR, EXPONENT, Verify



# ---------------------------------------------------------------- fmod, fmax, fmin, atan2, hypot, copysign
@triton.jit
def _fmod_float(a, b):
    return m.fmod(a, b)          # exact (C fmod): the sign of the dividend


@triton.jit
def _fmod_int(a, b):
    # 0 raises through the fault flag; -1 would trap on INT_MIN: both lanes divide by 1 instead
    d = tl.where((b == 0) | (b == -1), tl.full(b.shape, 1, b.dtype), b)
    r = a % d                    # Triton's integer % is C's (truncated) remainder on both backends
    return tl.where(b == -1, tl.zeros_like(r), r)


@triton.jit
def _fmax(a, b):
    if a.dtype.is_floating():
        return tl.where(a != a, b, tl.where(b != b, a, m.maximum_nan(a, b)))
    else:
        return tl.maximum(a, b)


@triton.jit
def _fmin(a, b):
    if a.dtype.is_floating():
        return tl.where(a != a, b, tl.where(b != b, a, m.minimum_nan(a, b)))
    else:
        return tl.minimum(a, b)


@triton.jit
def _atan2(a, b):
    return m.atan2(a, b, False)


@triton.jit
def _atan2_16(a, b):
    return m.atan2(a, b, True)


@triton.jit
def _two_to(n):
    """2^n as float64 for an int64 n in [-1022, 1023]: the exponent field alone."""
    return ((n + 1023) << 52).to(tl.float64, bitcast=True)


@triton.jit
def _hypot_impl(a, b, NARROW: tl.constexpr):
    # float32 and NARROW (float16/bfloat16 computed in float64): sqrt(a^2 + b^2) in float64 cannot
    # overflow, the squares are exact, and where the exact result is a rounding tie (a Pythagorean
    # a^2 + b^2 = M^2) the sum is exact and sqrt returns M exactly; elsewhere it is within 1 float64
    # ulp, so the one rounding to the result's format is correct except within that of a midpoint.
    # float64 (libdevice's hypot overflowed on the H200: hypot(DBL_MAX, 1) came back inf): both
    # operands scaled by 2^-k, k the larger one's exponent (two exact steps of at most 2^512), so the
    # squares neither overflow nor lose bits that matter; each square exact as hi + lo (fma), the
    # sum S + T to ~2^-104, r = sqrt(S) then one Newton step r + (S + T - r^2) / 2r with the residual
    # from an fma: within 0.5 + 2^-50 ulp of the true value before the exact scaling back (which
    # rounds again only for a subnormal result).
    x = tl.abs(a)
    y = tl.abs(b)
    if NARROW or a.dtype == tl.float32:
        wx = m.widen(x)
        wy = m.widen(y)
        r = m.sqrt(wx * wx + wy * wy).to(a.dtype)
    else:
        big = tl.maximum(x, y)
        e = (big.to(tl.int64, bitcast=True) >> 52) & 0x7FF
        k = tl.where(e == 0, -1022, tl.minimum(e, 2046) - 1023)
        k1 = k >> 1
        k2 = k - k1
        xs = x * _two_to(-k1) * _two_to(-k2)
        ys = y * _two_to(-k1) * _two_to(-k2)
        hx = m.product_rn(xs, xs)      # not xs * xs: fused into hx + hy it would break the TwoSum
        lx = m.fma(xs, xs, -hx)         # (1.06 ulp on an H100 at (-727.13, -0.000303) fused)
        hy = m.product_rn(ys, ys)
        ly = m.fma(ys, ys, -hy)
        s = hx + hy
        bb = s - hx
        t = ((hx - (s - bb)) + (hy - bb)) + (lx + ly)
        r0 = m.sqrt(s)
        d = m.fma(-r0, r0, s) + t
        r = tl.where(r0 == 0, r0, r0 + d / (2.0 * r0))
        r = r * _two_to(k1) * _two_to(k2)
        r = tl.where((x != x) | (y != y), x + y, r)
    inf = tl.full(x.shape, float("inf"), x.dtype)
    return tl.where((x == inf) | (y == inf), inf, r)


@triton.jit
def _hypot(a, b):
    return _hypot_impl(a, b, False)


@triton.jit
def _hypot_16(a, b):
    return _hypot_impl(a, b, True)


@triton.jit
def _copysign(a, b):
    return m.copysign(a, b)


binary("fmod", "P", NUMERIC, by_compute(_fmod_float, _fmod_int),
       "C fmod: the remainder with the sign of the dividend, exact. Integer division by zero raises "
       "ZeroDivisionError; INT_MIN fmod -1 is 0.", fault=int_division_fault,
       verify=Verify(roles={1: DIVISOR}, correctly_rounded=CR16))
binary("fmax", "P", ALL, _fmax, "Maximum ignoring NaN (NaN only when both are NaN); -0.0 < +0.0.",
       verify=Verify(correctly_rounded=CR16))
binary("fmin", "P", ALL, _fmin, "Minimum ignoring NaN (NaN only when both are NaN); -0.0 < +0.0.",
       verify=Verify(correctly_rounded=CR16))
binary("atan2", "F", ALL, by_storage(_atan2, _atan2_16), "atan2(input, other) with C's quadrant and signed-zero rules.",
       fast32=fast_atan.ATAN2,
       # float32: the tiny-ratio series and the double-double midpoint settling (math._atan2_settle):
       # 0 of 2^32 stratified tuples misrounded, none left out (H100)
       verify=Verify(correctly_rounded=CR16))
binary("hypot", "F", ALL, by_storage(_hypot, _hypot_16), "sqrt(input^2 + other^2) without overflow; an infinity wins over NaN (C).",
       verify=Verify(correctly_rounded=CR16))
binary("copysign", "F", ALL, _copysign, "|input| with the sign bit of other.", verify=Verify(correctly_rounded=CR16))


# ---------------------------------------------------------------- pow
# Small integer exponents by multiplication, chosen on the host: exp(b*log(a)) measured 15 ulp for
# x**2 in the seed. float32 (and float16/bfloat16, which compute in float32) multiplies in float64
# and returns a float64 value for the store's one rounding: x^2 is exact there, x^3 and x^4 of a
# 16-bit x too (at most 44 bits), 1/x and 1/x^2 are one rounded quotient of an exact value (53 >=
# 2p + 2: the store's rounding of it is correct), and a float32 x^3, x^4, 1/x^3, 1/x^4 carries its
# remainder rounded to odd (_power). float64 costs <= ~2 ulp. Integers multiply in their compute
# dtype and wrap, as ATen.
@triton.jit
def _lift(x):
    if x.dtype.is_floating():
        return m.widen(x)
    else:
        return x


@triton.jit
def _pow0(a, b):
    return tl.full(a.shape, 1, a.dtype)          # x**0 = 1 for every x, NaN included (C pow)


@triton.jit
def _pow1(a, b):
    return a


@triton.jit
def _pow2(a, b):
    w = _lift(a)
    return w * w


@triton.jit
def _power_parts(w, FOUR: tl.constexpr):
    """x^3 (or x^4) of a float64 w holding a float32 value as p + e: w^2 is exact (48 bits), p its
    product with w (or itself) rounded, e the fma's exact remainder."""
    s = w * w
    f = s if FOUR else w
    p = m.product_rn(s, f)
    return p, m.fma(s, f, p * -1.0)


@triton.jit
def _power(a, FOUR: tl.constexpr, INVERSE: tl.constexpr):
    """x^n, n = 3, 4, -3, -4. float32 computations: the exact power p + e (72 or 96 bits) as p with
    its remainder rounded to odd (math.with_residual), and 1/(p + e) as q = 1/p with the remainder
    (1 - q p - q e) q: the store rounds either once, correctly (x^3 rounded in float64 and again on
    the store is wrong within ~2^-29 ulp of a float32 midpoint). Else plain products (exact for
    16-bit values in float32; wrap-around for integers; float64 rounds each step)."""
    w = _lift(a)
    if a.dtype == tl.float32:
        p, e = _power_parts(w, FOUR)
        if INVERSE:
            q = 1.0 / p
            r = m.fma(q * -1.0, p, tl.full(p.shape, 1.0, tl.float64))
            # x = +-inf: q = +-0 and r = 0 * inf is NaN; q stands
            v = m.with_residual(q, tl.where(p - p == 0, (r - q * e) * q, 0.0))
        else:
            v = m.with_residual(p, e)
    else:
        s = w * w
        v = s * s if FOUR else s * w
        if INVERSE:
            v = 1.0 / v
    return v


@triton.jit
def _pow3(a, b):
    return _power(a, False, False)


@triton.jit
def _pow4(a, b):
    return _power(a, True, False)


@triton.jit
def _pow_m1(a, b):
    return 1.0 / _lift(a)


@triton.jit
def _pow_m2(a, b):
    w = _lift(a)
    return 1.0 / (w * w)


@triton.jit
def _pow_m3(a, b):
    return _power(a, False, True)


@triton.jit
def _pow_m4(a, b):
    return _power(a, True, True)


SMALL_EXPONENT_BODIES = {0: _pow0, 1: _pow1, 2: _pow2, 3: _pow3, 4: _pow4,
                         -1: _pow_m1, -2: _pow_m2, -3: _pow_m3, -4: _pow_m4}


@triton.jit
def _pow_float(a, b):
    return m.pow(a, b)           # libdevice's float64 pow: C pow at the specials


@triton.jit
def _pow_int(a, b):
    # exact with wrap-around: repeated squaring in the integer dtype, one step per exponent bit
    if a.dtype == tl.int64:
        STEPS: tl.constexpr = 63
    else:
        STEPS: tl.constexpr = 31
    result = tl.full(a.shape, 1, a.dtype)
    base = a
    e = b
    for _ in tl.static_range(STEPS):
        result = tl.where((e & 1) != 0, result * base, result)
        base = base * base
        e = e >> 1
    return result


@triton.jit
def _negative_exponent(a, b, c):
    return b < 0


def _negative_power_error(common, where):
    return ValueError(f"nbx.pow: an integer base to a negative integer power is not allowed ({where}; "
                      f"dtype {common.name}); use a float base")


def _pow_compose(spec, operands, params, out):
    base, exponent = operands
    common = spec.typing(operands, params).common
    if is_scalar(exponent) and isinstance(base, Tensor):
        # integral by exact int arithmetic: float() of an int past 2**1024 raises a bare
        # OverflowError (the launch below refuses that exponent, naming it)
        integral = isinstance(exponent, int) or exponent.is_integer()
        if integral and not common.is_float and exponent < 0:
            raise _negative_power_error(common, f"exponent={exponent!r}")
        if integral and int(exponent) in SMALL_EXPONENT_BODIES:
            # multiplication, not libdevice's pow: no fast path (the body is the cheap one)
            return run(plain_spec(spec, body=SMALL_EXPONENT_BODIES[int(exponent)], fast32=None), operands,
                       params, out=out)
    try:
        return run(plain_spec(spec), operands, params, out=out)
    except ZeroDivisionError:     # the fault flag: a negative integer exponent
        raise _negative_power_error(common, "argument 'exponent' has a negative element") from None


binary("pow", "P", NUMERIC, by_compute(_pow_float, _pow_int),
       "input ** exponent: tensor**scalar, scalar**tensor, tensor**tensor. A Python integer exponent with "
       "|n| <= 4 is exact multiplication (float32 in float64); other float cases are libdevice pow (C pow: "
       "0**0 = NaN**0 = 1**NaN = 1). Integers: exact with wrap-around; a negative integer exponent is a "
       "ValueError.", operand_names=("input", "exponent"), fault=_negative_exponent, compose=_pow_compose,
       fast32=fast_pow.POW,
       # libdevice's float64 pow settled at float32 midpoints in double-double (math._pow_settle), exact
       # powers exact: 0 of 2^32 stratified float32 tuples misrounded, none left out (H100)
       verify=Verify(correctly_rounded=CR16, roles={1: EXPONENT}))
