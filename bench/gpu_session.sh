#!/usr/bin/env bash
# Everything one GPU session needs, in two calls of the device tool (each under 10 minutes):
#   bench/gpu_session.sh tests OUT    bandwidth table, the whole test suite (xdist), nbx vs torch
#   bench/gpu_session.sh nightly OUT  the nightly profile in 16 shards, merged, cuda budgets from it
set -u
stage=${1:?stage}; out=${2:?outdir}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$out"
case "$stage" in
tests)
  python3 bench/elementwise.py --reps 20 --json "$out/bench.json" > "$out/bench.txt" 2>&1
  cat "$out/bench.txt"
  timeout 270 python3 -m pytest -q -n 14 -p no:cacheprovider > "$out/pytest.txt" 2>&1
  echo "pytest rc=$?"; tail -15 "$out/pytest.txt"
  timeout 200 python3 bench/torch_compare.py --profile nightly --json "$out/torch.json" > "$out/torch.txt" 2>&1
  echo "torch_compare rc=$?"; tail -3 "$out/torch.txt"
  ;;
nightly)
  NBX_SHARDS=16 NBX_SHARD_TIMEOUT=470 bench/gpu_nightly.sh /tmp/nightly nightly
  cp /tmp/nightly/merged/report.json "$out/nightly-report.json"
  cp /tmp/nightly/merged/summary.md "$out/nightly-summary.md"
  python3 -m nbx gate --report /tmp/nightly/merged --update --all > "$out/budgets-update.txt"
  cp reports/budgets/cuda-*.json "$out/"
  python3 -m nbx gate --report /tmp/nightly/merged > "$out/gate.txt"; echo "gate rc=$?"; tail -20 "$out/gate.txt"
  ;;
esac
