"""npm packages for the tests, installed from the npm registry into a cache outside the repository
(`~/.cache/resend-emulator-tests/<name>`), once per set of pinned versions; parallel workers wait for
each other instead of installing twice."""

from __future__ import annotations

import fcntl
import os
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "resend-emulator-tests"
INSTALL_TIMEOUT = 600


@contextmanager
def locked(folder: Path) -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield folder
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def npm_packages(name: str, *specs: str) -> Path:
    """A folder whose `node_modules` holds `specs` (exact versions): installed at the first call."""
    with locked(CACHE / name) as folder:
        stamp = folder / ".installed"
        wanted = " ".join(sorted(specs))
        if not stamp.exists() or stamp.read_text() != wanted:
            run_npm(["install", "--no-audit", "--no-fund", "--no-save", "--prefix", str(folder), *specs],
                    folder)
            stamp.write_text(wanted)
    return folder


def run_npm(args: list[str], cwd: Path, env: Mapping[str, str] | None = None) -> None:
    done = subprocess.run(["npm", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT, check=False)
    assert done.returncode == 0, f"npm {' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
