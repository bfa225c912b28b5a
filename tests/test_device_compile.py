"""Every device oracle compiles for sm_90 here, without a GPU.

Triton's interpreter runs code that the GPU compiler refuses (a kernel reading a plain float
global; on the H200 that failed gelu's, gelu tanh's and selu's oracles while the interpreter ran
them). This compiles the device score's evaluation kernel with each oracle for an sm_90 target with
Triton's own toolchain, in a process where nbx's backend is a stand-in that says "cuda", and checks
that a kernel reading a plain global does fail there, so the check can fail. The score kernel is
compiled too with every oracle that brings its own EXACT_AT or takes three operands, and so are the
stratified float32 tuple generator (binary, ternary) and the gather and pack kernels."""
import pytest
from helpers import run_sm90_script

SCRIPT = r'''
from nbx.oracles import device
ds = importlib.import_module("nbx.harness.scoring.device")
from nbx.harness.inputs import patterns, stratified
from nbx.harness.targets import target
SIG = {"x_ptr": "*fp64", "y_ptr": "*fp64", "z_ptr": "*fp64", "out_ptr": "*fp64", "n": "i32", "p0": "i64",
       "p1": "i64", "ORACLE": "constexpr", "N_IN": "constexpr", "BLOCK": "constexpr"}
SCORE_SIG = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "got_ptr": "*fp32", "n": "i32", "p0": "i64",
             "p1": "i64", "stats": "*i64", "fstats": "*fp64", "hist": "*i64", "index": "*i64", "n_index": "*i32",
             "cap": "i32", **{k: "constexpr" for k in ("ORACLE", "EXACT_AT", "RESIDUAL", "N_IN", "E", "EXACT", "P", "EMIN", "EMAX",
                                                        "ZERO_SIGN", "CT", "BLOCK")}}

def kernel_compiles(fn, signature, constexprs):
    src = triton.compiler.ASTSource(fn=fn, signature={**signature, **{k: "constexpr" for k in constexprs}},
                                    constexprs=constexprs)
    try:
        triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"enable_reflect_ftz": False})
        return True
    except Exception as e:
        print("  ", str(e).splitlines()[-1][:160])
        return False

def compiles(fn, arity=1):
    return kernel_compiles(ds._evaluate_kernel, SIG, {"ORACLE": fn, "N_IN": arity, "BLOCK": 1024})

PLAIN = 0.5

@triton.jit
def _reads_a_plain_global(x, p0, p1):
    return x * PLAIN

def score_compiles(d, got="*fp32", result=0):
    """The score kernel itself with the oracle and its EXACT_AT and residual (float32 operands); an
    exact result (result 1: bool or integer, 2: float64) of the pointer type got."""
    return kernel_compiles(ds.score_kernel, {**SCORE_SIG, "got_ptr": got},
                           {"ORACLE": d.fn, "EXACT_AT": d.exact_at, "RESIDUAL": d.residual, "N_IN": d.arity,
                            "E": d.bound + 2.0 ** -52, "EXACT": d.k == 0, "P": 24, "EMIN": -126, "EMAX": 127,
                            "ZERO_SIGN": True, "CT": tl.float32, "RESULT": result, "BLOCK": 1024, "TILES": 64})

PART, PARTS = int(sys.argv[2]), int(sys.argv[3])     # this process compiles every PARTS-th kernel
mine = lambda items: [v for i, v in enumerate(items) if i % PARTS == PART]
bad = [label for label, d in mine(device.DEVICE_ORACLES.items()) if not compiles(d.fn, d.arity)]
# the score kernel for every oracle with an EXACT_AT (its own jit code) or three operands, and one unary
scored = mine([label for label, d in device.DEVICE_ORACLES.items()
               if d.exact_at is not None or d.residual is not None or d.arity == 3] + ["exp"])
bad += [label + " (score)" for label in scored if not score_compiles(device.DEVICE_ORACLES[label])]
# exact results: bool, integer and float64 (nbx/oracles/device/exact.py)
for label, got, result in mine([("isnan", "*i1", 1), ("to:dtype=int64", "*i64", 1), ("to:dtype=uint8", "*u8", 1),
                           ("to:dtype=float64", "*fp64", 2), ("to:dtype=float16", "*fp16", 0), ("eq", "*i1", 1)]):
    if not score_compiles(device.DEVICE_ORACLES[label], got, result):
        bad.append(f"{label} (score, result {result})")

# the stratified tuple generator (uint64 hashing, specials from constexpr tables), binary and ternary,
# and the gather and pack kernels of the device paths
TUPLES_SIG = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "start": "i64", "n": "i32", "key": "i64"}
for arity in mine((2, 3)):
    if not kernel_compiles(stratified._tuples_kernel, TUPLES_SIG, {"N_IN": arity, "R": stratified.ROUND[arity],
                                                            "ENUM_N": stratified.ENUM[arity], "BLOCK": 1024}):
        bad.append(f"tuples{arity}")
for ty in mine(("*fp32", "*bf16")):
    if not kernel_compiles(patterns._take_kernel, {"x_ptr": ty, "at_ptr": "*i64", "out_ptr": ty, "n": "i32"},
                           {"BLOCK": 1024}):
        bad.append(f"take {ty}")
    for inter in (False, True):
        if not kernel_compiles(target._pack_kernel, {"a_ptr": ty, "b_ptr": ty, "out_ptr": ty, "n": "i32"},
                               {"INTERLEAVE": inter, "BLOCK": 1024}):
            bad.append(f"pack {ty} {inter}")
print("generator kernels compiled")
print("score kernels:", len(scored))
print("failed:", bad)
print("plain global refused:", not compiles(_reads_a_plain_global))
'''


PARTS = 2


@pytest.mark.parametrize("part", range(PARTS))
def test_every_device_oracle_compiles_for_sm90(tmp_path, part):
    # every PARTS-th kernel in each of PARTS processes, so that xdist's workers share the 58 s of
    # compilation a cold Triton cache costs (2-core machine)
    r = run_sm90_script(tmp_path, SCRIPT, timeout=600, args=(str(part), str(PARTS)))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "failed: []" in r.stdout, r.stdout[-3000:]
    assert "score kernels: " in r.stdout and "score kernels: 0" not in r.stdout, r.stdout[-3000:]
    assert "plain global refused: True" in r.stdout, r.stdout[-3000:]
    assert "generator kernels compiled" in r.stdout, r.stdout[-3000:]
