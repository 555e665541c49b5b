"""The shape of the code: the import contract holds, a wrong import breaks it, and every package ships."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command;"
               " sys.exit(lint_imports_command())"]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"})


def test_the_import_contract_is_kept() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout
    assert "No import cycle anywhere inside emulator/ KEPT" in result.stdout


def test_an_import_up_the_layers_breaks_the_contract(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "emulator", tmp_path / "emulator")
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    clock = tmp_path / "emulator" / "core" / "clock.py"
    clock.write_text(clock.read_text().replace(
        "from __future__ import annotations\n",
        "from __future__ import annotations\n\nimport emulator.control.base  # noqa\n", 1))
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "emulator.core is not allowed to import emulator.control" in result.stdout
    assert "emulator.core.clock -> emulator.control.base" in result.stdout


def test_every_package_under_emulator_is_declared_in_pyproject() -> None:
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(path.parent.relative_to(ROOT).parts)
             for path in (ROOT / "emulator").rglob("__init__.py")}
    assert found <= declared, f"add to [tool.setuptools] packages: {sorted(found - declared)}"
