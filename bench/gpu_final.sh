#!/usr/bin/env bash
# One device call closing a session: every op's bandwidth at 2^28 float32 (bench/elementwise.py), then
# every float32 input through the fast paths named in FNS (default log,erf,tan; FNS= skips it), then the
# whole test suite. Usage: bench/gpu_final.sh OUT
set -u
out=${1:?outdir}; mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
t0=$(date +%s)
timeout "${T_BENCH:-200}" python3 bench/elementwise.py --reps "${REPS:-10}" --json "$out/bench.json" > "$out/bench.txt" 2>&1
echo "bench rc=$? at $(( $(date +%s) - t0 )) s"; cat "$out/bench.txt"
if [ -n "${FNS-log,erf,tan}" ]; then
    timeout 200 python3 bench/fast32_exhaustive.py --fns "${FNS-log,erf,tan}" --pairs-log2 "${PAIRS:-0}" --json "$out/exhaustive.json" 2>&1 | tail -8
    echo "exhaustive rc=$? at $(( $(date +%s) - t0 )) s"
fi
timeout "${T_PYTEST:-220}" python3 -m pytest -q -n 14 -p no:cacheprovider -rf > "$out/pytest.txt" 2>&1
echo "pytest rc=$? at $(( $(date +%s) - t0 )) s"; grep -v "^  \|Warning" "$out/pytest.txt" | tail -15
