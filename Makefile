# AutoVend. `make` lists the targets. Everything runs from a local virtual environment in .venv.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)

.PHONY: help install repro test lint format bench real-data clean-data

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  make %-12s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed ## Create .venv and install AutoVend with its dev tools

repro: install ## Run the default pipeline (dvc repro) on the embedded synthetic operator and summarise it
	dvc repro
	autovend summary

test: install ## Run the test suite
	pytest -q

lint: install ## Check style with ruff (lint and format)
	ruff check autovend tests benchmarks
	ruff format --check autovend tests benchmarks

format: install ## Format the code with ruff
	ruff format autovend tests benchmarks
	ruff check --fix autovend tests benchmarks

bench: install ## Run the benchmarks (timings are reported, not asserted)
	for f in benchmarks/bench_*.py; do echo "== $$f"; python $$f || exit 1; done

real-data: install ## Run the real-data pipeline (needs the public NJ vending CSV; see docs/real-data.md)
	dvc repro pipelines/nj-vending/dvc.yaml

clean-data: ## Delete generated data (data/, runs/); committed worlds/ and reports/ stay
	rm -rf data runs
