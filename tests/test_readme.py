"""Every fenced shell and Python example of the README runs, against a live emulator started here.

Each example is dispatched on what it is: commands that would install into this environment run with
`--dry-run`, `make` targets that serve forever or run this very suite run as `make -n`, the emulator
command starts a real server on a free port (examples then talk to that port). A command or a file
nobody knows how to run fails the test: an example is never skipped silently.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.source_tree import source_copy

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)
EXAMPLES = [(lang, body) for lang, body in FENCE.findall(README) if lang in {"sh", "python"}]
BIN = Path(sys.executable).parent
CLONE_PLACEHOLDER = "/path/to/resend-emulator"
EMAIL_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


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
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed: the README's `npm install` line cannot be checked")
        result = shell(f"npm install --dry-run --no-audit --no-fund {shlex.join(words[2:])}", tmp_path)
    elif words[0] == "resend-emulator":
        with cli(line) as url:
            assert httpx.get(f"{url}/_emulator/health").json()["status"] == "ok"
        return
    else:
        pytest.fail(f"the README example `{line}` has no handler in tests/test_readme.py")
    assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"


def run_shell_block(body: str, tmp_path: Path) -> None:
    lines = commands(body)
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
    script.write_text(body.replace("http://127.0.0.1:2580", url))
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=clean_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


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


def example_id(example: tuple[str, str]) -> str:
    return f"{example[0]}: {example[1].splitlines()[0][:50]}"


def test_the_readme_has_the_examples_a_newcomer_needs() -> None:
    lines = [line for _, body in EXAMPLES for line in commands(body)]
    for needed in ("python3 -m venv .venv", "make run", "make test", "pip install resend",
                   "npm install resend", f"pip install {CLONE_PLACEHOLDER}"):
        assert needed in lines, needed
    assert "Python 3.11 or newer" in README


@pytest.mark.parametrize(("lang", "body"), EXAMPLES, ids=[example_id(e) for e in EXAMPLES])
def test_readme_example_runs(lang: str, body: str, live: str, tmp_path: Path) -> None:
    if lang == "sh":
        run_shell_block(body, tmp_path)
        return
    result = run_python(body, live, tmp_path)
    if "print(sent[\"id\"])" in body:
        # The quick start printed the id of an email the live emulator really holds.
        email_id = result.stdout.strip()
        assert EMAIL_ID.match(email_id), email_id
        assert httpx.get(f"{live}/_emulator/outbox/{email_id}").json()["subject"] == "Hello"
