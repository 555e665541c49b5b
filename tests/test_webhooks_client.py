"""The webhook sender's HTTP/1.1 client against scripted local servers: framing, keep-alive, limits,
broken answers, timeouts. Each server is a raw asyncio socket server on 127.0.0.1 (port 0) that
records the requests it read and answers with exact bytes, so each framing case is what it says."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest

from emulator.resources.webhooks.client import Client, ConnectError, ProtocolError, Reply

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"ok\":true}"
Script = Callable[["Server", asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


class Server:
    """Answers each request with the script; counts connections and records each request's head."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0
        self.heads: list[str] = []
        self.bodies: list[bytes] = []
        self.url = ""
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Server:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def read_request(self, reader: asyncio.StreamReader) -> bool:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        except asyncio.IncompleteReadError:
            return False
        length = next(int(line.split(":")[1]) for line in head.split("\r\n")
                      if line.lower().startswith("content-length:"))
        self.heads.append(head)
        self.bodies.append(await reader.readexactly(length))
        return True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        await self.script(self, reader, writer, self.connections)
        writer.close()


def run(scenario: Coroutine[Any, Any, None]) -> None:
    asyncio.run(scenario)


async def post(client: Client, url: str, limit: int = 1024, timeout: float = 5.0) -> Reply:
    return await client.post(url, {"content-type": "application/json", "svix-id": "msg_1"}, b'{"a":1}',
                             timeout, limit)


def posted(script: Script, times: int = 2, limit: int = 1024) -> tuple[list[Reply], Server]:
    """`times` POSTs through one client to a server answering with `script`: the replies, and the server
    (its connections and the requests it read)."""
    async def scenario() -> tuple[list[Reply], Server]:
        async with Server(script) as server:
            client = Client()
            replies = [await post(client, server.url, limit=limit) for _ in range(times)]
            await client.close()
        return replies, server

    return asyncio.run(scenario())


def keep_answering(answer: bytes) -> Script:
    async def script(server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     _: int) -> None:
        while await server.read_request(reader):
            writer.write(answer)
            await writer.drain()
    return script


def test_requests_share_one_kept_alive_connection() -> None:
    async def scenario() -> None:
        async with Server(keep_answering(OK)) as server:
            client = Client()
            replies = [await post(client, f"{server.url}/hooks") for _ in range(3)]
            await client.close()
        assert replies == [Reply(200, b'{"ok":true}')] * 3
        assert server.connections == 1
        assert server.bodies == [b'{"a":1}'] * 3
        head = server.heads[0].split("\r\n")
        assert head[0] == "POST /hooks HTTP/1.1"
        assert f"Host: {server.url.removeprefix('http://')}" in head
        assert {"content-type: application/json", "svix-id: msg_1", "Content-Length: 7"} <= set(head)

    run(scenario())


def test_a_chunked_answer_is_read_whole() -> None:
    chunked = b"HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"

    replies, server = posted(keep_answering(chunked))
    assert replies == [Reply(202, b"abcde")] * 2
    assert server.connections == 1


def test_an_answer_without_length_ends_with_its_connection() -> None:
    async def script(server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     _: int) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.0 500 Internal Server Error\r\nContent-Type: text/plain\r\n\r\nboom")

    replies, server = posted(script)
    assert replies == [Reply(500, b"boom")] * 2
    assert server.connections == 2  # an HTTP/1.0 answer is never reused


def test_a_long_answer_is_cut_at_the_limit_and_its_connection_dropped() -> None:
    big = b"x" * 100_000
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(big) + big

    replies, server = posted(keep_answering(answer), limit=1000)
    assert replies == [Reply(200, b"x" * 1000)] * 2
    assert server.connections == 2


def test_a_kept_connection_the_endpoint_closed_is_replaced_once() -> None:
    async def script(server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     number: int) -> None:
        await server.read_request(reader)
        writer.write(OK)
        await writer.drain()
        if number == 1:  # the next request on this connection is read and left unanswered
            await server.read_request(reader)

    replies, server = posted(script)
    assert replies == [Reply(200, b'{"ok":true}')] * 2
    assert server.connections == 2 and len(server.bodies) == 3


def test_a_fresh_connection_closed_without_an_answer_is_an_error() -> None:
    async def scenario() -> None:
        async def script(server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         _: int) -> None:
            await server.read_request(reader)

        async with Server(script) as server:
            client = Client()
            with pytest.raises(ProtocolError, match="closed the connection"):
                await post(client, server.url)
            await client.close()
        assert server.connections == 1

    run(scenario())


def test_an_answer_that_is_not_http_is_an_error() -> None:
    async def scenario() -> None:
        async with Server(keep_answering(b"SSH-2.0-OpenSSH\r\n\r\n")) as server:
            client = Client()
            with pytest.raises(ProtocolError, match="not an HTTP answer"):
                await post(client, server.url)
            await client.close()

    run(scenario())


def test_an_interim_answer_is_followed_by_the_real_one() -> None:
    answer = b"HTTP/1.1 100 Continue\r\n\r\n" + OK

    assert posted(keep_answering(answer), times=1)[0] == [Reply(200, b'{"ok":true}')]


def test_a_silent_endpoint_times_out_and_its_connection_is_not_reused() -> None:
    async def scenario() -> None:
        async def script(server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         number: int) -> None:
            await server.read_request(reader)
            if number == 1:
                await reader.read()  # no answer: wait for the client to give up and close
                return
            writer.write(OK)
            await writer.drain()

        async with Server(script) as server:
            client = Client()
            with pytest.raises(TimeoutError):
                await post(client, server.url, timeout=0.2)
            assert await post(client, server.url) == Reply(200, b'{"ok":true}')
            await client.close()
        assert server.connections == 2

    run(scenario())


def test_a_kept_connection_whose_endpoint_goes_silent_times_out_and_is_not_reused() -> None:
    async def scenario() -> None:
        async def script(server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         number: int) -> None:
            await server.read_request(reader)
            writer.write(OK)
            await writer.drain()
            if number == 1:  # the second request on this connection gets no answer
                await server.read_request(reader)
                await reader.read()

        async with Server(script) as server:
            client = Client()
            assert await post(client, server.url) == Reply(200, b'{"ok":true}')
            with pytest.raises(TimeoutError):
                await post(client, server.url, timeout=0.2)
            assert await post(client, server.url) == Reply(200, b'{"ok":true}')
            await client.close()
        assert server.connections == 2 and len(server.bodies) == 3

    run(scenario())


def test_no_listener_is_a_connect_error() -> None:
    async def scenario() -> None:
        async with Server(keep_answering(OK)) as server:
            url = server.url
        client = Client()
        with pytest.raises(ConnectError, match=r"cannot connect to 127\.0\.0\.1"):
            await post(client, url)
        await client.close()

    run(scenario())


def test_the_target_is_escaped_and_url_credentials_become_basic_auth() -> None:
    async def scenario() -> None:
        async with Server(keep_answering(OK)) as server:
            client = Client()
            address = server.url.removeprefix("http://")
            await post(client, f"http://user:p%40ss@{address}/a path/é?x=1 2&y=%2F")
            await client.close()
        head = server.heads[0].split("\r\n")
        assert head[0] == "POST /a%20path/%C3%A9?x=1%202&y=%2F HTTP/1.1"
        assert "Authorization: Basic " + base64.b64encode(b"user:p@ss").decode() in head

    run(scenario())


def test_a_url_that_is_not_http_is_refused() -> None:
    async def scenario() -> None:
        client = Client()
        with pytest.raises(ValueError, match="not an http"):
            await post(client, "ftp://127.0.0.1/hooks")
        await client.close()

    run(scenario())
