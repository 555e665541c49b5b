"""The Makefile on a fresh machine: it picks ./.venv when no virtualenv is active, and `make test-tools`
stops before any test with one line per missing tool naming the command that installs it."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.source_tree import source_copy

ROOT = Path(__file__).resolve().parent.parent
NOBODY = "65534"
SPAMD_LINE = ("make test: the spam-check tests need SpamAssassin's spamd; run: sudo apt-get update && "
              "sudo apt-get install -y spamassassin")


def make(args: list[str], cwd: Path, env: dict[str, str],
         as_nobody: bool = False) -> subprocess.CompletedProcess[str]:
    command = ["make", "--no-print-directory", *args]
    if as_nobody and os.geteuid() == 0:
        command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def makefile_only() -> Iterator[Path]:
    """The Makefile alone, in a folder any user can read (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="make-tools-"))
    try:
        shutil.copy(ROOT / "Makefile", folder / "Makefile")
        folder.chmod(0o755)
        (folder / "Makefile").chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        yield folder
    finally:
        shutil.rmtree(folder)


def tools_env() -> dict[str, str]:
    """A non-root user's PATH (no /usr/sbin), with the Node.js the suite itself runs on."""
    node = shutil.which("node")
    assert node is not None, "the suite's own Node.js (see make test-tools)"
    return {"PATH": os.pathsep.join([str(Path(node).resolve().parent), "/usr/bin", "/bin"]), "HOME": "/tmp"}


def test_test_tools_stops_with_the_install_command_when_spamd_is_missing(makefile_only: Path) -> None:
    # SBIN is where Debian puts spamd; pointing it nowhere (with no /usr/sbin on PATH) hides spamd.
    args = ["test-tools", "PYTHON=/usr/bin/python3", "SBIN=/nonexistent"]
    done = make(args, makefile_only, tools_env(), as_nobody=True)
    assert done.returncode != 0, done.stdout + done.stderr
    assert SPAMD_LINE in done.stderr.splitlines(), done.stderr
    assert "installing" not in done.stdout + done.stderr  # a non-root user is told, nothing is installed
    assert sorted(p.name for p in makefile_only.iterdir()) == ["Makefile"]


def test_test_tools_passes_when_spamd_is_where_debian_puts_it(makefile_only: Path) -> None:
    done = make(["test-tools", "PYTHON=/usr/bin/python3"], makefile_only, tools_env(), as_nobody=True)
    assert SPAMD_LINE not in done.stderr.splitlines(), done.stderr
    assert done.returncode == 0, done.stdout + done.stderr


def without_virtualenv(tmp_path: Path) -> dict[str, str]:
    """A new shell with no virtualenv: `python3` is the base interpreter, VIRTUAL_ENV unset."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(Path(sys.executable).resolve())
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    env["PATH"] = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    return env


def test_make_test_without_a_virtualenv_makes_and_uses_dot_venv(tmp_path: Path) -> None:
    clone = source_copy(tmp_path)
    done = make(["-n", "test"], clone, without_virtualenv(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "make: using ./.venv (no virtualenv active)"
    assert "python3 -m venv .venv" in lines
    assert ".venv/bin/python -m pip install -q -e '.[test]'" in lines
    assert any(line.endswith(".venv/bin/python -m pytest -n 2 -q -rfEs") for line in lines), done.stdout
    assert not any(line.startswith("python3 -m pip") for line in lines), done.stdout  # never the system's
    assert not (clone / ".venv").exists()  # a dry run


def test_make_run_with_a_virtualenv_active_uses_it(tmp_path: Path) -> None:
    clone = source_copy(tmp_path)
    env = {**os.environ, "VIRTUAL_ENV": sys.prefix,
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    done = make(["-n", "run"], clone, env)
    assert done.returncode == 0, done.stderr
    assert "using ./.venv" not in done.stdout
    assert ".venv" not in done.stdout
    assert "python3 -m emulator " in done.stdout.splitlines(), done.stdout
