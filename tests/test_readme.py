"""Every fenced example of the README runs, against a live emulator started here.

Each example is dispatched on what it is: commands that would install into this environment run with
`--dry-run` (or `apt-get --simulate`), `make` targets that serve forever or run this very suite run as
`make -n`, the emulator command starts a real server on free ports (examples then talk to that port).
The Node recipe runs as a project under vitest and Jest, Resend's CLI and MCP server run against the
emulator (their npm packages installed into a cache outside the repository: tests/node_helpers.py).
A block nobody knows how to run fails a test: an example is never skipped.
"""

from __future__ import annotations

import ast
import json
import os
import queue
import re
import shlex
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from emulator.cli import build_parser
from tests.node_helpers import CACHE, locked, npm_packages, run_npm
from tests.source_tree import source_copy

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)
BLOCKS: list[tuple[str, str]] = FENCE.findall(README)
OUTPUT_LANGUAGES = {"text"}  # what a command printed (the performance table), not something to run
BIN = Path(sys.executable).parent
CLONE_PLACEHOLDER = "/path/to/resend-emulator"
README_URL = "http://127.0.0.1:2580"
EMAIL_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
# The Node recipe's packages, pinned (the README's `npm install` line names them unpinned).
NODE_RUNNERS = ["vitest@4.1.12", "jest@30.5.2", "@jest/globals@30.5.2", "resend@6.12.2"]
JEST_IMPORT = 'import the same names from "@jest/globals" instead of "vitest"'


def is_node_recipe(lang: str, body: str) -> bool:
    return lang == "js" or (lang == "sh" and "npx vitest run" in body)


def is_resend_cli(lang: str, body: str) -> bool:
    return lang == "sh" and "\nresend emails send " in body


def is_mcp_config(lang: str, body: str) -> bool:
    return lang == "json" and '"mcpServers"' in body


SPECIAL = (is_node_recipe, is_resend_cli, is_mcp_config)
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


@pytest.fixture(scope="module")
def live() -> Iterator[str]:
    """The emulator the quick start tells a newcomer to start (its first `resend-emulator` example)."""
    lines = (line for _, body in EXAMPLES for line in commands(body))
    start = next(line for line in lines if line.startswith("resend-emulator"))
    with cli(start) as url:
        yield url


def shell(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-ec", line], cwd=cwd, env=clean_env(), capture_output=True, text=True,
                          timeout=300)


def run_command(line: str, tmp_path: Path) -> None:
    if CLONE_PLACEHOLDER in line:
        line = line.replace(CLONE_PLACEHOLDER, str(source_copy(tmp_path / "clone")))
    words = shlex.split(line)
    if words[0] == "make":
        # `make run` serves until Ctrl-C and `make test` is this suite: check the targets exist and resolve.
        result = shell(f"make -n {shlex.join(words[1:])}", ROOT)
    elif words[:2] == ["pip", "install"]:
        result = shell(f"python -m pip install --dry-run {shlex.join(words[2:])}", tmp_path)
    elif words[:2] == ["pip", "wheel"]:
        result = shell(f"python -m {line}", tmp_path)
    elif words[:2] == ["npm", "install"]:
        result = shell(f"npm install --dry-run --prefer-offline --no-audit --no-fund {shlex.join(words[2:])}",
                       tmp_path)
    elif words[:2] == ["sudo", "apt-get"] and words[2] == "install":
        # What it installs must be Debian packages: simulated, nothing changes.
        result = shell(f"apt-get install --simulate {shlex.join(words[3:])}", tmp_path)
    elif words[0] == "resend-emulator":
        with cli(line) as url:
            assert httpx.get(f"{url}/_emulator/health").json()["status"] == "ok"
        return
    else:
        pytest.fail(f"the README example `{line}` has no handler in tests/test_readme.py")
    assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"


def run_shell_block(body: str, tmp_path: Path, url: str) -> None:
    lines = commands(body)
    if lines[0].startswith("curl "):
        run_curl_block(body, url, tmp_path)
        return
    if lines[0].startswith("python3 -m venv"):
        # A virtualenv is made in a scratch folder, then proven active.
        probe = "python -c 'import sys; assert sys.prefix != sys.base_prefix, sys.prefix'"
        result = shell("\n".join([*lines, probe]), tmp_path)
        assert result.returncode == 0, result.stderr
        return
    if lines[0].startswith("pip wheel"):
        # `pip wheel` then `pip install <the wheel>`: the named wheel must be the one just built.
        wheel = lines[1].split()[-1]
        assert wheel == f"dist/resend_emulator-{VERSION}-py3-none-any.whl", wheel
    for line in lines:
        run_command(line, tmp_path)


def run_python(body: str, url: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    first = body.splitlines()[0]
    if first == "# test_signup.py":
        (tmp_path / "test_signup.py").write_text(body)
        return pytest_in(tmp_path, expect_passed=3)
    if first == "# conftest.py":
        (tmp_path / "conftest.py").write_text(body)
        (tmp_path / "test_probe.py").write_text(CONFTEST_PROBE)
        return pytest_in(tmp_path, expect_passed=1)
    script = tmp_path / "example.py"
    script.write_text(body.replace(README_URL, url))
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=clean_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def example_id(example: tuple[str, str]) -> str:
    return f"{example[0]}: {example[1].splitlines()[0][:50]}"


# What the README's conftest.py promises: frozen clock, the basic scenario, strict domains, no env vars.
CONFTEST_PROBE = """
import os

import pytest
from emulator.testing import EmulatorError

def test_the_session_follows_the_conftest(resend_emulator):
    assert "RESEND_API_URL" not in os.environ
    assert resend_emulator.clock.now().startswith("2026-01-01T00:00:00")
    domains = resend_emulator.request("GET", "/domains")["data"]
    assert [d["name"] for d in domains] == ["acme.dev"]
    with pytest.raises(EmulatorError) as refused:
        resend_emulator.request("POST", "/emails", {"from": "a@elsewhere.dev", "to": ["b@c.dev"],
                                                    "subject": "s", "text": "t"})
    assert refused.value.status == 403
"""


def pytest_in(folder: Path, expect_passed: int) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
                            cwd=folder, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"{expect_passed} passed" in result.stdout, result.stdout[-3000:]
    return result


def run_curl_block(body: str, url: str, tmp_path: Path) -> None:
    """The control-plane walk-through, as one shell script: freeze, send, advance, read, reset."""
    result = shell(body.replace(README_URL, url), tmp_path)
    assert result.returncode == 0, result.stderr
    answers = json_documents(result.stdout)
    assert len(answers) == len(commands(body.replace("\\\n", " "))), result.stdout  # one per curl
    [outbox] = [answer for answer in answers if answer.get("object") == "list"]
    [mail] = outbox["data"]
    assert (mail["subject"], mail["last_event"]) == ("Hi from curl", "delivered")  # 5 s later on the clock
    assert answers[-1] == {"reset": True}
    assert httpx.get(f"{url}/_emulator/outbox", params={"subject": "Hi from curl"}).json()["data"] == []


def json_documents(text: str) -> list[Any]:
    decoder, documents, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        document, at = decoder.raw_decode(text, at)
        documents.append(document)
    return documents


def test_the_readme_has_the_examples_a_newcomer_needs() -> None:
    lines = [line for _, body in EXAMPLES for line in commands(body)]
    for needed in ("python3 -m venv .venv", "make run", "make test", "pip install resend",
                   "npm install resend", f"pip install {CLONE_PLACEHOLDER}",
                   "sudo apt-get install -y chromium"):
        assert needed in lines, needed
    assert "Python 3.11 or newer" in README
    for kind in SPECIAL:
        assert any(kind(lang, body) for lang, body in BLOCKS), kind.__name__


def test_every_block_has_a_runner() -> None:
    runnable = {"sh", "python", "js", "json"}
    for lang, body in BLOCKS:
        assert lang in runnable | OUTPUT_LANGUAGES, f"no runner for a ```{lang} block:\n{body[:200]}"
        if lang in {"js", "json"}:
            assert any(kind(lang, body) for kind in SPECIAL), f"no runner for:\n{body[:200]}"


def test_every_python_example_says_what_to_install() -> None:
    """Each third-party module an example imports is named by a `pip install` line of the README."""
    installed = {name for line in re.findall(r"pip install ([\w .-]+)", README) for name in line.split()}
    for lang, body in BLOCKS:
        if lang == "python":
            missing = third_party_imports(body) - installed
            assert not missing, f"the README never says `pip install {' '.join(missing)}` for:\n{body[:300]}"


def third_party_imports(body: str) -> set[str]:
    tree = ast.parse(body)
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    tops = {name.split(".")[0] for name in names}
    # pytest examples run under pytest; `emulator` is this package.
    return {name for name in tops if name not in sys.stdlib_module_names | {"pytest", "emulator"}}


@pytest.mark.parametrize(("lang", "body"), EXAMPLES, ids=[example_id(e) for e in EXAMPLES])
def test_readme_example_runs(lang: str, body: str, live: str, tmp_path: Path) -> None:
    if lang == "sh":
        run_shell_block(body, tmp_path, live)
        return
    result = run_python(body, live, tmp_path)
    if "print(sent[\"id\"])" in body:
        # The quick start printed the id of an email the live emulator really holds.
        email_id = result.stdout.strip()
        assert EMAIL_ID.match(email_id), email_id
        assert httpx.get(f"{live}/_emulator/outbox/{email_id}").json()["subject"] == "Hello"
    if "smtplib" in body:
        [mail] = httpx.get(f"{live}/_emulator/outbox", params={"subject": "Over SMTP"}).json()["data"]
        assert (mail["from"], mail["to"]) == ("Acme <hello@acme.dev>", ["ada@lovelace.dev"])
        assert mail["source"] == "smtp"


def test_the_flag_table_lists_every_flag_help_shows() -> None:
    section = README[README.index("## Command line"):README.index("## Control plane")]
    in_table = {flag for row in section.splitlines() if row.startswith("| `")
                for flag in re.findall(r"`(--?[a-z][a-z-]*)`", row.split(" | ")[0])}
    in_help = {flag for action in build_parser()._actions for flag in action.option_strings}
    assert in_table == in_help


def test_make_run_installs_only_when_pyproject_is_newer_than_the_last_install(tmp_path: Path) -> None:
    stamp = tmp_path / ".resend-emulator-installed"

    def planned() -> str:
        return shell(f"make -n run PREFIX={tmp_path}", ROOT).stdout

    assert "pip install" in planned()  # never installed into this environment
    stamp.touch()
    os.utime(stamp, (os.stat(ROOT / "pyproject.toml").st_mtime + 10,) * 2)
    assert planned().splitlines() == ["python3 -m emulator "]
    os.utime(stamp, (os.stat(ROOT / "pyproject.toml").st_mtime - 10,) * 2)
    assert "pip install -q -e ." in planned()


# ---- the Node recipe under vitest and Jest ---------------------------------------------------------

def node_env(**extra: str) -> dict[str, str]:
    """A new shell's environment, the emulator's command on PATH, no colours, nothing sent online."""
    return {**clean_env(), "NO_COLOR": "1", "FORCE_COLOR": "0", "DO_NOT_TRACK": "1", **extra}


def recipe_files() -> dict[str, str]:
    """The recipe's files, named by their first line (`// path — what it is`)."""
    files = {}
    for lang, body in BLOCKS:
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


@pytest.mark.node
def test_the_node_recipe_installs_what_it_imports() -> None:
    install = next(line for _, body in BLOCKS for line in commands(body)
                   if line.startswith("npm install --save-dev"))
    assert set(install.split()[3:]) == {spec.rsplit("@", 1)[0] for spec in NODE_RUNNERS}


@pytest.mark.node
def test_the_node_recipe_runs_under_vitest(node_runners: Path, tmp_path: Path) -> None:
    files = recipe_files()
    assert set(files) == {"test/emulator.setup.mjs", "vitest.config.mjs", "jest.config.mjs",
                          "test/mail.test.mjs"}
    project = write_project(tmp_path, files, node_runners)
    [command] = [line for line in recipe_commands() if "vitest" in line]
    done = subprocess.run(["bash", "-ec", command], cwd=project, env=node_env(), capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"Tests\s+2 passed \(2\)", done.stdout), done.stdout[-3000:]


@pytest.mark.node
def test_the_node_recipe_runs_under_jest_with_the_import_it_names(node_runners: Path,
                                                                   tmp_path: Path) -> None:
    files = recipe_files()
    test_file = files["test/mail.test.mjs"]
    assert JEST_IMPORT in test_file  # the one change the README tells Jest users to make
    files["test/mail.test.mjs"] = test_file.replace('from "vitest";', 'from "@jest/globals";')
    project = write_project(tmp_path, files, node_runners)
    [command] = [line for line in recipe_commands() if "jest" in line]
    done = subprocess.run(["bash", "-ec", command], cwd=project, env=node_env(), capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
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


@pytest.mark.node
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


@pytest.mark.node
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
