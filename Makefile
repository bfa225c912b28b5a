# `make test`: set-up on a fresh machine (own virtual environment, the install), the whole test
# suite, then the ulp-regression gate on the ci profile against the interpreter budgets.
# `make report`: set-up, then the nightly precision report on the default backend -> reports/latest.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: test report setup gate bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e ".[test]"
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)
	$(PY) -m nbx run --profile ci --out reports/runs/ci-gate
	$(PY) -m nbx gate --report reports/runs/ci-gate

# The nightly runs as NBX_JOBS shards in parallel (one per core here), merged into reports/latest.
NBX_JOBS ?= 2
report: $(STAMP)
	$(PY) -m nbx bank check
	rm -rf reports/runs/nightly-shard*
	for i in $$(seq 0 $$(($(NBX_JOBS) - 1))); do \
	  $(PY) -m nbx run --profile nightly --shard $$i/$(NBX_JOBS) --out reports/runs/nightly-shard$$i --quiet & \
	done; wait
	$(PY) -m nbx report merge reports/runs/nightly-$$(date -u +%Y%m%dT%H%M%SZ) reports/runs/nightly-shard* --latest
	-$(PY) -m nbx gate --report reports/latest

clean:
	rm -rf $(VENV) reports/runs reports/latest
