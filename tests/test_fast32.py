"""The float32 fast paths (OpSpec.fast32, nbx/kernels/fast32/): the rounding test, the fallback, their claim.

The claim: wherever the rounding test passes, the fast value rounds to the same float32 as the op's
exact body (libdevice's float64 path); elsewhere the tile falls back to that body. On the CPU the
interpreter runs the same kernels over numpy (a strided sample of all float32 inputs);
bench/fast32_exhaustive.py runs all 2^32 on the GPU.
"""
import math

import numpy as np
import pytest
import triton
import triton.language as tl

import nbx
from nbx.dtype import float32
from nbx.harness.suites import fastpath
from nbx.kernels import launch
from nbx.kernels.fast32 import atan, erf, keys
from nbx.ops.registry import Typing

UNARY = fastpath.fast_paths(arity=1)
BINARY = fastpath.fast_paths(arity=2)
_ids = lambda p: p.label


def test_the_fast_paths_are_found_from_the_specs():
    assert {p.label for p in UNARY} == {"log", "log2", "log10", "sin", "cos", "tan", "rsqrt", "erf", "expm1", "tanh",
                                        "sinh", "cosh", "sigmoid", "silu", "selu", "mish", "gelu:approximate=tanh",
                                        "log1p", "log_sigmoid", "hardswish", "asinh", "acosh", "atanh",
                                        "erfc", "gelu", "atan", "asin", "acos", "softplus",
                                        "softplus:beta=2.0:threshold=10.0", "elu", "elu:alpha=0.5", "celu",
                                        "celu:alpha=2.0", "cbrt"}
    assert {p.label for p in BINARY} == {"floor_divide", "div:rounding_mode=trunc", "div:rounding_mode=floor",
                                         "atan2", "pow", "swiglu", "glu", "silu_and_mul"}
    f32 = Typing(float32, float32, (float32,))
    # the body a float32 launch takes (a label omits parameters at their default: gelu is 'none')
    choices = lambda p: {**{q.name: q.default for q in p.spec.params if q.kind == "choice"}, **p.params}
    assert all(p.exact is p.spec.select_body(choices(p), f32) for p in UNARY)


@pytest.mark.parametrize("probe", UNARY, ids=_ids)
def test_fast_value_within_the_bound_and_never_wrong(probe):
    # 2^16 bit patterns spread over all 2^32 (a stride prime to 2), every sign and exponent
    row = fastpath.probe_unary(probe, 16, start=12345, stride=65537, chunk_log2=16)
    assert row["wrong"] == 0, row
    # the window E must hold with room: the worst measured error is below E / 8, or for a window
    # set at 2x a fit error that equioscillates over the whole range (erf: 2^-41.01 against
    # E = 2^-40; 2^16 samples come within a few percent of it), below E / 1.8
    room = 1.8 if probe.fast.k == erf.ERF_K else 8
    assert row["max_rel_err"] < probe.fast.bound / room, row


@pytest.mark.parametrize("probe", UNARY, ids=_ids)
def test_ordinary_inputs_take_the_fast_path(probe):
    # 2^16 consecutive float32 from 1.0 up (one binade slice; from 0.5 up for atanh, asin and acos,
    # whose domains end at 1): almost no tile may fall back, or the fast path would be dead code
    # behind a rounding test that always fails
    one = int(np.float32(0.5 if probe.spec.name in ("atanh", "asin", "acos") else 1.0).view(np.uint32))
    row = fastpath.probe_unary(probe, 16, start=one, stride=1, chunk_log2=16)
    assert row["wrong"] == 0, row
    # hardswish: x(x + 3)/6 is dyadic for x = 1 + k 2^-23 with k = 1 mod 3, and an exact float32
    # tie for 5 of these x (tests/test_fast32.py's count by fractions), which the test must flag
    assert row["tiles_hard"] <= (5 if probe.spec.name == "hardswish" else 2), row


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 40.0, -40.0, 3e38], np.float32)


@pytest.mark.parametrize("probe", BINARY, ids=_ids)
def test_binary_fast_path_matches_the_exact_body(probe):
    """Random bit patterns, randn * 4 (the gates' ordinary range) and every pair of special values:
    never wrong. glu's and silu_and_mul's fast paths are those of the two-operand specs their
    compositions launch over the halves of the input (registry.COMPOSED)."""
    # pow's exact body (exact powers, the settling) is the costliest under the interpreter: 2^14
    # pairs take 9 s where 2^16 took 34 s; the GPU probes 2^26 (bench/fast32_exhaustive.py)
    a, b = fastpath.random_pairs(1 << (14 if probe.spec.name == "pow" else 16), seed=7)
    row = fastpath.probe_binary(probe, a, b)
    assert row["wrong"] == 0, row
    assert row["hard"] < row["inputs"] // 2, row        # the fast range is exercised
    normal = (np.random.default_rng(9).standard_normal((2, 1 << 12)) * 4).astype(np.float32)
    sa, sb = np.meshgrid(SPECIAL, SPECIAL)
    for x, y in ((normal[0], normal[1]), (sa.ravel(), sb.ravel())):
        row = fastpath.probe_binary(probe, x, y)
        assert row["wrong"] == 0, row


@pytest.mark.parametrize("op", ["log", "log2", "log10", "sin", "cos", "tan", "rsqrt", "erf", "expm1", "tanh", "sinh", "cosh",
                                "log1p", "atan"])
def test_op_equals_the_float64_path_on_fast_and_fallback_tiles(op):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.01, 100.0, 8192).astype(np.float32)
    x[100], x[101] = -0.0, 0.0                             # signed zeros: sin(-0) = -0 on the fast path
    x[102], x[103], x[104] = -3.9, 3.9192059, -np.inf      # erf: 1.0f from 3.9192 on, +-4 clamps
    x[5000] = np.nan                                       # that tile falls back, the others do not
    x[7000] = -1.0 if op.startswith("log") else 3.0e6      # outside the fast domain (or clamped)
    got = getattr(nbx, op)(nbx.from_numpy(x)).numpy()
    with np.errstate(invalid="ignore"):
        ref = {"rsqrt": lambda w: 1 / np.sqrt(w), "erf": np.vectorize(math.erf)}.get(op) or getattr(np, op)
        want = ref(x.astype(np.float64)).astype(np.float32)
    # NaN payloads are the libraries' own (libdevice's erf returns 0x7fffffff, numpy 0x7fc00000)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(want)].view(np.uint32), want[~np.isnan(want)].view(np.uint32))


@triton.jit
def _evaluate_kernel(x_ptr, y_ptr, outside_ptr, tab, FAST: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    y, outside = FAST(tl.load(x_ptr + i), tab)
    tl.store(y_ptr + i, y)
    tl.store(outside_ptr + i, outside.to(tl.int8))


# x, atan, asin, acos: the float32 results the fast path must give itself (None: it must flag x)
_HALF_PI = np.float32(math.pi / 2)
INVERSE_TRIG_SPECIALS = [
    (0.0, 0.0, 0.0, _HALF_PI), (-0.0, -0.0, -0.0, _HALF_PI),
    (np.inf, _HALF_PI, None, None), (-np.inf, -_HALF_PI, None, None),
    (1.0, np.float32(math.pi / 4), _HALF_PI, 0.0), (-1.0, -np.float32(math.pi / 4), -_HALF_PI, None),
    (np.nextafter(np.float32(1), np.float32(2)), np.float32(math.atan(1.0000001192092896)), None, None),
    (3.4028235e38, _HALF_PI, None, None), (np.nan, None, None, None),
    (1e-45, None, None, np.float32(math.pi / 2)), (2.0 ** -126, np.float32(2.0 ** -126), np.float32(2.0 ** -126), _HALF_PI),
]


@pytest.mark.parametrize("op", ["atan", "asin", "acos"])
def test_inverse_trig_special_values_on_the_fast_path(op):
    """Signed zeros, +-1 and +-inf are decided by the fast path itself (atan(-0) = -0, atan(+-inf) =
    +-pi/2, asin(+-1) = +-pi/2, acos(1) = +0); NaN, |x| > 1 (asin, acos), acos(-1) and subnormal x
    (atan, asin: a subnormal result) are flagged for the exact body."""
    fast = {"atan": atan.ATAN, "asin": atan.ASIN, "acos": atan.ACOS}[op]
    col = ["atan", "asin", "acos"].index(op) + 1
    x = np.array([row[0] for row in INVERSE_TRIG_SPECIALS], np.float32)
    n = triton.next_power_of_2(len(x))
    buf = np.full(n, 0.5, np.float32)
    buf[:len(x)] = x
    y, outside = nbx.empty(n, dtype="float64"), nbx.empty(n, dtype="int8")
    _evaluate_kernel[(1,)](nbx.from_numpy(buf), y, outside, launch.device_table(fast.table), FAST=fast.evaluate, N=n)
    got, flagged = y.numpy()[:len(x)].astype(np.float32), outside.numpy()[:len(x)] != 0
    for xi, g, f, row in zip(x, got, flagged, INVERSE_TRIG_SPECIALS):
        want = row[col]
        if want is None:
            assert f, (op, xi)
        else:
            assert not f and g.view(np.uint32) == np.float32(want).view(np.uint32), (op, xi, g, want)


@triton.jit
def _evaluate2_kernel(a_ptr, b_ptr, y_ptr, outside_ptr, tab, FAST: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    y, outside = FAST(tl.load(a_ptr + i), tl.load(b_ptr + i), tab)
    tl.store(y_ptr + i, y)
    tl.store(outside_ptr + i, outside.to(tl.int8))


def test_atan2_quadrants_and_signed_zeros_on_the_fast_path():
    """Every sign of y and x (zeros included), |y| below, equal to and above |x|: C's atan2 (numpy's
    on float64, rounded once) from the fast path itself; an infinite or NaN operand, both operands
    zero, and a subnormal result near a boundary are flagged for the exact body."""
    mags = np.array([0.0, 1e-45, 0.75, 1.0, 3.0, 3.4028235e38], np.float32)
    vals = np.concatenate([mags, -mags, np.array([np.inf, -np.inf, np.nan], np.float32)])
    a, b = (v.ravel() for v in np.meshgrid(vals, vals))
    n = triton.next_power_of_2(a.size)
    bufs = [np.full(n, 0.5, np.float32) for _ in range(2)]
    bufs[0][:a.size], bufs[1][:b.size] = a, b
    y, outside = nbx.empty(n, dtype="float64"), nbx.empty(n, dtype="int8")
    _evaluate2_kernel[(1,)](nbx.from_numpy(bufs[0]), nbx.from_numpy(bufs[1]), y, outside,
                            launch.device_table(atan.ATAN_TABLE), FAST=atan.ATAN2.evaluate, N=n)
    got, flagged = y.numpy()[:a.size].astype(np.float32), outside.numpy()[:a.size] != 0
    special = ~np.isfinite(a) | ~np.isfinite(b) | ((a == 0) & (b == 0))
    assert flagged[special].all()
    want = np.arctan2(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    keep = ~flagged
    assert keep.sum() >= 140
    np.testing.assert_array_equal(got[keep].view(np.uint32), want[keep].view(np.uint32))


@pytest.mark.parametrize("op", ["floor_divide", "div_floor", "div_trunc"])
def test_integral_quotient_ops_keep_signed_zeros_and_exact_integers(op):
    a = np.array([-0.0, 0.0, 0.0, 1e-8, -1e-8, 1.0, 7.0, -7.0, 7.0, 4194303.0, 1.0], np.float32)
    b = np.array([3.0, -3.0, 3.0, 5.0, 5.0, 0.1, 2.0, 2.0, -2.0, 1.0, -np.inf], np.float32)
    mode = {"div_floor": "floor", "div_trunc": "trunc"}.get(op)
    fn = (lambda x, y: nbx.div(x, y, rounding_mode=mode)) if mode else nbx.floor_divide
    got = fn(nbx.from_numpy(a), nbx.from_numpy(b)).numpy()
    sign = np.signbit(a) != np.signbit(b)
    if mode == "trunc":
        want = [math.trunc(float(x) / float(y)) if math.isfinite(y) else 0.0 for x, y in zip(a, b)]
    else:
        want = [float(x) // float(y) for x, y in zip(a, b)]         # Python's: 1.0 // 0.1 == 9.0
    want = np.array([math.copysign(0.0, -1.0 if s else 1.0) if w == 0 else w for w, s in zip(want, sign)],
                    np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@triton.jit
def _hard_kernel(y_ptr, outside_ptr, out_ptr, N: tl.constexpr, K: tl.constexpr):
    i = tl.arange(0, N)
    y = tl.load(y_ptr + i)
    outside = tl.load(outside_ptr + i) != 0
    hard = keys.hard_to_round(y, K)
    by_key = keys.hard_key(y, outside, K) <= 16 * K - 2 ** 31          # the launcher's test of the key
    tl.store(out_ptr + i, hard.to(tl.int8) + 2 * by_key.to(tl.int8))


def _run_hard_kernel(y, outside, k):
    n = triton.next_power_of_2(len(y))
    buf, out_mask = np.zeros(n, np.float64), np.zeros(n, np.int8)
    buf[:len(y)], out_mask[:len(y)] = y, outside
    out = nbx.empty(n, dtype="int8")
    _hard_kernel[(1,)](nbx.from_numpy(buf), nbx.from_numpy(out_mask), out, N=n, K=k)
    return out.numpy()[:len(y)].tolist()


@pytest.mark.parametrize("k", sorted({p.fast.k for p in UNARY}))
def test_hard_to_round_marks_the_window_around_each_float32_midpoint(k):
    one = np.float64(1.0).view(np.int64)
    mid = one + (1 << 28)                                  # 1 + 2^-24: halfway between 1 and its successor
    cases = {mid: 1, mid - k: 1, mid + k: 1, mid - k - 1: 0, mid + k + 1: 0, one: 0,
             np.float64(0.0).view(np.int64): 0,            # exact zeros round to themselves
             np.float64(3.0).view(np.int64) + (1 << 28) + 5: 1,
             np.float64(2.0 ** -126).view(np.int64): 0}
    y = np.array(list(cases), np.int64).view(np.float64)
    y = np.concatenate([y, -y])
    want = [3 * h for h in cases.values()] * 2             # hard_to_round and the key agree
    assert _run_hard_kernel(y, np.zeros(len(y), np.int8), k) == want
    assert keys.key_hard(k) == 16 * k - 2 ** 31


def test_outside_is_hard_and_a_zero_window_flags_only_outside():
    y = np.array([1.0, 1.0 + 2.0 ** -24, 2.5, 7.0])        # 1 + 2^-24 is a float32 midpoint
    outside = np.array([0, 0, 1, 0], np.int8)
    assert [v >> 1 for v in _run_hard_kernel(y, outside, 256)] == [0, 1, 1, 0]
    assert [v >> 1 for v in _run_hard_kernel(y, outside, 0)] == [0, 0, 1, 0]


# ranges whose results are float32 subnormals or round to 0 from normal x: keys.subnormal_hard
# judges them on the fast path instead of sending every such tile to the exact one (expm1, tanh,
# sinh, selu and log1p send their subnormal x to it: only those give subnormal results there)
SUBNORMAL_RANGES = {"sigmoid": (-104.5, -86.0), "silu": (-104.0, -80.0), "mish": (-104.0, -80.0),
                    "gelu": (-12.5, -10.0), "log_sigmoid": (86.0, 104.5), "erfc": (9.1, 10.1)}


@pytest.mark.parametrize("op", sorted(SUBNORMAL_RANGES))
def test_subnormal_results_take_the_fast_path_and_equal_the_exact_body(op):
    from nbx.kernels.launch import LaunchConfig
    from nbx.ops import OPS, registry
    lo, hi = SUBNORMAL_RANGES[op]
    x = nbx.from_numpy(np.linspace(lo, hi, 1 << 14).astype(np.float32))
    params = {"approximate": "tanh"} if op == "gelu" else {}
    got = registry.run(OPS[op], [x], params).numpy()
    want = registry.run(OPS[op], [x], params, config=LaunchConfig(fast=False)).numpy()
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    tiny = (np.abs(want) < 2.0 ** -126)
    assert tiny.sum() > 1000 and (want[tiny] != 0).sum() > 100        # the range holds subnormal results
    probe = next(p for p in UNARY if p.spec.name == op)
    # 2^14 bit patterns from the range's end nearest 0 (away from 0 as the patterns grow) through
    # the probe: few of their tiles fall back
    start = int(np.float32(hi if hi < 0 else lo if lo > 0 else 1e-40).view(np.uint32))
    row = fastpath.probe_unary(probe, 14, start=start, stride=1 if abs(hi) < 1 else 64, chunk_log2=14)
    assert row["wrong"] == 0 and row["tiles_hard"] <= 2, row


COMPILE = r'''
fastpath = importlib.import_module("nbx.harness.suites.fastpath")
PSIG = {"p0": "*fp64", "p1": "*fp64", "p2": "*fp64"}    # the number parameters (as bench/sass_mix.py has them)
SIG = {"err_out": "*fp64", "hard_out": "*i32", "wrong_out": "*i32", "first_out": "*i64", "start": "i64",
       "stride": "i64", **PSIG, "tab": "*fp64"}
BSIG = {"a_ptr": "*fp32", "b_ptr": "*fp32", "wrong_out": "*i32", "outside_out": "*i32", "n": "i32", **PSIG,
        "tab": "*fp64"}
n_params = lambda p: sum(q.kind == "number" for q in p.spec.params)
failed = 0

def compile_probe(label, kernel, signature, const):
    global failed
    src = triton.compiler.ASTSource(fn=kernel, signature={**signature, **{k: "constexpr" for k in const}},
                                    constexprs=const)
    try:
        triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"enable_reflect_ftz": False})
        print("compiled", label)
    except Exception as e:
        failed += 1
        print("FAILED", label, str(e).splitlines()[-1][:200])

for p in fastpath.fast_paths(arity=1):
    if isinstance(p.fast.table, tuple):
        continue                      # kernel parameters (erf, sin, cos, tan): the probes compile on the GPU
    compile_probe(p.label, fastpath._probe, SIG, {"FAST": p.fast.evaluate, "TAB": p.fast.table is not None,
                                            "EXACT": p.exact, "REF": p.fast.reference, "K": p.fast.k,
                                            "NP": n_params(p), "BLOCK": 1024})
for p in fastpath.fast_paths(arity=2):
    compile_probe(p.label, fastpath._probe_binary, BSIG, {"FAST": p.fast.evaluate, "TAB": p.fast.table is not None,
                                                    "EXACT": p.exact, "K": p.fast.k, "NP": n_params(p),
                                                    "BLOCK": 1024})
print("failed", failed)
'''


def test_the_fast_paths_with_a_table_compile_for_sm90(tmp_path):
    """Each unary fast path whose table is an array (or none), with its exact body and reference, and
    each binary one with its exact body, in the probe kernels compiled for sm_90 without a GPU: the
    interpreter runs what the GPU compiler refuses (a plain global read inside a @jit function:
    gelu's window once)."""
    from helpers import run_sm90_script
    r = run_sm90_script(tmp_path, COMPILE)
    assert r.returncode == 0 and "failed 0" in r.stdout and r.stdout.count("compiled") >= 22, \
        r.stdout[-3000:] + r.stderr[-3000:]


@pytest.mark.parametrize("op", ["asinh", "acosh"])
def test_asinh_and_acosh_take_x_for_the_root_from_2_to_26(op):
    # 2^16 bit patterns from 2^25 up to float32's largest (stride 13171): the square root's float32
    # seed would overflow from 2^64, and from 2^26 the root is |x| itself; all on the fast path
    probe = next(p for p in UNARY if p.spec.name == op)
    start = int(np.float32(2.0 ** 25).view(np.uint32))
    row = fastpath.probe_unary(probe, 16, start=start, stride=13171, chunk_log2=16)
    assert row["wrong"] == 0 and row["max_rel_err"] < probe.fast.bound / 8, row
    assert row["hard"] < 64, row            # the midpoint window's share only: none outside
