"""The float32 fast paths compiled for sm_90 on a machine without a GPU: registers and SASS mix.

The GPU's time is scarce; instruction counts are not. This compiles one flat kernel per deferred
unary body (load 1024 elements, fast body, store, the tile's key reduction, the exact pieces: the
launcher's structure, kernels/launch.py) with Triton's bundled ptxas, and prints, for the part before
the reduction's barrier, instructions and float64 operations per element (8 per thread). At copy
bandwidth the H200 leaves ~63 issue slots and ~31 float64 operations per float32 element (132 SMs,
4 issue slots and 64 FP64 lanes per SM-clock, 531e9 elements/s).
Usage: python3 bench/sass_mix.py [sin cos tan log rsqrt] [--dump sin] [--maxnreg 32]    (no nbx import: no interpreter)
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


@triton.jit
def _kernel(x_ptr, o_ptr, n, FAST: tl.constexpr, EXACT: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * 1024 + tl.arange(0, 1024)
    msk = offs < n
    res, key = FAST(tl.load(x_ptr + offs, mask=msk))
    tl.store(o_ptr + offs, res, mask=msk)
    if tl.min(tl.where(msk, key, 0)) < 0:
        tl.debug_barrier()
        j = 0
        while j < 8:
            po = pid * 1024 + j * 128 + tl.arange(0, 128)
            tl.store(o_ptr + po, EXACT(tl.load(x_ptr + po, mask=po < n)), mask=po < n)
            j += 1


def compile_sass(fast, exact, **options) -> tuple[str, str]:
    src = triton.compiler.ASTSource(
        fn=_kernel, signature={"x_ptr": "*fp32", "o_ptr": "*fp32", "n": "i32", "FAST": "constexpr", "EXACT": "constexpr"},
        constexprs={"FAST": fast, "EXACT": exact},
        attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]]})
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
    options = {"maxnreg": int(maxnreg)} if maxnreg else {}
    names = [a for a in args if not a.startswith("--") and a not in (dump, maxnreg)] or ["log", "sin", "cos", "tan", "rsqrt"]
    for name in ([dump] if dump else names):
        fast, exact, _ = m.DEFERRED[getattr(m, name)]
        sass, regs = compile_sass(fast, exact, **options)
        head = sass.split("BAR.SYNC")[0]
        if dump:
            print("\n".join(line.strip() for line in head.splitlines() if _OP.search(line)))
            continue
        ops = collections.Counter(o.split(".")[0] for o in _OP.findall(head))
        spill = head.count("STL") + head.count("LDL")
        total = sum(ops.values())
        dp = sum(ops[k] for k in ("DFMA", "DADD", "DMUL"))
        print(f"{name:6s} registers {regs:>3}  local ld/st {spill:>2}  fast part {total / 8:5.1f} instructions/element, float64 {dp / 8:4.1f}  "
              + " ".join(f"{k}:{v / 8:g}" for k, v in ops.most_common(10)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
