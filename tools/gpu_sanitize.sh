#!/bin/sh
# `make gpu-sanitize`: the CUDA tests (tests marked `cuda`: tests/test_cuda_backend.py, and
# tests/test_cuda_ops.py, every op once: contiguous, into out=, strided, the fault flag) under
# compute-sanitizer, one run per tool, on a machine with a CUDA device and nbx's packages installed.
#
#   tools/gpu_sanitize.sh OUT_DIR      (make gpu-sanitize GPU_OUT=...: OUT_DIR is $(GPU_OUT)/sanitize)
#
# First, without a sanitizer: the out-of-memory tests (serially: one fills the device; they are left
# out under the sanitizers, whose memory and API-error reports they would provoke), then the rest,
# GPU_JOBS processes, which compiles every kernel into Triton's cache, so the sanitized runs load
# cubins instead of compiling. Then each tool of SANITIZE_TOOLS over the same tests, in one process,
# stopped after SANITIZE_TIMEOUT seconds. Writes OUT_DIR/<step>.txt and OUT_DIR/summary.md (per tool:
# the command, its exit status, compute-sanitizer's ERROR SUMMARY count, wall seconds).
# Then, unless SANITIZE_CANARY=0, the canaries: a planted error per tool (memcheck, initcheck) that it
# must report. Exit 1 if any step failed, any tool reported an error, or a canary went unreported.
#
# Environment: GPU_PY (python3), GPU_JOBS (8), SANITIZER (compute-sanitizer),
# SANITIZE_TOOLS ("memcheck racecheck initcheck"), SANITIZE_TIMEOUT (170).
set -u
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: tools/gpu_sanitize.sh OUT_DIR}
mkdir -p "$out" || exit 2
py=${GPU_PY:-python3}
jobs=${GPU_JOBS:-8}
san=${SANITIZER:-compute-sanitizer}
tools=${SANITIZE_TOOLS:-memcheck racecheck initcheck}
limit=${SANITIZE_TIMEOUT:-170}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 NBX_BACKEND=cuda
TESTS="tests/test_cuda_backend.py tests/test_cuda_ops.py"
PYTEST="$py -m pytest -q -p no:cacheprovider -m cuda"
summary=$out/summary.md
failed=0

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

{
  echo "# gpu-sanitize $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' (with local changes)');" \
    "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1);" \
    "$($san --version 2>/dev/null | grep -i version | head -1)"
  echo
  echo "| step | command | exit | errors | seconds | tests |"
  echo "|---|---|---|---|---|---|"
} > "$summary"

# step NAME COMMAND...: run, log to OUT/NAME.txt, one summary row
step() {
  name=$1; shift
  t0=$(now)
  "$@" > "$out/$name.txt" 2>&1
  rc=$?
  t1=$(now)
  # memcheck, initcheck: "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY: H hazards
  # displayed (N errors, W warnings)"
  errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+ error|\([0-9]+ errors?, [0-9]+ warning' "$out/$name.txt" | tail -1 |
    sed -E 's/ERROR SUMMARY: ([0-9]+).*/\1/; s/\(([0-9]+) errors?, ([0-9]+) warning/\1 (\2 warnings)/')
  case $name in sanitize-*|canary-*) [ -n "$errors" ] || errors="none printed";; *) errors="-";; esac
  tests=$(grep -E ' in [0-9.]+s( |$)' "$out/$name.txt" | tail -1 | sed 's/=//g; s/^ *//; s/ *$//')
  cmd=$(printf '%s' "$*" | tr '\n' ' ' | cut -c1-220)
  echo "| $name | \`$cmd\` | $rc | $errors | $(secs "$t0" "$t1") | ${tests:-?} |" >> "$summary"
  echo "$name: exit $rc, errors $errors, $(secs "$t0" "$t1") s, ${tests:-?}"
  case $name in
    canary-*) # a planted error: the tool must report it (else it sees nothing of nbx's kernels)
      case $errors in 0*|none*) failed=1;; esac;;
    *) if [ "$rc" != 0 ] || { [ "$errors" != "-" ] && [ "${errors%% *}" != 0 ]; }; then failed=1; fi;;
  esac
}

# The canaries: one planted error each, through a Triton kernel on nbx's memory, which the tool must
# report. memcheck: a store 256 MiB past a 64-byte tensor; initcheck: an op reading nbx.empty().
CANARY_MEMCHECK='
import nbx, triton, triton.language as tl
@triton.jit
def oob(p):
    tl.store(p + (1 << 26), 1.0)
x = nbx.zeros(16)
oob[(1,)](x)
nbx.synchronize()
print("stored past the end of a 16-element tensor")'
CANARY_INITCHECK='
import nbx
nbx.neg(nbx.empty(4096)).numpy()
print("read an uninitialized tensor")'


step plain-oom $PYTEST -k oom $TESTS
if $py -c "import xdist" 2>/dev/null; then par="-n $jobs"; else par=""; fi
step plain $PYTEST $par -k "not oom" $TESTS
for tool in $tools; do
  step "sanitize-$tool" timeout "$limit" $san --tool "$tool" --error-exitcode 86 --print-limit 50 \
    $PYTEST -k "not oom" $TESTS
done
if [ "${SANITIZE_CANARY:-1}" = 1 ]; then
  for tool in memcheck initcheck; do
    case " $tools " in *" $tool "*) ;; *) continue;; esac
    # a file, not `python -c`: @triton.jit reads its function's source
    file="$out/canary_$tool.py"
    if [ $tool = memcheck ]; then echo "$CANARY_MEMCHECK"; else echo "$CANARY_INITCHECK"; fi > "$file"
    step "canary-$tool" timeout 120 $san --tool "$tool" --error-exitcode 86 --print-limit 5 $py "$file"
    rm -f "$file"
  done
fi
echo >> "$summary"
echo "exit 86: compute-sanitizer found errors; 124: stopped after SANITIZE_TIMEOUT=${limit}s." >> "$summary"
echo "canary-*: a planted error the tool must find (errors >= 1, exit 86), proving it sees Triton's kernels." >> "$summary"
cat "$summary"
exit $failed
