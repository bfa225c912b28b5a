#!/usr/bin/env bash
# Everything one GPU session needs, batched for the device tool (a call is at most 10 minutes).
#   bench/gpu_session.sh tests OUT     bandwidth table, nbx vs torch (float32), the test suite (xdist)
#   bench/gpu_session.sh nightly OUT   the nightly profile (bench/gpu_nightly.sh), cuda budgets from it
#   bench/gpu_session.sh fast32 OUT    fast-path bandwidth, variants and tests, then every float32 input through them
#   bench/gpu_session.sh layout OUT FIRST LAST   layout suite shards FIRST..LAST of 32 (bench/gpu_layout.sh);
#       two calls (0 15, then 16 31) cover every op: 145 s + 168 s wall on the H200, 2026-12-02
# Stage time limits come from the environment (seconds): T_TORCH, T_NIGHTLY, T_PYTEST.
set -u
stage=${1:?stage}; out=${2:?outdir}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$out"
t0=$(date +%s)
if [ "$stage" = tests ]; then
  python3 bench/elementwise.py --reps 10 --json "$out/bench.json" > /tmp/bench.txt 2>&1
  cat /tmp/bench.txt; echo "bench done at $(( $(date +%s) - t0 )) s"
  timeout "${T_TORCH:-150}" python3 bench/torch_compare.py --profile nightly --json "$out/torch.json" > /tmp/torch.txt 2>&1
  echo "torch_compare rc=$? at $(( $(date +%s) - t0 )) s"; cut -c1-110 /tmp/torch.txt
  timeout "${T_PYTEST:-120}" python3 -m pytest -q -n 14 -p no:cacheprovider > "$out/pytest.txt" 2>&1
  echo "pytest rc=$? at $(( $(date +%s) - t0 )) s"; tail -12 "$out/pytest.txt"
elif [ "$stage" = fast32 ]; then
  # bandwidth first, then where the time goes, the fast-path tests, and every float32 input last
  python3 bench/elementwise.py --reps "${REPS:-10}" --ops "${OPS:-log,sin,cos,tan,rsqrt,erf,floor_divide,div,remainder,exp,add}" \
    --json "$out/bench.json"; echo "bench done at $(( $(date +%s) - t0 )) s"
  python3 bench/fast32_variants.py --reps 10; echo "variants done at $(( $(date +%s) - t0 )) s"
  timeout "${T_PYTEST:-150}" python3 -m pytest -q -n 14 -p no:cacheprovider tests/test_deferred.py tests/test_fast32.py \
    > "$out/pytest.txt" 2>&1; echo "pytest rc=$? at $(( $(date +%s) - t0 )) s"; tail -4 "$out/pytest.txt"
  timeout "${T_EXHAUSTIVE:-300}" python3 bench/fast32_exhaustive.py --fns "${FNS:-log,sin,cos,tan,rsqrt}" --json "$out/fast32.json"
  echo "fast32 rc=$? at $(( $(date +%s) - t0 )) s"
elif [ "$stage" = layout ]; then
  NBX_SHARD_TIMEOUT="${T_LAYOUT:-480}" bench/gpu_layout.sh /tmp/layout "${3:?first}" "${4:?last}"
  tar czf "$out/layout_$3_$4.tgz" -C /tmp/layout .
  echo "merge here: tar xzf each part into one folder; nbx report merge MERGED FOLDER/layout*/"
else
  NBX_SHARD_TIMEOUT="${T_NIGHTLY:-300}" bench/gpu_nightly.sh /tmp/nightly nightly
  gzip -c /tmp/nightly/merged/report.json > "$out/nightly-report.json.gz"
  cp /tmp/nightly/merged/summary.md "$out/nightly-summary.md"
  tail -n 3 /tmp/nightly/*.log | grep -i "interrupted\|measurements" | head -20
  # the gate against the committed cuda budgets first; then budgets refreshed from this run, for
  # inspection only (they come back in $out; --all may lower a budget, which is not committed)
  python3 -m nbx gate --report /tmp/nightly/merged > "$out/gate.txt"; echo "gate rc=$? at $(( $(date +%s) - t0 )) s"
  head -40 "$out/gate.txt"
  python3 -m nbx gate --report /tmp/nightly/merged --update --all | head -3
  cp reports/budgets/cuda-*.json "$out/"
fi
