# Cairn — the README's two commands are `make run` and `make test`.
# Each step prints one line; what the tools print goes to $(LOG), shown only when a step fails.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOG := $(VENV)/install.log
TEST_LOG := $(VENV)/test.log
VAULT ?= sample_vault

# Run a command quietly into a log; on failure show the log's end and stop. $(1): the log.
QUIET = >>$(1) 2>&1 || { printf 'cairn: that failed; the end of %s:\n' '$(1)'; tail -n 30 '$(1)'; exit 1; }

.PHONY: run test lint typecheck unit quality eval bench clean

$(STAMP): pyproject.toml
	@mkdir -p $(VENV) && : > $(LOG)
	@echo "cairn: creating a virtual environment in $(VENV)/ (full log: $(LOG))"
	@$(PYTHON) -m venv $(VENV) $(call QUIET,$(LOG))
	@$(BIN)/python -m pip install --quiet --upgrade pip $(call QUIET,$(LOG))
	@echo "cairn: installing Cairn and the packages it uses (a minute or two)"
	@$(BIN)/python -m pip install --quiet -e '.[dev]' $(call QUIET,$(LOG))
	@echo "cairn: building the int8 embedding model from the pinned weights"
	@$(BIN)/python -m models.derive $(call QUIET,$(LOG))
	@touch $(STAMP)

## Set up and open the TUI on the sample vault.
run: $(STAMP)
	@echo "cairn: opening $(VAULT)/ — the first start indexes it in the background; search works at once"
	@$(BIN)/cairn $(VAULT)

## Set up, lint, type-check and run every test.
test: $(STAMP) lint typecheck unit

lint: $(STAMP)
	@: > $(TEST_LOG)
	@echo "cairn: lint (ruff, import-linter)"
	@$(BIN)/ruff check engine models ui app tests $(call QUIET,$(TEST_LOG))
	@$(BIN)/lint-imports $(call QUIET,$(TEST_LOG))

typecheck: $(STAMP)
	@echo "cairn: type check (mypy)"
	@$(BIN)/mypy $(call QUIET,$(TEST_LOG))

unit: $(STAMP)
	@echo "cairn: tests (pytest; a few minutes)"
	@$(BIN)/python -m pytest -q -m "not quality"

## The retrieval quality floors on the dataset vaults (real model; longer).
quality: $(STAMP)
	@echo "cairn: quality floors on the dataset vaults (pytest -m quality)"
	@$(BIN)/python -m pytest -q -m quality

eval: $(STAMP)
	$(BIN)/engine eval --vault ../shared/datasets/brainbench/vault --queries ../shared/datasets/brainbench/queries.tsv --qrels ../shared/datasets/brainbench/qrels.tsv --index-dir /tmp/cairn-eval-brainbench

bench: $(STAMP)
	$(BIN)/engine bench --notes 1000

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
