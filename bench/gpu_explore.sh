#!/usr/bin/env bash
# One device call: the shipped fast paths' bandwidth, the kernel-structure variants
# (bench/fast32_structure.py), the launcher variants, and the fast-path tests. Usage: bench/gpu_explore.sh OUT
set -u
out=${1:?outdir}; mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
t0=$(date +%s)
stamp() { echo "== $1 at $(( $(date +%s) - t0 )) s"; }
timeout 150 python3 bench/elementwise.py --reps "${REPS:-10}" --ops "${OPS:-log,sin,cos,tan,rsqrt,floor_divide,erf,exp,add}" --json "$out/bench.json" 2>&1 | tail -20
stamp bench
timeout "${T_STRUCT:-200}" python3 bench/fast32_structure.py --ops "${SOPS:-log,tan,sin}" --grids "${GRIDS:-8,12}" 2>&1 | grep -v "^ *$" | tail -60
stamp structure
timeout 100 python3 bench/fast32_structure.py --ops "${SOPS:-log,tan,sin}" --grids "" --blocks 2048 --modes nofb,first 2>&1 | grep -v "^ *$" | tail -60
stamp structure-2048
timeout 120 python3 bench/fast32_variants.py --reps 10 --only log,log_nofb,tan,tan_nofb,sin,sin_nofb,rsqrt --store-after 2>&1 | tail -30
stamp variants
timeout 150 python3 -m pytest -q -x -n 14 -p no:cacheprovider tests/test_deferred.py tests/test_fast32.py > "$out/pytest.txt" 2>&1
echo "pytest rc=$?"; tail -3 "$out/pytest.txt"
stamp pytest
