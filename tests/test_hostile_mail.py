"""Mail a client hands in is read within stated bounds (issue 36): inbound over HTTP and SMTP, and the
answer of the spamd the QA check asks. Each bound at ten times its limit: the refusal, and nothing stored.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from starlette.testclient import TestClient

from emulator.control.qa.spam import Spamd, check
from emulator.mime import bounds
from emulator.testing import EmulatorServer
from tests.conftest import AUTH, make_settings
from tests.smtp_helpers import LiveEmulator, transmit

HEAD = "From: Ada <ada@example.com>\r\nTo: {to}\r\nSubject: hello\r\n"


def message(to: str, extra: bytes = b"", body: bytes = b"hi\r\n") -> bytes:
    return HEAD.format(to=to).encode() + extra + b"\r\n" + body


def many_headers(count: int) -> bytes:
    return b"".join(b"X-Many-%d: v\r\n" % n for n in range(count))


def long_field(size: int) -> bytes:
    return b"X-Long: " + b"word\r\n " * (size // 7) + b"end\r\n"


def nested_multiparts(depth: int) -> tuple[bytes, bytes]:
    head = b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b0\r\n"
    body = b"".join(b"--b%d\r\nContent-Type: multipart/mixed; boundary=b%d\r\n\r\n" % (n, n + 1)
                    for n in range(depth - 1))
    return head, body + b"--b%d\r\nContent-Type: text/plain\r\n\r\ndeep\r\n" % (depth - 1)


def many_parts(count: int) -> tuple[bytes, bytes]:
    head = b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=p\r\n"
    return head, b"--p\r\nContent-Type: text/plain\r\n\r\nx\r\n" * count + b"--p--\r\n"


CASES = {
    "headers": (many_headers(10 * bounds.MAX_HEADERS), b"hi\r\n",
                f"Message has {10 * bounds.MAX_HEADERS + 3} header fields; at most {bounds.MAX_HEADERS}"
                " are accepted"),
    "field": (long_field(10 * bounds.MAX_FIELD_BYTES), b"hi\r\n", "Message has a header field of"),
    "nesting": (*nested_multiparts(10 * bounds.MAX_CONTAINERS),
                f"Message has {10 * bounds.MAX_CONTAINERS} multipart or message/* parts; at most"
                f" {bounds.MAX_CONTAINERS} are accepted"),
    "parts": (*many_parts(10 * bounds.MAX_PARTS),
              f"Message has more than {bounds.MAX_PARTS} parts; at most {bounds.MAX_PARTS} are accepted"),
}


@pytest.fixture
def address(client: TestClient) -> str:
    return f"someone@{client.get('/_emulator/inbound/address').json()['domain']}"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("routed", [True, False], ids=["to-param", "to-header"])
def test_inbound_over_http_past_a_bound_is_a_422(client: TestClient, address: str, case: str,
                                                 routed: bool) -> None:
    extra, body, expected = CASES[case]
    response = client.post("/_emulator/inbound", content=message(address, extra, body),
                           params={"to": address} if routed else {},
                           headers={"content-type": "message/rfc822"})
    assert response.status_code == 422, response.text
    assert response.json()["name"] == "validation_error"
    assert response.json()["message"].startswith(expected), response.json()["message"]
    assert client.get("/emails/receiving").json()["data"] == []


def test_inbound_at_the_bounds_is_received(client: TestClient, address: str) -> None:
    head, body = many_parts(bounds.MAX_PARTS)
    extra = head + many_headers(bounds.MAX_HEADERS - 6) + long_field(bounds.MAX_FIELD_BYTES - 100)
    response = client.post("/_emulator/inbound", content=message(address, extra, body),
                           headers={"content-type": "message/rfc822"})
    assert response.status_code == 200, response.text
    assert len(client.get("/emails/receiving").json()["data"]) == 1


@pytest.fixture(scope="module")
def smtp_server() -> Iterator[LiveEmulator]:
    with LiveEmulator() as server:
        yield server


@pytest.mark.parametrize("case", CASES)
def test_smtp_past_a_bound_is_a_554_and_nothing_is_sent(smtp_server: LiveEmulator, case: str) -> None:
    assert smtp_server.http.post("/_emulator/reset").status_code == 200
    extra, body, expected = CASES[case]
    with smtp_server.starttls() as client:
        code, reply = transmit(client, message("bob@example.com", extra, body), "ada@example.com",
                               ["bob@example.com"])
    assert code == 554 and reply.startswith(f"5.6.0 {expected}"), (code, reply)
    assert smtp_server.http.get("/emails").json()["data"] == []


# ---- spamd's answer --------------------------------------------------------------------------------

@contextmanager
def fake_spamd(answer: bytes) -> Iterator[int]:
    """A spamd on 127.0.0.1 that reads each question to its end and gives the same answer."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(10)
                while connection.recv(65536):
                    pass
                connection.sendall(answer)

    worker = threading.Thread(target=serve)
    worker.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        worker.join()
        listener.close()


MALFORMED = [b"True ; 1.2.3 / 5.0", b"True ; . / 5.0", b"Maybe ; 1.0 / 5.0", b"True ; 1e999 / 5.0", b""]


@pytest.mark.parametrize("line", MALFORMED)
def test_a_malformed_spam_line_is_reported_not_raised(line: bytes) -> None:
    with fake_spamd(b"SPAMD/1.1 0 EX_OK\r\nSpam: " + line + b"\r\n\r\nreport\r\n") as port:
        found = asyncio.run(check(Spamd("127.0.0.1", port, timeout=10), b"Subject: %d\r\n\r\nhi\r\n" % port))
    assert found["status"] == "unavailable"
    assert found["error"] == (f"spamd at 127.0.0.1:{port}: spamd's Spam: header is not"
                              f" `True|False ; SCORE / THRESHOLD`: {line!r}")


def test_the_qa_page_shows_a_malformed_spamd_answer_as_a_finding() -> None:
    with fake_spamd(b"SPAMD/1.1 0 EX_OK\r\nSpam: True ; 1.2.3 / 5.0\r\n\r\n") as port, \
            EmulatorServer(make_settings(port=0, spamassassin=f"127.0.0.1:{port}")) as server, \
            httpx.Client(base_url=server.url, headers=AUTH, timeout=30) as client:
        sent = client.post("/emails", json={"from": "a@acme.dev", "to": ["b@example.com"], "subject": "s",
                                            "text": "hello"})
        response = client.get(f"/_emulator/outbox/{sent.json()['id']}/qa")
    assert response.status_code == 200, response.text
    spam = response.json()["spam"]
    assert spam["status"] == "unavailable" and "1.2.3" in spam["error"], spam
