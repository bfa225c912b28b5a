#!/usr/bin/env bash
# One device call: bandwidth of the table log, tan and erf (bench/elementwise.py), tan's division
# A/B (bench/fast32_variants.py --ab), every float32 input through the changed fast paths
# (bench/fast32_exhaustive.py), then the deferred and fast-path tests. Usage: bench/gpu_tables.sh OUT
set -u
out=${1:?outdir}; mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
t0=$(date +%s)
stamp() { echo "== $1 at $(( $(date +%s) - t0 )) s"; }
timeout 150 python3 bench/elementwise.py --reps "${REPS:-10}" --ops "${OPS:-log,tan,erf,sin,cos,rsqrt,exp,add}" --json "$out/bench.json" 2>&1 | tail -12
stamp bench
timeout 120 python3 bench/fast32_variants.py --reps 10 --only none --ab "${AB:-tan,tan_q,log,erf}" 2>&1 | grep -v "^ *$" | tail -24
stamp ab
timeout 200 python3 - <<'PY' 2>&1 | tail -8
import sys; sys.path.insert(0, "bench")
import fast32_variants as v
from nbx.harness import fastpath
fastpath.FNS["tan_q"] = (v.tan_quotient,) + fastpath.FNS["tan"][1:]
import fast32_exhaustive
fast32_exhaustive.main(["--fns", "log,erf,tan_q", "--pairs-log2", "0", "--json", sys.argv[1] if len(sys.argv) > 1 else "/dev/null"])
PY
stamp exhaustive
timeout 120 python3 -m pytest -q -x -n 14 -p no:cacheprovider tests/test_deferred.py tests/test_fast32.py > "$out/pytest.txt" 2>&1
echo "pytest rc=$?"; tail -3 "$out/pytest.txt"
stamp pytest
