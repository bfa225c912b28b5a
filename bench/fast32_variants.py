"""Where the float32 fast paths spend their time: bandwidth of variants of one body, through nbx's
launcher, 2^28 float32 elements in [1, 2) (each figure against a device copy in the same run).
Variants: the op as shipped; its fast value rounded with no test and no fallback (`nofb`); the
rounding test and the tile reduction but no fallback code (`test`). Measured 2026-12-03 on the H200:
integer bit-building in place of F2F conversions was slower (log 0.67 vs 0.82, sin 0.62 vs 0.77) and
was dropped; the rounding test as a per-element mask and a max cost log 0.14 (0.96 -> 0.82), which
made fast32.any_hard. After it: log 0.87 (test without fallback code 0.92, no test 0.96), sin 0.81
(0.87, 0.87), tan 0.74 (-, 0.81), rsqrt 0.94 (-, 0.98); capping registers (maxnreg 64/56/48/40) did
not help any of them and took floor_divide from 0.80 to 0.58-0.17. num_warps (default 4): 8 was worse
for every float64 body (log 0.78, sin 0.68); 2 lifted log to 0.90 and rsqrt to 0.94 but sank sin to
0.54 and floor_divide to 0.43, so no single setting serves. With the launcher's deferred exact
paths (2026-12-03, later): registers decide (<= 40 keeps 48 warps per SM); maxnreg=32 spilled in
the fast part (log 0.74, sin 0.66, tan 0.70), num_warps 8 was worse (0.73-0.79), BLOCK 2048 with 8
warps no better (log 0.85, sin 0.90, tan 0.81); negating by * -1 inside the division cost log 2
registers (log_nofb 0.90 against 0.95 in one run); the store order per body: math.py. With the
flat deferred kernel (third session of 2026-12-03, reports/h200/bandwidth-20261203-flat.md): the
NaN-poisoned forms (*_p, fast32.poison) against the mask held to the end, --ab in one run: sin 0.86
against 0.95, cos 0.87 against 0.91, log and tan no better; maxnreg=32 on the poisoned forms: sin
0.91, cos 0.90, log 0.82, tan 0.81, erf 0.70 (0.74 without). The pi/2 reduction in two fmas
(sin2, cos2, tan2): fast32._reduce_pio2.
The division form of log and its variants went with it on 2026-12-03 (log now reads a table:
fast32.log_table_fast). Fifth session (reports/h200/bandwidth-20261203-keys.md): erf without a test
of x (erf_p is the poisoned form) 0.88 against 0.82; the keys in one LEA; coefficients as kernel
parameters, erf 0.90 against 0.85 with immediates (erf99); erf's speed probes (run 25): truncated
to 8/8 0.87, 7/7 0.93, two distinct coefficients 0.87, no test 0.90, against 0.85. Sixth session
(reports/h200/bandwidth-20261203-erf89.md): erf's F2F-free forms (erf_ci, erf_co, erf_cio) slower;
a persistent flat kernel that loads tile i+1 before computing tile i (run 36, a probe not kept):
erf 0.44 of copy at 2048-element tiles (56 registers, 42 spills), 0.80 at 1024, log 0.77-0.79, sin
0.72-0.78, against 0.86-0.91, 0.90-0.96 and 0.94-0.95 through the launcher in the same run.
Usage: PYTHONPATH=$PWD python3 bench/fast32_variants.py [--reps 10] [--ab sin,sin_p,sin@maxnreg=32]
"""
from __future__ import annotations

import argparse
import sys

import nbx                                   # first: it sets TRITON_INTERPRET where there is no GPU
from nbx.kernels import fast32, math as m
from nbx.kernels import launch as launch_mod
from nbx.kernels.launch import launch

import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from elementwise import device_copy_ms, make_input, time_ms  # noqa: E402


@triton.jit
def ident(x):
    return x


@triton.jit
def roundtrip64(x):
    return x.to(tl.float64).to(tl.float32)


@triton.jit
def _test_only(y, outside):
    r = y.to(tl.float32)
    return tl.where(fast32.any_hard(y, outside, fast32.HARD_K), 0.0, r)


_SIN_BITS = fast32.bits(fast32.SIN_PARAMS)     # the plain (not deferred) bodies: immediates
_TAN_BITS = fast32.bits(fast32.TAN_PARAMS)


@triton.jit
def sin_nofb(x):
    y, o = fast32.sincos_fast(x, _SIN_BITS)
    return y.to(tl.float32)


@triton.jit
def sin_test(x):
    y, o = fast32.sincos_fast(x, _SIN_BITS)
    return _test_only(y, o)


@triton.jit
def tan_nofb(x):
    y, o = fast32.tan_fast(x, _TAN_BITS)
    return y.to(tl.float32)


@triton.jit
def tan_test(x):
    y, o = fast32.tan_fast(x, _TAN_BITS)
    return _test_only(y, o)


@triton.jit
def rsqrt_nofb(x):
    y, o = fast32.rsqrt_fast(x)
    return y.to(tl.float32)


@triton.jit
def _sincos_p_fast(x, c):                     # sin or cos by its parameters (fast32.SIN_PARAMS, COS_PARAMS)
    y, o = fast32.sincos_fast(x, c, True)
    return m.rounded_poisoned(y, fast32.HARD_K)


@triton.jit
def _tan_p_fast(x, c):
    y, o = fast32.tan_fast(x, c, True)
    return m.rounded_poisoned(y, fast32.HARD_K)


@triton.jit
def _sincos2_fast(x, c):
    y, o = fast32.sincos_fast(x, c, False, True)
    return m.rounded(y, o)


@triton.jit
def _tan2_fast(x, c):
    y, o = fast32.tan_fast(x, c, False, True)
    return m.rounded(y, o)


@triton.jit
def _erf_p_fast(x, c):
    y, o = fast32.erf_fast(x, c, True)
    return m.rounded_poisoned(y, fast32.ERF_K)


@triton.jit
def erf_p(x):
    return m.erf(x)


# Speed probes for erf, not correct values (but erf_imm): the same evaluation with its coefficients
# as immediates (erf_imm: two UMOVs each, where erf's parameters take one ULDC; erf99 until the 8/9
# rational of the sixth session of 2026-12-03), with fewer float64 operations (the rational truncated
# to degrees 8/8 and 7/7: in run 25 these were truncations of the 9/9 form) or with two distinct
# coefficients (erf1c), to see what bandwidth each cost sets
@triton.jit
def _horner(z, c: tl.constexpr, N: tl.constexpr):
    acc = z * 0.0 + c[N - 1]
    for i in tl.static_range(N - 2, -1, -1):
        acc = acc * z + c[i]
    return acc


@triton.jit
def _erf_probe(x, P: tl.constexpr, Q: tl.constexpr, NP: tl.constexpr, NQ: tl.constexpr):
    X = tl.minimum(tl.maximum(x, -fast32.ERF_CLAMP, propagate_nan=tl.PropagateNan.ALL), fast32.ERF_CLAMP,
                   propagate_nan=tl.PropagateNan.ALL).to(tl.float64)
    t = X * X
    n = X * _horner(t, P, NP)
    d = _horner(t, Q, NQ)
    r = (libdevice.rcp64h(d).to(tl.int64, bitcast=True) ^ (-0x7FFFFFFFFFFFFFFF - 1)).to(tl.float64, bitcast=True)
    e = tl.fma(d, r, 1.0)
    y = n * tl.fma(r, tl.fma(e, e, e), r)
    return y.to(tl.float32), fast32.hard_key(y, fast32.tiny_or_nan(y.to(tl.float32)), fast32.ERF_K)


# the shipped rational's coefficient counts (7/8 since the seventh session of 2026-12-03: 8 and 9);
# the truncated probes below drop one and two top coefficients of each (speed only, values wrong)
_NP = tl.constexpr(len(fast32.ERF_P.value))
_NQ = tl.constexpr(len(fast32.ERF_Q.value))
_P88 = tl.constexpr(fast32.ERF_P.value[:-1])
_Q88 = tl.constexpr(fast32.ERF_Q_NEG.value[:-1])
_P77 = tl.constexpr(fast32.ERF_P.value[:-2])
_Q77 = tl.constexpr(fast32.ERF_Q_NEG.value[:-2])
_P1C = tl.constexpr((0.25,) * _NP.value)
_Q1C = tl.constexpr((-1.0,) + (-0.125,) * (_NQ.value - 1))


@triton.jit
def _erf_imm_fast(x):
    return _erf_probe(x, fast32.ERF_P, fast32.ERF_Q_NEG, _NP, _NQ)


@triton.jit
def _erf88_fast(x):
    return _erf_probe(x, _P88, _Q88, _NP - 1, _NQ - 1)


@triton.jit
def _erf77_fast(x):
    return _erf_probe(x, _P77, _Q77, _NP - 2, _NQ - 2)


@triton.jit
def _erf1c_fast(x):
    return _erf_probe(x, _P1C, _Q1C, _NP, _NQ)


@triton.jit
def erf_nofb(x):
    y, key = _erf_probe(x, fast32.ERF_P, fast32.ERF_Q_NEG, _NP, _NQ)
    return y


@triton.jit
def erf_imm(x):
    return m.erf(x)


@triton.jit
def erf88(x):
    return m.erf(x)


@triton.jit
def erf77(x):
    return m.erf(x)


@triton.jit
def erf1c(x):
    return m.erf(x)


# erf without F2Fs (sixth session of 2026-12-03, run 30; values right but for zeros in erf_co): X
# built from |x|'s bits (erf_ci: two LEAs), the float32 result from y's bits (erf_co: the rounding
# as a 64-bit add and a funnel shift), both (erf_cio), and erf_abs, the |x| form with both F2Fs that
# they start from. 0.89 / 0.88, 0.87 / 0.82 and 0.87 / 0.80 of copy against erf_abs 0.88 / 0.89 and
# erf 0.93 / 0.93: the issue slots cost more than the conversions saved
@triton.jit
def _erf_conv(x, c, CI: tl.constexpr, CO: tl.constexpr):
    a = tl.minimum(tl.abs(x), fast32.ERF_CLAMP, propagate_nan=tl.PropagateNan.ALL)
    if CI:
        b = a.to(tl.int32, bitcast=True).to(tl.int64)
        X = ((b << 29) + (896 << 52)).to(tl.float64, bitcast=True)
    else:
        X = a.to(tl.float64)
    t = X * X
    n = X * fast32._hornerp(t, c, 0, _NP)
    d = fast32._hornerp(t, c, _NP, _NQ)
    r = (libdevice.rcp64h(d).to(tl.int64, bitcast=True) ^ (-0x7FFFFFFFFFFFFFFF - 1)).to(tl.float64, bitcast=True)
    e = tl.fma(d, r, 1.0)
    y = n * tl.fma(r, tl.fma(e, e, e), r)
    s = x.to(tl.int32, bitcast=True) & (-0x7FFFFFFF - 1)
    if CO:
        rb = ((y.to(tl.int64, bitcast=True) + (1 << 28)) >> 29).to(tl.int32) + 0x40000000
    else:
        rb = y.to(tl.float32).to(tl.int32, bitcast=True)
    r32 = (rb | s).to(tl.float32, bitcast=True)
    return r32, fast32.hard_key(y, fast32.tiny_or_nan(r32), fast32.ERF_K)


@triton.jit
def _erf_abs_fast(x, c):
    return _erf_conv(x, c, False, False)


@triton.jit
def _erf_ci_fast(x, c):
    return _erf_conv(x, c, True, False)


@triton.jit
def _erf_co_fast(x, c):
    return _erf_conv(x, c, False, True)


@triton.jit
def _erf_cio_fast(x, c):
    return _erf_conv(x, c, True, True)


@triton.jit
def erf_abs(x):
    return m.erf(x)


@triton.jit
def erf_ci(x):
    return m.erf(x)


@triton.jit
def erf_co(x):
    return m.erf(x)


@triton.jit
def erf_cio(x):
    return m.erf(x)


@triton.jit
def sin2(x):
    return m.sin(x)


@triton.jit
def cos2(x):
    return m.cos(x)


@triton.jit
def tan2(x):
    return m.tan(x)


@triton.jit
def sin_p(x):
    return m.sin(x)


@triton.jit
def cos_p(x):
    return m.cos(x)


@triton.jit
def tan_p(x):
    return m.tan(x)


# the deferred bodies poisoned (fast32.poison, nan_key) in place of the mask held to the end
for _b, _f, _e in [(sin_p, _sincos_p_fast, m.sin), (cos_p, _sincos_p_fast, m.cos),
                   (tan_p, _tan_p_fast, m.tan), (sin2, _sincos2_fast, m.sin), (cos2, _sincos2_fast, m.cos),
                   (tan2, _tan2_fast, m.tan), (erf_p, _erf_p_fast, m.erf), (erf_imm, _erf_imm_fast, m.erf),
                   (erf88, _erf88_fast, m.erf), (erf77, _erf77_fast, m.erf), (erf1c, _erf1c_fast, m.erf),
                   (erf_abs, _erf_abs_fast, m.erf), (erf_ci, _erf_ci_fast, m.erf), (erf_co, _erf_co_fast, m.erf),
                   (erf_cio, _erf_cio_fast, m.erf)]:
    m.defer(_b, _f, _e, m.DEFERRED[_e].store_first, options=m.DEFERRED[_e].options,
            table=m.DEFERRED[_e].table if _f.fn.__code__.co_argcount == 2 else None,
            block=m.DEFERRED[_e].block, k=m.DEFERRED[_e].k)

VARIANTS = {"ident": ident, "roundtrip64": roundtrip64, "exp": m.exp,
            "log": m.log,
            "sin": m.sin, "sin_nofb": sin_nofb, "sin_test": sin_test, "cos": m.cos, "erf": m.erf,
            "tan": m.tan, "tan_nofb": tan_nofb, "tan_test": tan_test, "rsqrt": m.rsqrt, "rsqrt_nofb": rsqrt_nofb,
            "sin2": sin2, "cos2": cos2, "tan2": tan2, "sin_p": sin_p, "cos_p": cos_p, "tan_p": tan_p,
            "erf_p": erf_p, "erf_nofb": erf_nofb, "erf_imm": erf_imm, "erf88": erf88, "erf77": erf77, "erf1c": erf1c,
            "erf_abs": erf_abs, "erf_ci": erf_ci, "erf_co": erf_co, "erf_cio": erf_cio}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2n", type=int, default=28)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--only", default="")
    ap.add_argument("--options", default="", help='launch options for the deferred bodies, e.g. "maxnreg=32;num_warps=8;block=2048"')
    ap.add_argument("--ab", default="", help='e.g. "tan,tan_p,sin@maxnreg=32,erf@block=2048+maxnreg=48": alternated twice')
    ap.add_argument("--store-after", action="store_true", help="also the deferred bodies with STORE_FIRST off")
    ap.add_argument("--warps", default="", help="e.g. 4,8: the ops below at each num_warps")
    ap.add_argument("--ops", default="add,exp,sqrt,log,sin,cos,tan,rsqrt,floor_divide,erf")
    a = ap.parse_args(argv)
    n = 1 << a.log2n
    copy_ms = device_copy_ms(4 * n, a.reps)
    print(f"backend {nbx.backend_id()}; n = 2^{a.log2n} float32; copy {copy_ms:.3f} ms")
    x = make_input(n)
    out = nbx.empty(n, dtype="float32")
    ref = None
    for name, body in VARIANTS.items():
        if a.only and name not in a.only.split(","):
            continue
        run = lambda: launch(body, out, [x], [], compute=[nbx.float32], op=name)
        ms = time_ms(run, a.reps)
        print(f"{name:>16}: {ms:7.3f} ms  {copy_ms / ms:5.2f} of copy", flush=True)
    if nbx.backend_id().startswith("cuda") and a.warps:
        # fewer elements per thread (8 warps on a 1024-element tile: 4 each) halve the live float64
        # registers; occupancy was the suspect for the cost of the fallback code being present
        inputs = {"floor_divide": [x, make_input(n, 1.5, 2.5)], "add": [x, make_input(n, 1.5, 2.5)]}
        for warps in map(int, a.warps.split(",")):
            launch_mod.LAUNCH_OPTIONS = {"num_warps": warps}
            for op in a.ops.split(","):
                args = inputs.get(op, [x])
                fn = nbx.FUNCTIONS[op]
                ms = time_ms(lambda: fn(*args), a.reps)
                ratio = 4 * n * (len(args) + 1) / ms / (8 * n / copy_ms)
                print(f"num_warps {warps} {op:>12}: {ms:7.3f} ms  {ratio:5.2f} of copy", flush=True)
        launch_mod.LAUNCH_OPTIONS = {}
    if a.store_after:
        # the deferred bodies with the reduction before the store (launch.STORE_FIRST off)
        launch_mod.STORE_FIRST = False
        for name in ("log", "sin", "cos", "tan", "rsqrt"):
            body = VARIANTS[name]
            ms = time_ms(lambda: launch(body, out, [x], [], compute=[nbx.float32], op=name), a.reps)
            print(f"{name + ' store-after':>16}: {ms:7.3f} ms  {copy_ms / ms:5.2f} of copy", flush=True)
        launch_mod.STORE_FIRST = True
    if a.ab:
        # A/B within one run, each pair twice in alternation (ABAB): "NAME" or "NAME@maxnreg=32"
        for _ in range(2):
            for item in a.ab.split(","):
                name, _, spec = item.partition("@")
                opts = {k: int(v) for k, v in (kv.split("=") for kv in filter(None, spec.split("+")))}
                launch_mod.FLAT_BLOCK = opts.pop("block", 0)       # "erf@block=2048+maxnreg=48"
                launch_mod.LAUNCH_OPTIONS = opts
                body = VARIANTS[name]
                ms = time_ms(lambda: launch(body, out, [x], [], compute=[nbx.float32], op=name), a.reps)
                print(f"A/B {item:>30}: {ms:7.3f} ms  {copy_ms / ms:5.2f} of copy", flush=True)
        launch_mod.LAUNCH_OPTIONS = {}
        launch_mod.FLAT_BLOCK = 0
    for spec in filter(None, a.options.split(";")):
        # launch options for the deferred bodies, e.g. "maxnreg=32" or "num_warps=8,maxnreg=32":
        # registers set occupancy (65536 per SM: 32 per thread -> 64 warps, 40 -> 48, 48 -> 40)
        opts = {k: int(v) for k, v in (kv.split("=") for kv in spec.split(","))}
        block = opts.pop("block", 1024)                     # the flat tile, launch._TILE
        launch_mod._MAX_C = launch_mod._TILE = launch_mod.FLAT_BLOCK = block
        launch_mod.LAUNCH_OPTIONS = opts
        for name in ("log", "sin", "cos", "tan", "erf"):
            body = VARIANTS[name]
            ms = time_ms(lambda: launch(body, out, [x], [], compute=[nbx.float32], op=name), a.reps)
            print(f"{name} {spec:>22}: {ms:7.3f} ms  {copy_ms / ms:5.2f} of copy", flush=True)
        launch_mod.LAUNCH_OPTIONS = {}
        launch_mod._MAX_C = launch_mod._TILE = 1024
        launch_mod.FLAT_BLOCK = 0
    print_registers()
    return 0


def print_registers():
    """Registers and spills of every element-wise kernel this process compiled (GPU only)."""
    kernels = []
    for fn in (launch_mod.elementwise_kernel, launch_mod.deferred_flat_kernel):
        for dev in getattr(fn, "device_caches", {}).values():
            kernels += list(dev[0].values())
    for k in kernels:
        names = sorted({f"{name}={getattr(v, '__name__', v)}" for name, v in _constants(k).items()
                        if name in ("BODY", "EXACT", "STORE_FIRST")})
        md = getattr(k, "metadata", None)
        opts = f"warps {getattr(md, 'num_warps', '?')} maxnreg {getattr(md, 'maxnreg', None)}"
        print(f"  {k.src.fn.__name__[:8]}  registers {getattr(k, 'n_regs', '?'):>4}  spills {getattr(k, 'n_spills', '?'):>3}  {opts}  {' '.join(names)}")


def _constants(k):
    names = k.src.fn.arg_names
    return {names[i[0]] if isinstance(i, tuple) else i: v for i, v in k.src.constants.items()}


if __name__ == "__main__":
    sys.exit(main())
