"""float32 fast paths: short float64 evaluations with a rounding test, libdevice where the test fails.

Why: a float32 transcendental evaluated by libdevice's float64 function and rounded once is
correctly rounded (math.py), but costs float64 throughput the H200 does not have at copy bandwidth:
log ran at 0.61 of a device copy, sin/cos 0.68, tan 0.57 (bench/elementwise.py, 2026-12-02). The
H200 issues ~1/2 as many FP64 as FP32 operations; at 4.25 TB/s a unary float32 op moves 531e9
elements/s, which leaves ~30 float64 operations per element. libdevice's float64 functions aim at
2^-52 and spend more.

How: each function evaluates in float64 with a relative error below ~2^-50 (a few polynomial
terms: nbx/kernels/fit_fast32.py fits them), then asks whether the float64 value y can round to a
different float32 than the exact value would. The exact value lies within E|y| of y (E = 2^-45,
>= 16x the worst error measured over every float32 input on the H200, bench/fast32_exhaustive.py;
erf's E = 2^-40 is 2.0x its worst),
i.e. within K = E * 2^53 = 256 float64 ulps. y rounds wrongly only if a float32 rounding midpoint
(low 29 mantissa bits of y equal to 2^28) lies in that window, so an element is hard when
    |low29(y) - 2^28| <= K   or   x is outside the fast path's domain (NaN, inf, huge trig
                                  arguments, log or rsqrt of x <= 0 ...)
(each domain keeps y at zero or inside float32's normal range, where that test is the whole story).
A tile with any hard element is recomputed whole by the libdevice float64 path: the launcher
stores the fast values, takes one min over the tile's keys (hard_key; a CTA-wide reduction, so the
branch on it is uniform) and runs the exact body over a flagged tile in pieces of 128 elements
(launch.py, deferred exact paths; math.defer names each pair). A random element is hard with
probability 2K/2^29 = 2^-20, so a 1024-element tile falls back ~1 time in 1000; the result is the
libdevice path's bit for bit wherever the fast value is not provably the same. The key is one LEA
(_midpoint_key) and the launcher compares the tile's least key with key_hard(K), a constexpr of the
kernel (HARD_KEY), so each body may take its own K (math.defer k=): log, sin, cos, tan and rsqrt, at
2^-50 or better, take HARD_K = 256 (E = 2^-45; 2^-46 until the fifth session of 2026-12-03); erf's
7/8 rational, at 2^-41.01 over every float32 input, takes ERF_K = 8192 (E = 2^-40), which flags ~1
in 16 of its 2048-element tiles; a flagged erf tile recomputes only the pieces that hold a hard
element (math.defer pieces=, flat.piece_mask).

log reads a table (launch.py passes it: math.defer table=): -log(k/128) for the k nearest 128/z,
which leaves 9 float64 operations per element where its division form took 20. erf is one rational
of degrees 7/8 (2^-41.01 measured over every float32 input), 21 float64 operations. The
polynomials' coefficients of erf, sin, cos and tan reach the kernel as parameters (math.defer
table=, *_PARAMS): one ULDC each where an immediate takes two UMOVs. Across the bodies, the
instructions per element before the tile's reduction (bench/sass_mix.py) set the bandwidth on the
H200 more than anything else: ~0.61 issued per sub-partition and clock at copy bandwidth x the
fraction reached, in every run of the fifth session of 2026-12-03. On the H200 (2026-12-03) float64
operations per element set the bandwidth more than registers did: log 0.89 -> 0.93-0.96 of copy
from its table, erf 0.72 -> 0.80 and tan 0.87 -> 0.91 from a 4-operation division (_quotient),
tan at 56 registers against 40.

The interpreter runs the same code with numpy. tl.fma is unfused there, and the polynomial errors
stay far below E either way; where exactness needs one rounding (log's r, tan's reduction) the code
calls libdevice.fma, which the interpreter rounds once as FFMA and DFMA do
(backend/interpreter_libdevice.py).
"""
import mpmath
import numpy as np
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

# rounding test: the float64 error bound, in float64 ulps of y (E = 2^-45, K = E * 2^53; erf: ERF_K), and the keys:
# int32, <= KEY_HARD exactly where an element needs the exact path, KEY_OUTSIDE (the least) outside
HARD_K = tl.constexpr(256)
KEY_HARD = tl.constexpr(16 * 256 - 2 ** 31)


def key_hard(K) -> int:
    """The keys' threshold for a window of K float64 ulps: a tile needs the exact path iff its
    least key is <= key_hard(K) (_midpoint_key). KEY_HARD = key_hard(HARD_K)."""
    return 16 * int(K) - 2 ** 31


KEY_OUTSIDE = tl.constexpr(-2 ** 31)
_MAGIC = tl.constexpr(6755399441055744.0)      # 1.5 * 2^52: y + MAGIC - MAGIC rounds y to an integer

# coefficients from nbx/kernels/fit_fast32.py (near-minimax, printed error of the rounded coefficients)
# log1p(r) = r + r^2 P(r), |r| <= sqrt(2) 0.54/128 = 2^-7.4: relative error 2^-51.8 (fit_fast32)
LOG1P_P = tl.constexpr((-0.5000000000000008, 0.33333333325535164, -0.24999999983030136, 0.2000070803547814,
                        -0.16667524483241794))
# -log(k/128) rounded to float64 (mpmath, 40 digits) for the k log_table_fast picks from z in
# [sqrt(1/2), sqrt(2)): k in [91, 181], the table one wider each side
LOG_K0 = tl.constexpr(90)
with mpmath.workdps(40):
    LOG_TABLE = np.array([float(-mpmath.log(mpmath.mpf(k) / 128)) for k in range(LOG_K0.value, 183)],
                         dtype=np.float64)
# 1/z on [sqrt(1/2), sqrt(2)] to within 0.04/128 in float32 (near-minimax, degree 4; fit_fast32
# LOG_RCP): k/128 = the value rounded to a multiple of 2^-7, |k - 128/z| <= 0.54, |r| <= 2^-7.4
LOG_RCP = tl.constexpr((5.0605958802348345, -10.0898113093196, 9.907761949710892, -4.792901793646995,
                        0.9142036688185632))
_MAGIC_K = tl.constexpr(98304.0)               # 1.5 * 2^16, ulp 2^-7: v + MAGIC_K - MAGIC_K rounds v to k/128
_MAGIC32 = tl.constexpr(12582912.0)            # 1.5 * 2^23: v + MAGIC32 - MAGIC32 rounds float32 v to an integer
# sin(r) = r + r z S(z), |r| <= pi/4: 2^-57.3
SIN_S = tl.constexpr((-0.16666666666666632, 0.008333333333322418, -0.00019841269829811947,
                       2.7557313693443065e-06, -2.5050758366392856e-08, 1.5896810857168664e-10))
# tan(r) = r P(z) / Q(z), |r| <= pi/4: degrees 3/3 in z (fit_fast32.fit_rational, near-minimax in
# relative error), 2^-54.2. Lambert's continued fraction at depth 9 (degrees 4/4, 2^-60) cost two
# more float64 operations per element. P and Q lie in [0.92, 1] and [0.72, 1]: their Horner sums
# do not cancel
TAN_P = tl.constexpr((1.0, -0.12828347787438954, 0.0028059190726387726, -7.48364300472418e-06))
TAN_Q = tl.constexpr((1.0, -0.46161681120772, 0.023344856141809193, -0.00020844816352972708))
# erf(x) = x P(t) / Q(t), t = x^2 <= ERF_CLAMP^2 = 15.38: degrees 7/8 (fit_fast32.fit_rational:
# near-minimax in relative error, 2^-41.01 for the rounded coefficients, and 2^-41.01 over every
# float32 input on the H200; 8/9 reached 2^-45.74 with two float64 operations more). Every
# coefficient is positive, so neither Horner sum cancels (condition 1). Its rounding test takes its
# own window, ERF_K = 8192 float64 ulps (E = 2^-40, 2.0x the worst error), which flags ~1 in 16 of
# its 2048-element tiles; the launcher recomputes only the flagged pieces (math.defer pieces=).
ERF_CLAMP = tl.constexpr(3.921875)             # 251/64: erf rounds to 1.0f from 3.9192 on
ERF_K = tl.constexpr(8192)
ERF_P = tl.constexpr((1.1283791670960068, 0.2001500139574455, 0.059388847856642404, 0.005169953346363526,
                      0.0005769250080985031, 2.6475662210760138e-05, 1.2609976568747274e-06,
                      1.2490369723372167e-08))
ERF_Q = tl.constexpr((1.0, 0.5107116648593575, 0.12286921738415932, 0.018276516097031473,
                      0.0018467063010675464, 0.00013001117287899156, 6.162569330981939e-06,
                      1.6860083055975705e-07, 3.8969463696721654e-10))
ERF_Q_NEG = tl.constexpr(tuple(-c for c in ERF_Q.value))
# erf_fast's coefficients as kernel parameters (math.defer table=, launch.device_table): P, then -Q
ERF_PARAMS = ERF_P.value + ERF_Q_NEG.value
_LN2 = tl.constexpr(0.6931471805599453)
_TWO_OVER_PI = tl.constexpr(0.6366197723675814)
# pi/2 = PIO2_HI + PIO2_LO (+ 2^-109.0): for |x| <= 2^19, X - k PIO2_HI is exact in one fma (X and
# k PIO2_HI are multiples of 2^-52 once k != 0, and the difference is below 1), and the second fma
# leaves an error of k 2^-109 + 2^-53 |r| (the interpreter's libdevice.fma is exact too)
_PIO2_HI = tl.constexpr(1.5707963267948966)
_PIO2_LO = tl.constexpr(6.123233995736766e-17)
# the three-part form (FMA2 off, as every body runs): C1 and C2 have 33 significant bits, so
# k C1 and k C2 are exact for k < 2^20, and X - k C1 is exact (Sterbenz); |pi/2 - C1 - C2 - C3| = 1e-37
_PIO2_1 = tl.constexpr(1.5707963267341256)
_PIO2_2 = tl.constexpr(6.077100506303966e-11)
_PIO2_3 = tl.constexpr(2.0222662487959506e-21)
_TRIG_MAX_BITS = tl.constexpr(0x49000000)      # 2^19 as float32 bits
# sin, cos and tan's constants as kernel parameters (math.defer table=): the reduction's (2/pi,
# MAGIC + the quadrant's shift, C1, C2, C3, PIO2_HI, PIO2_LO), then each body's polynomials
_REDUCE = (_TWO_OVER_PI.value, _MAGIC.value, _PIO2_1.value, _PIO2_2.value, _PIO2_3.value,
           _PIO2_HI.value, _PIO2_LO.value)
SIN_PARAMS = _REDUCE + SIN_S.value
COS_PARAMS = (_REDUCE[0], _REDUCE[1] + 1) + _REDUCE[2:] + SIN_S.value
TAN_PARAMS = _REDUCE + TAN_P.value[1:] + TAN_Q.value[1:]


@triton.jit
def _midpoint_key(y, K: tl.constexpr):
    """8 w - 2^31 as int32, w = (low29(y) - 2^28 + K) mod 2^29, in one LEA: the low word of y times 8
    drops the bits above the low 29 (8 * 2^29 = 2^32) and the 32-bit sum wraps as mod 2^29 would, so
    8 low + 8K = 8 (low29 - 2^28 + K) - 2^31 (mod 2^32). w <= 2K, i.e. the key <= 16K - 2^31,
    exactly where y's low 29 mantissa bits lie within K of 2^28, a float32 rounding midpoint. The
    form with a mask and a subtraction took 3 instructions (until the fifth session of 2026-12-03)."""
    low = y.to(tl.int64, bitcast=True).to(tl.int32)
    return low * 8 + 8 * K


@triton.jit
def hard_to_round(y, K: tl.constexpr):
    """True where float64 y might round to a float32 other than the exact value's (see above).
    Valid where y is zero or inside float32's normal range, which each fast path guarantees on its
    domain (their docstrings say why)."""
    return _midpoint_key(y, K) <= 16 * K - 2 ** 31


@triton.jit
def hard_key(y, outside, K: tl.constexpr):
    """Per element: <= key_hard(K) exactly where hard_to_round (K: the body's window) or outside
    (KEY_OUTSIDE there), in 2 instructions. A tile needs the exact path iff its minimum key is
    <= key_hard(K) (one CTA-wide min, so a branch on it is uniform). The per-element form (a mask, then
    a max) cost log 0.14 of copy bandwidth on the H200 (bench/fast32_variants.py, 2026-12-03)."""
    return tl.where(outside, KEY_OUTSIDE, _midpoint_key(y, K))


@triton.jit
def poison(v, outside, ON: tl.constexpr = True):
    """NaN where outside (ON): an evaluation poisoned at its first float64 value ends in a NaN for
    every element outside its domain, so its key (nan_key) needs no mask held to the end. erf took
    it until the fifth session of 2026-12-03 (erf_fast POISON). For log, sin, cos and tan it is a
    flag (POISON), off: on the H200 (2026-12-03, one run, bench/fast32_variants.py --ab) poisoned
    sin ran at 0.86 of copy against 0.95 with the mask held (32 registers and a spill in the fast
    part against 38), cos 0.87 against 0.91, and log (0.88 / 0.90) and tan (0.86 / 0.86) gained
    nothing."""
    if ON:
        return tl.where(outside, float("nan"), v)
    else:
        return v


@triton.jit
def nan_key(y, r, K: tl.constexpr):
    """hard_key for a poisoned evaluation: y the float64 value, r = y rounded to float32 (a NaN r
    is an element outside the domain; inside, every fast path's value is finite). The NaN test is
    on the float32 value, which is live anyway for the store (FSETP, not a float64 compare)."""
    return tl.where(r != r, KEY_OUTSIDE, _midpoint_key(y, K))


@triton.jit
def any_hard(y, outside, K: tl.constexpr):
    """hard_to_round or outside anywhere in the tile."""
    return tl.min(hard_key(y, outside, K)) <= 16 * K - 2 ** 31


@triton.jit
def _flip_sign(y, flip):
    """-y where flip, from the sign bit (Triton's unary minus is 0 - y, which gives +0 for y = +0)."""
    b = y.to(tl.int64, bitcast=True)
    return tl.where(flip, b ^ (-0x7FFFFFFFFFFFFFFF - 1), b).to(tl.float64, bitcast=True)


@triton.jit
def _minus(v, FOLD: tl.constexpr):
    """-v. FOLD: as v * -1, which LLVM turns into a negation folded into a DFMA operand; else Triton's
    unary minus, 0 - v (a DADD per use, and +0 for v = +0; harmless for the normal v used here).
    Which needs fewer registers depends on the caller (H200 2026-12-03, bench/fast32_variants.py):
    folded, log without its rounding test took 34 registers and 0.90 of copy against 32 and 0.95
    unfolded; tan took 39 folded where unfolded it needs 48 here (bench/sass_mix.py)."""
    if FOLD:
        return v * -1.0
    else:
        return -v


@triton.jit
def _reciprocal(d, FOLD: tl.constexpr):
    """1/d to ~2^-40 relative for normal d: the hardware's approximation (MUFU.RCP64H, ~2^-20; the
    interpreter keeps 20 bits of 1/d) and one Newton step, with no special-case branch (libdevice's
    rcp_rn has one per element)."""
    r = libdevice.rcp64h(d)
    return tl.fma(r, tl.fma(_minus(d, FOLD), r, 1.0), r)


@triton.jit
def _quotient(n, d, FOLD: tl.constexpr):
    """n/d to ~2^-52 relative (normal d) in 4 float64 operations: r = the hardware's ~2^-20
    reciprocal, e = 1 - d r, 1/d = r (1 + e + e^2) + O(e^3 = 2^-60), then one product (n = -0 gives
    -0). A Newton step and a residual correction (5 operations, before 2026-12-03) ran tan at 0.87
    of copy against 0.91 this way, in one A/B run on the H200, though ptxas gives this form 56
    registers to the other's 40."""
    r = libdevice.rcp64h(d)
    e = tl.fma(_minus(d, FOLD), r, 1.0)
    return n * tl.fma(r, tl.fma(e, e, e), r)


@triton.jit
def _horner4(z, c0, c1, c2, c3):
    return c0 + z * (c1 + z * (c2 + z * c3))


@triton.jit
def _horner6(z, c0, c1, c2, c3, c4, c5):
    return c0 + z * (c1 + z * (c2 + z * (c3 + z * (c4 + z * c5))))


# ---------------------------------------------------------------- log
@triton.jit
def log_table_fast(x, tab):
    """x float32 -> (float64 log(x), relative error < 2^-50 (2^-51.07 over every float32 input,
    H200); mask of x outside the fast domain), with tab = LOG_TABLE on the device: x = 2^e z, z in
    [sqrt(1/2), sqrt(2)); k/128 = LOG_RCP(z) ~ 1/z rounded to a multiple of 2^-7 (any k near 128/z
    serves: the table holds the log of the k chosen; |k - 128/z| <= 0.54 over every float32 z);
    r = z k/128 - 1 is exact in one float32 fma (24-bit z times 8-bit k/128, |r| <= 2^-7.46:
    |z k - 128| * 2^23 < 2^24); log x = e log 2 - log(k/128) + log1p(r). 9 float64 operations where
    the form with a division s = f/(2+f) it replaced took 20 (bench/sass_mix.py). Its float64
    constants as kernel parameters beside the table (a tuple of the pointer and the bit patterns:
    39.4 instructions per element and 36 registers against 41.2 and 40) ran at 0.89 / 0.89 of copy
    and 0.87 in run 28 (2026-12-03), where this form ran at 0.95 in run 27 and exp at 0.98 in both:
    reverted."""
    bits = x.to(tl.int32, bitcast=True)
    outside = (bits - 0x00800000).to(tl.uint32, bitcast=True) >= 0x7F000000
    e = (bits - 0x3F3504F3) >> 23
    z = (bits - (e << 23)).to(tl.float32, bitcast=True)       # every bit pattern: z in range, k in the table
    t = (LOG_RCP[0] + z * (LOG_RCP[1] + z * (LOG_RCP[2] + z * (LOG_RCP[3] + z * LOG_RCP[4])))) + _MAGIC_K
    k = t.to(tl.int32, bitcast=True) - 0x47C00000             # t = MAGIC_K + k/128: its bits, MAGIC_K's + k
    r = libdevice.fma(z, t - _MAGIC_K, -1.0).to(tl.float64)
    logc = tl.load(tab + (k - LOG_K0))
    r2 = r * r
    p = LOG1P_P[0] + r * (LOG1P_P[1] + r * (LOG1P_P[2] + r * (LOG1P_P[3] + r * LOG1P_P[4])))
    ef = ((e.to(tl.int64) + 0x4338000000000000).to(tl.float64, bitcast=True)) - _MAGIC
    y = (ef * _LN2 + logc) + (r2 * p + r)
    return y, outside


# ---------------------------------------------------------------- rsqrt
@triton.jit
def rsqrt_fast(x):
    """libdevice's float64 rsqrt (1 ulp, 2^-52: MUFU.RSQ64H and Newton) in place of sqrt and a
    correctly rounded division; x in float32's positive finite range (subnormals are normal in float64)."""
    bits = x.to(tl.int32, bitcast=True)
    # outside: x <= 0 (and -0), -NaN, inf, +NaN; inside, 1/sqrt(x) is in [2^-64, 2^75]
    outside = (bits - 1).to(tl.uint32, bitcast=True) >= 0x7F7FFFFF
    return libdevice.rsqrt(x.to(tl.float64)), outside


# ---------------------------------------------------------------- sin, cos, tan
@triton.jit
def _reduce_pio2(x, outside, c, POISON: tl.constexpr, FMA2: tl.constexpr = True):
    """x float32, |x| <= 2^19 -> (r, k + SHIFT): r = X - k pi/2 in float64 with |r| <= pi/4 (1 + 2^-30),
    the low bits of k + SHIFT as int32 (the quadrant, moved by SHIFT in the same addition: MAGIC +
    SHIFT, c[1], is exact and its low bits carry SHIFT); r is NaN where outside if POISON. c: the
    parameters (SIN_PARAMS ...), or their bit patterns as a constexpr tuple (immediates).
    FMA2: two fmas (PIO2_HI, PIO2_LO) in place of three products and differences (C1, C2, C3), one
    float64 operation fewer. Which is faster depends on the registers ptxas then gives the body
    (H200, 2026-12-03, run 18, bench/fast32_variants.py --ab, two passes): tan 0.92 / 0.87 of copy
    with it (48 registers) against 0.89 / 0.80 without (56); sin 0.86 / 0.86 (44) against 0.96 /
    0.95 (38), cos 0.86 / 0.85 against 0.94 / 0.89. In run 20, tan without it but capped at 48
    registers (math.defer options) ran at 0.95 / 0.94 against 0.93 / 0.92 with it: no body takes
    it; the benchmarks' variants (sin2, cos2, tan2) keep it measurable."""
    X = poison(x.to(tl.float64), outside, POISON)   # F2F: integer bit-building measured slower (0.62 vs 0.77 of copy)
    magic = param(c[1])
    t = X * param(c[0]) + magic
    k = t - magic
    quadrant = t.to(tl.int64, bitcast=True).to(tl.int32)
    if FMA2:
        r = libdevice.fma(_minus(k, True), tl.broadcast_to(param(c[5]), X.shape), X)
        r = libdevice.fma(_minus(k, True), tl.broadcast_to(param(c[6]), X.shape), r)
    else:
        r = X - k * param(c[2])
        r = r - k * param(c[3])
        r = r - k * param(c[4])
    return r, quadrant


@triton.jit
def _trig_outside(x):
    """|x| > 2^19, inf, NaN. Inside, sin and tan results are 0, normal, or (|x| < 2^-126) equal to
    x exactly in float64 (z r underflows below r's last bit), so a float32 rounds to itself; cos
    results are >= 2^-25."""
    return (x.to(tl.int32, bitcast=True) & 0x7FFFFFFF) > _TRIG_MAX_BITS


@triton.jit
def sincos_fast(x, c, POISON: tl.constexpr = False, FMA2: tl.constexpr = False):
    """c = SIN_PARAMS: sin(x); COS_PARAMS: cos(x) (cos x = sin(x + pi/2): the quadrant moves by one).

    One polynomial per element: where the quadrant asks for cos r, it is 1 - 2 sin^2(r/2), with
    sin(r/2) from the same polynomial (r/2 is exact). 2 sin^2(r/2) <= 0.293 against cos r >= 0.707,
    so sin's relative error d reaches cos r as 0.83 d, plus the final fma's 2^-53. A sin and a cos
    polynomial for every element (the form before 2026-12-03) cost 8 more float64 operations."""
    outside = _trig_outside(x)
    r, q = _reduce_pio2(x, outside, c, POISON, FMA2)
    odd = (q & 1) != 0
    u = tl.where(odd, r * 0.5, r)
    z = u * u
    # u * (1 + z S), not u + u z S: for u = -0 the sum would be -0 + +0 = +0 (sin(-0) is -0)
    s = u * (1.0 + z * _horner6(z, param(c[7]), param(c[8]), param(c[9]), param(c[10]), param(c[11]),
                                param(c[12])))
    y = tl.where(odd, tl.fma(-2.0 * s, s, 1.0), s)
    return _flip_sign(y, (q & 2) != 0), outside


@triton.jit
def tan_fast(x, c, POISON: tl.constexpr = False, FMA2: tl.constexpr = False):
    """tan r = r P / Q, and -Q / (r P) in odd quadrants (tan(r + pi/2) = -cot r): one quotient of two
    degree-3 polynomials in z, where sin and cos polynomials and their quotient cost 10 more float64
    operations per element."""
    outside = _trig_outside(x)
    r, quadrant = _reduce_pio2(x, outside, c, POISON, FMA2)       # c = TAN_PARAMS
    z = r * r
    p = r * _horner4(z, 1.0, param(c[7]), param(c[8]), param(c[9]))      # r = -0: p = -0
    q = _horner4(z, 1.0, param(c[10]), param(c[11]), param(c[12]))       # >= 0.72
    odd = (quadrant & 1) != 0
    y = _quotient(tl.where(odd, _minus(q, True), p), tl.where(odd, p, q), True)
    return y, outside


# ---------------------------------------------------------------- erf
@triton.jit
def tiny_or_nan(r):
    """r float32, a fast value rounded: True where 0 < |r| <= 2^-126 or r is NaN, in two FSETPs
    (r != 0 holds for NaN, |r| > 2^-126 does not). The rounding test reads y's low 29 bits as the
    bits below a float32 ulp, which holds for normal results only (float32's grid keeps the spacing
    2^-149 below 2^-126; r = 2^-126 may come from a y below it). A NaN falls back so that its
    payload is the exact path's (a NaN stored from y would be the FP64 unit's canonical NaN)."""
    return (r != 0) & ~(tl.abs(r) > 1.1754943508222875e-38)


def param_bits(values) -> tuple:
    """float64 values as the int64 bit patterns param() decodes (kernel parameters or constexprs)."""
    return tuple(int(v) for v in np.asarray(values, dtype=np.float64).view(np.int64))


def bits(values):
    """The parameters as a constexpr tuple: the same code with immediates (the benchmarks)."""
    return tl.constexpr(param_bits(values))


@triton.jit
def param(c):
    """A float64 kernel parameter from its int64 bit pattern (launch.device_table; one ULDC.64); a
    constexpr bit pattern (bits()) gives the immediate."""
    return tl.cast(c, tl.int64).to(tl.float64, bitcast=True)


@triton.jit
def _hornerp(z, c, OFF: tl.constexpr, N: tl.constexpr):
    """Horner's rule over the N parameters c[OFF] .. c[OFF + N - 1] (lowest degree first), N >= 2."""
    acc = z * param(c[OFF + N - 1]) + param(c[OFF + N - 2])
    for i in tl.static_range(N - 3, -1, -1):
        acc = acc * z + param(c[OFF + i])
    return acc


@triton.jit
def erf_fast(x, c, POISON: tl.constexpr = False, NP: tl.constexpr = 8, NQ: tl.constexpr = 9):
    """x float32, c = ERF_PARAMS -> (float64 erf(x), relative error < 2^-41.0 (the fit's); mask of
    the elements the rounding test cannot judge: NaN and float32 subnormal results, tiny_or_nan).
    Its keys take K = ERF_K (math.defer k=). NP, NQ: the numbers of coefficients of P and Q in c
    (bench/erf_probe.py runs other degrees through the same code).

    One rational, x P(t) / Q(t) of degrees 7/8, on x clamped to [-ERF_CLAMP, ERF_CLAMP] in float32:
    erf(3.921875) = 1 - 2.92e-8 rounds to 1.0f as erf does from 3.9192 on, and it lies 2^-30.5 from
    the rounding midpoint 1 - 2^-25, far outside the test's window, so clamped inputs (infinities
    too) take the fast path with no select. The clamp propagates NaN (FMNMX.NAN), so a NaN input
    gives a NaN y; the mask is read from the rounded value (two FSETPs), with no test of x and no
    select on the float64 value. POISON: the earlier form, NaN-poisoned on x (NaN and subnormal x)
    for nan_key, 7 more instructions per element (H200 A/B, 2026-12-03: 0.82 of copy against
    0.88-0.89 in run 22, 0.79 against 0.84 in run 23). The coefficients come as kernel parameters
    (c, one ULDC each; as immediates they took 2.2 more instructions per element and ran at 0.85
    against 0.90, run 26).
    libdevice's erf takes two polynomials, of degree 9 in x^2 and ~19 in |x|, and an exp: 41 float64
    operations and 85 instructions per element for sm_90 (bench/sass_mix.py). Here: 17 Horner steps
    and _quotient's division with no negation: D = -Q from negated coefficients makes fma(D, r, 1)
    = 1 - Q r, and r = rcp(Q) is rcp(D) with its sign bit flipped (an integer operation); 21 float64
    operations. Inside, |erf x| is 0 or in [2^-126, 1], and erf(-0) = -0 P(0) / Q(0) = -0.
    The degrees trade float64 operations against the window: on the H200 the FP64 pipe was 72%
    busy in erf's kernel at 0.89 of copy (ncu, 2026-12-03, seventh session: 24.5 FP64-pipe
    instructions per element), so each operation costs bandwidth; a wider window flags more tiles,
    and with the piece mask each costs one piece of the exact path. Measured on the H200 (every
    float32 input, then bench/erf_probe.py, 2026-12-03, seventh session): 8/9 (23 operations,
    2^-45.74, K = 512) 0.925 of copy with the piece mask; 8/8 (22, 2^-42.94, K = 2048, negative
    coefficients) 0.942; 7/8 (21, 2^-41.01, K = 8192) 0.948. Until then the rational had degrees 9/9
    (2^-48.90, 24 operations, K = 256) and, from the sixth session, 8/9 with K = 512.
    Measured and not taken: a table-driven form (16 polynomials of degree 9 in |x| - c_j, 10 float64
    operations but 10 loads per element) ran at 0.61 of copy against 0.80 (runs 15 and 16); 8/8 and
    7/7 (2^-37.4) too far for a window that keeps fallbacks rare without the piece mask; the
    conversions to and from float64 built from integer operations cost more issue slots than the
    two F2Fs (bench/fast32_variants.py erf_cio: 0.87 / 0.80 of copy against 0.93 / 0.93, H200 run
    30, 2026-12-03)."""
    if POISON:
        bits = x.to(tl.int32, bitcast=True) & 0x7FFFFFFF
        outside = ((bits - 1).to(tl.uint32, bitcast=True) < 0x007FFFFF) | (bits > 0x7F800000)
        X = poison(tl.minimum(tl.maximum(x, -ERF_CLAMP), ERF_CLAMP).to(tl.float64), outside)
    else:
        X = tl.minimum(tl.maximum(x, -ERF_CLAMP, propagate_nan=tl.PropagateNan.ALL), ERF_CLAMP,
                       propagate_nan=tl.PropagateNan.ALL).to(tl.float64)
    t = X * X
    n = X * _hornerp(t, c, 0, NP)                               # c: ERF_PARAMS (NP coefficients of P, NQ of -Q)
    d = _hornerp(t, c, NP, NQ)                                  # -Q(t) <= -1
    r = (libdevice.rcp64h(d).to(tl.int64, bitcast=True) ^ (-0x7FFFFFFFFFFFFFFF - 1)).to(tl.float64, bitcast=True)
    e = tl.fma(d, r, 1.0)                                       # 1 - Q r
    y = n * tl.fma(r, tl.fma(e, e, e), r)                       # _quotient's step: ~2^-52
    if POISON:
        return y, outside
    else:
        return y, tiny_or_nan(y.to(tl.float32))


# ---------------------------------------------------------------- floor and truncated division
@triton.jit
def divide_integral_fast(a, b, TRUNC: tl.constexpr):
    """a, b float32 -> (floor(a / b) or trunc(a / b) exactly, as float64; hard mask).

    n = the quotient rounded to an integer is floor or ceil of the exact a / b when |a / b| < 2^22;
    r = a - n b is then exact (n b has <= 46 bits; the difference is a short multiple of the smaller
    ulp), and its sign against b's says which. Zero results take the sign of a / b (ATen's
    div_floor_floating). Outside (b zero or non-finite, a non-finite, |a / b| >= 2^22) hard."""
    A = a.to(tl.float64)
    B = b.to(tl.float64)
    q = A * _reciprocal(B, True)                            # within 2^-18 of a / b: n is floor or ceil
    hard = ~(tl.abs(q) < 4194304.0) | ((B - B) != 0)
    n = (q + _MAGIC) - _MAGIC
    r = A - n * B
    below = (r != 0) & ((r < 0) != (B < 0))                # a / b < n
    res = tl.where(below, n - 1.0, n)
    if TRUNC:
        above = (r != 0) & ((r < 0) == (B < 0))            # a / b > n
        res = tl.where((A < 0) != (B < 0), tl.where(above, n + 1.0, n), res)
    negative = (A.to(tl.int64, bitcast=True) < 0) != (B.to(tl.int64, bitcast=True) < 0)   # signs, -0 too
    zero = _flip_sign(tl.zeros_like(A), negative)
    return tl.where(res != 0, res, zero), hard
