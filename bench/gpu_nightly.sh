#!/usr/bin/env bash
# The GPU nightly: 8 shards in parallel on one H200 (compilation is CPU-bound and the 16 cores
# share it), merged, then the cuda budgets written from it. Usage: bench/gpu_nightly.sh OUTDIR [PROFILE]
set -u
out=${1:?outdir}; profile=${2:-nightly}; n=${NBX_SHARDS:-8}
mkdir -p "$out"
start=$(date +%s)
for i in $(seq 0 $((n - 1))); do
  timeout "${NBX_SHARD_TIMEOUT:-470}" python3 -m nbx run --profile "$profile" --shard "$i/$n" --out "$out/shard$i" \
    --quiet > "$out/shard$i.log" 2>&1 &
done
wait
done_shards=$(for i in $(seq 0 $((n - 1))); do [ -f "$out/shard$i/report.json" ] && echo "$out/shard$i"; done)
echo "shards finished: $(echo $done_shards | wc -w) of $n"
python3 -m nbx report merge "$out/merged" $done_shards
echo "gpu nightly ($profile, $n shards): $(( $(date +%s) - start )) s wall"
