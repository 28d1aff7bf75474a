# Two commands do all the set-up: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: run test check lint types unit install install-test clean chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, pinned: pip takes the local CPU wheel instead of resolving a CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

run: install
	$(BIN)/engram serve

lint: install-test
	$(BIN)/ruff format --check src tests
	$(BIN)/ruff check src tests

types: install-test
	$(BIN)/mypy

unit: install-test
	$(BIN)/pytest tests/unit -q

check: lint types

# The browser tests drive Debian's Chromium (Playwright never downloads one): installed here when missing.
chromium:
	@command -v chromium >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null \
		|| (apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null)

# Test workers: each starts an embedded PostgreSQL with a quarter of the memory (at most 2 GB) as shared buffers.
TEST_WORKERS ?= 2

test: lint types chromium
	$(BIN)/pytest -q -n $(TEST_WORKERS) --durations=15

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
