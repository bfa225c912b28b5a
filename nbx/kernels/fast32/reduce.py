"""Range reduction by pi/2 for sin, cos and tan on |x| <= 2^19.

r = X - k pi/2 in float64 with pi/2 = C1 + C2 + C3: C1 and C2 have 33 significant bits, so k C1 and
k C2 are exact for k < 2^20, X - k C1 is exact (Sterbenz), and |pi/2 - C1 - C2 - C3| = 1e-37 leaves
an error of k 1e-37 + 2^-53 |r|. k is X 2/pi rounded to an integer by adding 1.5 * 2^52 (MAGIC):
the low bits of that sum are k's, and adding a shift to MAGIC (exact: MAGIC + 1 is representable)
moves the quadrant in the same addition, which is how cos shares sin's code.
"""
import triton
import triton.language as tl

from .poly import param

MAGIC = tl.constexpr(6755399441055744.0)          # 1.5 * 2^52: y + MAGIC - MAGIC rounds y to an integer
TWO_OVER_PI = 0.6366197723675814
PIO2_1 = 1.5707963267341256
PIO2_2 = 6.077100506303966e-11
PIO2_3 = 2.0222662487959506e-21
TRIG_MAX_BITS = tl.constexpr(0x49000000)          # 2^19 as float32 bits


def reduction_params(shift: int) -> tuple:
    """The reduction's kernel parameters, c[0] .. c[4]: 2/pi, MAGIC + shift (the quadrant's), C1,
    C2, C3. A body's own constants follow from c[5] on."""
    return (TWO_OVER_PI, MAGIC.value + shift, PIO2_1, PIO2_2, PIO2_3)


@triton.jit
def trig_outside(x):
    """|x| > 2^19, inf, NaN. Inside, sin and tan results are 0, normal, or (|x| < 2^-126) equal to
    x exactly in float64 (z r underflows below r's last bit), so a float32 rounds to itself; cos
    results are >= 2^-25."""
    return (x.to(tl.int32, bitcast=True) & 0x7FFFFFFF) > TRIG_MAX_BITS


@triton.jit
def reduce_pio2(x, c):
    """x float32, |x| <= 2^19 -> (r, k + shift): r = X - k pi/2 in float64 with |r| <= pi/4 (1 + 2^-30),
    the low bits of k + shift as int32 (the quadrant). c: reduction_params() and what follows."""
    X = x.to(tl.float64)
    magic = param(c[1])
    t = X * param(c[0]) + magic
    k = t - magic
    quadrant = t.to(tl.int64, bitcast=True).to(tl.int32)
    r = X - k * param(c[2])
    r = r - k * param(c[3])
    r = r - k * param(c[4])
    return r, quadrant
