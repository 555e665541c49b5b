"""Under the pytest plugin no test reaches the real Resend API, whatever its fixtures and environment say.

Each inner session's conftest records every name looked up and every address connected to beneath the
plugin's guard, and refuses anything but loopback itself, so even the code before the guard sends
nothing off this machine: a lookup of a resend.com name in the record means the guard let it through.
"""

from __future__ import annotations

import json
import os
import socket

import pytest

from emulator.testing import hermetic

pytest_plugins = ["pytester"]

SENTENCE = "resend-emulator: this test tried to reach https://api.resend.com, the real Resend API"

RECORDING_CONFTEST = '''
import json, os, socket
import pytest

LOOPBACK = ("127.0.0.1", "::1", "localhost")
lookups, connects = [], []
_resolve, _connect = socket.getaddrinfo, socket.socket.connect

def recording_getaddrinfo(host, port, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else str(host)
    lookups.append(name)
    if name not in LOOPBACK and not name.startswith("127."):
        raise socket.gaierror(socket.EAI_NONAME, "recorded and refused: " + name)
    return _resolve(host, port, *args, **kwargs)

def recording_connect(sock, address):
    connects.append(str(address[0]) if isinstance(address, tuple) else str(address))
    return _connect(sock, address)

socket.getaddrinfo = recording_getaddrinfo   # beneath the plugin's guard, installed after conftests load
socket.socket.connect = recording_connect

def pytest_sessionfinish(session):
    with open(os.environ["RECORD_FILE"], "w") as out:
        json.dump({"lookups": lookups, "connects": connects}, out)
'''

AUTOENV_OFF = '''
@pytest.fixture(scope="session")
def resend_emulator_autoenv():
    return False
'''

SDK_SEND = '''
import resend

def test_welcome(resend_emulator):
    resend.Emails.send({"from": "Acme <hello@acme.dev>", "to": ["ada@lovelace.dev"],
                        "subject": "Welcome", "html": "<p>Hi</p>"})
    assert resend_emulator.outbox.wait_for(to="ada@lovelace.dev", timeout=5)
'''

EVERY_CLIENT = '''
import asyncio, socket, urllib.request
import httpx, pytest, requests

refused = pytest.raises(pytest.fail.Exception, match="resend-emulator: this test tried to reach")

def test_requests():
    with refused:
        requests.post("https://api.resend.com/emails", json={}, timeout=2)

def test_requests_through_a_proxy(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    with refused:
        requests.get("https://api.resend.com/domains", timeout=2)

def test_httpx():
    with refused:
        httpx.get("https://API.Resend.com./emails")

def test_httpx_async():
    async def fetch():
        async with httpx.AsyncClient() as client:
            await client.get("https://resend.com/")
    with refused:
        asyncio.run(fetch())

def test_urllib():
    with refused:
        urllib.request.urlopen("https://api.resend.com/emails", timeout=2)

def test_raw_socket():
    with refused:
        socket.create_connection(("eu.api.resend.com", 443), timeout=2)

def test_other_names_resolve_as_before():
    assert socket.getaddrinfo("127.0.0.1", 80)
    with pytest.raises(socket.gaierror, match="recorded and refused: notresend.com"):
        socket.getaddrinfo("notresend.com", 443)
'''

OPTED_OUT = '''
import resend, pytest

def test_the_sdk_goes_to_its_real_url():
    resend.api_url, resend.api_key = "https://api.resend.com", "re_fake_key_for_the_opt_out"
    with pytest.raises(resend.exceptions.ResendError, match="recorded and refused: api.resend.com"):
        resend.Emails.send({"from": "a@acme.dev", "to": ["b@acme.dev"], "subject": "s", "text": "t"})
'''


def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        *args: str) -> tuple[pytest.RunResult, dict[str, list[str]]]:
    record = pytester.path / "record.json"
    monkeypatch.setenv("RECORD_FILE", str(record))
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", *args)
    return result, json.loads(record.read_text())


def off_machine(record: dict[str, list[str]]) -> list[str]:
    return [name for name in record["lookups"] + record["connects"]
            if name not in ("::1", "localhost") and not name.startswith("127.")]


def test_the_readme_conftest_with_autoenv_off_fails_with_one_sentence_before_any_lookup(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESEND_API_KEY", "re_a_real_looking_key_1234")
    monkeypatch.delenv("RESEND_API_URL", raising=False)
    pytester.makeconftest(RECORDING_CONFTEST + AUTOENV_OFF)
    pytester.makepyfile(test_signup=SDK_SEND)
    # In a thread the emulator's start is traffic of this process: the recorder is seen to work.
    result, record = run(pytester, monkeypatch, "--resend-emulator-shape=thread")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([SENTENCE + "*"])
    assert "ResendError" not in result.stdout.str()
    assert off_machine(record) == []
    assert "127.0.0.1" in record["connects"]        # the recorder saw the emulator's own traffic


def test_every_python_client_is_refused_and_other_names_are_untouched(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeconftest(RECORDING_CONFTEST)
    pytester.makepyfile(test_clients=EVERY_CLIENT)
    result, record = run(pytester, monkeypatch)
    result.assert_outcomes(passed=7)
    assert [name for name in record["lookups"] if "resend" in name] == ["notresend.com"]
    assert off_machine(record) == ["notresend.com"]


def test_the_opt_out_lets_the_sdk_look_up_the_real_api(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeconftest(RECORDING_CONFTEST)
    pytester.makepyfile(test_real=OPTED_OUT)
    result, record = run(pytester, monkeypatch, "--resend-allow-real-api")
    result.assert_outcomes(passed=1)
    assert record["lookups"] == ["api.resend.com"]
    assert record["connects"] == []


def test_the_fixture_path_still_sends_to_the_emulator(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESEND_API_KEY", "re_a_real_looking_key_1234")
    pytester.makeconftest(RECORDING_CONFTEST)
    pytester.makepyfile(test_signup=SDK_SEND)
    result, record = run(pytester, monkeypatch)
    result.assert_outcomes(passed=1)
    assert off_machine(record) == []


def test_the_opt_out_is_in_pytest_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*--resend-allow-real-api*", "*real Resend API*"])


def test_uninstall_puts_back_the_resolver_and_the_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "internal.example")
    monkeypatch.delenv("no_proxy", raising=False)
    before = socket.getaddrinfo

    def refuse(sentence: str) -> None:
        raise LookupError(sentence)

    guard = hermetic.install(refuse)  # type: ignore[arg-type]
    try:
        assert socket.getaddrinfo is not before
        assert socket.getaddrinfo("127.0.0.1", 80)
        with pytest.raises(LookupError, match=r"reach https://resend\.com, "):
            socket.gethostbyname("Resend.COM.")
        assert os.environ["NO_PROXY"] == "internal.example,resend.com,.resend.com"
        assert os.environ["no_proxy"] == "resend.com,.resend.com"
    finally:
        guard.uninstall()
    assert socket.getaddrinfo is before
    assert os.environ["NO_PROXY"] == "internal.example"
    assert "no_proxy" not in os.environ


@pytest.mark.parametrize(("host", "refused"), [
    ("api.resend.com", True), ("resend.com", True), ("API.RESEND.COM.", True), (b"api.resend.com", True),
    ("resend.com.evil.dev", False), ("notresend.com", False), ("127.0.0.1", False), (None, False),
    ("localhost", False), ("::1", False),
])
def test_which_names_are_resends(host: object, refused: bool) -> None:
    assert hermetic.is_resend_host(host) is refused


def test_this_suite_itself_runs_under_the_guard() -> None:
    with pytest.raises(pytest.fail.Exception, match="resend-emulator: this test tried to reach https://api"):
        socket.getaddrinfo("api.resend.com", 443)
