"""The float32 fast paths compiled for sm_90 on a machine without a GPU: registers and SASS mix.

Compiles the launcher's own flat kernel (kernels/flat.py, fast_flat_kernel) for every op's float32
fast path (OpSpec.fast32, with its launch hints: tile, register cap, piece mask) with Triton's
bundled ptxas, specialized as a 2^28-element launch is, and prints its registers and, for the part
before the key reduction's first barrier, instructions and float64 operations per element. At copy
bandwidth the H200 leaves ~63 issue slots and ~31 float64 operations per float32 element (132 SMs,
4 issue slots and 64 FP64 lanes per SM-clock, 531e9 elements/s).
Usage: python3 bench/sass_mix.py [sin erf floor_divide ...] [--dump sin] [--maxnreg 32] [--block 2048]
"""
from __future__ import annotations

import collections
import importlib
import os
import re
import subprocess
import sys
import tempfile
import types

os.environ.pop("TRITON_INTERPRET", None)
import triton                                    # noqa: E402
import triton.language as tl                     # noqa: E402
from triton.backends.compiler import GPUTarget   # noqa: E402

BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
NBX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "nbx")
# nbx as a package of its own with a backend that only says "cuda": importing nbx would select the
# interpreter on a machine without a GPU, and interpreted kernels do not compile
_pkg = types.ModuleType("nbx_sm90")
_pkg.__path__ = [NBX]
sys.modules[_pkg.__name__] = _pkg
_backend = types.ModuleType("nbx_sm90.backend")
_backend.IS_CUDA, _backend.active = True, types.SimpleNamespace(install_triton_driver=lambda: None)
_backend.__path__ = [os.path.join(NBX, "backend")]      # its submodules (dlpack) import as they are
sys.modules[_backend.__name__] = _backend
OPS = importlib.import_module("nbx_sm90.ops").OPS
flat = importlib.import_module("nbx_sm90.kernels.flat")
_OP = re.compile(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)")


def fast_paths() -> dict:
    """label -> (FastPath, exact body, operands, number parameters) for every fast path of the registry."""
    return {spec.name + "".join(f":{k}={v}" for k, v in params.items()):
            (fast, exact, spec.arity, sum(p.kind == "number" for p in spec.params))
            for spec in OPS.values() for params, fast, exact in spec.fast32_variants()}


def compile_sass(fast, exact, n_in=1, block=0, piece_mask=None, n_params=0, **options) -> tuple[str, str]:
    """fast_flat_kernel for one fast path as the launcher runs it on 2^28 float32 elements: pointers
    and n divisible by 16, unit strides specialized (the values Triton's specialization gives them),
    the fast path's tile (block: another), pieces of 128."""
    block = block or fast.block or 1024
    sig = {"out": "*fp32", "x0": "*fp32", "x1": "*fp32", "x2": "*fp32", "p0": "*fp64", "p1": "*fp64",
           "p2": "*fp64", "n": "i32", "s0": "constexpr", "s1": "constexpr", "s2": "constexpr", "n_pieces": "i32",
           "tab": "*fp64", "col_tiles": "i32", "ro": "i32", "r0": "i32", "r1": "i32", "r2": "i32"}
    if isinstance(fast.table, tuple):                 # constants as kernel parameters (int64 bit patterns)
        sig["tab"] = ("i64",) * len(fast.table)
    mask = fast.pieces if piece_mask is None else piece_mask
    consts = dict(s0=1, s1=1, s2=1, FAST=fast.evaluate, EXACT=exact, TAB=fast.table is not None, K=fast.k, N_IN=n_in, NP=n_params,
                  CT0=tl.float32, CT1=tl.float32, CT2=tl.float32, OUT_T=tl.float32, BLOCK=block, PIECE_C=128,
                  INDEX64=False, STORE_FIRST=fast.store_first, PIECE_MASK=bool(mask), ROWS=False, HX=(), HR=(), HN=0)
    sig.update({k: "constexpr" for k in consts if k not in sig})
    src = triton.compiler.ASTSource(fn=flat.fast_flat_kernel, signature=sig, constexprs=consts,
                                    attrs={(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 3, 7, 12)})
    opts = {"enable_reflect_ftz": False, **fast.options, **options}
    cc = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=opts)
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cc.asm["cubin"])
    sass = subprocess.run([os.path.join(BIN, "nvdisasm"), "-c", f.name], capture_output=True, text=True).stdout
    usage = subprocess.run([os.path.join(BIN, "cuobjdump"), "-res-usage", f.name], capture_output=True, text=True).stdout
    os.unlink(f.name)
    regs = re.search(r"REG:(\d+)", usage)
    return sass, regs.group(1) if regs else "?"


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    dump = args[args.index("--dump") + 1] if "--dump" in args else None
    maxnreg = args[args.index("--maxnreg") + 1] if "--maxnreg" in args else None
    block_arg = int(args[args.index("--block") + 1]) if "--block" in args else 0
    options = {"maxnreg": int(maxnreg)} if maxnreg else {}
    paths = fast_paths()
    names = [a for a in args if not a.startswith("--") and a not in (dump, maxnreg, str(block_arg))] or list(paths)
    for name in ([dump] if dump else names):
        if name not in paths:
            print(f"sass_mix: no fast path {name!r}; the fast paths are {', '.join(paths)}", file=sys.stderr)
            return 2
        fast, exact, n_in, n_params = paths[name]
        block = block_arg or fast.block or 1024
        per_thread = block // 128                         # elements per thread (4 warps)
        sass, regs = compile_sass(fast, exact, n_in, block=block, n_params=n_params, **options)
        head = sass.split("BAR.SYNC")[0]
        if dump:
            print("\n".join(line.strip() for line in head.splitlines() if _OP.search(line)))
            continue
        ops = collections.Counter(o.split(".")[0] for o in _OP.findall(head))
        spill = head.count("STL") + head.count("LDL")
        total = sum(ops.values())
        dp = sum(ops[k] for k in ("DFMA", "DADD", "DMUL"))
        print(f"{name:24s} registers {regs:>3}  local ld/st {spill:>2}  fast part {total / per_thread:5.1f} "
              f"instructions/element, float64 {dp / per_thread:4.1f}  "
              + " ".join(f"{k}:{v / per_thread:g}" for k, v in ops.most_common(10)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
