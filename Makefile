# AutoVend. `make` lists the targets. Everything runs from a local virtual environment in .venv.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)
# The lock pins every package `.[dev]` installs, with hashes, for CPython 3.11 on Linux x86_64 (CI's machine);
# `make install` installs exactly these. On another platform, if `make install` fails, write a lock for it with
# e.g. `make lock LOCK_PLATFORM=aarch64-apple-darwin LOCK_PYTHON=3.12` and do not commit that lock.
LOCK := requirements/lock.txt
LOCK_PYTHON ?= 3.11
LOCK_PLATFORM ?= x86_64-unknown-linux-gnu

.PHONY: help install lock repro status test test-fast lint format docs bench real-data worlds clean-data

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  make %-12s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m pip check
	touch $@

install: $(VENV)/.installed ## Create .venv and install AutoVend with its dev tools, pinned by requirements/lock.txt

lock: ## Re-pin requirements/lock.txt after a change to pyproject.toml (UPGRADE=1: newest versions of everything)
	test -x $(BIN)/uv || { $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install --quiet uv; }
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version $(LOCK_PYTHON) \
		--python-platform $(LOCK_PLATFORM) --generate-hashes --custom-compile-command 'make lock' \
		$(if $(UPGRADE),--upgrade) --quiet -o $(LOCK)

repro: install ## Run the default pipeline (dvc repro) on the embedded synthetic operator and summarise it
	dvc repro
	autovend summary

status: install ## Say why `dvc status` lists each pipeline's stages (not built here, an input missing, or changed)
	python -m autovend.pipeline.status

test: install ## Run the test suite
	pytest -q

test-fast: install ## The inner loop: every test not marked slow (pytest -m "not slow", a few minutes)
	pytest -q -m "not slow"

lint: install ## Check style with ruff (lint and format) and types with mypy ([tool.mypy] in pyproject.toml)
	ruff check autovend tests benchmarks
	ruff format --check autovend tests benchmarks
	mypy

format: install ## Format the code with ruff
	ruff format autovend tests benchmarks
	ruff check --fix autovend tests benchmarks

docs: install ## Regenerate docs/tools.md from the tool registry (tests/tools/test_docs.py checks it is current)
	python -m autovend.tools.docs > docs/tools.md.tmp && mv docs/tools.md.tmp docs/tools.md

bench: install ## Run the benchmarks (timings are reported, not asserted)
	for f in benchmarks/bench_*.py; do echo "== $$f"; python $$f || exit 1; done

real-data: install ## Run the real-data pipeline and ship worlds/nj5 (needs the public NJ vending CSV; docs/real-data.md)
	dvc repro pipelines/nj-vending/dvc.yaml

worlds: install ## Build the other shipped worlds: worlds/cn99 (all 99 synthetic machines) and worlds/nj5 (real data)
	dvc repro pipelines/synthetic-cn99/dvc.yaml
	dvc repro pipelines/nj-vending/dvc.yaml

clean-data: ## Delete generated data (data/, runs/); committed worlds/ and reports/ stay
	rm -rf data runs
