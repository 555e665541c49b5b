"""The Node recipe of docs/node.md under vitest and Jest, and Resend's own CLI and MCP server pointed at the
emulator with RESEND_BASE_URL, each run from the README's own text (npm packages in a cache outside the
repository: tests/node_helpers.py)."""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.node_helpers import CACHE, locked, npm_packages, run_npm
from tests.readme_helpers import (
    BLOCKS,
    JEST_IMPORT,
    NODE_PAGE_BLOCKS,
    NODE_RUNNERS,
    README_URL,
    VERSION,
    clean_env,
    cli,
    commands,
    is_mcp_config,
    is_node_recipe,
    is_resend_cli,
    quick_start_command,
)

pytestmark = pytest.mark.node


@pytest.fixture(scope="module")
def live() -> Iterator[str]:
    with cli(quick_start_command()) as url:
        yield url


# ---- the Node recipe under vitest and Jest ---------------------------------------------------------

def node_env(**extra: str) -> dict[str, str]:
    """A new shell's environment, the emulator's command on PATH, no colours, nothing sent online."""
    return {**clean_env(), "NO_COLOR": "1", "FORCE_COLOR": "0", "DO_NOT_TRACK": "1", **extra}


def recipe_files() -> dict[str, str]:
    """The recipe's files (docs/node.md), named by their first line (`// path — what it is`)."""
    files = {}
    for lang, body in NODE_PAGE_BLOCKS:
        if lang == "js":
            first = body.splitlines()[0]
            assert first.startswith("// "), first
            files[first.removeprefix("// ").split()[0]] = body
    return files


def write_project(folder: Path, files: dict[str, str], packages: Path) -> Path:
    for name, body in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(body)
    (folder / "node_modules").symlink_to(packages / "node_modules")
    return folder


def recipe_commands() -> list[str]:
    [body] = [body for lang, body in BLOCKS if lang == "sh" and is_node_recipe(lang, body)]
    return commands(body)


@pytest.fixture(scope="module")
def node_runners() -> Path:
    return npm_packages("node-runners", *NODE_RUNNERS)


def test_the_node_recipe_installs_what_it_imports() -> None:
    install = next(line for _, body in BLOCKS for line in commands(body)
                   if line.startswith("npm install --save-dev"))
    assert set(install.split()[3:]) == {spec.rsplit("@", 1)[0] for spec in NODE_RUNNERS}


def run_recipe(project: Path, runner: str) -> subprocess.CompletedProcess[str]:
    """The README's command for `runner` in `project`; it must succeed."""
    [command] = [line for line in recipe_commands() if runner in line]
    done = subprocess.run(["bash", "-ec", command], cwd=project, env=node_env(), capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def test_the_node_recipe_runs_under_vitest(node_runners: Path, tmp_path: Path) -> None:
    files = recipe_files()
    assert set(files) == {"test/emulator.setup.mjs", "vitest.config.mjs", "jest.config.mjs",
                          "test/mail.test.mjs"}
    done = run_recipe(write_project(tmp_path, files, node_runners), "vitest")
    assert re.search(r"Tests\s+2 passed \(2\)", done.stdout), done.stdout[-3000:]


def test_the_node_recipe_runs_under_jest_with_the_import_it_names(node_runners: Path,
                                                                   tmp_path: Path) -> None:
    files = recipe_files()
    test_file = files["test/mail.test.mjs"]
    assert JEST_IMPORT in test_file  # the one change the README tells Jest users to make
    files["test/mail.test.mjs"] = test_file.replace('from "vitest";', 'from "@jest/globals";')
    done = run_recipe(write_project(tmp_path, files, node_runners), "jest")
    assert re.search(r"Tests:\s+2 passed, 2 total", done.stderr), done.stderr[-3000:]


# ---- Resend's CLI and MCP server against the emulator -------------------------------------------------

def resend_cli(install_line: str) -> Path:
    """The README's `npm install --global resend-cli@X`, with npm's global prefix in the cache."""
    spec = install_line.split()[-1]
    with locked(CACHE / "resend-cli") as prefix:
        installed = prefix / "lib" / "node_modules" / "resend-cli" / "package.json"
        if not installed.exists() or json.loads(installed.read_text())["version"] != spec.rsplit("@", 1)[1]:
            run_npm([*shlex.split(install_line)[1:], "--no-audit", "--no-fund"], prefix,
                    env={**os.environ, "npm_config_prefix": str(prefix)})
    return prefix / "bin"


def test_resend_cli_sends_and_lists_through_the_emulator(live: str, tmp_path: Path) -> None:
    [body] = [body for lang, body in BLOCKS if is_resend_cli(lang, body)]
    install, *rest = commands(body)
    assert install.startswith("npm install --global resend-cli@")
    env = node_env(HOME=str(tmp_path))  # its config and credential store, if it writes one
    env["PATH"] = f"{resend_cli(install)}{os.pathsep}{env['PATH']}"
    script = "\n".join(rest).replace(README_URL, live)
    done = subprocess.run(["bash", "-ec", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    mail = outbox_mail(live, "Hi from the CLI")
    assert (mail["from"], mail["to"], mail["text"]) == ("Acme <hello@acme.dev>", ["ada@lovelace.dev"],
                                                       "Hello")
    assert mail["id"] in done.stdout and done.stdout.count("Hi from the CLI") >= 1  # sent, then listed


def outbox_mail(url: str, subject: str) -> dict[str, Any]:
    """The one email with this subject, as the outbox shows it in full."""
    [listed] = httpx.get(f"{url}/_emulator/outbox", params={"subject": subject}).json()["data"]
    return httpx.get(f"{url}/_emulator/outbox/{listed['id']}").json()  # type: ignore[no-any-return]


class McpSession:
    """JSON-RPC 2.0 over the server's stdin/stdout, one JSON message per line (MCP's stdio transport)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: queue.Queue[str] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.process.stdin.flush()

    def call(self, method: str, params: dict[str, Any], timeout: float = 120) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            answer = json.loads(self.lines.get(timeout=timeout))
            if answer.get("id") == self.next_id:
                assert "error" not in answer, answer
                return answer["result"]


def test_resend_mcp_sends_and_lists_over_stdio(live: str, tmp_path: Path) -> None:
    [body] = [body for lang, body in BLOCKS if is_mcp_config(lang, body)]
    server = json.loads(body.replace(README_URL, live))["mcpServers"]["resend"]
    # npx fetches the pinned server into the test cache (not ~/.npm) on first use.
    env = {**node_env(HOME=str(tmp_path), npm_config_cache=str(CACHE / "npm")), **server["env"]}
    with locked(CACHE / "npm"):  # one download at a time
        process = subprocess.Popen([server["command"], *server["args"]], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                   cwd=tmp_path)
        try:
            session = McpSession(process)
            session.call("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                        "clientInfo": {"name": "resend-emulator-tests", "version": VERSION}})
            session.send({"method": "notifications/initialized"})
            tools = {tool["name"] for tool in session.call("tools/list", {})["tools"]}
            assert {"send-email", "list-emails", "get-email"} <= tools
            sent = session.call("tools/call", {"name": "send-email", "arguments": {
                "to": ["ada@lovelace.dev"], "subject": "Hi from an agent", "text": "Sent through MCP."}})
            listed = session.call("tools/call", {"name": "list-emails", "arguments": {}})
        finally:
            process.terminate()
            process.wait(timeout=30)
    assert not sent.get("isError"), sent
    mail = outbox_mail(live, "Hi from an agent")
    assert (mail["from"], mail["to"], mail["text"]) == ("Agent <agent@acme.dev>", ["ada@lovelace.dev"],
                                                       "Sent through MCP.")
    assert mail["id"] in json.dumps(sent) and mail["id"] in json.dumps(listed)
