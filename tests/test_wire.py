"""core/wire.py: each response leaves in one write; nothing is lost, reordered or held back."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import httpx
import pytest

from emulator.core.net import Requests
from emulator.core.wire import JOIN_LIMIT, _Joined
from emulator.testing import EmulatorServer

anyio = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Recording:
    """A transport that records what reaches the socket."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.sent.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000)}.get(name, default)


def joined() -> tuple[_Joined, Recording]:
    recording = Recording()
    return _Joined(recording, asyncio.get_running_loop()), recording  # type: ignore[arg-type]


@anyio
async def test_the_writes_of_one_loop_step_leave_as_one() -> None:
    transport, recording = joined()
    transport.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    transport.write(b"{}")
    assert recording.sent == []
    await asyncio.sleep(0)
    assert recording.sent == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"]
    transport.write(b"next")
    await asyncio.sleep(0)
    assert recording.sent[1:] == [b"next"]


@anyio
async def test_closing_sends_what_waits_first() -> None:
    transport, recording = joined()
    transport.write(b"last words")
    transport.close()
    assert recording.sent == [b"last words"] and recording.closed
    await asyncio.sleep(0)
    assert recording.sent == [b"last words"]


@anyio
async def test_a_response_flushed_as_it_completes_is_not_written_again() -> None:
    transport, recording = joined()
    transport.write(b"head")
    transport.write(b"body")
    transport.flush()  # the response completed with no other request under way
    assert recording.sent == [b"headbody"]
    await asyncio.sleep(0)
    transport.write(b"next")
    await asyncio.sleep(0)
    assert recording.sent == [b"headbody", b"next"]


@anyio
async def test_a_large_body_goes_out_as_it_comes() -> None:
    transport, recording = joined()
    transport.write(b"head")
    transport.write(b"x" * JOIN_LIMIT)
    assert recording.sent == [b"head" + b"x" * JOIN_LIMIT]


@anyio
async def test_nothing_is_written_to_a_closed_connection() -> None:
    transport, recording = joined()
    transport.write(b"late")
    recording.closed = True  # the peer went away meanwhile
    await asyncio.sleep(0)
    assert recording.sent == []
    assert transport.get_extra_info("peername") == ("127.0.0.1", 5000)


@pytest.fixture(scope="module")
def server() -> Any:
    with EmulatorServer(api_keys=["re_wire"]) as running:
        yield running


def test_pipelined_requests_on_one_connection_get_their_answers_in_order(server: Any) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    request = (f"GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
               f"GET /domains HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer re_wire\r\n"
               "Connection: close\r\n\r\n").encode()
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(request)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    first, _, rest = received.partition(b"HTTP/1.1 ")[2].partition(b"HTTP/1.1 ")
    assert first.startswith(b"200 OK") and b'"status"' in first
    assert rest.startswith(b"200 OK") and b'"object":"list"' in rest


def test_a_large_answer_arrives_whole(server: Any) -> None:
    html = "<p>" + "x" * (3 * JOIN_LIMIT) + "</p>"
    headers = {"Authorization": "Bearer re_wire"}
    sent = httpx.post(f"{server.url}/emails", headers=headers, json={
        "from": "a@example.com", "to": ["delivered@resend.dev"], "subject": "big", "html": html})
    assert sent.status_code == 200, sent.text
    got = httpx.get(f"{server.url}/emails/{sent.json()['id']}", headers=headers)
    assert got.status_code == 200 and got.json()["html"] == html


def wait_for(condition: Any, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_requests_under_way_are_counted_until_answered_or_dropped(server: Any) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    body = b'{"name": "wire.example"}'
    head = (f"POST /domains HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer re_wire\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    wait_for(lambda: Requests.under_way == 0)
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(head)  # the body is still to come: received, not answered
        wait_for(lambda: Requests.under_way == 1)
        conn.sendall(body)
        assert conn.recv(65536).startswith(b"HTTP/1.1 ")
        wait_for(lambda: Requests.under_way == 0)
        conn.sendall(head)
        wait_for(lambda: Requests.under_way == 1)
    wait_for(lambda: Requests.under_way == 0)  # the client went away mid-request
