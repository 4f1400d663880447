PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test bench openapi lint migrate clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@sh .ci/chromium
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/python -m app serve

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench

openapi: $(STAMP)
	$(BIN)/python -m app openapi --output openapi/openapi.json

migrate: $(STAMP)
	$(BIN)/python -m app migrate

lint: $(STAMP)
	$(BIN)/ruff check app tests bench migrations

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
