"""Release (POST /_emulator/outbox/{id}/release, control/release.py) against a real aiosmtpd sink: the
bytes received are the stored message exactly, the envelope is the one given; STARTTLS and AUTH; a
refused port, wrong credentials and a refused recipient are clear Resend-shaped errors; never the
emulator's own SMTP ports; off on a non-loopback host unless --release."""

from __future__ import annotations

import socket
import ssl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from emulator.core import tls
from emulator.testing import EmulatorServer
from tests.conftest import AUTH, make_settings

USER, PASSWORD = "qa", "s3cret"


class Sink:
    """Keeps each message's envelope and exact bytes; refuses RCPT TO at refused.example."""

    def __init__(self) -> None:
        self.received: list[tuple[str, list[str], bytes]] = []

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          options: list[str]) -> str:
        if address.endswith("@refused.example"):
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.received.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content))
        return "250 Message accepted"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _authenticate(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
    ok = isinstance(data, LoginPassword) and (data.login, data.password) == (USER.encode(), PASSWORD.encode())
    return AuthResult(success=ok, handled=False)  # handled=False: aiosmtpd answers 535 itself


@contextmanager
def sink(*, secure: bool = False) -> Iterator[tuple[Sink, int]]:
    """An SMTP sink on 127.0.0.1; `secure`: STARTTLS offered (self-signed) and AUTH required after it."""
    handler, port = Sink(), free_port()
    options: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        if secure:
            certificate = tls.self_signed()
            cert, key = Path(folder, "cert.pem"), Path(folder, "key.pem")
            cert.write_bytes(certificate.cert_pem)
            key.write_bytes(certificate.key_pem)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            options = {"tls_context": context, "authenticator": _authenticate, "auth_required": True}
        controller = Controller(handler, hostname="127.0.0.1", port=port, server_hostname="sink.test",
                                **options)
        controller.start()
        try:
            yield handler, port
        finally:
            controller.stop()


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer(make_settings(port=0, smtp=True, smtp_port=0, smtps_port=0)) as server:
        yield server


@pytest.fixture
def api(emulator: EmulatorServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=emulator.url, headers=AUTH, timeout=60) as client:
        assert client.post("/_emulator/reset").status_code == 200
        yield client


def send(api: httpx.Client) -> str:
    response = api.post("/emails", json={
        "from": "Acme <orders@acme.dev>", "to": ["ada@lovelace.dev"], "subject": "Größe: déjà vu",
        "html": "<p>Hello</p>\n<p>.a line starting with a dot</p>", "text": "Hello\n.dot line\n",
        "attachments": [{"filename": "a.txt", "content": "aGVsbG8="}]})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def test_release_sends_the_stored_bytes_with_only_the_envelope_changed(api: httpx.Client) -> None:
    email_id = send(api)
    stored = api.get(f"/_emulator/outbox/{email_id}.eml").content
    with sink() as (handler, port):
        response = api.post(f"/_emulator/outbox/{email_id}/release",
                            json={"host": "127.0.0.1", "port": port,
                                  "to": ["me@device.test", "Me <me2@device.test>"]})
        assert response.status_code == 200, response.text
    assert handler.received == [("orders@acme.dev", ["me@device.test", "me2@device.test"], stored)]
    body = response.json()
    assert (body["object"], body["to"], body["from"], body["refused"], body["size"]) == \
        ("release", ["me@device.test", "me2@device.test"], "orders@acme.dev", {}, len(stored))


def test_release_over_starttls_with_auth_and_a_chosen_envelope_sender(api: httpx.Client) -> None:
    email_id = send(api)
    stored = api.get(f"/_emulator/outbox/{email_id}.eml").content
    with sink(secure=True) as (handler, port):
        response = api.post(f"/_emulator/outbox/{email_id}/release", json={
            "host": "127.0.0.1", "port": port, "starttls": True, "tls_verify": False, "username": USER,
            "password": PASSWORD, "to": "me@device.test", "from": "bounces@qa.test"})
        assert response.status_code == 200, response.text
    assert handler.received == [("bounces@qa.test", ["me@device.test"], stored)]


@pytest.mark.parametrize(("fields", "status", "name", "said"), [
    ({"starttls": True, "tls_verify": False, "username": USER, "password": "wrong"}, 422,
     "release_auth_failed", "refused the credentials: 535"),
    ({"starttls": True, "username": USER, "password": PASSWORD}, 502, "release_connection_failed",
     "TLS failed"),
    ({}, 502, "release_failed", "530"),  # no AUTH given where the server requires it
])
def test_a_secure_servers_refusals_are_named(api: httpx.Client, fields: dict[str, Any], status: int,
                                             name: str, said: str) -> None:
    email_id = send(api)
    with sink(secure=True) as (handler, port):
        response = api.post(f"/_emulator/outbox/{email_id}/release",
                            json={"host": "127.0.0.1", "port": port, "to": "me@device.test", **fields})
    body = response.json()
    assert (response.status_code, body["statusCode"], body["name"]) == (status, status, name), body
    assert said in body["message"] and handler.received == []


def test_recipients_refused(api: httpx.Client) -> None:
    email_id = send(api)
    with sink() as (handler, port):
        every = api.post(f"/_emulator/outbox/{email_id}/release",
                         json={"host": "127.0.0.1", "port": port, "to": "nobody@refused.example"})
        some = api.post(f"/_emulator/outbox/{email_id}/release",
                        json={"host": "127.0.0.1", "port": port,
                              "to": ["nobody@refused.example", "me@device.test"]})
    assert (every.status_code, every.json()["name"]) == (422, "release_recipients_refused")
    assert "nobody@refused.example: 550 5.1.1 No such user here" in every.json()["message"]
    assert some.status_code == 200
    assert some.json()["refused"] == {"nobody@refused.example": "550 5.1.1 No such user here"}
    assert [rcpts for _, rcpts, _ in handler.received] == [["me@device.test"]]


def test_a_refused_port_is_a_clear_502(api: httpx.Client) -> None:
    response = api.post(f"/_emulator/outbox/{send(api)}/release",
                        json={"host": "127.0.0.1", "port": free_port(), "to": "me@device.test"})
    body = response.json()
    assert (response.status_code, body["name"]) == (502, "release_connection_failed")
    assert body["message"].startswith("The SMTP server at 127.0.0.1:")
    assert body["message"].endswith(": connection refused")


def test_the_emulators_own_smtp_port_is_refused(api: httpx.Client, emulator: EmulatorServer) -> None:
    email_id = send(api)
    for host in ("127.0.0.1", "localhost"):
        response = api.post(f"/_emulator/outbox/{email_id}/release",
                            json={"host": host, "port": emulator.smtp_port, "to": "me@device.test"})
        assert (response.status_code, response.json()["name"]) == (422, "validation_error")
        assert "this emulator itself" in response.json()["message"]
    assert len(api.get("/_emulator/outbox").json()["data"]) == 1  # nothing captured again


@pytest.mark.parametrize(("body", "said"), [
    ({"port": 25, "to": "me@device.test"}, "Missing `host` field."),
    ({"host": "127.0.0.1", "port": 25}, "Missing `to` field."),
    ({"host": "127.0.0.1", "port": 0, "to": "x@y.dev"}, "`port`"),
    ({"host": "127.0.0.1", "to": "not an address"}, "`to`"),
    ({"host": "127.0.0.1", "to": "x@y.dev", "username": "u"}, "both `username` and `password`"),
    ({"host": "127.0.0.1", "to": "x@y.dev", "relay": True}, "Unknown field `relay`"),
])
def test_bad_requests_are_422(api: httpx.Client, body: dict[str, Any], said: str) -> None:
    response = api.post(f"/_emulator/outbox/{send(api)}/release", json=body)
    assert response.status_code == 422 and said in response.json()["message"], response.text


def test_an_unknown_email_is_404(api: httpx.Client) -> None:
    response = api.post("/_emulator/outbox/nope/release", json={"host": "127.0.0.1", "to": "x@y.dev"})
    assert (response.status_code, response.json()["name"]) == (404, "not_found")


def test_off_on_a_non_loopback_host_without_the_flag() -> None:
    with EmulatorServer(make_settings(port=0, release=False)) as server, \
            httpx.Client(base_url=server.url, headers=AUTH) as api, sink() as (handler, port):
        response = api.post(f"/_emulator/outbox/{send(api)}/release",
                            json={"host": "127.0.0.1", "port": port, "to": "me@device.test"})
        assert (response.status_code, response.json()["name"]) == (403, "outbound_disabled")
        assert "--release" in response.json()["message"] and handler.received == []
