# `make test`: set-up on a fresh machine (own virtual environment, the install), the whole test
# suite, then the ulp-regression gate on the ci profile against the interpreter budgets.
# `make report`: set-up, then the nightly precision report on the default backend -> reports/latest;
# exits nonzero when the gate fails, after every file is written, or when the nightly fuzz fails.
# `make gpu-check` / `gpu-nightly` / `gpu-exhaustive` / `gpu-sanitize`: on a machine with a CUDA device and nbx's packages already
# installed (no set-up; GPU_PY runs them): see README.md.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: test report setup gate clean gpu-check gpu-nightly gpu-exhaustive gpu-sanitize

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py constraints.txt tools/install_browser.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt setuptools
	$(PY) -m pip install -q -c constraints.txt -e ".[test]"
	sh tools/install_browser.sh
	touch $(STAMP)

# The suite runs on TEST_JOBS pytest-xdist workers (both cores of the 2-core machine), each first
# given a contiguous half of the tests so that a module's fixtures are mostly built once
# (worksteal), and prints its 20 slowest tests; the ci run takes as many worker processes.
TEST_JOBS ?= 2
test: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_JOBS) --dist worksteal --durations=20 $(PYTEST_ARGS)
	$(PY) -m nbx run --profile ci --jobs $(TEST_JOBS) --out reports/runs/ci-gate
	$(PY) -m nbx gate --report reports/runs/ci-gate

# The nightly: one `nbx run` on NBX_JOBS worker processes (one per core here), each taking the next
# job, costliest first, with one progress line (jobs done, rate, ETA) every 30 s over all of them;
# the report goes to reports/runs/<run-id> and reports/latest. A nightly stopped midway is finished
# by `nbx run --resume reports/runs/<run-id>` (only the jobs it lacks run).
NBX_JOBS ?= 2
NBX_FUZZ_NIGHTLY ?= 10000
# where the exit statuses of the nightly's run and fuzz test are kept until its last line
NBX_NIGHTLY_DIR ?= reports/runs
report: $(STAMP)
	$(PY) -m nbx bank check --full --quiet
	mkdir -p $(NBX_NIGHTLY_DIR)
	$(PY) -m nbx run --profile nightly --jobs $(NBX_JOBS) --progress lines; echo $$? > $(NBX_NIGHTLY_DIR)/nightly-run.rc
# The bad-input fuzz test with NBX_FUZZ_NIGHTLY examples (CI runs 600; 10000 took 26.8 s on the
# 2-core machine, interpreter backend, 2026-12-04; 20000 took 38-54 s, too much of a 5-minute
# nightly). The run's and the fuzz test's exit statuses are kept so that each step runs; the last
# line gates the report and fails the nightly if the gate, the run or the fuzz test failed.
	NBX_FUZZ_EXAMPLES=$(NBX_FUZZ_NIGHTLY) $(PY) -m pytest -q -p no:cacheprovider tests/test_bad_input.py \
	  -k test_fuzz_bad_arguments; echo $$? > $(NBX_NIGHTLY_DIR)/fuzz-nightly.rc
	@$(PY) -m nbx gate --report reports/latest; gate=$$?; \
	  run=$$(cat $(NBX_NIGHTLY_DIR)/nightly-run.rc); fuzz=$$(cat $(NBX_NIGHTLY_DIR)/fuzz-nightly.rc); \
	  [ "$$run" = 0 ] || echo "the nightly's nbx run failed (exit $$run)"; \
	  [ "$$fuzz" = 0 ] || echo "the nightly fuzz failed (exit $$fuzz)"; \
	  [ "$$gate" = 0 ] && [ "$$run" = 0 ] && [ "$$fuzz" = 0 ]

# ---------------------------------------------------------------- on a GPU machine
GPU_PY ?= python3
GPU_OUT ?= reports/runs/gpu
GPU_JOBS ?= 16
GPU_RUN := PYTHONPATH=$(CURDIR) PYTHONUNBUFFERED=1 NBX_BACKEND=cuda $(GPU_PY)

# The GPU test suite, every float32 input through every unary fast path (and 2^26 pairs through the
# binary ones), and the every-op bandwidth table against a device copy: about 5 minutes on an H200.
gpu-check:
	mkdir -p $(GPU_OUT)
	$(GPU_RUN) -m pytest -q -n $(GPU_JOBS) -p no:cacheprovider > $(GPU_OUT)/pytest.txt 2>&1; \
	  rc=$$?; tail -3 $(GPU_OUT)/pytest.txt; exit $$rc
	$(GPU_RUN) bench/fast32_exhaustive.py --json $(GPU_OUT)/fast32.json > $(GPU_OUT)/fast32.txt 2>&1; \
	  rc=$$?; cat $(GPU_OUT)/fast32.txt; exit $$rc
	$(GPU_RUN) bench/elementwise.py --reps 10 --json $(GPU_OUT)/bandwidth.json > $(GPU_OUT)/bandwidth.txt 2>&1; \
	  rc=$$?; cat $(GPU_OUT)/bandwidth.txt; exit $$rc

# The nightly profile on the GPU (gpu-nightly), or the exhaustive one (gpu-exhaustive, the GPU's
# nightly: every float32 input of each unary op, every operand pair of each 16-bit binary op, 2^32
# stratified tuples of each float32 binary and ternary op, decided on the device; the rest at the
# nightly's sizes), as one `nbx run` on GPU_JOBS worker processes sharing the GPU (Triton's
# compilation is CPU-bound), each taking the next job, costliest first. A job still running after
# GPU_JOB_S seconds has its worker killed and is reported as timed out; the run stops after
# GPU_RUN_S seconds (SIGTERM: the report holds what was measured, and the gate names the rest), and
# `make gpu-exhaustive GPU_RESUME=1` finishes it: only the jobs it lacks run. `nbx run` gates its
# report and exits with the verdict. The peers in GPU_TARGETS (torch, where it imports) are measured
# on the same inputs, reported beside nbx and not gated; GPU_SUITES (default: all) restricts the
# suites, e.g. to the value suites. The run's log is $(GPU_OUT)/<profile>.log.
GPU_JOB_S ?= 600
GPU_RUN_S ?= 470
GPU_EXHAUSTIVE_S ?= 3600
GPU_TARGETS ?= $(shell $(GPU_PY) -c "import torch" >/dev/null 2>&1 && echo torch)
GPU_SUITES ?=
GPU_RESUME ?=
gpu-nightly: GPU_PROFILE = nightly
gpu-exhaustive: GPU_PROFILE = exhaustive
gpu-exhaustive: GPU_RUN_S = $(GPU_EXHAUSTIVE_S)
gpu-nightly gpu-exhaustive:
	mkdir -p $(GPU_OUT)
	timeout --preserve-status $(GPU_RUN_S) env $(GPU_RUN) -m nbx run \
	  $(if $(GPU_RESUME),--resume $(GPU_OUT)/$(GPU_PROFILE),--profile $(GPU_PROFILE) \
	  $(foreach t,$(GPU_TARGETS),--target $(t)) $(foreach s,$(GPU_SUITES),--suite $(s)) --out $(GPU_OUT)/$(GPU_PROFILE)) \
	  --jobs $(GPU_JOBS) --job-timeout $(GPU_JOB_S) --progress lines > $(GPU_OUT)/$(GPU_PROFILE).log 2>&1; \
	  rc=$$?; tail -n 30 $(GPU_OUT)/$(GPU_PROFILE).log; exit $$rc

# Device memory safety: the CUDA tests (every op once, contiguous, into out=, strided) under
# compute-sanitizer's memcheck, racecheck and initcheck, after a plain run that fills Triton's cache
# and runs the out-of-memory tests; tools/gpu_sanitize.sh says more. Writes
# $(GPU_OUT)/sanitize/{summary.md,<step>.txt}; exit 1 on a failed test or any sanitizer error.
gpu-sanitize:
	GPU_PY="$(GPU_PY)" GPU_JOBS=$(GPU_JOBS) sh tools/gpu_sanitize.sh $(GPU_OUT)/sanitize

clean:
	rm -rf $(VENV) reports/runs reports/latest
