"""Stratified float32 tuples of binary and ternary ops, made and decided on the device
(device_score.stratified_tuples, exhaustive.sample): the generator is deterministic and regenerated
bit for bit on the host, covers every binade pair, the special crossings and near-equal operands at
the test size, and the device's figures equal the host's scoring of the same tuples; a planted
error is found and its tuple regenerated."""
import math

import numpy as np
import pytest

import nbx
from nbx.harness.inputs import cases
from nbx.harness.scoring import device as device_scoring
from nbx.harness.inputs import patterns
from nbx.harness.inputs import stratified
from nbx.harness.suites import exhaustive
from nbx.harness import api
from nbx.harness.suites import values
from nbx.harness.scoring.host import Accumulator, score
from nbx.harness.targets.target import Target
from nbx.ops import FUNCTIONS


SP = np.array(stratified.SPECIALS32, dtype=np.int64)


def _bits(x):
    return x.view(np.uint32).astype(np.int64)


def _se(x):
    """Sign and exponent field (9 bits)."""
    return _bits(x) >> 23


def _order(b):
    """Float32 bit patterns as integers in value order (both zeros at 0)."""
    m = b & 0x7FFFFFFF
    return np.where(b >> 31 == 1, -m, m)


@pytest.fixture(scope="module")
def rounds():
    """One round of the generator per arity, made on the device: what the interpreter's profile
    count covers at least."""
    out = {}
    for arity in (2, 3):
        assert stratified.ROUND[arity] <= cases.PROFILES["exhaustive"]["pairs32_interpreter"]
        out[arity] = [x.numpy() for x in stratified.stratified_tuples(arity, 0x5EED, 0, stratified.ROUND[arity])]
    return out


@pytest.mark.parametrize("arity", [2, 3])
def test_tuples_are_regenerated_on_the_host_bit_for_bit(arity, rounds):
    dev = rounds[arity]
    host = stratified.tuples_host(arity, 0x5EED, np.arange(stratified.ROUND[arity]))
    for d, h in zip(dev, host):
        assert np.array_equal(_bits(d), _bits(h))
    # far indices (a 2^32 run's last chunk, 2^40), any key; the same key twice: the same tuples
    for key, start in ((-7, (1 << 32) - 3000), ((1 << 64) - 3, 1 << 40), (12345, 777)):
        d1 = [x.numpy() for x in stratified.stratified_tuples(arity, key, start, 3000)]
        d2 = [x.numpy() for x in stratified.stratified_tuples(arity, key, start, 3000)]
        h = stratified.tuples_host(arity, key, np.arange(start, start + 3000))
        for a, b, c in zip(d1, d2, h):
            assert np.array_equal(_bits(a), _bits(b)) and np.array_equal(_bits(a), _bits(c))
    other = stratified.tuples_host(arity, 0x5EEE, np.arange(4096))
    assert not np.array_equal(_bits(other[0]), _bits(dev[0][:4096]))


def test_the_hash_is_splitmix64():
    def splitmix(state):
        m = (1 << 64) - 1
        z = (state + stratified.GOLDEN) & m
        z = ((z ^ (z >> 30)) * stratified.M1) & m
        z = ((z ^ (z >> 27)) * stratified.M2) & m
        return z ^ (z >> 31)
    z = stratified._mix64_np(np.array([(123 + 5 * stratified.GOLDEN) % (1 << 64)], dtype=np.uint64))
    assert int(z[0]) == splitmix(123 + 4 * stratified.GOLDEN)


def test_a_target_and_seed_make_the_key():
    t = Target("add", {}, nbx.float32)
    assert exhaustive.tuple_key(t, 0) == exhaustive.tuple_key(t, 0) != exhaustive.tuple_key(t, 1)
    assert exhaustive.tuple_key(t, 0) != exhaustive.tuple_key(Target("sub", {}, nbx.float32), 0)


@pytest.mark.parametrize("arity", [2, 3])
def test_one_round_covers_every_binade_pair_and_special_crossing(arity, rounds):
    xs = rounds[arity]
    se = [_se(x) for x in xs]
    bits = [_bits(x) for x in xs]
    # every pair of operands meets every pair of (sign, exponent field): 2^18, subnormals included
    for i in range(arity):
        for j in range(i + 1, arity):
            assert len(np.unique(se[i] * 512 + se[j])) == 1 << 18
    assert all(((s & 255) == 0).any() and ((b & 0x7FFFFF) != 0)[(s & 255) == 0].any() for s, b in zip(se, bits))
    # each special at each position, crossed with every sign and exponent of each other operand
    for p in range(arity):
        for q in range(arity):
            if q != p:
                for v in SP:
                    assert len(np.unique(se[q][bits[p] == v])) == 512, (p, q, hex(v))
    # every pair (triple) of specials
    every = np.logical_and.reduce([np.isin(b, SP) for b in bits])
    assert len({tuple(int(b[k]) for b in bits) for k in np.flatnonzero(every)}) == stratified.NS ** arity
    # near-equal operands: within 4 float32 values of the other (or of its negation), in every
    # binade of the base; and rounded relative perturbations 2^-k for every k up to 24
    pairs = [(0, 1)] if arity == 2 else [(0, 1), (0, 2), (1, 2)]
    for i, j in pairs:
        finite = (bits[i] & 0x7FFFFFFF) < 0x7F800000
        same = finite & (np.abs(_order(bits[i]) - _order(bits[j])) <= 4) & (bits[i] != bits[j])
        opposite = finite & (np.abs(_order(bits[i]) + _order(bits[j])) <= 4)
        for near in (same, opposite):
            assert len(np.unique(se[i][near] & 255)) == 255, (i, j)     # every finite exponent field
    with np.errstate(all="ignore"):
        a, b = xs[0].astype(np.float64), xs[1].astype(np.float64)
        k = -np.log2(np.abs(b / a - 1))
        ks = set(np.round(k[np.isfinite(k) & (np.abs(k - np.round(k)) < 0.01)]).astype(int).tolist())
    assert set(range(1, 25)) <= ks
    if arity == 3:
        # cancellation of addcmul's x + t1 t2 and addcdiv's x + t1 / t2: a within a few values of
        # -(b c) and of -(b / c), in every binade of b
        with np.errstate(all="ignore"):
            prod = (xs[1].astype(np.float64) * xs[2]).astype(np.float32)
            quot = (xs[1].astype(np.float64) / xs[2]).astype(np.float32)
        for r in (prod, quot):
            near = np.abs(_order(bits[0]) + _order(_bits(r))) <= 4
            near &= (bits[0] & 0x7FFFFFFF) < 0x7F800000
            assert set(range(1, 255)) <= set((se[1][near] & 255).tolist())       # every normal binade


def _host_measurement(t, lo, hi, seed=0, errors=False):
    arrays = exhaustive.tuples(t, seed, np.arange(lo, hi))
    acc = Accumulator(t, "pairs", nbx.backend_id())
    with np.errstate(all="ignore"):
        got = t.run(arrays)
        b = score(t, arrays, got)
        acc.add(arrays, got, b)
    return (acc.measurement(0.0), b.err) if errors else acc.measurement(0.0)


# every class: the end of the grid, all of the near-equal block, the start of the specials
SPAN = (stratified.GRID - (1 << 14), stratified.GRID + stratified.NEAR + (1 << 15))


# The host's ulp figure is the distance to its float64 oracle's value: where that form cancels
# (lerp's start + w (end - start), addcdiv's x + t1 / t2 near x = -t1 / t2) it is off by up to
# ~0.02 ulp, while the device's forms are exact there (test_device_figures_are_exact_...); the
# counts are decisions (mpmath for close calls) and must agree exactly.
CANCELS = 0.02


@pytest.mark.parametrize("op, params, tol", [("add", {}, 0), ("sub", {"alpha": 3}, 0), ("mul", {}, 0), ("div", {}, 0),
                                             ("div", {"rounding_mode": "floor"}, 0), ("remainder", {}, 0),
                                             ("atan2", {}, 0), ("hypot", {}, 0), ("pow", {}, 0), ("fmax", {}, 0),
                                             ("swiglu", {}, 0), ("glu", {}, 0), ("silu_and_mul", {}, 0),
                                             ("lerp", {}, CANCELS), ("addcmul", {}, 0), ("addcdiv", {}, CANCELS)])
def test_device_sample_matches_the_host(op, params, tol):
    t = Target(op, params, nbx.float32)
    assert exhaustive.sampled(t)
    lo, hi = SPAN
    dev = api.measure(t, "pairs", bits=(lo, hi))
    host, err = _host_measurement(t, lo, hi, errors=True)
    assert not dev.error, dev.error
    assert dev.cases == host.cases == hi - lo
    assert dev.decided_on_device + dev.undecided == hi - lo
    assert (dev.not_correctly_rounded, dev.special_mismatches) == \
        (host.not_correctly_rounded, host.special_mismatches)
    assert math.isclose(dev.max_ulp, host.max_ulp, rel_tol=1e-6, abs_tol=tol or 1e-9)
    assert math.isclose(dev.mean_ulp, host.mean_ulp, rel_tol=1e-6, abs_tol=tol or 1e-9)
    # an error within the host value's reach of the 0.5 edge may fall on either side of it
    edge = int((np.abs(err - 0.5) < max(tol, 1e-6)).sum())
    d, h = dev.hist["counts"], host.hist["counts"]
    assert d[2:] == h[2:] and d[0] + d[1] == h[0] + h[1] and abs(d[0] - h[0]) <= edge
    for w in dev.worst:                        # each names its tuple, which the host regenerates
        if "stratified tuple" in w.note:
            i = int(w.note.split("stratified tuple ")[1].split()[0], 16)
            assert [hex(int(v)) for v in _bits_all(exhaustive.tuples(t, 0, [i]))] == w.inputs


@pytest.mark.parametrize("op", ["lerp", "addcdiv"])
def test_device_figures_are_exact_where_the_hosts_float64_cancels(op):
    from fractions import Fraction
    from nbx.oracles.device import DEVICE_ORACLES
    t = Target(op, {}, nbx.float32)
    lo, hi = stratified.GRID, stratified.GRID + stratified.NEAR                      # the near-equal block
    xs = stratified.stratified_tuples(3, exhaustive.tuple_key(t, 0), lo, hi - lo)
    got = t.run_device(xs)
    s = device_scoring.score(DEVICE_ORACLES[op], xs, got, [1.0] if op == "addcdiv" else [])
    assert s.argmax >= 0 and s.err_max >= 0.5     # (above 0.5 under the interpreter: 0.5151 for lerp)
    a, b, c = (Fraction(float(v)) for v in (patterns.take(x, [s.argmax])[0] for x in xs))
    exact = a + b / c if op == "addcdiv" else a + c * (b - a)
    e = max(math.frexp(float(abs(exact)))[1] - 1, -126)
    err = abs(Fraction(float(patterns.take(got, [s.argmax])[0])) - exact) / Fraction(2) ** (e - 23)
    assert abs(float(err) - s.err_max) < 1e-6


def _bits_all(arrays):
    return [_bits(a)[0] for a in arrays]


@pytest.mark.parametrize("op", ["add", "addcmul"])
def test_a_planted_error_is_found_and_its_tuple_regenerated(op, monkeypatch):
    t = Target(op, {}, nbx.float32)
    real = FUNCTIONS[op]
    lo, hi = 0, 1 << 16
    # one ulp off where a's low 9 bits are 0x0A7 (an error away from zero), NaN where they are 0x1C3
    def plant(a_bits, r):
        r = r.copy()
        rb = r.view(np.uint32)
        finite = np.isfinite(r) & (np.abs(r) < np.float32(3e38))
        off = finite & ((a_bits & 0x1FF) == 0x0A7)
        nan = finite & ((a_bits & 0x1FF) == 0x1C3)
        rb[off] += np.uint32(1)
        r[nan] = np.nan
        return r, int(off.sum()), int(nan.sum())

    def planted(*xs, **kw):
        r = real(*xs, **kw)
        out, _, _ = plant(xs[0].numpy().view(np.uint32), r.numpy())
        return nbx.from_numpy(out)

    arrays = exhaustive.tuples(t, 0, np.arange(lo, hi))
    base = _host_measurement(t, lo, hi)
    with np.errstate(all="ignore"):
        _, n_off, n_nan = plant(arrays[0].view(np.uint32), t.run(arrays))
    assert n_off > 50 and n_nan > 50
    monkeypatch.setitem(FUNCTIONS, op, planted)
    dev = api.measure(t, "pairs", bits=(lo, hi))
    assert not dev.error, dev.error
    assert dev.not_correctly_rounded == base.not_correctly_rounded + n_off
    assert dev.special_mismatches == base.special_mismatches + n_nan
    named = [w for w in dev.worst if "stratified tuple" in w.note]
    assert len(named) >= 4
    assert any(w.got == "0x7fc00000" for w in named)          # a planted NaN, named among the worst
    for w in named:
        i = int(w.note.split("stratified tuple ")[1].split()[0], 16)
        assert lo <= i < hi
        again = exhaustive.tuples(t, 0, [i])
        assert [hex(int(v)) for v in _bits_all(again)] == w.inputs
        # a planted tuple, or one the op itself misrounds (addcmul's double-rounding ties)
        planted_here = int(_bits(again[0])[0]) & 0x1FF in (0x0A7, 0x1C3)
        assert planted_here or score(t, again, real(*[nbx.from_numpy(a) for a in again]).numpy()).not_cr[0]


def test_a_full_list_is_scored_in_parts_and_the_host_budget_leaves_tuples_out(monkeypatch):
    import dataclasses
    from nbx.oracles.device import DEVICE_ORACLES
    t = Target("glu", {}, nbx.float32)
    # without its residual glu leaves ~1% undecided (a subnormal times ~1/2)
    monkeypatch.setitem(DEVICE_ORACLES, "glu", dataclasses.replace(DEVICE_ORACLES["glu"], residual=None))
    lo, hi = stratified.GRID + stratified.NEAR, stratified.GRID + stratified.NEAR + (1 << 13)
    whole = Accumulator(t, "pairs", nbx.backend_id())
    assert exhaustive.sample(t, lo, hi, whole) == 0
    m = whole.measurement(0.0)
    assert m.cases == hi - lo and m.undecided > 4 * 64
    monkeypatch.setattr(exhaustive, "LIST_CAP", 64)        # every launch's list overflows: parts
    parts = Accumulator(t, "pairs", nbx.backend_id())
    exhaustive.sample(t, lo, hi, parts, chunk=1 << 12)
    p = parts.measurement(0.0)
    assert (p.cases, p.not_correctly_rounded, p.special_mismatches, p.undecided, p.max_ulp, p.hist) == \
        (m.cases, m.not_correctly_rounded, m.special_mismatches, m.undecided, m.max_ulp, m.hist)
    capped = Accumulator(t, "pairs", nbx.backend_id())
    left = exhaustive.sample(t, lo, hi, capped, chunk=1 << 12, max_host=40)
    c = capped.measurement(0.0)
    assert left == m.undecided - c.undecided and c.undecided == 40 and left > 0
    assert c.cases == hi - lo - left
    # a quota as large as the undecided count decides every one of them, however they fall over the
    # chunks: what a chunk's share leaves is set aside and decided at the end (HostQuota.finish)
    enough = Accumulator(t, "pairs", nbx.backend_id())
    assert exhaustive.sample(t, lo, hi, enough, chunk=1 << 11, max_host=m.undecided) == 0
    e = enough.measurement(0.0)
    assert (e.cases, e.undecided, e.not_correctly_rounded, e.max_ulp, e.hist) == \
        (m.cases, m.undecided, m.not_correctly_rounded, m.max_ulp, m.hist)


def test_nbx_run_exhaustive_pairs_takes_the_device_sample(tmp_path):
    from nbx.cli import main
    from nbx.harness.report import load_report
    out = tmp_path / "r"
    assert main(["run", "--profile", "exhaustive", "--op", "add", "--dtype", "float32", "--suite", "pairs",
                 "--out", str(out), "--quiet"]) in (0, 1)
    ms = load_report(out).measurements
    assert sorted(m.op for m in ms) == ["add", "add:alpha=2"]
    (m,) = [m for m in ms if m.op == "add"]
    n = cases.PROFILES["exhaustive"]["pairs32" if nbx.backend.IS_CUDA else "pairs32_interpreter"]
    assert not m.error and m.cases == n and m.decided_on_device + m.undecided == n
    assert m.not_correctly_rounded == 0 and m.max_ulp <= 0.5


def test_which_jobs_take_the_sample():
    f32, f64 = nbx.float32, nbx.float64
    assert values.sample_range(Target("add", {}, f32), "pairs", "exhaustive", None) == \
        (0, cases.PROFILES["exhaustive"]["pairs32" if nbx.backend_info()["backend"] == "cuda"
                                          else "pairs32_interpreter"])
    assert values.sample_range(Target("lerp", {}, f32), "pairs", "ci", (5, 10)) == (5, 10)
    assert values.sample_range(Target("add", {}, f32), "pairs", "ci", None) is None          # host batches
    assert values.sample_range(Target("add", {}, f32), "layout", "exhaustive", None) is None
    # float64: the host (a device decision would need an oracle beyond float64); masks: no float tuples
    assert values.sample_range(Target("add", {}, f64), "pairs", "exhaustive", None) is None
    assert not exhaustive.sampled(Target("where", {}, f32)) and not exhaustive.sampled(Target("add", {}, nbx.float16))
    assert exhaustive.sampled(Target("glu", {}, f32)) and exhaustive.sampled(Target("addcdiv", {}, f32))


@pytest.mark.parametrize("label, arity", [("sub:alpha=3", 2), ("addcmul", 3)])
def test_ties_decided_by_the_oracles_residual_agree_with_the_host(label, arity):
    """x - 3y and x + t1 t2 near a float32 midpoint: the float64 value is the midpoint and the
    exact value a hair off it (a tiny x). The oracle's residual (v + lo exact) decides them on the
    device, as mpmath does on the host, and a result planted one ulp off among them is caught."""
    import dataclasses
    from nbx.oracles.device import DEVICE_ORACLES
    op, _, param = label.partition(":")
    params = {"alpha": 3} if param else {}
    t = Target(op, params, nbx.float32)
    key = exhaustive.tuple_key(t, 0)
    xs = stratified.stratified_tuples(arity, key, 0, 1 << 17)
    got = t.run_device(xs)
    d = exhaustive.device_oracle(t)
    p = [3.0] if param else [1.0]
    before = device_scoring.score(dataclasses.replace(d, residual=None), xs, got, p)
    after = device_scoring.score(d, xs, got, p)
    assert before.undecided > 0 and after.undecided == 0
    newly = before.undecided_at
    host = score(t, list(stratified.tuples_host(arity, key, newly)), patterns.take(got, newly))
    assert int(np.isin(newly, after.failing_at).sum()) == int(host.not_cr.sum())
    planted = got.numpy().copy()
    planted.view(np.uint32)[newly[::5]] ^= 1
    s = device_scoring.score(d, xs, nbx.from_numpy(planted), p)
    host = score(t, list(stratified.tuples_host(arity, key, newly)), planted[newly])
    assert s.undecided == 0 and int(np.isin(newly, s.failing_at).sum()) == int(host.not_cr.sum()) > 0
