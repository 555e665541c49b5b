"""Every fenced example of the README and of docs/*.md runs, against a live emulator started here; one
that talks to the emulator runs twice in a row (a reader runs it again).

Each example is dispatched on what it is: commands that would install into this environment run with
`--dry-run` (or `apt-get --simulate`), `make` targets that serve forever or run this very suite run as
`make -n`, the emulator command starts a real server on free ports (examples then talk to that port).
The Node recipe and Resend's CLI and MCP server run in tests/test_readme_node.py. A block nobody knows
how to run fails a test: an example is never skipped.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from emulator.cli import build_parser
from tests.node_helpers import npm_packages
from tests.readme_helpers import (
    ALL_TEXT,
    BLOCKS,
    CLONE_PLACEHOLDER,
    EMAIL_ID,
    EXAMPLES,
    NODE_RUNNERS,
    NODE_SEND,
    OUTPUT_LANGUAGES,
    PAGES,
    README,
    README_URL,
    ROOT,
    SPECIAL,
    TEXTS,
    VERSION,
    clean_env,
    cli,
    commands,
    is_node_send,
    is_pytest_ini,
    quick_start_command,
    shell,
)
from tests.regen_docs import CLI_PAGE, current_help, help_in_page
from tests.source_tree import source_copy


@pytest.fixture(scope="module")
def live() -> Iterator[str]:
    with cli(quick_start_command()) as url:
        yield url


def run_command(line: str, tmp_path: Path) -> None:
    if CLONE_PLACEHOLDER in line:
        line = line.replace(CLONE_PLACEHOLDER, str(source_copy(tmp_path / "clone")))
    words = shlex.split(line)
    if words[0] == "make":
        # `make run` serves until Ctrl-C and `make test` is this suite: check the targets exist and resolve.
        result = shell(f"make -n {shlex.join(words[1:])}", ROOT)
    elif words[:2] in (["pip", "install"], [".venv/bin/pip", "install"]):
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
    if lines[0].startswith("curl ") and "/_emulator/reset" in body:
        run_curl_block(body, url, tmp_path)
        return
    if lines[0].startswith("curl "):
        run_curl_send(body, url, tmp_path)
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
    if first.startswith("# conftest.py"):
        (tmp_path / "conftest.py").write_text(body)
        probe = AUTOENV_OFF_PROBE if "def resend_emulator_autoenv" in body else CONFTEST_PROBE
        (tmp_path / "test_probe.py").write_text(probe)
        return pytest_in(tmp_path, expect_passed=1)
    script = tmp_path / "example.py"
    script.write_text(body.replace(README_URL, url))
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=clean_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def example_id(example: tuple[str, str]) -> str:
    return f"{example[0]}: {example[1].splitlines()[0][:50]}"


# What the README's conftest.py promises: frozen clock, the basic scenario, strict domains.
CONFTEST_PROBE = """
import os

import pytest
from emulator.testing import EmulatorError

def test_the_session_follows_the_conftest(resend_emulator):
    assert os.environ["RESEND_API_URL"] == resend_emulator.url
    assert resend_emulator.clock.now().startswith("2026-01-01T00:00:00")
    domains = resend_emulator.request("GET", "/domains")["data"]
    assert [d["name"] for d in domains] == ["acme.dev"]
    with pytest.raises(EmulatorError) as refused:
        resend_emulator.request("POST", "/emails", {"from": "a@elsewhere.dev", "to": ["b@c.dev"],
                                                    "subject": "s", "text": "t"})
    assert refused.value.status == 403
"""


# With the automatic setup off, no variable points at the emulator and the SDK cannot reach the real API.
AUTOENV_OFF_PROBE = """
import os

import pytest
import resend

def test_nothing_points_at_the_emulator_and_the_real_api_is_out_of_reach(resend_emulator):
    assert "RESEND_API_URL" not in os.environ
    resend.api_key = "re_not_a_real_key"
    with pytest.raises(BaseException, match="tried to reach https://api.resend.com"):
        resend.Emails.send({"from": "a@acme.dev", "to": ["b@acme.dev"], "subject": "s", "text": "t"})
"""


SHAPE_PROBE = """
from emulator.testing.process import ChildEmulator

def test_the_emulator_runs_in_a_child_process(resend_emulator):
    assert isinstance(resend_emulator, ChildEmulator)
    assert resend_emulator.health()["status"] == "ok"
"""


def test_the_pytest_ini_runs_the_emulator_in_a_child_process(tmp_path: Path) -> None:
    [ini] = [body for lang, body in BLOCKS if is_pytest_ini(lang, body)]
    (tmp_path / "pytest.ini").write_text(ini)
    (tmp_path / "test_shape.py").write_text(SHAPE_PROBE)
    pytest_in(tmp_path, expect_passed=1)


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


def run_curl_send(body: str, url: str, tmp_path: Path) -> None:
    """A send with curl: the answer is the new email's id, and the emulator holds that email."""
    result = shell(body.replace(README_URL, url), tmp_path)
    assert result.returncode == 0, result.stderr
    email_id = json.loads(result.stdout)["id"]
    assert httpx.get(f"{url}/_emulator/outbox/{email_id}").json()["subject"] == "Hello"


def talks_to_the_emulator(lang: str, body: str) -> bool:
    """Examples a reader may run again against the same emulator (not installs, nor pytest files)."""
    if lang == "sh":
        return commands(body)[0].startswith("curl ")
    return not body.startswith(("# test_signup.py", "# conftest.py"))


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
    for needed in ("make run", "make test", ".venv/bin/pip install resend",
                   "npm install resend", f"pip install {CLONE_PLACEHOLDER}",
                   "sudo apt-get install -y chromium spamassassin apache2-utils"):
        assert needed in lines, needed
    assert "Python 3.11 or newer" in README
    assert any(is_node_send(lang, body) for lang, body in BLOCKS)
    for kind in SPECIAL:
        assert any(kind(lang, body) for lang, body in BLOCKS), kind.__name__


def test_every_block_has_a_runner() -> None:
    runnable = {"sh", "python", "js", "json", "yaml", "ini"}
    for lang, body in BLOCKS:
        assert lang in runnable | OUTPUT_LANGUAGES, f"no runner for a ```{lang} block:\n{body[:200]}"
        if lang in {"js", "json", "yaml", "ini"}:
            assert any(kind(lang, body) for kind in SPECIAL), f"no runner for:\n{body[:200]}"


def test_every_python_example_says_what_to_install() -> None:
    """Each third-party module an example imports is named by a `pip install` line of the docs."""
    installed = {name for line in re.findall(r"pip install ([\w .-]+)", ALL_TEXT) for name in line.split()}
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
    run_example(lang, body, live, tmp_path / "first")
    if talks_to_the_emulator(lang, body):
        run_example(lang, body, live, tmp_path / "again")


def run_example(lang: str, body: str, live: str, tmp_path: Path) -> None:
    tmp_path.mkdir()
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
        mail = httpx.get(f"{live}/_emulator/outbox", params={"subject": "Over SMTP"}).json()["data"][0]
        assert (mail["from"], mail["to"]) == ("Acme <hello@acme.dev>", ["ada@lovelace.dev"])
        assert mail["source"] == "smtp"
    if "resend.Webhooks.verify" in body:
        event_type, email_id = result.stdout.split()
        assert event_type == "email.delivered"
        assert httpx.get(f"{live}/_emulator/outbox/{email_id}").json()["subject"] == "Webhook demo"


def test_the_readme_node_send_runs_twice(live: str, tmp_path: Path) -> None:
    [body] = [body for lang, body in BLOCKS if is_node_send(lang, body)]
    (tmp_path / "send.mjs").write_text(body.replace(README_URL, live))
    (tmp_path / "node_modules").symlink_to(npm_packages("node-runners", *NODE_RUNNERS) / "node_modules")
    for _ in range(2):
        done = subprocess.run(["node", "send.mjs"], cwd=tmp_path, env=clean_env(), capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        email_id = done.stdout.strip()
        assert EMAIL_ID.match(email_id), done.stdout
        assert httpx.get(f"{live}/_emulator/outbox/{email_id}").json()["subject"] == "Hello"


def test_the_readme_first_screen_runs_a_send_three_ways_and_the_readme_stays_short() -> None:
    first_screen = "\n".join(README.splitlines()[:60])
    for needed in ("make run", "make test", "```python", f"```js\n{NODE_SEND}", "curl -s -X POST",
                   "re_emulator_default_key", README_URL):
        assert needed in first_screen, needed
    assert len(README.splitlines()) <= 250


def test_the_cli_page_shows_what_help_prints_now() -> None:
    assert help_in_page(CLI_PAGE.read_text()) == current_help(), (
        "docs/cli.md's --help block is stale: run `python -m tests.regen_docs`")


# A repository path cited in prose or code: a top-level folder of this repository (or `reference/`,
# which is not in it), then a file name with an extension. Globs and placeholders (`*`, `<group>`) stop it.
CITED_PATH = re.compile(r"(?<![\w/.])((?:reference|docs|emulator|tests|benchmarks|fixtures)/[\w./-]*\.\w+)")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_relative_link_and_cited_file_exists() -> None:
    missing = []
    for page, text in TEXTS.items():
        for target in LINK.findall(text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path = target.split("#")[0]
            if path and not (page.parent / path).exists():
                missing.append(f"{page.relative_to(ROOT)}: link {target}")
        for cited in CITED_PATH.findall(text):
            if not (ROOT / cited).exists():
                missing.append(f"{page.relative_to(ROOT)}: cites {cited}")
    assert not missing, "\n".join(missing)


def test_the_link_check_sees_a_missing_file() -> None:
    assert CITED_PATH.findall("follows reference/emails.md and `emulator/core/wire.py`") == [
        "reference/emails.md", "emulator/core/wire.py"]
    assert LINK.findall("[x](docs/nowhere.md#a) and [y](https://resend.com)") == [
        "docs/nowhere.md#a", "https://resend.com"]
    assert len(PAGES) > 10


def test_the_flag_table_lists_every_flag_help_shows() -> None:
    page = CLI_PAGE.read_text()
    section = page[:page.index("## resend-emulator --help")]
    in_table = {flag for row in section.splitlines() if row.startswith("| `")
                for flag in re.findall(r"`(--?[a-z][a-z-]*)(?: [^`]*)?`", row.split(" | ")[0])}
    in_help = {flag for action in build_parser()._actions for flag in action.option_strings}
    assert in_table == in_help


def test_make_run_installs_only_when_pyproject_is_newer_than_the_last_install(tmp_path: Path) -> None:
    stamp = tmp_path / ".resend-emulator-installed"

    def planned() -> str:
        return shell(f"make --no-print-directory -n run PREFIX={tmp_path}", ROOT).stdout

    assert "pip install" in planned()  # never installed into this environment
    stamp.touch()
    os.utime(stamp, (os.stat(ROOT / "pyproject.toml").st_mtime + 10,) * 2)
    assert planned().splitlines() == ["python3 -m emulator "]
    os.utime(stamp, (os.stat(ROOT / "pyproject.toml").st_mtime - 10,) * 2)
    assert "pip install -q -e ." in planned()
