"""EmulatorServer / EmulatorClient: the handle used by the plugin, unittest suites and scripts."""

from __future__ import annotations

import os
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
import resend

from emulator.testing import EmulatorClient, EmulatorError, EmulatorServer

MAIL = {"from": "Acme <hello@acme.dev>", "to": ["ada@lovelace.dev"], "subject": "Hi", "text": "Hello"}


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer(clock="frozen", api_keys=["re_handle_key"]) as running:
        yield running


@pytest.fixture
def fresh(server: EmulatorServer) -> EmulatorServer:
    server.reset()
    return server


def test_start_returns_a_serving_server_with_smtp(fresh: EmulatorServer) -> None:
    assert fresh.url.startswith("http://127.0.0.1:")
    assert fresh.health()["status"] == "ok"
    assert fresh.api_key == "re_handle_key"
    assert fresh.smtp_host == "127.0.0.1"
    assert fresh.smtp_port and fresh.smtps_port and fresh.smtp_port != fresh.smtps_port


def test_patch_env_sets_and_restores_the_variables_and_the_sdk(fresh: EmulatorServer,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESEND_API_KEY", "re_outer")
    monkeypatch.delenv("RESEND_BASE_URL", raising=False)
    outer_url = resend.api_url
    with fresh.patch_env() as values:
        assert values == fresh.env()
        assert os.environ["RESEND_BASE_URL"] == os.environ["RESEND_API_URL"] == fresh.url
        assert (resend.api_url, resend.api_key) == (fresh.url, "re_handle_key")
        assert resend.Emails.send(MAIL)["id"]  # type: ignore[arg-type]
    assert os.environ["RESEND_API_KEY"] == "re_outer"
    assert "RESEND_BASE_URL" not in os.environ
    assert resend.api_url == outer_url


def test_reset_returns_to_the_baseline_and_mark_baseline_moves_it(fresh: EmulatorServer) -> None:
    fresh.request("POST", "/domains", {"name": "kept.dev"})
    fresh.mark_baseline()
    fresh.request("POST", "/domains", {"name": "dropped.dev"})
    fresh.clock.advance(days=2)
    clock = fresh.clock.now()
    fresh.reset()
    assert [d["name"] for d in fresh.request("GET", "/domains")["data"]] == ["kept.dev"]
    assert fresh.clock.now() != clock
    fresh.request("DELETE", f"/domains/{fresh.request('GET', '/domains')['data'][0]['id']}")
    fresh.mark_baseline()  # back to an empty baseline for the other tests of the module


def test_smtp_helper_logs_in_and_mail_reaches_the_outbox(fresh: EmulatorServer) -> None:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "hello@acme.dev", "grace@hopper.dev", "Over SMTP"
    message.set_content("plain")
    with fresh.smtp() as session:
        session.send_message(message)
    assert fresh.outbox.wait_for(to="grace@hopper.dev")["subject"] == "Over SMTP"
    with fresh.smtp(implicit_tls=True) as session:
        session.send_message(message)
    assert len(fresh.outbox.list(to="grace@hopper.dev")) == 2


def test_outbox_get_and_raw(fresh: EmulatorServer) -> None:
    sent = fresh.request("POST", "/emails", MAIL)
    assert fresh.outbox.get(sent["id"])["text"].strip() == "Hello"
    assert b"Subject: Hi" in fresh.outbox.raw(sent["id"])


def test_outbox_search_and_checks(fresh: EmulatorServer) -> None:
    flex = {**MAIL, "html": '<div style="display:flex">Hi</div>', "subject": "Flexible"}
    sent = fresh.request("POST", "/emails", flex)
    fresh.request("POST", "/emails", MAIL)
    assert [e["id"] for e in fresh.outbox.list(q='subject:"flexible"')] == [sent["id"]]
    report = fresh.outbox.checks(sent["id"])
    assert list(report) == ["object", "email_id", "html", "links", "unsubscribe", "text", "navigation",
                            "controls", "spam"]
    outlook = [f["slug"] for f in report["html"]["unsupported"]
               if any(c["client"] == "outlook.windows" for c in f["clients"])]
    assert outlook == ["css-display-flex"]


def test_errors_carry_status_and_body(fresh: EmulatorServer) -> None:
    with pytest.raises(EmulatorError) as raised:
        fresh.request("GET", "/domains/not-there")
    assert raised.value.status == 404
    assert raised.value.body == {"statusCode": 404, "message": "Domain not found", "name": "not_found"}


def test_client_drives_a_server_started_elsewhere(fresh: EmulatorServer, tmp_path: Path) -> None:
    client = EmulatorClient(fresh.url, "re_handle_key")
    try:
        client.request("POST", "/emails", MAIL)
        client.snapshot(tmp_path / "state.db")
        client.reset()
        assert client.outbox.list() == []
        client.restore(tmp_path / "state.db")
        assert [mail["subject"] for mail in client.outbox.list()] == ["Hi"]
        assert client.load_scenario("basic")["loaded"]["domains"][0]["name"] == "acme.dev"
    finally:
        client.close()
    fresh.reset()


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"templates": [{"name": "no html"}]}')
    with pytest.raises(RuntimeError, match=r"did not start: .*Missing `html` field"):
        EmulatorServer(smtp=False, seed_file=str(broken)).start()


START_WITHOUT_THE_UI = """
import sys, urllib.request
from emulator.testing import EmulatorServer

with EmulatorServer(smtp=False) as server:
    server.request("POST", "/emails", {"from": "a@acme.dev", "to": ["b@acme.dev"], "subject": "s",
                                       "text": "t"})
    before = "emulator.web" in sys.modules
    page = urllib.request.urlopen(server.url + "/_emulator/ui/").read().decode()
    print(before, "emulator.web" in sys.modules, "<html" in page.lower())
"""


def test_the_web_ui_loads_on_its_first_page_not_at_start() -> None:
    # The UI is ~15 ms of a start that every test session pays (issue 28); a send never needs it.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", START_WITHOUT_THE_UI], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.split() == ["False", "True", "True"]


START_WITHOUT_THE_QA_CHECKS = """
import json, sys, urllib.request
from emulator.testing import EmulatorServer

with EmulatorServer(smtp=False) as server:
    sent = server.request("POST", "/emails", {"from": "a@acme.dev", "to": ["b@acme.dev"], "subject": "s",
                                              "html": "<p>t</p>"})
    before = "emulator.control.qa" in sys.modules
    check = json.load(urllib.request.urlopen(f"{server.url}/_emulator/outbox/{sent['id']}/html-check"))
    print(before, "emulator.control.qa" in sys.modules, sorted(check)[:1])
"""


def test_the_outbox_qa_checks_load_on_their_first_request_not_at_start() -> None:
    # ~10 ms of a start that every test session pays (issue 28), for checks few sessions run.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", START_WITHOUT_THE_QA_CHECKS], capture_output=True,
                          text=True, check=True, timeout=60)
    before, after, keys = done.stdout.split(maxsplit=2)
    assert (before, after) == ("False", "True") and keys != "[]"


START_WITHOUT_UVICORNS_COMMAND_LINE = """
import importlib.metadata, sys
from emulator.testing import EmulatorServer

with EmulatorServer() as server:
    server.request("POST", "/emails", {"from": "a@acme.dev", "to": ["b@acme.dev"], "subject": "s",
                                       "text": "t"})
    before = sorted(name for name in ("click", "uvicorn.main", "watchfiles") if name in sys.modules)
    import uvicorn
    from uvicorn import run

    print(before, run is sys.modules["uvicorn.main"].run,
          uvicorn.__version__ == importlib.metadata.version("uvicorn"), "click" in sys.modules)
"""


def test_uvicorns_command_line_loads_only_when_the_suite_asks_for_it() -> None:
    # uvicorn's package imports its CLI and reloaders (click, watchfiles, ...): ~15 ms of every test
    # session's start (issue 28). A suite that uses uvicorn itself still gets the whole package.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", START_WITHOUT_UVICORNS_COMMAND_LINE], capture_output=True,
                          text=True, check=True, timeout=60)
    assert done.stdout.split() == ["[]", "True", "True", "True"]


def test_stop_takes_less_than_uvicorns_fixed_wait_and_frees_the_port() -> None:
    import socket
    import time

    server = EmulatorServer(smtp=False).start()
    port = int(server.url.rsplit(":", 1)[1])
    server.health()
    started = time.monotonic()
    server.stop()
    # uvicorn alone polls for the stop and then waits a fixed 0.1 s; the handle wakes it at once and
    # waits only for what is under way (a few milliseconds here).
    assert time.monotonic() - started < 0.1
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass
