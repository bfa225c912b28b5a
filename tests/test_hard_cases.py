"""The exact fallback of float32 results evaluated in float64: kernels/hard32.py and its tables.

- the rounding test (near_midpoint) against an integer rule, normal and subnormal results;
- settle through the real launcher: a listed input takes the table's result in a tile with an
  element near a midpoint, and only there;
- tools/hard_cases.py over a range of inputs finds sigmoid's known hard cases (0xb6c60000 was
  misrounded on the H200) and decides them by mpmath;
- every committed table: its header (window, all 2^32 inputs), every entry against mpmath, and the
  op's own results on its entries;
- the kernels with a table compile for sm_90, without a GPU.
"""
import json
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import triton
import triton.language as tl

import nbx
from nbx.harness.scoring.host import round_exact_or_ziv
from nbx.kernels import hard32, launch
from nbx.kernels.hard32 import HARD32_K, HardCases
from nbx.oracles import ORACLES
from nbx.oracles.formats import get_format
from nbx.ops import OPS
from nbx.ops.registry import table_param
from nbx.tensor import from_numpy

from helpers import run_sm90_script

ROOT = Path(__file__).resolve().parents[1]
TABLES = sorted(hard32.CASES_DIR.glob("*.json"))
SIGMOID_HARD = {0xb6c20000: 0x3effffd0, 0xb6c60000: 0x3effffcf, 0xb6ca0000: 0x3effffce, 0xb6ce0000: 0x3effffcd}


@triton.jit
def _near_kernel(y_ptr, out_ptr, n, K: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(y_ptr + i, mask=i < n)
    tl.store(out_ptr + i, hard32.near_midpoint(y, K).to(tl.int8), mask=i < n)


def _distances(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per y: the exact distance to the nearest float32 midpoint in ulps of y and in units of 2^-178
    (a float64 ulp at 2^-126), and whether |y| < 2^-126. Exact: Fractions of the float64 values."""
    d_ulp, d_178, tiny = np.full(len(y), np.inf), np.full(len(y), np.inf), np.zeros(len(y), bool)
    for i, v in enumerate(y):
        if not np.isfinite(v) or v == 0:
            continue
        a = Fraction(abs(float(v)))
        m, e = np.frexp(abs(v))                        # |v| = m 2^e, 0.5 <= m < 1
        unit = Fraction(2) ** max(int(e) - 24, -149)   # the float32 spacing at v
        mid = (math.floor(a / unit) + Fraction(1, 2)) * unit
        dist = abs(a - mid)
        d_ulp[i] = dist / Fraction(2) ** (int(e) - 53)
        d_178[i] = dist / Fraction(2) ** -178
        tiny[i] = abs(v) < 2.0 ** -126
    return d_ulp, d_178, tiny


def test_near_midpoint_is_the_integer_rule():
    rng = np.random.default_rng(5)
    f32 = rng.integers(1, 0x7f000000, 4000, dtype=np.uint32).view(np.float32).astype(np.float64)
    f32[:500] = rng.integers(1, 0x00800000, 500, dtype=np.uint32).view(np.float32)   # subnormal float32
    nxt = np.nextafter(f32.astype(np.float32), np.float32(np.inf)).astype(np.float64)
    mid = (f32 + nxt) / 2                                                            # exact in float64
    offs = rng.integers(-12, 13, len(mid))
    y = np.array([np.float64(m) for m in mid])
    bits = y.view(np.int64) + offs                                                   # k float64 ulps off
    y = np.concatenate([bits.view(np.float64), -bits.view(np.float64), rng.uniform(-4, 4, 2000)])
    d_ulp, d_178, tiny = _distances(y)
    for k in (0, 8):
        out = np.zeros(len(y), np.int8)
        yt, ot = from_numpy(y), from_numpy(out)
        _near_kernel[(triton.cdiv(len(y), 1024),)](yt, ot, len(y), K=k, BLOCK=1024)
        got = ot.numpy().astype(bool)
        # a normal float32 result: exactly the K-ulp rule; a subnormal one is tested in [2^-126, 2^-125)
        # (K ulps of 2^-178, wider than y's own, +-half of one for the shift's rounding): never narrower
        rule = d_ulp <= k
        assert np.array_equal(got[~tiny], rule[~tiny]), (k, y[~tiny][got[~tiny] != rule[~tiny]][:5])
        assert not np.any(tiny & rule & ~got), k
        assert not np.any(tiny & got & (d_178 > k + 0.5)), k
        assert np.any(tiny & got) and (got & ~tiny).sum() > 100 and (~got & ~tiny).sum() > 100


def _sigmoid_launch(x: np.ndarray, hard) -> np.ndarray:
    spec = OPS["sigmoid"]
    out = nbx.empty(len(x), dtype="float32")
    from nbx.dtype import float32
    launch.launch(spec.body, out, [from_numpy(x)], [], compute=(float32,), op="sigmoid", hard=hard)
    return out.numpy().view(np.uint32)


def test_settle_takes_the_table_only_where_the_rounding_test_fires():
    hard = [0xb6c60000]
    easy = [0x3f800000]                                   # sigmoid(1): far from every midpoint
    x = np.array(hard + easy, np.uint32).view(np.float32)
    planted = HardCases("sigmoid", (hard32._signed(0xb6c60000),), (12345,))
    assert _sigmoid_launch(x, planted)[0] == 12345        # the tile holds a near element: settled
    plain = _sigmoid_launch(x, None)
    assert plain[0] == 0x3effffce                         # float64's rounding: the midpoint's even side
    alone = np.array(easy, np.uint32).view(np.float32)
    wrong = HardCases("sigmoid", (hard32._signed(0x3f800000),), (777,))
    assert _sigmoid_launch(alone, wrong)[0] == plain[1]   # no near element in the tile: untouched


def test_the_tool_finds_sigmoids_hard_cases(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "hard_cases.py"), "--op", "sigmoid",
                        "--bits", "0xb6c00000:0xb6d00000", "--out", str(tmp_path), "--jobs", "1"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "sigmoid.json").read_text())
    assert doc["k"] == HARD32_K and doc["inputs"] == ["0xb6c00000", "0xb6d00000"]
    assert {int(e[0], 16): int(e[1], 16) for e in doc["entries"]} == SIGMOID_HARD
    assert all(e[2] <= HARD32_K + 1 for e in doc["entries"])


def test_a_variant_has_its_own_table_name():
    defaults = {"beta": 1.0, "threshold": 20.0}
    assert hard32.table_name("softplus", {"beta": 1, "threshold": 20.0}, defaults) == "softplus"
    assert hard32.table_name("softplus", {"beta": 2, "threshold": 10}, defaults) == "softplus@beta=2.0,threshold=10.0"
    spec = OPS["softplus"]
    from nbx.ops.registry import Typing
    from nbx.dtype import float32
    f32 = Typing(float32, float32, (float32,))
    at = spec.select_hard32({"beta": 2.0, "threshold": 10.0}, f32)
    assert at is None or at.op == "softplus@beta=2.0,threshold=10.0"
    assert spec.select_hard32({"beta": 3.0, "threshold": 10.0}, f32) is None      # no table for these values


def test_the_tool_refuses_an_op_it_cannot_tabulate(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "hard_cases.py"), "--op", "add", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "--op add" in r.stderr and "allowed:" in r.stderr


@pytest.mark.parametrize("path", TABLES, ids=lambda p: p.stem)
def test_a_committed_table_is_complete_and_correct(path):
    doc = json.loads(path.read_text())
    name = path.stem
    op, params = hard32.parse_table_name(name)
    assert doc["op"] == name and doc["k"] == HARD32_K
    assert doc["inputs"] == ["0x0", "0x100000000"], "a table covers all 2^32 float32 inputs"
    spec = OPS[op]
    assert spec.arity == 1 and all(table_param(p, params.get(p.name, p.default)) for p in spec.params)
    assert hard32.table_name(op, params, {p.name: p.default for p in spec.params}) == name
    cases = hard32.cases(name)
    assert cases.n == len(doc["entries"])
    if not cases.n:
        return
    f32 = get_format("float32")
    xs = np.array([int(e[0], 16) for e in doc["entries"]], np.uint32)
    want = np.array([int(e[1], 16) for e in doc["entries"]], np.uint32)
    assert all(e[2] <= HARD32_K + 1 for e in doc["entries"])
    for b, r in zip(xs, want):
        rr = round_exact_or_ziv(ORACLES[op], (float(b.view(np.float32)),), params, f32)
        assert rr.resolved and rr.bits == r, (op, hex(b), hex(rr.bits), hex(r))
    # the op's own results on its entries (tiled so that every tile holds some)
    got = getattr(nbx, op)(from_numpy(np.tile(xs, 3).view(np.float32)), **params).numpy().view(np.uint32)
    assert np.array_equal(got[:len(xs)], want), [hex(b) for b in xs[got[:len(xs)] != want]]


@pytest.mark.parametrize("path", [p for p in TABLES if json.loads(p.read_text())["entries"]], ids=lambda p: p.stem)
def test_a_sweep_around_a_hard_case_finds_nothing_misrounded(path):
    """The interpreter's own proof beside the GPU's: every float32 input within 64 of a table's
    middle entry, scored by the harness (device oracle, mpmath where undecided), is correctly
    rounded (numpy's libm under the same table)."""
    from nbx.harness import api
    from nbx.harness.targets.target import Target
    doc = json.loads(path.read_text())
    op, params = hard32.parse_table_name(path.stem)
    x = int(doc["entries"][len(doc["entries"]) // 2][0], 16)
    m = api.measure(Target(op, params, nbx.float32), "sweep", bits=(max(0, x - 64), x + 64))
    assert m.cases == 128 and m.not_correctly_rounded == 0 and not m.left_out, (path.stem, m.worst[:2])


COMPILE = r'''
F = importlib.import_module("nbx.kernels.flat")
L = importlib.import_module("nbx.kernels.launch")
R = importlib.import_module("nbx.ops.registry")
for mod in ("unary", "activations"):
    importlib.import_module("nbx.ops." + mod)
HX = tuple(range(-40, 40, 3))
HR = tuple(range(0, 80, 3))
failed = 0


def compile_one(kernel, sig, consts, what):
    global failed
    sig = {**sig, **{k: "constexpr" for k in consts}}
    try:
        triton.compile(triton.compiler.ASTSource(fn=kernel, signature=sig, constexprs=consts),
                       target=GPUTarget("cuda", 90, 32), options={"enable_reflect_ftz": False})
    except Exception as e:
        failed += 1
        print("FAILED", what, str(e)[-600:], repr(e.__cause__)[:600])


for op in ("sigmoid", "sin", "rsqrt"):
    spec = R.OPS[op]
    fast = spec.fast32 or R.OPS["sin"].fast32          # sigmoid's body behind sin's fast path: any body serves
    compile_one(F.fast_flat_kernel,
                {"out": "*fp32", "x0": "*fp32", "x1": "*fp32", "x2": "*fp32", "p0": "*i32", "p1": "*i32",
                 "p2": "*i32", "n": "i32", "n_pieces": "i32",
                 "tab": ("i64",) * len(fast.table) if isinstance(fast.table, tuple) else "*fp64",
                 "col_tiles": "i32", "ro": "i32", "r0": "i32", "r1": "i32", "r2": "i32"},
                dict(s0=1, s1=1, s2=1, FAST=fast.evaluate, EXACT=spec.body, TAB=fast.table is not None, K=fast.k,
                     N_IN=1, NP=0, CT0=tl.float32, CT1=tl.float32, CT2=tl.float32, OUT_T=tl.float32, BLOCK=1024,
                     PIECE_C=128, INDEX64=False, STORE_FIRST=True, PIECE_MASK=False, ROWS=True, HX=HX, HR=HR,
                     HN=len(HX)),
                f"flat {op}")
    compile_one(L.elementwise_kernel,
                {"out": "*fp32", "x0": "*fp32", "x1": "*fp32", "x2": "*fp32", "p0": "*i32", "p1": "*i32",
                 "p2": "*i32", "fault": "*i32", "R": "i32", "C": "i32", "sizes": ("i32",) * 8, "so": ("i32",) * 8,
                 "s0": ("i32",) * 8, "s1": ("i32",) * 8, "s2": ("i32",) * 8, "n_pieces": "i32", "tab": "*i32"},
                dict(BODY=spec.body, FAST=None, TAB=False, K=0, FAULT=None, N_IN=1, NP=0, CT0=tl.float32,
                     CT1=tl.float32, CT2=tl.float32, OUT_T=tl.float32, NDIM=1, BLOCK_R=1, BLOCK_C=1024,
                     INDEX64=False, PIECE_C=1, STORE_FIRST=False, HX=HX, HR=HR, HN=len(HX)),
                f"elementwise {op}")
print("failed", failed)
'''


@pytest.mark.slow
def test_kernels_with_a_table_compile_for_sm90(tmp_path):
    """The launcher's two kernels with a table of 27 cases (constexpr tuples) compile for sm_90 with
    a stand-in CUDA backend (helpers.SM90_STANDIN), as tests/test_device_compile.py does."""
    r = run_sm90_script(tmp_path, COMPILE)
    assert r.returncode == 0 and "failed 0" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
