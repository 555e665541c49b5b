"""Work on a worker thread that a cancellation cannot cut short."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def finish_even_if_cancelled(work: Awaitable[T]) -> T:
    """Await `work` (a thread's, e.g. `asyncio.to_thread`) to its end, then let a cancellation that came
    meanwhile go on. A thread cannot be interrupted: returning at once would let the caller's clean-up
    use what the thread still uses (a database connection in a COMMIT)."""
    running = asyncio.ensure_future(work)
    cancelled = False
    while not running.done():
        try:
            await asyncio.shield(running)
        except asyncio.CancelledError:
            cancelled = True
        except BaseException:  # the work's own failure: `result()` below raises it
            break
    if cancelled:
        raise asyncio.CancelledError
    return running.result()
