PYTHON ?= python3
PIP ?= $(PYTHON) -m pip

.PHONY: install install-test run test lint typecheck bench screenshots

install:
	$(PIP) install -q .

install-test:
	$(PIP) install -q -e '.[test]'

run: install
	resend-emulator

test: install-test
	$(PYTHON) -m pytest -n 2 -q

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
