"""Unary sweeps over ranges of bit patterns decided on the device (nbx/harness/exhaustive.py) give
the figures the host's scoring gives over the same inputs, and `bits` restricts a job to a range."""
import dataclasses
import math

import numpy as np
import pytest
import triton
import triton.language as tl  # noqa: F401  (the planted body is Triton code)

import nbx
from nbx.harness.inputs import cases
from nbx.harness.suites import exhaustive
from nbx.harness import api
from nbx.harness.scoring.host import Accumulator, score
from nbx.harness.targets.target import Target

RANGES = {"float32": (0xb6c00000, 0xb6c00000 + (1 << 18)), "float16": (0x0000, 0x10000),
          "bfloat16": (0x8000, 0x10000)}


def _host(t, lo, hi, errors=False):
    acc = Accumulator(t, "sweep", nbx.backend_id())
    if t.dtype is nbx.float32:
        chunks = cases.exhaustive32_chunks(1 << 16, lo, hi)
    else:
        chunks = [cases.exhaustive16(t.dtype)[lo:hi]]
    err = []
    for x in chunks:
        got = t.run([x])
        b = score(t, [x], got)
        acc.add([x], got, b)
        err.append(b.err)
    return (acc.measurement(0.0), np.concatenate(err)) if errors else acc.measurement(0.0)


@pytest.mark.parametrize("op, params, dtype", [("sigmoid", {}, "float32"), ("gelu", {"approximate": "tanh"}, "float16"),
                                               ("elu", {"alpha": 0.5}, "bfloat16"), ("log_sigmoid", {}, "float32"),
                                               ("sin", {}, "float16")])
def test_device_sweep_matches_the_host(op, params, dtype):
    t = Target(op, params, nbx.DTYPES[dtype])
    assert exhaustive.device_oracle(t) is not None
    lo, hi = RANGES[dtype]
    dev = api.measure(t, "sweep" if dtype == "float32" else "exhaustive16", bits=(lo, hi))
    host, err = _host(t, lo, hi, errors=True)
    assert not dev.error, dev.error
    assert dev.cases == host.cases == hi - lo
    assert (dev.not_correctly_rounded, dev.special_mismatches) == (host.not_correctly_rounded, host.special_mismatches)
    assert math.isclose(dev.max_ulp, host.max_ulp, rel_tol=1e-6, abs_tol=1e-9)
    assert math.isclose(dev.mean_ulp, host.mean_ulp, rel_tol=1e-6, abs_tol=1e-9)
    # a float64 midpoint whose residual decides it (elu(alpha = 0.5) of the subnormals: alpha x) is
    # 0.5 ulp from the result on the host and a float64 ulp less or more on the device: either side
    # of the 0.5 edge
    edge = int((np.abs(err - 0.5) < 1e-6).sum())
    d, h = dev.hist["counts"], host.hist["counts"]
    assert d[2:] == h[2:] and d[0] + d[1] == h[0] + h[1] and abs(d[0] - h[0]) <= edge
    assert dev.p999_ulp >= host.p999_ulp - 1e-9            # a bin's upper edge, at most the maximum
    assert dev.p999_ulp <= dev.max_ulp
    if host.not_correctly_rounded:
        assert any("NOT" not in w.note and w.expected != w.got for w in dev.worst)


@pytest.mark.parametrize("op, params, dtype", [("add", {}, "bfloat16"), ("add", {}, "float16"), ("div", {}, "float16"),
                                               ("atan2", {}, "float16"),
                                               ("fmax", {}, "bfloat16"), ("sub", {"alpha": 3}, "float16"),
                                               ("pow", {}, "bfloat16"), ("floor_divide", {}, "float16"),
                                               ("div", {"rounding_mode": "trunc"}, "bfloat16"),
                                               ("remainder", {}, "float16"), ("swiglu", {}, "bfloat16"),
                                               ("glu", {}, "float16"), ("silu_and_mul", {}, "bfloat16")])
def test_device_pairs_match_the_host(op, params, dtype):
    # 2^16 consecutive pair indices from 0x3c00_0000: a = 1.0 (float16) or 2^-7 (bfloat16), every b
    dev = _pairs_on_both(Target(op, params, nbx.DTYPES[dtype]), 0x3C000000)
    if op == "add" and dtype == "float16":
        assert dev.undecided == 0                          # float16 sums are exact: their ties decided


@triton.jit
def _sub_rounded_twice(a, b, alpha):
    # float32 operands: alpha*b is exact, the difference rounds to float32 and the store again
    return a - alpha * b


def _plant_sub_rounded_twice(monkeypatch):
    """sub through float32 (nbx rounds a - alpha*b once, from float64 rounded to odd)."""
    from nbx.harness.targets import target
    from nbx.ops.registry import make_function
    planted = dataclasses.replace(nbx.OPS["sub"], body=lambda p, t: _sub_rounded_twice)
    monkeypatch.setitem(target.FUNCTIONS, "sub", make_function(planted))


def test_the_overflow_edge_is_a_rounding_on_both_sides(monkeypatch):
    # a = -2^-10, every b: a - 3b computed in float32 (planted) lands on 65520, float16's overflow
    # midpoint, for b = -21840 and its neighbours below (the exact value a hair under it):
    # ties-to-even gives inf where 65504 is due. A misrounding at the overflow edge
    # (ulp.overflow_edge), on both sides.
    _plant_sub_rounded_twice(monkeypatch)
    t = Target("sub", {"alpha": 3}, nbx.float16)
    dev = _pairs_on_both(t, 0x94000000)
    assert dev.special_mismatches == 0 and dev.not_correctly_rounded > 0
    assert 0.5 < dev.max_ulp < 0.5001
    one = api.measure(t, "pairs", bits=(0x9400F555, 0x9400F556))
    assert (one.not_correctly_rounded, one.special_mismatches) == (1, 0)
    assert (one.worst[0].got, one.worst[0].expected) == ("0x7c00", "0x7bff")     # inf for 65504


def _pairs_on_both(t, lo):
    """The device's and the host's figures over 2^16 pair indices from lo agree; the device's."""
    d = t.dtype
    assert exhaustive.device_oracle(t) is not None
    hi = lo + (1 << 16)
    dev = api.measure(t, "pairs", bits=(lo, hi))
    acc = Accumulator(t, "pairs", nbx.backend_id())
    idx = np.arange(lo, hi, dtype=np.uint64)
    a, b = (idx >> 16).astype(d.uint_np).view(d.np), (idx & 0xFFFF).astype(d.uint_np).view(d.np)
    got = t.run([a, b])
    acc.add([a, b], got, score(t, [a, b], got))
    host = acc.measurement(0.0)
    assert not dev.error, dev.error
    assert dev.cases == host.cases == hi - lo
    assert (dev.not_correctly_rounded, dev.special_mismatches) == (host.not_correctly_rounded, host.special_mismatches)
    assert math.isclose(dev.max_ulp, host.max_ulp, rel_tol=1e-6, abs_tol=1e-9)
    assert dev.hist["counts"] == host.hist["counts"]
    return dev


EXACT_UNARY = ["to:dtype=bool", "to:dtype=uint8", "to:dtype=int8", "to:dtype=int32", "to:dtype=int64",
               "to:dtype=float16", "to:dtype=bfloat16", "to:dtype=float64", "nan_to_num", "clamp:max=2.5,min=-1.5",
               "clamp:max=1,min=100", "clamp:min=-1.5", "isfinite", "isinf", "isnan", "signbit", "logical_not"]
# float32 patterns: -0.0 and the negative subnormals, 127.5 .. 300 (int8's and uint8's saturation),
# around 2^31 and 2^63 (int32's and int64's), the largest finite values, inf and the NaNs (both signs)
EXACT_RANGES = [(0x80000000, 0x80000400), (0x42FF0000, 0x42FF0400), (0x4EFFFE00, 0x4F000200),
                (0x5EFFFE00, 0x5F000200), (0x7F7FFE00, 0x7F800200), (0xFF7FFE00, 0xFF800200),
                (0xBFC00000, 0xBFC00400)]


def _target(label, dtype):
    op, _, rest = label.partition(":")
    params = {}
    for kv in filter(None, rest.split(",")):
        k, v = kv.split("=")
        params[k] = v if k == "dtype" else float(v)
    return Target(op, params, nbx.DTYPES[dtype])


@pytest.mark.parametrize("label", EXACT_UNARY)
def test_exact_results_decided_on_the_device_match_the_host(label):
    # bool, integer and cast results, scored exactly on the device over ranges full of specials and
    # saturation points: the same cases, wrong results, misrounded ones and special mismatches as
    # the host finds
    t = _target(label, "float32")
    assert exhaustive.device_oracle(t) is not None, label
    for lo, hi in EXACT_RANGES:
        dev = api.measure(t, "sweep", bits=(lo, hi))
        host = _host(t, lo, hi)
        assert not dev.error, dev.error
        assert dev.cases == host.cases == hi - lo
        assert (dev.wrong, dev.not_correctly_rounded, dev.special_mismatches) == \
            (host.wrong, host.not_correctly_rounded, host.special_mismatches), (label, hex(lo))
        assert dev.wrong == 0 and dev.not_correctly_rounded == 0, (label, hex(lo))


@pytest.mark.parametrize("op", ["eq", "lt", "ge", "logical_xor", "logical_and"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_exact_pairs_decided_on_the_device_match_the_host(op, dtype):
    # a = +inf (float16 0x7c00), then NaNs; for bfloat16 2^121 and up: every b against each
    t = Target(op, {}, nbx.DTYPES[dtype])
    assert exhaustive.device_oracle(t) is not None
    lo, hi = 0x7C00_0000 - (1 << 15), 0x7C00_0000 + (1 << 17)
    dev = api.measure(t, "pairs", bits=(lo, hi))
    assert not dev.error, dev.error
    assert dev.cases == hi - lo and dev.wrong == 0


def test_a_wrong_exact_result_is_counted_with_its_input():
    # isnan planted wrong at one input: the device counts it as wrong and lists it
    from nbx.oracles.device import DEVICE_ORACLES
    from nbx.harness.scoring import device as device_scoring
    from nbx.harness.inputs import patterns
    x = patterns.bit_patterns("float32", 0x7F7FFFF0, 64)               # finite, inf, NaNs
    got = nbx.isnan(x).numpy().copy()
    got[20] = ~got[20]
    s = device_scoring.score(DEVICE_ORACLES["isnan"], [x], nbx.from_numpy(got))
    assert s.exact and (s.decided, s.misrounded) == (64, 1) and s.failing_at.tolist() == [20]
    y = nbx.to(x, dtype="int64")                                  # inf -> 2^63 - 1: saturated, right
    assert device_scoring.score(DEVICE_ORACLES["to:dtype=int64"], [x], y, [-2.0 ** 63, 2.0 ** 63 - 1]).misrounded == 0
    bad = y.numpy().copy()
    bad[16] -= 1                                                  # 2^63 - 2 at +inf: float64 cannot tell it
    s = device_scoring.score(DEVICE_ORACLES["to:dtype=int64"], [x], nbx.from_numpy(bad), [-2.0 ** 63, 2.0 ** 63 - 1])
    assert s.misrounded == 1 and s.failing_at.tolist() == [16]


def test_sigmoid_near_minus_6e_minus_6_is_settled_by_its_table(monkeypatch):
    # the case a sampled nightly did not see: float64's sigmoid lands on a float32 midpoint that the
    # exact value misses by its x^3/48 term; sigmoid's hard-case table (kernels/hard32.py) settles it,
    # and without the table the sweep finds it misrounded
    from nbx.kernels import hard32
    t = Target("sigmoid", {}, nbx.float32)
    m = api.measure(t, "sweep", bits=(0xb6c60000, 0xb6c60001))
    assert m.cases == 1 and m.not_correctly_rounded == 0
    monkeypatch.setattr(hard32, "cases", lambda name: None)
    m = api.measure(t, "sweep", bits=(0xb6c60000, 0xb6c60001))
    assert m.cases == 1 and m.not_correctly_rounded == 1
    assert m.worst and m.worst[0].inputs == ["0xb6c60000"]


@pytest.mark.parametrize("block, tiles", [(1024, 5), (4096, 3)])
def test_programs_of_several_tiles_give_the_figures_of_one_tile_each(monkeypatch, block, tiles):
    # a score program loops over TILES tiles and stores once (as on CUDA); over 2^16 + 77 inputs of
    # sigmoid around -6e-6 (one undecided; every 97th result planted one ulp up; a partial last tile
    # and program), every figure equals the one-tile-per-program figures
    from nbx.oracles.device import DEVICE_ORACLES
    from nbx.harness.inputs import patterns
    from nbx.harness.scoring import device as device_scoring
    oracle = DEVICE_ORACLES["sigmoid"]
    lo, n = 0xb6c60000 - 40000, (1 << 16) + 77
    x = patterns.bit_patterns("float32", lo, n)
    bits = nbx.sigmoid(x).numpy().view(np.uint32).copy()
    bits[::97] += 1
    got = nbx.from_numpy(bits.view(np.float32))

    def run(b, k):
        monkeypatch.setattr(device_scoring, "BLOCK", b)
        monkeypatch.setattr(device_scoring, "TILES", k)
        return device_scoring.score(oracle, [x], got)

    one, many = run(1 << 10, 1), run(block, tiles)
    assert one.misrounded == len(range(0, n, 97)) and one.undecided == 1 and one.err_max > 1
    for name in ("n", "decided", "misrounded", "specials", "undecided", "err_count", "argmax", "err_max"):
        assert getattr(many, name) == getattr(one, name), name
    assert math.isclose(many.err_sum, one.err_sum, rel_tol=1e-12)
    assert many.hist.tolist() == one.hist.tolist()
    assert many.failing_at.tolist() == one.failing_at.tolist()
    assert many.undecided_at.tolist() == one.undecided_at.tolist()


def test_a_host_quota_leaves_undecided_inputs_out_and_counts_them():
    # sigmoid over 2^16 + 77 inputs around -6e-6 leaves one undecided (device_score); with no host
    # quota it is left out: in no figure, counted
    t = Target("sigmoid", {}, nbx.float32)
    lo, n = 0xb6c60000 - 40000, (1 << 16) + 77
    full = Accumulator(t, "sweep", nbx.backend_id())
    assert exhaustive.sweep(t, lo, lo + n, full) == 0
    assert full.undecided == 1 and full.cases == n
    acc = Accumulator(t, "sweep", nbx.backend_id())
    assert exhaustive.sweep(t, lo, lo + n, acc, max_host=0) == 1
    assert acc.cases == n - 1 and acc.undecided == 0


def test_a_chunk_that_finds_no_device_memory_is_halved_and_counted_once(monkeypatch):
    # other shards hold the GPU's memory: a chunk whose op finds none is retried at half the size
    # (the out-of-memory error is simulated: it cannot be provoked under the interpreter)
    from nbx.errors import DeviceOOMError

    class Crowded(Target):
        def run_device(self, xs):
            if xs[0].numel() > 1 << 17:
                raise DeviceOOMError(xs[0].numel() * 4, "cuda:0", "0.01 GiB free of 139.80 GiB")
            return super().run_device(xs)

    monkeypatch.setattr(exhaustive, "MIN_CHUNK", 1 << 16)
    lo, hi = 0x3f800000, 0x3f800000 + (1 << 19)
    plain, crowded = Accumulator(Target("exp", {}, nbx.float32), "sweep", nbx.backend_id()), None
    exhaustive.sweep(Target("exp", {}, nbx.float32), lo, hi, plain, chunk=1 << 19)
    crowded = Accumulator(Crowded("exp", {}, nbx.float32), "sweep", nbx.backend_id())
    exhaustive.sweep(Crowded("exp", {}, nbx.float32), lo, hi, crowded, chunk=1 << 19)
    assert crowded.cases == plain.cases == hi - lo
    assert (crowded.err_max, crowded.hist.tolist()) == (plain.err_max, plain.hist.tolist())
    assert math.isclose(crowded.err_sum, plain.err_sum, rel_tol=1e-12)
    monkeypatch.setattr(exhaustive, "MIN_CHUNK", 1 << 18)        # no smaller chunk allowed: the error stands
    with pytest.raises(DeviceOOMError):
        exhaustive.sweep(Crowded("exp", {}, nbx.float32), lo, hi, Accumulator(Crowded("exp", {}, nbx.float32), "sweep",
                                                                     nbx.backend_id()), chunk=1 << 19)


def test_ops_without_a_device_oracle_sweep_on_the_host():
    assert exhaustive.device_oracle(Target("add", {}, nbx.float64)) is None    # float64: mpmath decides
    assert exhaustive.device_oracle(Target("sin", {}, nbx.float64)) is None
    assert exhaustive.device_oracle(Target("where", {}, nbx.float32)) is None  # a mask operand
    assert exhaustive.device_oracle(Target("lerp", {}, nbx.float16)) is None   # 16-bit: pairs only
    # float32 binary and ternary ops, split ops: the stratified sample (tests/test_stratified.py)
    assert exhaustive.device_oracle(Target("add", {}, nbx.float32)) is not None
    assert exhaustive.device_oracle(Target("glu", {}, nbx.bfloat16)) is not None


def test_nbx_run_bits_restricts_a_sweep_to_a_range(tmp_path):
    from nbx.cli import main
    from nbx.harness.report import load_report
    out = tmp_path / "r"
    assert main(["run", "--op", "sigmoid", "--dtype", "float32", "--suite", "sweep", "--bits",
                 "0xb6c60000:0xb6c60100", "--out", str(out), "--quiet"]) in (0, 1)
    m = load_report(out).measurements
    assert len(m) == 1 and m[0].cases == 256 and m[0].not_correctly_rounded == 0     # 0xb6c60000 settled


@pytest.mark.parametrize("bad", ["12", "0x10:0x5", "a:b", "0:0x100000001"])
def test_nbx_run_refuses_a_bad_bits_range(bad, capsys):
    from nbx.cli import main
    with pytest.raises(SystemExit) as e:
        main(["run", "--op", "exp", "--bits", bad])
    assert e.value.code == 2 and "--bits" in capsys.readouterr().err


def test_the_summary_lists_device_decided_jobs(tmp_path):
    from nbx.cli import main
    out = tmp_path / "r"
    main(["run", "--op", "sigmoid", "--dtype", "float32", "--suite", "sweep", "--bits", "0xb6c60000:0xb6c70000",
          "--out", str(out), "--quiet"])
    text = (out / "summary.md").read_text()
    section = text.split("## Every input, decided on the device")[1].split("##")[0]
    row = [ln for ln in section.splitlines() if ln.startswith("| sigmoid")][0].split("|")
    assert row[4].strip() == "65,536" and int(row[5].strip().replace(",", "")) == 0


def test_a_list_full_of_failing_inputs_keeps_every_undecided_one_and_the_first_failing(monkeypatch):
    # a planted double rounding, sub:alpha=3 through float32 on bfloat16, misrounds ~6.6% of its
    # pairs: with a list of 64 every launch overflows on failing inputs; the chunk is scored again
    # listing undecided inputs and special mismatches, and its first failing ones come from its
    # sixteenths in order, as a list without limit gives them
    _plant_sub_rounded_twice(monkeypatch)
    t = Target("sub", {"alpha": 3}, nbx.bfloat16)
    lo, hi = 0x3F800000, 0x3F800000 + (1 << 16)
    whole = api.measure(t, "pairs", bits=(lo, hi))
    assert whole.not_correctly_rounded > 4 * 64
    calls = []
    real = exhaustive.device_scoring.score
    monkeypatch.setattr(exhaustive.device_scoring, "score",
                        lambda *a, **k: calls.append(k.get("listed", 2)) or real(*a, **k))
    monkeypatch.setattr(exhaustive, "LIST_CAP", 64)
    parts = api.measure(t, "pairs", bits=(lo, hi))
    assert (parts.cases, parts.not_correctly_rounded, parts.special_mismatches, parts.undecided, parts.max_ulp,
            parts.hist) == (whole.cases, whole.not_correctly_rounded, whole.special_mismatches, whole.undecided,
                            whole.max_ulp, whole.hist)
    assert [w.inputs for w in parts.worst] == [w.inputs for w in whole.worst]
    # 19 launches: the whole, again listing undecided and specials, the sixteenths up to the first
    # failing ones (one of them in parts); 16 parts at each level took 273
    assert 1 in calls and len(calls) < 40


@triton.jit
def _exp_off(x, p0, p1):
    # exp with a relative error of 2^-26 (an eighth of a float32 ulp at most), claiming k = 1
    return tl.exp(x.to(tl.float64)) * (1.0 + 2.0 ** -26)


def test_a_device_oracle_off_its_bound_raises_where_the_host_disagrees(monkeypatch):
    """The device decides with an oracle that claims 1 float64 ulp and is 2^27 off: results nbx
    rounds correctly are counted misrounded on the device; the host's mpmath rescoring of the
    first of them disagrees, and the job raises, naming the input (the gate fails on it)."""
    t = Target("exp", {}, nbx.float32)
    planted = dataclasses.replace(exhaustive.device_oracle(t), fn=_exp_off, k=1.0)
    monkeypatch.setattr(exhaustive, "device_oracle", lambda target: planted)
    with pytest.raises(RuntimeError, match=r"exp float32: the device scorer counts input 0x3f[0-9a-f]{6} .* "
                                           r"the host's mpmath finds it correct"):
        exhaustive.sweep(t, 0x3F800000, 0x3F800000 + (1 << 16), Accumulator(t, "sweep", nbx.backend_id()))


def test_a_misrounded_result_leads_the_worst_inputs_over_correct_ones_as_far_off():
    """Failing cases rank above every correct one: a tie broken the wrong way (0.5 ulp, misrounded)
    stays first when ten correctly rounded ties (0.5 ulp each) come after it."""
    from nbx.harness.scoring.host import Batch
    t = Target("exp", {}, nbx.float32)
    acc = Accumulator(t, "sweep", nbx.backend_id())
    x = np.arange(10, dtype=np.float32)
    not_cr = np.arange(10) == 3
    acc.add([x], x.copy(), Batch(np.full(10, 0.5), np.zeros(10, bool), not_cr, x.view(np.uint32).copy(), False))
    acc.add([x + 20], x + 20, Batch(np.full(10, 0.5), np.zeros(10, bool), np.zeros(10, bool),
                                    (x + 20).view(np.uint32).copy(), False))
    worst = acc.measurement(0.0).worst
    assert worst[0].inputs == ["0x40400000"] and len(worst) == 8
    assert sum(w.inputs == ["0x40400000"] for w in worst) == 1
    # within one batch too: the wrong tie is the 12th of 12 ties, and still listed first
    acc = Accumulator(t, "sweep", nbx.backend_id())
    x = np.arange(12, dtype=np.float32)
    acc.add([x], x.copy(), Batch(np.full(12, 0.5), np.zeros(12, bool), np.arange(12) == 11,
                                 x.view(np.uint32).copy(), False))
    assert acc.measurement(0.0).worst[0].inputs == ["0x41300000"]
