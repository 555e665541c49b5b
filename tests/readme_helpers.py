"""The fenced blocks of the README and of the user guide under docs/, sorted by who runs them, and what
running one needs: a new shell's environment and the emulator the quick start starts (on free ports)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
# The pages whose examples run: the README first (its quick start starts the emulator), then docs/.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TEXTS = {page: page.read_text() for page in PAGES}
ALL_TEXT = "\n".join(TEXTS.values())
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)
BLOCKS: list[tuple[str, str]] = [block for text in TEXTS.values() for block in FENCE.findall(text)]
NODE_SEND = "// send.mjs"  # the README's five-line send with the Node SDK (not part of the test recipe)
OUTPUT_LANGUAGES = {"text"}  # what a command printed (the performance table), not something to run
BIN = Path(sys.executable).parent
CLONE_PLACEHOLDER = "/path/to/resend-emulator"
README_URL = "http://127.0.0.1:2580"
EMAIL_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
# The Node recipe's packages, pinned (the README's `npm install` line names them unpinned).
NODE_RUNNERS = ["vitest@4.1.12", "jest@30.5.2", "@jest/globals@30.5.2", "resend@6.12.2"]


def is_node_send(lang: str, body: str) -> bool:
    return lang == "js" and body.startswith(NODE_SEND)


def is_resend_cli(lang: str, body: str) -> bool:
    return lang == "sh" and "\nresend emails send " in body


def is_mcp_config(lang: str, body: str) -> bool:
    return lang == "json" and '"mcpServers"' in body


TEAM_HOST = "# on the team host"


def is_team_host(lang: str, body: str) -> bool:
    """docs/team-host.md's commands: they share one protected emulator (tests/test_readme_team_host.py)."""
    return lang == "sh" and body.startswith(TEAM_HOST)


def is_scrape_config(lang: str, body: str) -> bool:
    return lang == "yaml" and body.startswith("# prometheus.yml")


PYTEST_INI = "# pytest.ini"


def is_pytest_ini(lang: str, body: str) -> bool:
    """docs/testing-pytest.md's choice of the child-process shape (test_readme.py runs a suite with it)."""
    return lang == "ini" and body.startswith(PYTEST_INI)


SPECIAL = (is_node_send, is_resend_cli, is_mcp_config, is_team_host, is_scrape_config, is_pytest_ini)
EXAMPLES = [(lang, body) for lang, body in BLOCKS
            if lang in {"sh", "python"} and not any(kind(lang, body) for kind in SPECIAL)]


def clean_env() -> dict[str, str]:
    """The environment of a new shell: no emulator variables left over from this test session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RESEND_", "PYTEST_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def commands(body: str) -> list[str]:
    lines = (line.split(" #")[0].strip() for line in body.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


@contextmanager
def cli(command: str) -> Iterator[str]:
    """The README's `resend-emulator ...` line, on free ports; yields the URL it prints."""
    args = shlex.split(command.rstrip("&").strip())
    assert args[0] == "resend-emulator"
    for flag in ("--port", "--smtp-port", "--smtps-port"):
        if flag in args:
            args[args.index(flag) + 1] = "0"
        elif flag != "--port" and "--no-smtp" not in args:
            args += [flag, "0"]
    process = subprocess.Popen([str(BIN / "resend-emulator"), *args[1:]], stdout=subprocess.PIPE, text=True,
                               env=clean_env())
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("resend-emulator listening on http://127.0.0.1:"), first
        yield first.split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=30)


def quick_start_command() -> str:
    """The emulator the quick start tells a newcomer to start (its first `resend-emulator` example)."""
    lines = (line for _, body in EXAMPLES for line in commands(body))
    return next(line for line in lines if line.startswith("resend-emulator"))


def shell(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-ec", line], cwd=cwd, env=clean_env(), capture_output=True, text=True,
                          timeout=300)
