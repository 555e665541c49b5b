"""A fresh clone builds and installs quietly: no setuptools warnings, every data file in the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from tests.source_tree import source_copy

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_builds_without_packaging_warnings_and_ships_the_ui_files(tmp_path: Path) -> None:
    # Build isolation fetches the newest setuptools the index has: the one whose warnings a user sees.
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source_copy(tmp_path)), "--no-deps",
                             "-v", "-w", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    output = result.stdout + result.stderr
    assert "is absent from the `packages` configuration" not in output
    assert "_Warning" not in output and "SetuptoolsDeprecationWarning" not in output
    [wheel] = tmp_path.glob("resend_emulator-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {"emulator/web/templates/message.html", "emulator/web/static/base.css",
               "emulator/web/static/core.js", "emulator/web/static/live.js", "emulator/fixtures/basic.json",
               "emulator/control/qa/caniemail.json", "emulator/control/qa/LICENSE-caniemail"}
    assert shipped <= names, shipped - names


def test_the_openapi_oracle_is_part_of_the_repository() -> None:
    data = ROOT / "tests" / "data"
    assert (data / "resend-openapi.yaml").read_text().startswith("openapi:")
    assert "Permission is hereby granted" in (data / "LICENSE-resend-openapi").read_text()


def test_an_editable_install_is_quiet(tmp_path: Path) -> None:
    # What `make install-test` does; pip ≥ 25 shows the backend's warnings, so `-v` output is checked here.
    source = source_copy(tmp_path)
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-v", "-e", str(source),
                             "--target", str(tmp_path / "site")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    output = result.stdout + result.stderr
    assert "Editable installation" not in output  # a remapped package-dir makes setuptools warn
    assert "_Warning" not in output and "SetuptoolsDeprecationWarning" not in output
    assert (tmp_path / "site").is_dir()


def test_scenarios_ship_from_the_top_level_fixtures_folder() -> None:
    link = ROOT / "emulator" / "fixtures"
    assert link.is_symlink() and link.resolve() == (ROOT / "fixtures").resolve()
