"""libdevice under Triton's interpreter: each libdevice symbol answered by numpy.

Triton 3.6's interpreter raises on `extern_elementwise` (runtime/interpreter.py
`create_extern_elementwise`) and does not inject `_semantic` into the libdevice module. nbx installs
an implementation that maps the symbol (`__nv_expf`, `__nv_exp`, ...) to the numpy ufunc of the
same function, so the kernels in nbx/kernels/math.py are ONE source on both backends: on the GPU
they call NVIDIA's libdevice, here numpy's libm (float32 symbols run numpy's float32 loops, float64
symbols its float64 loops). Interpreter budgets therefore measure numpy's libm under nbx's
algorithms, never the GPU's.
"""
from __future__ import annotations

import math

import numpy as np
from triton.language.extra.cuda import libdevice
from triton.runtime import interpreter as _interp


def _elementwise(fn):
    ufunc = np.frompyfunc(fn, 1, 1)

    def apply(x):
        return ufunc(x.astype(np.float64)).astype(np.float64).astype(x.dtype)
    return apply


def _rsqrt(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1 / np.sqrt(x)).astype(x.dtype)


def _reciprocal(x):
    with np.errstate(divide="ignore"):
        return (1 / x).astype(x.dtype)


def _rcp64h(x):
    """rcp.approx.ftz.f64 (MUFU.RCP64H) keeps ~20 bits; so does this: 1/x with its low word cleared."""
    with np.errstate(divide="ignore"):
        r = (1 / x).astype(np.float64)
    return (r.view(np.int64) & ~np.int64(0xFFFFFFFF)).view(np.float64).astype(x.dtype)


def _cbrt(x):
    """cbrtl, rounded once: numpy's AVX2 cbrt (X86_V3 dispatch) is not correctly rounded in float64
    (cbrt(27) = 3.0000000000000004 on an x86-64 CPU with AVX2)."""
    return np.cbrt(x.astype(np.longdouble)).astype(x.dtype)


def _two_sum(a, b):
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


def _round_to_odd(s, err):
    """s rounded to odd, given s + err exact: the truncation of s + err with its last bit set."""
    bits = s.view(np.int64)
    inexact = (err != 0) & np.isfinite(s) & (s != 0)
    bits = np.where(inexact & ((err < 0) != (s < 0)), bits - 1, bits)   # toward zero: truncation
    return np.where(inexact, bits | 1, bits).view(s.dtype)


def _fma(a, b, c):
    """fma as the GPU computes it (FFMA, DFMA): a*b + c rounded once. float32: the product is exact
    in float64, the sum is rounded to odd, so the one rounding to float32 is correct (2 + 24 < 53
    bits). float64: Dekker's exact product p + e, then s + t = p + c (TwoSum) and s + RO(t + e):
    exact wherever the result is representable (fast32's two-fma reduction relies on that) and
    correctly rounded but for double roundings in corner cases (operands near the underflow
    threshold, a sum cancelling to below ulp(t))."""
    if a.dtype == np.float32:
        p = a.astype(np.float64) * b.astype(np.float64)
        s, err = _two_sum(p, np.asarray(c).astype(np.float64))
        return _round_to_odd(s, err).astype(np.float32)
    a, b, c = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, c)))
    if a.ndim != 1:
        return _fma(a.reshape(-1), b.reshape(-1), c.reshape(-1)).reshape(a.shape)
    # Dekker's split multiplies by 2^27 + 1: from 2^996 on that overflows. Such an operand is taken
    # at 2^-64 and c at the same scale as the product (a nonzero product is then >= 2^-79, so the
    # scaled sum stays normal and rounds as the unscaled one; c loses bits only below 2^-1010).
    with np.errstate(invalid="ignore"):
        finite_product = (a != 0) & (b != 0) & np.isfinite(a * 0) & np.isfinite(b * 0)
    ka, kb = ((np.abs(v) > 2.0 ** 995) & finite_product for v in (a, b))
    if np.any(ka | kb):
        scaled = ka | kb                  # these elements alone go round again (a pow tile has ~1 in 10^3)
        k = 64 * ka[scaled].astype(np.int64) + 64 * kb[scaled].astype(np.int64)
        out = np.empty_like(a)
        out[~scaled] = _fma(a[~scaled], b[~scaled], c[~scaled])
        out[scaled] = np.ldexp(_fma(np.ldexp(a[scaled], -64 * ka[scaled]), np.ldexp(b[scaled], -64 * kb[scaled]),
                                    np.ldexp(c[scaled], -k)), k)
        return out
    p = a * b
    split = lambda v: (lambda t: (t - (t - v), v - (t - (t - v))))(v * 134217729.0)
    (ah, al), (bh, bl) = split(a), split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl       # p + e = a b exactly
    s, t = _two_sum(p, c)
    w, f = _two_sum(t, e)
    out = s + _round_to_odd(w, f)
    # infinite operands or products, and exact zeros (a b = -c: p is exact and p + c carries IEEE's
    # sign of the zero sum), as the hardware gives them
    plain = ~(np.isfinite(p) & np.isfinite(e) & np.isfinite(c)) | (out == 0)
    out = np.where(plain, p + c, out)
    # a finite product beyond float64's range: the hardware adds it exactly, so an infinite c stays
    # c and a cancelling c brings the sum back in range. a and b taken at 2^-s each (exact: the
    # exponent of a 2^-s is at least (e_a - e_b + 1019)/2 >= -2) and c at 2^-2s put the product
    # below 2^1021 in one step; c loses bits only below 2^(2s - 1074) <= 2^-46, where the exact sum
    # (a multiple of 2^900 or more) has none.
    big = np.isinf(p) & np.isfinite(a) & np.isfinite(b)
    if np.any(big):
        ab, bb, cb = a[big], b[big], c[big]
        s = (np.frexp(ab)[1] + np.frexp(bb)[1] - 1019) // 2
        scaled = np.ldexp(_fma(np.ldexp(ab, -s), np.ldexp(bb, -s), np.ldexp(cb, -2 * s)), 2 * s)
        out[big] = np.where(np.isinf(cb), cb, scaled)
    return out


def _signbit(x):
    return np.signbit(x).astype(np.int32)


# libdevice name (without __nv_ and without the float32 suffix f) -> numpy implementation
SYMBOLS = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "exp10": lambda x: np.power(x.dtype.type(10), x),
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "sqrt": np.sqrt, "rsqrt": _rsqrt, "cbrt": _cbrt,
    "erf": _elementwise(math.erf), "erfc": _elementwise(math.erfc),
    "atan2": np.arctan2, "hypot": np.hypot, "pow": np.power, "fmod": np.fmod,
    "rint": np.rint, "nearbyint": np.rint, "trunc": np.trunc, "floor": np.floor, "ceil": np.ceil,
    "copysign": np.copysign, "fabs": np.abs, "fmax": np.fmax, "fmin": np.fmin,
    "fma": _fma, "dmul_rn": np.multiply, "fmul_rn": np.multiply, "fast_fdivide": lambda a, b: (a / b).astype(a.dtype), "signbit": _signbit, "drcp_rn": _reciprocal, "rcp64h": _rcp64h, "frcp_rn": _reciprocal,
}


def _lookup(symbol: str, args) -> callable:
    name = symbol.removeprefix("__nv_")
    if args and args[0].dtype == np.float32 and name.endswith("f") and name[:-1] in SYMBOLS:
        return SYMBOLS[name[:-1]]
    if name in SYMBOLS:
        return SYMBOLS[name]
    raise NotImplementedError(f"libdevice symbol {symbol} has no numpy implementation in nbx's interpreter table")


def _extern_elementwise(self, lib_name, lib_path, symbol, arg_list, ret_type, is_pure):
    args = [a.data for a in arg_list]
    with np.errstate(all="ignore"):
        out = _lookup(symbol, args)(*args)
    scalar = ret_type.scalar
    return _interp.TensorHandle(np.asarray(out).astype(_interp._get_np_dtype(scalar)), scalar)


def install() -> None:
    _interp.InterpreterBuilder.create_extern_elementwise = _extern_elementwise
    # the interpreter injects `_semantic` only into tl and tl.math; do the same for libdevice, for good
    _interp._patch_builtin(libdevice, _interp.interpreter_builder, _interp._LangPatchScope())
