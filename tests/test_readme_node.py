"""The Node recipe (docs/node/'s files, copied verbatim into a scratch project) under vitest and Jest, the
Node quick start, and Resend's own CLI and MCP server pointed at the emulator with RESEND_BASE_URL, run
from the README's own text (npm packages in a cache outside the repository: tests/node_helpers.py)."""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import shutil
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
    NODE_RUNNERS,
    README_URL,
    ROOT,
    VERSION,
    clean_env,
    cli,
    commands,
    is_mcp_config,
    is_resend_cli,
    quick_start_command,
)

pytestmark = pytest.mark.node


@pytest.fixture(scope="module")
def live() -> Iterator[str]:
    with cli(quick_start_command()) as url:
        yield url


# ---- the Node recipe (docs/node/) under vitest and Jest, and the Node quick start ------------------------

DOCS_NODE = ROOT / "docs" / "node"
VITEST = "npx vitest run"
JEST = "NODE_OPTIONS=--experimental-vm-modules npx jest"
NOT_ON_PATH = ("resend-emulator is not on PATH: install it into this project's environment with "
               "`pip install /path/to/resend-emulator` (or set RESEND_EMULATOR_BIN to its full path)")


def node_env(**extra: str) -> dict[str, str]:
    """A new shell's environment, the emulator's command on PATH, no colours, nothing sent online."""
    return {**clean_env(), "NO_COLOR": "1", "FORCE_COLOR": "0", "DO_NOT_TRACK": "1", **extra}


def without_emulator_on_path(bin_dir: Path) -> dict[str, str]:
    """A new shell's environment whose PATH has Node and npx (in `bin_dir`) but no `resend-emulator`
    (Node may live in the virtualenv next to it, so only Node's own commands are linked)."""
    for command in ("node", "npx"):
        (bin_dir / command).symlink_to(Path(shutil.which(command) or command).resolve())
    path = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    assert shutil.which("resend-emulator", path=path) is None
    return node_env(PATH=path)


@pytest.fixture(scope="module")
def node_runners() -> Path:
    return npm_packages("node-runners", *NODE_RUNNERS)


@pytest.fixture
def project(node_runners: Path, tmp_path: Path) -> Path:
    """A scratch project holding docs/node/'s files verbatim, with the pinned packages installed."""
    for file in DOCS_NODE.iterdir():
        shutil.copy(file, tmp_path / file.name)
    (tmp_path / "node_modules").symlink_to(node_runners / "node_modules")
    return tmp_path


def run(command: str, project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-ec", command], cwd=project, env=env, capture_output=True, text=True,
                          timeout=180)


def test_the_pinned_packages_are_the_ones_the_recipe_imports() -> None:
    imported = {name for file in DOCS_NODE.glob("*.mjs")
                for name in re.findall(r'from "([^".][^"]*)"|import\("([^".][^"]*)"\)', file.read_text())
                for name in name if name and not name.startswith("node:")}
    packages = {spec.rsplit("@", 1)[0] for spec in NODE_RUNNERS}
    assert {name.removesuffix("/config") for name in imported} | {"jest"} == packages


def test_the_vitest_and_jest_files_differ_only_in_their_first_lines_and_import() -> None:
    vitest = (DOCS_NODE / "signup.vitest.test.mjs").read_text()
    jest = (DOCS_NODE / "signup.jest.test.mjs").read_text()
    as_jest = vitest.replace('from "vitest";', 'from "@jest/globals";')
    assert as_jest != vitest and as_jest.split("\nimport ", 1)[1] == jest.split("\nimport ", 1)[1]


def test_the_node_recipe_runs_under_vitest(project: Path) -> None:
    done = run(VITEST, project, node_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"Tests\s+2 passed \(2\)", done.stdout), done.stdout[-3000:]
    assert "signup.vitest.test.mjs" in done.stdout and "signup.jest.test.mjs" not in done.stdout


def test_the_node_recipe_runs_under_jest(project: Path) -> None:
    done = run(JEST, project, node_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"Tests:\s+2 passed, 2 total", done.stderr), done.stderr[-3000:]
    assert "signup.jest.test.mjs" in done.stderr and "signup.vitest.test.mjs" not in done.stderr


HELPER_ALONE = """node --input-type=module -e 'await (await import("./emulator.mjs")).default()'"""


@pytest.mark.parametrize("command", [VITEST, JEST, HELPER_ALONE], ids=["vitest", "jest", "helper"])
def test_without_resend_emulator_on_path_the_run_says_how_to_install_it(
        project: Path, command: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    done = run(command, project, without_emulator_on_path(tmp_path_factory.mktemp("bin")))
    assert done.returncode != 0
    assert NOT_ON_PATH in done.stdout + done.stderr, done.stdout[-3000:] + done.stderr[-3000:]
    assert "spawn resend-emulator ENOENT" not in done.stdout + done.stderr


def test_the_node_quick_start_sends_one_email(live: str, project: Path) -> None:
    done = run("node quickstart.mjs", project, node_env(RESEND_BASE_URL=live))
    assert done.returncode == 0, done.stdout + done.stderr
    email_id = done.stdout.strip()
    mail = httpx.get(f"{live}/_emulator/outbox/{email_id}").json()
    assert (mail["account"], mail["from"], mail["to"], mail["subject"]) == (
        "default", "Acme <onboarding@acme.dev>", ["delivered@resend.dev"], "Hello")


def test_the_node_quick_start_without_an_emulator_says_so(project: Path) -> None:
    done = run("node quickstart.mjs", project, node_env(RESEND_BASE_URL="http://127.0.0.1:9"))
    assert (done.returncode, done.stdout) == (1, "")
    assert "is resend-emulator running at http://127.0.0.1:9?" in done.stderr, done.stderr


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
