#!/usr/bin/env bash
# One device call for issue 2's erf: the test suite, every float32 input through the fast paths,
# erf's degrees A/B (bench/erf_probe.py), then the first 40 ops' bandwidth table. Output under $OUT.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OPS=neg,abs,exp,exp2,log,sin,cos,tan,sqrt,rsqrt,reciprocal,erf,floor,ceil,trunc,round,isfinite,isinf,isnan,add,sub,rsub,mul,div,floor_divide,remainder,maximum,minimum,eq,ne,lt,le,gt,ge
timeout 200 python3 -m pytest -q -n 14 -p no:cacheprovider 2>&1 | tail -5 | tee $OUT/pytest.txt
timeout 60 python3 bench/fast32_exhaustive.py --fns erf,log,sin,cos,tan,rsqrt --pairs-log2 0 2>&1 | tee $OUT/exhaustive.txt
timeout 150 python3 bench/erf_probe.py --log2n 0 --passes 4 2>&1 | tee $OUT/erf_probe.txt
timeout 150 python3 bench/elementwise.py --ops $OPS --reps 10 2>&1 | tee $OUT/bandwidth.txt
