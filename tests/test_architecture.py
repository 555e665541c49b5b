"""The shape of the code: the import contract holds, a wrong import breaks it, and every package ships."""

from __future__ import annotations

import configparser
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


def _broken_copy(tmp_path: Path, module: str, extra_import: str) -> subprocess.CompletedProcess[str]:
    """Lint a copy of the package in which `module` (a path under emulator/) gains `extra_import`."""
    shutil.copytree(ROOT / "emulator", tmp_path / "emulator")
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    target = tmp_path / "emulator" / module
    source = target.read_text()
    assert "from __future__ import annotations\n" in source
    target.write_text(source.replace("from __future__ import annotations\n",
                                     f"from __future__ import annotations\n\n{extra_import}  # noqa\n", 1))
    return lint_imports(tmp_path)


def test_a_resource_importing_the_control_plane_breaks_the_contract(tmp_path: Path) -> None:
    result = _broken_copy(tmp_path, "resources/contacts/service.py", "import emulator.control.base")
    assert result.returncode != 0
    assert "emulator.resources is not allowed to import emulator.control" in result.stdout
    assert "emulator.resources.contacts.service -> emulator.control.base" in result.stdout


def test_a_lower_group_importing_a_higher_one_breaks_the_contract(tmp_path: Path) -> None:
    result = _broken_copy(tmp_path, "resources/contacts/store.py",
                          "import emulator.resources.broadcasts.store")
    assert result.returncode != 0
    flat = " ".join(result.stdout.split())  # the report wraps long lines
    assert "emulator.resources.contacts is not allowed to import emulator.resources.broadcasts" in flat
    assert "emulator.resources.contacts.store -> emulator.resources.broadcasts.store" in flat


def test_an_import_cycle_inside_one_package_breaks_the_contract(tmp_path: Path) -> None:
    """`contacts.service` imports `contacts.store`; the reverse import closes a circle between siblings."""
    result = _broken_copy(tmp_path, "resources/contacts/store.py",
                          "import emulator.resources.contacts.service")
    assert result.returncode != 0
    assert "No import cycle anywhere inside emulator/ BROKEN" in result.stdout


def test_make_lint_runs_the_import_contract() -> None:
    makefile = (ROOT / "Makefile").read_text()
    lint_recipe = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "lint-imports" in lint_recipe
    assert "make lint" in (ROOT / ".ci" / "run").read_text()


# "Modules a few hundred lines at most" (issue 10, DESIGN.md): a module past this wants splitting by concern.
MAX_MODULE_LINES = 450


def test_no_module_is_longer_than_a_few_hundred_lines() -> None:
    lengths = {str(path.relative_to(ROOT)): len(path.read_text().splitlines())
               for path in (ROOT / "emulator").rglob("*.py")}
    assert {name: count for name, count in lengths.items() if count > MAX_MODULE_LINES} == {}


def _contract_layers(name: str) -> set[str]:
    parser = configparser.ConfigParser()
    parser.read(ROOT / ".importlinter")
    layers = parser[f"importlinter:contract:{name}"]["layers"]
    return {part.strip() for line in layers.splitlines() for part in line.split("|") if part.strip()}


def test_every_registered_group_has_its_place_in_the_groups_contract() -> None:
    """A group left out of the `groups` layers would be free to import any other group."""
    from emulator.resources import MODULES

    registered = {module.__name__.removeprefix("emulator.resources.") for module in MODULES}
    on_disk = {path.stem if path.suffix == ".py" else path.name
               for path in (ROOT / "emulator" / "resources").iterdir()
               if path.name != "__init__.py" and not path.name.startswith("__pycache__")
               and (path.suffix == ".py" or (path / "__init__.py").exists())}
    assert registered == on_disk
    assert _contract_layers("groups") == registered


def test_the_readme_map_names_every_package_under_emulator() -> None:
    """The map in docs/development.md is where a newcomer learns where a new group or route goes."""
    development = (ROOT / "docs" / "development.md").read_text()
    packages = {path.name for path in (ROOT / "emulator").iterdir()
                if (path / "__init__.py").exists()} | {"app.py", "cli.py"}
    assert {name for name in packages if f"`{name.removesuffix('.py')}" not in development} == set()
    assert "one line in `emulator/resources/__init__.py`" in development


def test_no_resource_operation_is_a_control_plane_route() -> None:
    """Control-plane routes live in control/ (or web/), calling the resources' service functions."""
    from emulator.app import all_ops

    assert [op.path for op in all_ops() if op.path.startswith("/_emulator")] == []


def _group_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["emulator", "resources"] else None


def test_a_group_reaches_another_only_through_its_package_or_service_module() -> None:
    """Issue 10: groups must not import each other's internals. The `groups` contract says which group may
    call which; this says how: `emulator.resources.<group>` (its `__init__`) or `<group>.service`."""
    import grimp

    graph = grimp.build_graph("emulator")
    reaching_in = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            source, target = _group_of(importer), _group_of(imported)
            if source is None or target is None or source == target:
                continue
            if imported not in (f"emulator.resources.{target}", f"emulator.resources.{target}.service"):
                reaching_in.append(f"{importer} -> {imported}")
    assert reaching_in == []
