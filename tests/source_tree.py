"""A copy of the repository to build from: pip builds in the source tree (egg-info, build/), and two
test workers building the real checkout at once would trip over each other's files."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEFT_OUT = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
                                  "node_modules", "docs", ".venv")


def source_copy(into: Path) -> Path:
    target = into / "resend-emulator"
    if not target.exists():
        shutil.copytree(ROOT, target, symlinks=True, ignore=LEFT_OUT)
    return target
