"""Binary arithmetic: add, sub, rsub, mul, div, floor_divide, remainder, maximum, minimum."""
import triton
import triton.language as tl

from ..dtype import ALL, NUMERIC, int8
from ..kernels import math as m
from ..kernels.fast32.divide import FLOOR_QUOTIENT, TRUNC_QUOTIENT
from .registry import Choices, Param, Select, binary, by_compute
from .verify import CR16, DIVISOR, BigCase, Variant, Verify, in_operand_dtype



# ---------------------------------------------------------------- bodies
@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _add_alpha(a, b, alpha):
    return m.fma(alpha, b, a)


@triton.jit
def _sub(a, b):
    return a - b


@triton.jit
def _negated(alpha):
    # Triton's unary minus is 0 - x, which makes -(+0.0) = +0.0: sub(-0.0, 1.0, alpha=0) came out +0.0
    # (ATen: -0.0 - 0*1 = -0.0). alpha * -1 is an exact negation of every float, zeros included.
    if alpha.dtype.is_floating():
        return alpha * -1.0
    else:
        return -alpha


@triton.jit
def _sub_alpha(a, b, alpha):
    return m.fma(_negated(alpha), b, a)


@triton.jit
def _rsub(a, b):
    return b - a


@triton.jit
def _rsub_alpha(a, b, alpha):
    return m.fma(_negated(alpha), a, b)


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def _true_div(a, b):
    return m.div(a, b)


@triton.jit
def _safe_divisor(b):
    # 0 raises (the fault flag) and -1 is handled apart (INT_MIN / -1 overflows in hardware and in C):
    # give those lanes divisor 1 so no lane traps or hits undefined behaviour.
    return tl.where((b == 0) | (b == -1), 1, b)


@triton.jit
def _int_div_trunc(a, b):
    q = a // _safe_divisor(b)                 # Triton's integer // truncates (LLVM sdiv) on both backends
    return tl.where(b == -1, 0 - a, q)        # INT_MIN // -1 wraps to INT_MIN, as documented


@triton.jit
def _int_floor_divide(a, b):
    d = _safe_divisor(b)
    q = a // d
    r = a - q * d
    q = tl.where((r != 0) & ((r < 0) != (d < 0)), q - 1, q)
    return tl.where(b == -1, 0 - a, q)


@triton.jit
def _int_remainder(a, b):
    d = _safe_divisor(b)
    r = a % d                                 # C remainder: sign of the dividend
    r = tl.where((r != 0) & ((r < 0) != (d < 0)), r + d, r)
    return tl.where(b == -1, 0, r)


@triton.jit
def _float_div_trunc_impl(a, b, mod):
    # trunc(a / b) of the ROUNDED quotient is wrong when a / b rounds up to an integer (2.9999999 ->
    # 3.0): measured 2^21 float32 ulp. a - fmod(a, b) is an exact multiple of b (ATen's floor_divide
    # uses the same), so (a - fmod(a, b)) / b is the truncated quotient up to its final rounding.
    q = m.div(a, b)
    t = m.rint(m.div(a - mod, b))
    res = tl.where(t != 0, t, m.copysign(tl.zeros_like(q), q))
    return tl.where((b == 0) | ((a - a) != 0), q, res)      # x/0 and inf/x: the quotient's inf/NaN


@triton.jit
def _float_floor_divide_impl(a, b, mod):
    # ATen's div_floor_floating: from fmod, not floor(a / b). The quotient a / b is rounded, and
    # floor of a rounded quotient can be one too high: 1.0 // 0.1 is 9 (0.1 is slightly more than
    # 1/10), while floor(1.0 / 0.1) = floor(10.0) = 10.
    div = m.div(a - mod, b)
    div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    fl = m.floor(div)
    fl = tl.where(div - fl > 0.5, fl + 1, fl)
    q = m.div(a, b)
    res = tl.where(div != 0, fl, m.copysign(tl.zeros_like(q), q))
    return tl.where(b == 0, q, res)


@triton.jit
def _float_remainder_impl(a, b, mod):
    # ATen: fmod plus a sign fix, never a - b * floor(a / b) (which loses the exact remainder).
    return tl.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


@triton.jit
def int_division_fault(a, b, c):
    return b == 0


@triton.jit
def _via_fmod(a, b, IMPL: tl.constexpr):
    # fmod is exact in any precision, so it runs in the operands' own (float64 fmod is a slow loop on
    # the GPU: floor_divide ran at 0.32 of copy with it). For float32 the rest runs in float64:
    # a - fmod(a, b) and the quotient of that exact multiple are then exact for every quotient below
    # 2^24, and one rounding to float32 follows.
    mod = m.fmod(a, b)
    if a.dtype == tl.float32:
        return IMPL(a.to(tl.float64), b.to(tl.float64), mod.to(tl.float64)).to(tl.float32)
    else:
        return IMPL(a, b, mod)


@triton.jit
def _float_div_trunc(a, b):
    return _via_fmod(a, b, _float_div_trunc_impl)


@triton.jit
def _float_floor_divide(a, b):
    return _via_fmod(a, b, _float_floor_divide_impl)


@triton.jit
def _float_remainder(a, b):
    return _via_fmod(a, b, _float_remainder_impl)


# ---------------------------------------------------------------- specs
def _with_alpha(plain, scaled):
    return Select(lambda params, t: plain if params["alpha"] == 1 else scaled)


def _alpha_params(params, t):
    return [] if params["alpha"] == 1 else [(params["alpha"], t.compute[0])]


def _check_alpha(spec, operands, params, t):
    a = params["alpha"]
    if isinstance(a, float) and not t.common.is_float:
        raise TypeError(f"nbx.{spec.name}: alpha={a!r} is a float but the operands are {t.common.name}; "
                        "for integral inputs alpha must be an integer (ATen)")


def _check_no_bool(spec, operands, params, t):
    if t.common.is_bool:
        raise TypeError(f"nbx.{spec.name}: bool operands are not supported (ATen refuses them too); "
                        "use logical_xor / logical ops")


_ALPHA = (Param("alpha", 1, doc="multiplier of the second operand"),)


def _check_add(spec, operands, params, t):
    _check_alpha(spec, operands, params, t)


def _check_sub(spec, operands, params, t):
    _check_no_bool(spec, operands, params, t)
    _check_alpha(spec, operands, params, t)


binary("add", "P", ALL, _with_alpha(_add, _add_alpha), "input + alpha * other.",
       params=_ALPHA, check=_check_add, kernel_params=_alpha_params,
       verify=Verify(variants=(in_operand_dtype(alpha=2),), correctly_rounded=CR16,
                     ci_rank8="binary with a scalar kernel parameter (alpha) and Python-scalar operands",
                     big=BigCase(int8, lambda a, s: a + a.dtype.type(s), (3,))))
binary("sub", "P", NUMERIC, _with_alpha(_sub, _sub_alpha), "input - alpha * other.",
       params=_ALPHA, check=_check_sub, kernel_params=_alpha_params,
       verify=Verify(variants=(in_operand_dtype(alpha=3),), correctly_rounded=CR16))
binary("rsub", "P", NUMERIC, _with_alpha(_rsub, _rsub_alpha), "other - alpha * input.",
       params=_ALPHA, check=_check_sub, kernel_params=_alpha_params,
       verify=Verify(variants=(in_operand_dtype(alpha=2),), correctly_rounded=CR16))
binary("mul", "P", ALL, _mul, "input * other.", verify=Verify(ci_rank8="binary, the plain two-operand kernel",
                                                              correctly_rounded=CR16))


def _check_div(spec, operands, params, t):
    if params["rounding_mode"] is not None:
        _check_no_bool(spec, operands, params, t)


# rounding_mode:           None           'trunc'                                    'floor'
binary("div", Choices("rounding_mode", {None: "F", "trunc": "P", "floor": "P"}), ALL,
       Choices("rounding_mode", {None: _true_div, "trunc": by_compute(_float_div_trunc, _int_div_trunc),
                                 "floor": by_compute(_float_floor_divide, _int_floor_divide)}),
       "input / other. rounding_mode=None: true division (integers give the default float); 'trunc': "
       "rounded toward zero; 'floor': floor division as floor_divide. Integer division by zero raises "
       "ZeroDivisionError.",
       params=(Param("rounding_mode", None, kind="choice", choices=(None, "trunc", "floor")),),
       check=_check_div, fault=int_division_fault,
       fast32=Choices("rounding_mode", {None: None, "trunc": TRUNC_QUOTIENT, "floor": FLOOR_QUOTIENT}),
       # the rounding modes refuse bool (_check_div)
       verify=Verify(variants=tuple(Variant({"rounding_mode": r}, NUMERIC) for r in ("trunc", "floor")),
                     roles={1: DIVISOR}, correctly_rounded=CR16))
binary("floor_divide", "P", NUMERIC, by_compute(_float_floor_divide, _int_floor_divide),
       "Floored division. Integers: exact at every magnitude; INT_MIN // -1 wraps to INT_MIN; a zero "
       "divisor raises ZeroDivisionError. Floats: Python's semantics from fmod (1.0 // 0.1 == 9.0); a "
       "zero result keeps the sign of input / other.",
       check=_check_no_bool, fault=int_division_fault, fast32=FLOOR_QUOTIENT,
       verify=Verify(roles={1: DIVISOR}, exact_float=True,
                     ci_rank8="binary with the fault flag (a zero divisor) and a float32 fast path",
                     # every float16 and bfloat16 operand pair, 0 misrounded, max 0.5 ulp (2^32 a
                     # dtype; the H200's exhaustive profile at 547c92e)
                     correctly_rounded=CR16))
binary("remainder", "P", NUMERIC, by_compute(_float_remainder, _int_remainder),
       "Python's %: the sign of the divisor. Floats via fmod plus a sign fix (ATen); a zero result keeps the "
       "dividend's sign (-0.0 % 3.0 is -0.0). Integer zero divisor raises ZeroDivisionError.",
       check=_check_no_bool, fault=int_division_fault,
       verify=Verify(roles={1: DIVISOR}, exact_float=True, correctly_rounded=CR16))
binary("maximum", "P", ALL, m.maximum_nan, "Element-wise maximum; NaN propagates; -0.0 < +0.0.", verify=Verify(correctly_rounded=CR16))
binary("minimum", "P", ALL, m.minimum_nan, "Element-wise minimum; NaN propagates; -0.0 < +0.0.", verify=Verify(correctly_rounded=CR16))

