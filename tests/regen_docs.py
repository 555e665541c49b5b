"""Regenerate the generated parts of the docs: `python -m tests.regen_docs`.

docs/cli.md ends with the output of `resend-emulator --help` (80 columns wide, whatever the terminal);
tests/test_readme.py fails when that block differs from what the command prints now.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI_PAGE = ROOT / "docs" / "cli.md"
HELP_BLOCK = re.compile(r"(## resend-emulator --help\n.*?```text\n)(.*?)(```)", re.S)


def current_help() -> str:
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-m", "emulator", "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True, timeout=60)
    return done.stdout


def help_in_page(page: str) -> str:
    match = HELP_BLOCK.search(page)
    assert match, "docs/cli.md has no `## resend-emulator --help` section with a ```text block"
    return match.group(2)


def with_help(page: str, help_text: str) -> str:
    return HELP_BLOCK.sub(lambda m: m.group(1) + help_text + m.group(3), page)


def main() -> None:
    CLI_PAGE.write_text(with_help(CLI_PAGE.read_text(), current_help()))
    print(f"rewrote the --help block of {CLI_PAGE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
