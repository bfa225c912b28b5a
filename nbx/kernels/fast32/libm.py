"""A fast path whose evaluation is libdevice's float64 function itself: atan2.

Its exact body (kernels/math.py) settles a value near a float32 midpoint in double-double
(_atan2_settle). That code is rare work but its registers are every element's when it is inline:
float32 atan2 ran at 0.36 of copy on an H100 with the settling inline, against 0.57 without it. As
a fast path, the plain libdevice value goes through the rounding test, and only a tile that holds an
element near a midpoint (or outside the test's range) runs the exact body, deferred and in pieces
(docs/PRECISION.md, section 11).

The window: libdevice's atan2 is within 2 float64 ulps (NVIDIA's table), so K = 64 (E = 2^-47)
holds with room 32; where libdevice is exact, so is y. Subnormal values are judged
(keys.subnormal_hard) and NaN falls back; 0 and inf are libdevice's exact special values or lie
beyond float32's range by far (atan2 of float32 values above 2^-277), which the exact body gives
too. atan2's values for x > 0 and |y/x| < 2^-20 are the series' (math.atan2), within 2^-52 as well.
"""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from ..fastpath import FastPath
from .keys import subnormal_hard

LIBM_K = tl.constexpr(64)


@triton.jit
def atan2(a, b):
    """a, b float32 (y, x) -> (libdevice's float64 atan2(y, x), hard: NaN, subnormal near a boundary)."""
    r = libdevice.atan2(a.to(tl.float64), b.to(tl.float64))
    return r, subnormal_hard(r, LIBM_K)


ATAN2 = FastPath(atan2, k=LIBM_K.value)
