#!/usr/bin/env bash
# One device call: clocks sampled through the sweep, the persistent-kernel sweep, then ncu on erf's
# two kernels (pipe utilization), each bounded in time. Output under $OUT.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 200 > $OUT/clocks.csv 2>&1 &
SMI=$!
timeout 420 python3 bench/persist_sweep.py "$@" 2>&1 | tee $OUT/sweep.txt
kill $SMI
cat > /tmp/ncu_erf.py <<'PY'
import nbx
from nbx.kernels import launch as L
import sys
sys.path.insert(0, "bench")
from elementwise import make_input
x = make_input(1 << 28)
for p in [(0, 0), (3, 2)]:
    L.PERSIST = p
    nbx.erf(x); nbx.erf(x)
PY
M=sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
timeout 150 ncu --clock-control none -k regex:deferred --launch-skip 0 --launch-count 4 --metrics $M python3 /tmp/ncu_erf.py > $OUT/ncu.txt 2>&1
tail -60 $OUT/ncu.txt
python3 - <<'PY'
import csv, os
rows = list(csv.reader(open(os.environ["OUT"] + "/clocks.csv")))[1:]
sm = [int(r[1].split()[0]) for r in rows if len(r) > 3 and r[1].strip().split()[0].isdigit()]
pw = [float(r[3].split()[0]) for r in rows if len(r) > 3 and r[1].strip().split()[0].isdigit()]
if sm:
    print("sm clock MHz min/median/max", min(sm), sorted(sm)[len(sm)//2], max(sm), " power W max", max(pw), "samples", len(sm))
PY
