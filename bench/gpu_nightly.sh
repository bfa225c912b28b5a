#!/usr/bin/env bash
# The GPU nightly on one H200: shards in parallel (Triton compilation is CPU-bound; the 16 cores
# share it), each under a time limit after which it still writes what it measured, then merged.
# Value and integer-division suites for every op; the layout suite for the ops in LAYOUT_OPS (a quick
# check beside them). The layout suite of every op runs in its own two calls: bench/gpu_layout.sh.
# Usage: bench/gpu_nightly.sh OUTDIR [PROFILE]
set -u
out=${1:?outdir}; profile=${2:-nightly}; n=${NBX_SHARDS:-13}; t=${NBX_SHARD_TIMEOUT:-470}
layout_ops=${LAYOUT_OPS:-add exp where bitwise_and floor_divide copy neg silu_and_mul to lerp eq}
mkdir -p "$out"
start=$(date +%s)
for i in $(seq 0 $((n - 1))); do
  timeout "$t" python3 -m nbx run --profile "$profile" --shard "$i/$n" --out "$out/shard$i" --quiet \
    --suite bank --suite exhaustive16 --suite sweep --suite pairs --suite intdiv > "$out/shard$i.log" 2>&1 &
done
ops=$(for o in $layout_ops; do echo --op $o; done)
for i in 0 1 2; do
  timeout "$t" python3 -m nbx run --profile "$profile" --shard "$i/3" --out "$out/layout$i" --quiet \
    --suite layout $ops > "$out/layout$i.log" 2>&1 &
done
wait
done_shards=$(ls -d "$out"/shard*/ "$out"/layout*/ 2>/dev/null | while read d; do [ -f "$d/report.json" ] && echo "$d"; done)
echo "shards with a report: $(echo $done_shards | wc -w) of $((n + 3)); interrupted: $(grep -l interrupted "$out"/*.log 2>/dev/null | wc -l)"
python3 -m nbx report merge "$out/merged" $done_shards
echo "gpu nightly ($profile): $(( $(date +%s) - start )) s wall"
