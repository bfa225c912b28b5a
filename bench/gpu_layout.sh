#!/usr/bin/env bash
# The layout suite for every op on one H200, in parts that fit a device call (10 minutes): the jobs
# are split into NBX_LAYOUT_SHARDS shards and this call runs shards FIRST..LAST, 16 at a time
# (Triton compilation is CPU-bound). Interrupted shards still write what they measured.
# Usage: bench/gpu_layout.sh OUTDIR FIRST LAST     then: nbx report merge MERGED OUTDIR/layout*/
set -u
out=${1:?outdir}; first=${2:?first}; last=${3:?last}
n=${NBX_LAYOUT_SHARDS:-32}; t=${NBX_SHARD_TIMEOUT:-480}
mkdir -p "$out"
start=$(date +%s)
for i in $(seq "$first" "$last"); do
  timeout "$t" python3 -m nbx run --profile nightly --shard "$i/$n" --out "$out/layout$i" --quiet \
    --suite layout > "$out/layout$i.log" 2>&1 &
done
wait
echo "layout shards $first..$last of $n: $(( $(date +%s) - start )) s wall"
grep -h "measurements" "$out"/layout*.log | head -40
echo "interrupted: $(grep -l interrupted "$out"/layout*/report.json 2>/dev/null | wc -l)"
