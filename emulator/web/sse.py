"""Live updates: committed events fan out to every open UI tab as server-sent events.

The bus calls `LiveHub.publish` after commit (never for a rolled-back request), on the event loop, so a
non-blocking put is enough. A tab that falls behind is told to resync instead of being waited for.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.responses import Response, StreamingResponse

if TYPE_CHECKING:
    from emulator.core.emulator import Emulator
    from emulator.core.events import Event

QUEUE_SIZE = 256
HEARTBEAT_SECONDS = 15.0
# uvicorn waits for open responses before it shuts down, so a stream never lives long. Its last frame says
# the end is planned (`event: recycle`): the page reconnects at once without showing trouble (live.js),
# and resyncs on every (re)connect. Read at each stream's start (tests shorten it).
STREAM_SECONDS = 15.0
RESYNC = {"type": "resync"}
# Put in every queue when the emulator stops: the stream ends at once instead of holding the stop
# (uvicorn waits for open responses) until its STREAM_SECONDS are up.
END: dict[str, Any] = {"type": "end"}
RECYCLE = "event: recycle\ndata: {}\n\n"


class LiveHub:
    def __init__(self) -> None:
        self.queues: set[asyncio.Queue[dict[str, Any]]] = set()
        self.closed = False

    def close(self) -> None:
        """End every open stream, and any opened from now on (the emulator is stopping)."""
        self.closed = True
        for queue in list(self.queues):
            self._overflow(queue, END)

    def publish(self, message: dict[str, Any]) -> None:
        if self.closed:  # an overflow would replace the END the streams are to see
            return
        for queue in list(self.queues):
            try:
                queue.put_nowait(message)
            except asyncio.QueueFull:
                self._overflow(queue)

    @staticmethod
    def _overflow(queue: asyncio.Queue[dict[str, Any]], last: dict[str, Any] = RESYNC) -> None:
        while not queue.empty():
            queue.get_nowait()
        queue.put_nowait(last)

    def on_event(self, event: Event) -> None:
        if not self.queues:  # no page is open: every send would build this message for nobody
            return
        self.publish({
            "type": event["type"], "id": event["id"], "account": event["account"],
            "subject_id": event.get("subject_id"),
        })

    def subscribe(self) -> asyncio.Queue[dict[str, Any]]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE_SIZE)
        self.queues.add(queue)
        if self.closed:
            queue.put_nowait(END)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        self.queues.discard(queue)


def hub_of(emu: Emulator) -> LiveHub:
    hub = emu.state.get("ui_live")
    if hub is None:
        hub = emu.state["ui_live"] = LiveHub()
    return hub  # type: ignore[no-any-return]


def install(emu: Emulator) -> None:
    hub = hub_of(emu)
    emu.events.listen(hub.on_event)
    emu.stop_hooks.append(hub.close)
    if emu.stopping:  # the UI loaded by a request that came in as the stop began
        hub.close()

    async def on_reset(emu: Emulator) -> None:
        hub.publish({"type": "reset"})

    emu.reset_hooks.append(on_reset)


def _frame(message: dict[str, Any]) -> str:
    return f"data: {json.dumps(message)}\n\n"


async def _stream(hub: LiveHub, queue: asyncio.Queue[dict[str, Any]],
                  account: str) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STREAM_SECONDS
    try:
        yield "retry: 1000\n: connected\n\n"
        while (remaining := deadline - loop.time()) > 0:
            try:
                message = await asyncio.wait_for(queue.get(), min(remaining, HEARTBEAT_SECONDS))
            except TimeoutError:
                yield ": keep-alive\n\n"
                continue
            if message is END:
                return
            if message.get("account", account) == account:
                yield _frame(message)
        yield RECYCLE
    finally:
        hub.unsubscribe(queue)


def stream(emu: Emulator, account: str) -> Response:
    hub = hub_of(emu)
    queue = hub.subscribe()
    return StreamingResponse(
        _stream(hub, queue, account), media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
