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

report: $(STAMP)
	$(PY) -m nbx bank check
	$(PY) -m nbx run --profile nightly
	$(PY) -m nbx gate --report reports/latest || true

clean:
	rm -rf $(VENV) reports/runs reports/latest
