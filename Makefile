# Cairn — the README's two commands are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
VAULT ?= sample_vault

.PHONY: run test lint typecheck unit eval bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m models.derive
	touch $(STAMP)

## Set up and open the TUI on the sample vault.
run: $(STAMP)
	$(BIN)/cairn $(VAULT)

## Set up, lint, type-check and run every test.
test: $(STAMP) lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check engine models ui app tests
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest -q

eval: $(STAMP)
	$(BIN)/engine eval --vault ../shared/datasets/brainbench/vault --queries ../shared/datasets/brainbench/queries.tsv --qrels ../shared/datasets/brainbench/qrels.tsv --index-dir /tmp/cairn-eval-brainbench

bench: $(STAMP)
	$(BIN)/engine bench --notes 1000

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
