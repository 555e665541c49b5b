"""The HTTP/1.1 client that POSTs webhook deliveries: keep-alive connections per origin, httptools parsing.

Why not aiohttp's client: on loopback its POST cost ~85 µs of CPU, this one ~25 µs (issue 28: 6 000 POSTs
to an aiohttp receiver by 16 workers), and in a burst of events the sender's CPU is what
limits deliveries per second. A delivery needs little of a general client: one method, a body we build,
no redirects (none are followed), no cookies, no proxies (aiohttp's default ignored them too), no
compression (none is asked for), and a reply we only keep the first `limit` bytes of.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import ssl
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import quote, unquote, urlsplit

import httptools

from emulator.core.net import is_this_machine

# Characters a request target may carry as they are (RFC 3986 pchar, `/`, `?` and `%` of an existing
# escape); anything else (a space, a non-ASCII letter) is percent-encoded, as browsers and aiohttp do.
_TARGET_SAFE = "/?%:@!$&'()*+,;=-._~"
IDLE_PER_ORIGIN = 16


class ConnectError(OSError):
    """No connection could be made (refused, unreachable, a name that does not resolve)."""


class SelfCallError(ConnectError):
    """The endpoint is one of the emulator's own listeners: nothing is sent (issue 36)."""


class ProtocolError(OSError):
    """The endpoint's answer was not HTTP, or the connection ended before a whole answer."""


class Reply(NamedTuple):
    status: int
    body: bytes  # at most the `limit` given to `post`


class Origin:
    # A plain class, not a dataclass: a dataclass costs ~0.5 ms of every start (issue 28, fixture).
    __slots__ = ("head", "host", "key", "port", "scheme")

    def __init__(self, scheme: str, host: str, port: int, head: bytes) -> None:
        self.scheme, self.host, self.port = scheme, host, port
        self.head = head  # `POST <target> HTTP/1.1` and the Host (and Authorization) lines, CRLF-ended
        self.key = (scheme, host, port)


@lru_cache(maxsize=1024)
def origin(url: str) -> Origin:
    """What a POST to `url` needs: where to connect and its first request lines (ValueError if unusable)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    default = port == (443 if parts.scheme == "https" else 80)
    target = quote(parts.path or "/", safe=_TARGET_SAFE)
    if parts.query:
        target += "?" + quote(parts.query, safe=_TARGET_SAFE)
    lines = [f"POST {target} HTTP/1.1", f"Host: {host if default else f'{host}:{port}'}"]
    if parts.username is not None:  # credentials in the URL: Basic auth, as aiohttp sent them
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        lines.append("Authorization: Basic " + base64.b64encode(pair).decode())
    return Origin(parts.scheme, parts.hostname, port, ("\r\n".join(lines) + "\r\n").encode("ascii"))


class _Connection(asyncio.Protocol):
    """One keep-alive connection: one request at a time, its answer parsed as it arrives."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._parser = httptools.HttpResponseParser(self)
        self._waiter: asyncio.Future[Reply] | None = None
        self._body: list[bytes] = []
        self._size = 0
        self._heard = False  # a byte of the current answer arrived
        self._headers_done = False
        self._timer: asyncio.TimerHandle | None = None

    # ---- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._heard = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(ProtocolError(f"not an HTTP answer: {exc}"))
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._headers_done and not self._parser.should_keep_alive():
            self._finish()  # an answer without a length ends with its connection
        else:
            self._fail(ProtocolError("the endpoint closed the connection before answering"))

    # ---- httptools callbacks

    def on_headers_complete(self) -> None:
        self._headers_done = True

    def on_body(self, body: bytes) -> None:
        room = self.limit - self._size
        if room > 0:
            self._body.append(body[:room])
        self._size += len(body)
        if self._size > self.limit:  # enough kept: the rest is not read, and the connection not reused
            self._finish()
            self.close()

    def on_message_complete(self) -> None:
        if self._parser.get_status_code() < 200:  # an interim answer (100 Continue): the real one follows
            self._headers_done = False
            return
        if not self._parser.should_keep_alive():
            self.closed = True
            self._finish()
            self.close()
            return
        self._finish()

    # ---- use

    def request(self, data: bytes, deadline: float | None = None) -> asyncio.Future[Reply]:
        """Send `data`; the answer, or TimeoutError at `deadline` (loop time; None: the caller times it)."""
        assert self.transport is not None and self._waiter is None
        loop = asyncio.get_running_loop()
        self._waiter = loop.create_future()
        self._heard, self._headers_done, self._body, self._size = False, False, [], 0
        if deadline is not None:
            self._timer = loop.call_at(deadline, self._time_out)
        self.transport.write(data)
        return self._waiter

    def _time_out(self) -> None:
        self._timer = None
        self._fail(TimeoutError())

    @property
    def heard(self) -> bool:
        return self._heard

    def close(self) -> None:
        self.closed = True
        self._stop_timer()
        if self.transport is not None:
            self.transport.close()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _finish(self) -> None:
        self._stop_timer()
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(Reply(self._parser.get_status_code(), b"".join(self._body)))

    def _fail(self, exc: Exception) -> None:
        self._stop_timer()
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)


class Client:
    """Keeps up to IDLE_PER_ORIGIN idle connections per origin; `post` is safe to call concurrently."""

    def __init__(self, own_ports: Callable[[], frozenset[int]] = frozenset) -> None:
        self._own_ports = own_ports  # the emulator's listening ports, which no delivery may reach
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._busy: set[_Connection] = set()
        self._tls: ssl.SSLContext | None = None
        self.closed = False

    async def post(self, url: str, headers: dict[str, str], body: bytes, timeout: float,
                   limit: int) -> Reply:
        """POST `body` with `headers`; raises TimeoutError after `timeout` s, ConnectError when no
        connection could be made, ProtocolError or OSError for a broken answer; ValueError for a URL
        that is not http(s)."""
        where = origin(url)
        head = "".join([f"{name}: {value}\r\n" for name, value in headers.items()])
        head += f"Content-Length: {len(body)}\r\n\r\n"
        data = where.head + head.encode("latin-1") + body
        idle = self._idle_connection(where, limit)
        if idle is not None:
            # The common case, a kept-alive connection: one timer of its own instead of a timeout
            # scope around the whole call (issue 28: a few microseconds of every delivery).
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            try:
                return await self._exchange(where, idle, data, deadline)
            except ProtocolError:
                if idle.heard:
                    raise
            timeout = deadline - loop.time()
        async with asyncio.timeout(timeout):
            # A kept-alive connection the endpoint had closed as it sat idle is not an answer, so the
            # request goes once more on a fresh connection (receivers deduplicate on `svix-id` in any
            # case).
            return await self._exchange(where, await self._connection(where, limit), data)

    async def _exchange(self, where: Origin, connection: _Connection, data: bytes,
                        deadline: float | None = None) -> Reply:
        try:
            reply = await connection.request(data, deadline)
        except BaseException:  # a broken answer, a timeout or a cancel: this connection is spent
            self._discard(connection)
            raise
        self._release(where, connection)
        return reply

    def _idle_connection(self, where: Origin, limit: int) -> _Connection | None:
        idle = self._idle.get(where.key)
        while idle:
            connection = idle.pop()
            if not connection.closed:
                connection.limit = limit
                self._busy.add(connection)
                return connection
        return None

    async def _connection(self, where: Origin, limit: int) -> _Connection:
        """A new connection to `where`."""
        loop = asyncio.get_running_loop()
        tls = self._tls_context() if where.scheme == "https" else None
        hosts = await self._not_ours(where) if where.port in self._own_ports() else [where.host]
        failure: OSError = ConnectError("no address")
        for host in hosts:
            try:
                _, connection = await loop.create_connection(
                    lambda: _Connection(limit), host, where.port, ssl=tls,
                    server_hostname=where.host if tls else None)
            except OSError as exc:
                failure = exc
                continue
            self._busy.add(connection)
            return connection
        raise ConnectError(f"cannot connect to {where.host}:{where.port}: {failure}") from failure

    async def _not_ours(self, where: Origin) -> list[str]:
        """The addresses of an endpoint on one of the emulator's ports, none of them this machine's (else
        SelfCallError): a name like `localhost` or `127.1` that the URL check let through is caught here.
        The connection goes to these very addresses, so a name cannot resolve elsewhere a moment later."""
        try:
            found = await asyncio.get_running_loop().getaddrinfo(where.host, where.port,
                                                                 type=socket.SOCK_STREAM)
        except OSError as exc:
            raise ConnectError(f"cannot connect to {where.host}:{where.port}: {exc}") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
        if any(is_this_machine(address) for address in addresses):
            raise SelfCallError(f"{where.host}:{where.port} is this emulator itself, which never delivers"
                                " webhooks to its own ports")
        return addresses

    def _release(self, where: Origin, connection: _Connection) -> None:
        self._busy.discard(connection)
        idle = self._idle.setdefault(where.key, [])
        if connection.closed or self.closed or len(idle) >= IDLE_PER_ORIGIN:
            connection.close()
        else:
            idle.append(connection)

    def _discard(self, connection: _Connection) -> None:
        self._busy.discard(connection)
        connection.close()

    def _tls_context(self) -> ssl.SSLContext:
        # Made at the first https endpoint: loading the system's CA certificates takes milliseconds.
        if self._tls is None:
            self._tls = ssl.create_default_context()
        return self._tls

    async def close(self) -> None:
        self.closed = True
        for connection in [*self._busy, *(c for idle in self._idle.values() for c in idle)]:
            connection.close()
        self._idle.clear()
        self._busy.clear()
        await asyncio.sleep(0)  # transports close on the next loop turn
