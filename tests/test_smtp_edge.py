"""SMTP intake under bad input: clear replies, no crash, nothing half-stored."""

from __future__ import annotations

import smtplib
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from emulator.smtp import server as smtp_module
from emulator.smtp.server import MAX_RECIPIENTS
from tests.smtp_helpers import LiveEmulator, email_id_of, rich_message, transmit


@pytest.fixture(scope="module")
def server() -> Iterator[LiveEmulator]:
    with LiveEmulator() as live:
        yield live


@pytest.fixture
def live(server: LiveEmulator) -> LiveEmulator:
    server.reset()
    return server


def _emails(live: LiveEmulator) -> list[dict[str, object]]:
    return list(live.http.get("/emails").json()["data"])


def test_eight_bit_headers_are_read_as_utf8(live: LiveEmulator) -> None:
    raw = (b"From: Caf\xc3\xa9 <hello@acme.dev>\r\nTo: jane@example.org\r\n"
           b"Subject: Cr\xc3\xa8me \xff br\xc3\xbbl\xc3\xa9e\r\n\r\nBonjour\r\n")
    with live.starttls() as client:
        code, reply = transmit(client, raw, "hello@acme.dev", ["jane@example.org"])
    assert code == 250, reply
    email = live.http.get(f"/emails/{email_id_of(reply)}").json()
    assert email["subject"] == "Crème \ufffd brûlée"
    assert email["from"] == "Café <hello@acme.dev>"
    assert email["text"] == "Bonjour\n"


def test_multipart_without_boundary_is_kept_as_text(live: LiveEmulator) -> None:
    raw = (b"From: hello@acme.dev\r\nTo: jane@example.org\r\nSubject: broken\r\n"
           b"Content-Type: multipart/mixed\r\n\r\nno boundary here\r\n")
    with live.starttls() as client:
        code, reply = transmit(client, raw, "hello@acme.dev", ["jane@example.org"])
    assert code == 250, reply
    assert live.http.get(f"/emails/{email_id_of(reply)}").json()["text"] == "no boundary here\n"


def test_message_without_from_uses_the_envelope_sender(live: LiveEmulator) -> None:
    raw = b"To: jane@example.org\r\nSubject: hi\r\n\r\nbody\r\n"
    with live.starttls() as client:
        code, reply = transmit(client, raw, "hello@acme.dev", ["jane@example.org"])
    assert code == 250, reply
    assert live.http.get(f"/emails/{email_id_of(reply)}").json()["from"] == "hello@acme.dev"


def test_declared_size_over_the_limit_is_552(live: LiveEmulator) -> None:
    with live.starttls() as client:
        code, _ = client.mail("hello@acme.dev", ["SIZE=50000000"])
    assert code == 552


def test_too_many_recipients_is_452(live: LiveEmulator) -> None:
    with live.starttls() as client:
        assert client.mail("hello@acme.dev")[0] == 250
        for index in range(MAX_RECIPIENTS):
            assert client.rcpt(f"user{index}@example.org")[0] == 250
        code, reply = client.rcpt("one-more@example.org")
    assert code == 452 and b"Too many recipients" in reply


def test_disconnect_during_data_stores_nothing_and_server_keeps_serving(live: LiveEmulator) -> None:
    client = live.starttls()
    assert client.mail("hello@acme.dev")[0] == 250
    assert client.rcpt("jane@example.org")[0] == 250
    client.putcmd("data")
    assert client.getreply()[0] == 354
    client.send(b"From: hello@acme.dev\r\nTo: jane@example.org\r\nSubject: cut\r\n\r\nhalf a mess")
    assert client.sock is not None
    client.sock.shutdown(socket.SHUT_RDWR)
    client.close()
    with live.starttls() as again:
        code, reply = transmit(again, rich_message(), "hello@acme.dev", ["jane@example.org"])
    assert code == 250, reply
    assert [email["id"] for email in _emails(live)] == [email_id_of(reply)]


def test_bare_lf_message_gets_a_clear_error(live: LiveEmulator) -> None:
    with live.starttls() as client:
        assert client.mail("hello@acme.dev")[0] == 250
        assert client.rcpt("jane@example.org")[0] == 250
        client.putcmd("data")
        assert client.getreply()[0] == 354
        client.send(b"Subject: x\n\n" + b"y" * 2000 + b"\r\n.\r\n")
        code, _ = client.getreply()
    assert code == 500
    assert _emails(live) == []


def test_missing_to_header_sends_to_the_envelope(live: LiveEmulator) -> None:
    raw = b"From: hello@acme.dev\r\nSubject: no to\r\n\r\nbody\r\n"
    with live.starttls() as client:
        code, reply = transmit(client, raw, "hello@acme.dev", ["jane@example.org"])
    assert code == 250, reply
    email = live.http.get(f"/emails/{email_id_of(reply)}").json()
    assert email["to"] == ["jane@example.org"] and email["bcc"] is None


def test_plaintext_auth_is_refused_until_relaxed() -> None:
    with LiveEmulator(smtp_auth_plaintext=True) as relaxed, \
            smtplib.SMTP("127.0.0.1", relaxed.smtp_port) as client:
        client.login("resend", relaxed.settings.api_keys[0])
        code, reply = transmit(client, rich_message(), "hello@acme.dev", ["jane@example.org"])
    assert code == 250, reply


def test_large_attachment_is_stored_byte_for_byte(live: LiveEmulator) -> None:
    blob = bytes(range(256)) * (5 * 4096)  # 5 MiB
    message = rich_message()
    message.add_attachment(blob, maintype="application", subtype="octet-stream", filename="big.bin")
    with live.starttls() as client:
        code, reply = transmit(client, message, "hello@acme.dev", ["jane@example.org"])
    assert code == 250, reply
    listed = live.http.get(f"/emails/{email_id_of(reply)}/attachments").json()["data"]
    big = next(item for item in listed if item["filename"] == "big.bin")
    assert big["size"] == len(blob)
    assert live.http.get(big["download_url"]).content == blob


def test_message_over_the_size_limit_is_552(live: LiveEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(smtp_module, "MAX_MESSAGE_BYTES", 100_000)  # read per connection
    message = rich_message()
    message.add_attachment(b"x" * 200_000, maintype="application", subtype="octet-stream", filename="x.bin")
    with live.starttls() as client:
        assert client.esmtp_features["size"] == "100000"
        code, reply = transmit(client, message, "hello@acme.dev", ["jane@example.org"])
        assert code == 552, reply
        code, reply = transmit(client, rich_message(), "hello@acme.dev", ["jane@example.org"])
        assert code == 250, reply
    assert len(_emails(live)) == 1


def test_rate_limit_is_shared_with_the_api_and_answers_451(live: LiveEmulator,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live.emu.settings, "rate_limit", 1)
    with live.starttls() as client:
        codes = [transmit(client, rich_message(), "hello@acme.dev", ["jane@example.org"])
                 for _ in range(3)]
    # Three sends within one or two one-second windows of limit 1: at least one is refused.
    refused = [reply for code, reply in codes if code == 451]
    assert refused and refused[0].startswith("4.7.0 Too many requests")


def test_connection_info_names_ports_and_certificate(live: LiveEmulator) -> None:
    info = live.http.get("/_emulator/smtp").json()
    assert info["ports"] == {"smtp": live.smtp_port, "smtps": live.smtps_port}
    assert info["username"] == "resend" and info["certificate"].startswith("-----BEGIN CERTIFICATE-----")


def test_isolated_keys_get_their_own_account_over_smtp() -> None:
    with LiveEmulator(isolate_keys=True) as isolated:
        with isolated.starttls(key="re_suite_one") as client:
            code, reply = transmit(client, rich_message(), "hello@acme.dev", ["jane@example.org"])
        assert code == 250, reply
        mine = isolated.http.get("/emails", headers={"Authorization": "Bearer re_suite_one"}).json()
        assert [email["id"] for email in mine["data"]] == [email_id_of(reply)]
        assert isolated.http.get("/emails").json()["data"] == []


def test_busy_smtp_port_is_one_clear_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "emulator", "--port", "0", "--smtp-port", str(port)],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"cannot listen on 127.0.0.1:{port}" in lines[0], done.stderr
