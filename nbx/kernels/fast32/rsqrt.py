"""rsqrt of float32 x: libdevice's float64 rsqrt (MUFU.RSQ64H and Newton steps, within 1 float64
ulp) in place of a square root and a correctly rounded division. Subnormal float32 inputs are
normal in float64, so the domain is every positive finite x, where 1/sqrt(x) is in [2^-64, 2^75]."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from ..fastpath import FastPath
from .keys import HARD_K


@triton.jit
def rsqrt(x):
    """x float32 -> (float64 1/sqrt(x), x outside: x <= 0 (and -0), -NaN, inf, +NaN)."""
    bits = x.to(tl.int32, bitcast=True)
    outside = (bits - 1).to(tl.uint32, bitcast=True) >= 0x7F7FFFFF
    return libdevice.rsqrt(x.to(tl.float64)), outside


@triton.jit
def rsqrt64(w):
    return 1.0 / libdevice.sqrt(w)


RSQRT = FastPath(rsqrt, k=HARD_K, reference=rsqrt64)
