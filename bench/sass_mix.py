"""The float32 fast paths compiled for sm_90 on a machine without a GPU: registers and SASS mix.

The GPU's time is scarce; instruction counts are not. This compiles the launcher's own flat kernel
(kernels/flat.py, deferred_flat_kernel) for each deferred unary body with Triton's bundled ptxas,
specialized as a 2^28-element launch is, and prints its registers and, for the part before the key
reduction's first barrier, instructions and float64 operations per element (8 per thread). The
registers matched the H200's compiled kernels in every case compared (2026-12-03: log 40, sin and
cos 38, tan 40, erf 40). At copy
bandwidth the H200 leaves ~63 issue slots and ~31 float64 operations per float32 element (132 SMs,
4 issue slots and 64 FP64 lanes per SM-clock, 531e9 elements/s).
Usage: python3 bench/sass_mix.py [sin cos tan log rsqrt] [--dump sin] [--maxnreg 32] [--block 2048]    (no nbx import: no interpreter)
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
KERNELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "nbx", "kernels")
# nbx/kernels as a package of its own: importing nbx would select the interpreter on this machine
_pkg = types.ModuleType("nbx_kernels_sm90")
_pkg.__path__ = [KERNELS]
sys.modules[_pkg.__name__] = _pkg
m = importlib.import_module(_pkg.__name__ + ".math")
_OP = re.compile(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)")


flat = importlib.import_module(_pkg.__name__ + ".flat")


def compile_sass(fast, exact, store_first=True, n_in=1, table=None, block=1024, k=int(m.fast32.HARD_K), **options) -> tuple[str, str]:
    """launch's deferred_flat_kernel for one deferred pair, as the launcher runs it on 2^28 float32
    elements: pointers and n divisible by 16, unit strides specialized (the values Triton's
    specialization gives them), 1024-element tiles (block), pieces of 128."""
    sig = {"out": "*fp32", "x0": "*fp32", "x1": "*fp32", "x2": "*fp32", "n": "i32", "s0": "constexpr",
           "s1": "constexpr", "s2": "constexpr", "n_pieces": "i32", "tab": "*fp64"}
    if isinstance(table, tuple):                      # constants as kernel parameters (int64 bit patterns)
        sig["tab"] = ("i64",) * len(table)
    consts = dict(s0=1, s1=1, s2=1, BODY=fast, EXACT=exact, TAB=table is not None, N_IN=n_in, CT0=tl.float32, CT1=tl.float32,
                  CT2=tl.float32, OUT_T=tl.float32, BLOCK=block, PIECE_C=128, INDEX64=False, STORE_FIRST=store_first,
                  HARD_KEY=m.fast32.key_hard(k))
    sig.update({k: "constexpr" for k in consts if k not in sig})
    src = triton.compiler.ASTSource(fn=flat.deferred_flat_kernel, signature=sig, constexprs=consts,
                                    attrs={(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 3, 4, 9)})
    cc = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"enable_reflect_ftz": False, **options})
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
    names = [a for a in args if not a.startswith("--") and a not in (dump, maxnreg, str(block_arg))] or ["log", "sin", "cos", "tan", "rsqrt", "erf"]
    for name in ([dump] if dump else names):
        pair = m.DEFERRED[getattr(m, name)]
        opts = {**dict(pair.options), **options}          # the body's own options (math.defer), then --maxnreg
        block = block_arg or pair.block or 1024           # --block, else the body's own tile
        per_thread = block // 128                         # elements per thread (4 warps)
        sass, regs = compile_sass(pair.fast, pair.exact, pair.store_first, table=pair.table, block=block, k=pair.k, **opts)
        head = sass.split("BAR.SYNC")[0]
        if dump:
            print("\n".join(line.strip() for line in head.splitlines() if _OP.search(line)))
            continue
        ops = collections.Counter(o.split(".")[0] for o in _OP.findall(head))
        spill = head.count("STL") + head.count("LDL")
        total = sum(ops.values())
        dp = sum(ops[k] for k in ("DFMA", "DADD", "DMUL"))
        print(f"{name:6s} registers {regs:>3}  local ld/st {spill:>2}  fast part {total / per_thread:5.1f} instructions/element, "
              f"float64 {dp / per_thread:4.1f}  " + " ".join(f"{k}:{v / per_thread:g}" for k, v in ops.most_common(10)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
