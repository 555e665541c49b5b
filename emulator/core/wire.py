"""The HTTP/1.1 protocol the emulator serves with: uvicorn's httptools protocol, each response in one write.

uvicorn writes a response's head and its body with a write each, and uvloop sends each at once: two
`send` calls, two TCP segments, and a client woken twice per response. Here the writes made in one loop
step go out together at the end of it (`_Joined`), a response whole; and with other requests under way,
the responses of a step go out one after the other once its Python work is done, which keeps both in
the CPU's caches. Measured (issue 28, POST /emails over loopback, CPU per request): at 8 connections
~345 → ~245 µs. A response with no other request under way goes out as it completes: waiting for the
end of the step cost one alone ~20 µs (a test suite's requests one at a time).

Nothing else changes: uvicorn still parses, times out and closes connections as before; a write waits
at most for the loop step it was made in, and large bodies (a streamed attachment) go out as they come.

The protocol also counts the requests received and not yet answered (net.py `Requests`): requests
whose bytes arrived together start as tasks one after the other, and the first one's transaction can
tell from this count that company is coming (db.py's group commit), before the others have run a step.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from emulator.core.uvicorn_light import import_server_only

import_server_only()  # before uvicorn's first import, which would otherwise run its package __init__

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # noqa: E402

from emulator.core.net import Requests  # noqa: E402

# Past this many bytes waiting, a write goes out at once: streamed bodies keep uvloop's flow control.
JOIN_LIMIT = 64 * 1024


class _Joined:
    """A transport whose writes wait for the end of the loop step, then go out as one."""

    __slots__ = ("_flushing", "_loop", "_pending", "_size", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport, self._loop = transport, loop
        self._pending: list[bytes] = []
        self._size = 0
        self._flushing: asyncio.Handle | None = None

    def write(self, data: bytes) -> None:
        if self._flushing is None:
            self._flushing = self._loop.call_soon(self.flush)
        self._pending.append(data)
        self._size += len(data)
        if self._size >= JOIN_LIMIT:
            self.flush()

    def flush(self) -> None:
        if self._flushing is not None:
            self._flushing.cancel()  # a flush before the end of the step: nothing left for it
            self._flushing = None
        pending, self._pending, self._size = self._pending, [], 0
        if pending and not self._transport.is_closing():
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def is_closing(self) -> bool:  # asked once per response: spelled out rather than found by __getattr__
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:  # anything else uvicorn may ask of its transport
        return getattr(self._transport, name)


class WholeResponses(HttpToolsProtocol):
    """uvicorn's httptools protocol over a `_Joined` transport (pass as `uvicorn.Config(http=...)`),
    counting its requests under way."""

    _unanswered = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(cast(asyncio.Transport, _Joined(transport, self.loop)))

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._unanswered += 1
        Requests.under_way += 1

    def on_response_complete(self) -> None:
        if Requests.under_way <= 1:
            cast(_Joined, self.transport).flush()
        self._answered(1)
        super().on_response_complete()

    def shutdown(self) -> None:
        """The server is stopping. Closing a TLS connection waits for the client's close_notify, which
        a client holding the connection idle in its pool never sends, so the stop would wait out its
        whole grace period (5 s in a test handle) for nothing. An idle TLS connection with nothing left
        to send is dropped instead; plain TCP closes at once and keeps uvicorn's way."""
        joined = cast(_Joined, self.transport)
        if self.scheme == "https" and (self.cycle is None or self.cycle.response_complete):
            joined.flush()
            if joined.get_write_buffer_size() == 0:
                joined.abort()
                return
        super().shutdown()

    def connection_lost(self, exc: Exception | None) -> None:
        self._answered(self._unanswered)
        super().connection_lost(exc)

    def _answered(self, count: int) -> None:
        count = min(count, self._unanswered)
        self._unanswered -= count
        Requests.under_way -= count
