"""Where the bundled seed scenarios live, and their names: known without importing the seeding code."""

from __future__ import annotations

from pathlib import Path


def _fixtures() -> Path:
    """`fixtures/` of a source checkout, else the copy a wheel installs as `emulator/fixtures/`."""
    package = Path(__file__).resolve().parent.parent
    checkout = package.parent / "fixtures"
    return checkout if checkout.is_dir() else package / "fixtures"


FIXTURES = _fixtures()


def scenario_names() -> list[str]:
    return sorted(path.stem for path in FIXTURES.glob("*.json"))
