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
# Exit 1 if any step failed or any tool reported an error.
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
  errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+ error' "$out/$name.txt" | tail -1 | awk '{print $3}')
  case $name in sanitize-*) [ -n "$errors" ] || errors="none printed";; *) errors="-";; esac
  tests=$(grep -E ' in [0-9.]+s( |$)' "$out/$name.txt" | tail -1 | sed 's/=//g; s/^ *//; s/ *$//')
  echo "| $name | \`$*\` | $rc | $errors | $(secs "$t0" "$t1") | ${tests:-?} |" >> "$summary"
  echo "$name: exit $rc, errors $errors, $(secs "$t0" "$t1") s, ${tests:-?}"
  if [ "$rc" != 0 ] || { [ "$errors" != "-" ] && [ "$errors" != 0 ]; }; then failed=1; fi
}

step plain-oom $PYTEST -k oom $TESTS
if $py -c "import xdist" 2>/dev/null; then par="-n $jobs"; else par=""; fi
step plain $PYTEST $par -k "not oom" $TESTS
for tool in $tools; do
  step "sanitize-$tool" timeout "$limit" $san --tool "$tool" --error-exitcode 86 --print-limit 50 \
    $PYTEST -k "not oom" $TESTS
done
echo >> "$summary"
echo "exit 86: compute-sanitizer found errors; 124: stopped after SANITIZE_TIMEOUT=${limit}s" >> "$summary"
cat "$summary"
exit $failed
