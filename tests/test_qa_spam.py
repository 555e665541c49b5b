"""The spam check: SpamAssassin's score and rules from Debian's real spamd, over the spamd protocol."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from emulator.cli import parse_settings
from emulator.control.qa.spam import Spamd, check, rules_of
from emulator.testing import EmulatorServer
from tests.conftest import AUTH, make_settings
from tests.spamd_helpers import ask, running_spamd

# GTUBE: the test string every SpamAssassin scores 1000 (its rule GTUBE).
GTUBE = "XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X"


@pytest.fixture(scope="module")
def spamd_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with running_spamd(tmp_path_factory.mktemp("spamd")) as port:
        yield port


@pytest.fixture(scope="module")
def checked(spamd_port: int) -> Iterator[httpx.Client]:
    """An API client for an emulator started with --spamassassin 127.0.0.1:<spamd's port>."""
    with EmulatorServer(make_settings(port=0, spamassassin=f"127.0.0.1:{spamd_port}")) as server, \
            httpx.Client(base_url=server.url, headers=AUTH, timeout=90) as client:
        yield client


def send(client: httpx.Client, text: str, subject: str = "Your order") -> str:
    response = client.post("/emails", json={"from": "Acme <orders@acme.dev>", "to": ["ada@lovelace.dev"],
                                            "subject": subject, "text": text})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def spamd_says(port: int, eml: bytes) -> tuple[str, set[str]]:
    """spamd's own Spam header and rule names (SYMBOLS) for the same message."""
    head, _, body = ask(port, "SYMBOLS", eml).partition(b"\r\n\r\n")
    spam_line = next(line for line in head.decode().split("\r\n") if line.startswith("Spam:"))
    return spam_line, {name for name in body.decode().strip().split(",") if name}


def test_the_qa_json_shows_spamassassins_score_and_rules(checked: httpx.Client, spamd_port: int) -> None:
    email_id = send(checked, f"Hello.\n\n{GTUBE}\n", subject="Test of the spam check")
    spam = checked.get(f"/_emulator/outbox/{email_id}/qa").json()["spam"]
    assert spam["enabled"] is True and spam.get("is_spam") is True and spam["status"] == "error", spam
    assert spam["score"] >= 1000 and spam["threshold"] == 5.0
    gtube = next(rule for rule in spam["rules"] if rule["name"] == "GTUBE")
    assert gtube == {"name": "GTUBE", "score": 1000.0,
                     "description": "BODY: Generic Test for Unsolicited Bulk Email"}

    eml = checked.get(f"/_emulator/outbox/{email_id}.eml").content
    header, symbols = spamd_says(spamd_port, eml)
    assert header == f"Spam: True ; {spam['score']:.1f} / 5.0"
    assert {rule["name"] for rule in spam["rules"]} == symbols
    assert checked.get(f"/_emulator/outbox/{email_id}/spam-check").json() == {"email_id": email_id, **spam}


def test_an_ordinary_email_is_not_spam(checked: httpx.Client, spamd_port: int) -> None:
    email_id = send(checked, "Thanks for your order #1042. It ships tomorrow.\n\nAcme")
    spam = checked.get(f"/_emulator/outbox/{email_id}/spam-check").json()
    assert spam["is_spam"] is False and spam["score"] < spam["threshold"]
    eml = checked.get(f"/_emulator/outbox/{email_id}.eml").content
    header, symbols = spamd_says(spamd_port, eml)
    assert header == f"Spam: False ; {spam['score']:.1f} / 5.0"
    assert {rule["name"] for rule in spam["rules"]} == symbols


def test_without_the_flag_the_check_says_how_to_enable_it(live_server: EmulatorServer) -> None:
    with httpx.Client(base_url=live_server.url, headers=AUTH) as client:
        email_id = send(client, "Hello")
        spam = client.get(f"/_emulator/outbox/{email_id}/qa").json()["spam"]
    assert spam["enabled"] is False and spam["status"] == "disabled"
    assert "--spamassassin HOST:PORT" in spam["message"]


def test_an_unreachable_spamd_is_reported_not_raised() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there
    with EmulatorServer(make_settings(port=0, spamassassin=f"127.0.0.1:{port}")) as server, \
            httpx.Client(base_url=server.url, headers=AUTH) as client:
        email_id = send(client, "Hello")
        response = client.get(f"/_emulator/outbox/{email_id}/qa")
    assert response.status_code == 200
    spam = response.json()["spam"]
    assert spam["status"] == "unavailable" and spam["error"].startswith(f"spamd at 127.0.0.1:{port}: ")


def test_a_silent_spamd_times_out() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    try:
        port = listener.getsockname()[1]
        found = asyncio.run(check(Spamd("127.0.0.1", port, timeout=0.5), b"Subject: hi\r\n\r\nhi\r\n"))
    finally:
        for connection in accepted:
            connection.close()
        listener.close()
    assert found == {"enabled": True, "spamd": f"127.0.0.1:{port}", "status": "unavailable",
                     "error": f"spamd at 127.0.0.1:{port} did not answer within 0.5 s"}


def test_a_wrapped_rule_description_is_joined() -> None:
    report = ("Content analysis details:   (2.5 points, 5.0 required)\n\n"
              " pts rule name              description\n"
              "---- ---------------------- --------------------------------------------------\n"
              " 2.5 SOME_RULE              A description that SpamAssassin wrapped onto\n"
              "                            a second line\n"
              "-0.0 NO_RELAYS              Informational: message was not relayed via SMTP\n")
    assert rules_of(report) == [
        {"name": "SOME_RULE", "score": 2.5,
         "description": "A description that SpamAssassin wrapped onto a second line"},
        {"name": "NO_RELAYS", "score": -0.0,
         "description": "Informational: message was not relayed via SMTP"},
    ]


def test_the_flag_and_its_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_settings(["--spamassassin", "127.0.0.1:783"]).spamassassin == "127.0.0.1:783"
    monkeypatch.setenv("RESEND_EMULATOR_SPAMASSASSIN", "[::1]:7830")
    assert parse_settings([]).spamassassin == "[::1]:7830"
    with pytest.raises(SystemExit):
        parse_settings(["--spamassassin", "localhost"])


def test_the_readme_flag_table_lists_the_flag() -> None:
    cli_page = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text()
    assert "`--spamassassin HOST:PORT`" in cli_page
