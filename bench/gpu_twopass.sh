#!/usr/bin/env bash
# One device call: one-pass against two-pass deferred launches (bench/twopass_ab.py), then the
# deferred and fast-path tests. Usage: bench/gpu_twopass.sh OUT
set -u
out=${1:?outdir}; mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
t0=$(date +%s)
stamp() { echo "== $1 at $(( $(date +%s) - t0 )) s"; }
timeout "${T_AB:-330}" python3 bench/twopass_ab.py --reps "${REPS:-10}" --ops "${OPS:-log,tan,erf,sin,cos,rsqrt,floor_divide}" \
    --variants "${VARIANTS:-one,two,two@32,two@40}" 2>&1 | tee "$out/twopass_ab.txt" | tail -80
stamp ab
timeout 150 python3 -m pytest -q -x -n 14 -p no:cacheprovider tests/test_deferred.py tests/test_fast32.py > "$out/pytest.txt" 2>&1
echo "pytest rc=$?"; tail -3 "$out/pytest.txt"
stamp pytest
