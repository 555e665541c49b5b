"""Retention (issue 11): a long-running emulator keeps a bounded amount of mail, as mail catchers do.

    resend-emulator --max-emails 1000     keep the newest 1 000 sent and 1 000 received emails (and
                                          the newest 10 000 request-log rows)
    resend-emulator --max-age 24h         drop mail, its events and request-log rows older than a day

A pruned email takes its rows with it, as a deleted one does (deletion.py). Scheduled emails are
never pruned (they have not been sent), nor are a broadcast's emails (the broadcast's statistics are
read from them). The clock decides what is old, so advancing it prunes at once; a prune also runs every
PERIOD seconds while the server runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from emulator.control import deletion
from emulator.core.clock import to_db

if TYPE_CHECKING:
    from emulator.core.db import Tx
    from emulator.core.emulator import Emulator

log = logging.getLogger("emulator")
PERIOD = 0.5  # seconds of real time between prunes
# The request log keeps bodies too (up to 64 KB each): with --max-emails N it keeps its newest 10·N rows.
LOG_ROWS_PER_EMAIL = 10
# (the mail, what keeps a row from being pruned); pruning deletes as the UI's delete does.
MAIL = [
    (deletion.SENT, "last_event != 'scheduled' AND broadcast_id IS NULL"),
    (deletion.RECEIVED, "1"),
]


def enabled(emu: Emulator) -> bool:
    return bool(emu.settings.max_emails or emu.settings.max_age)


async def prune(emu: Emulator) -> int:
    """Apply the retention settings now; return how many emails (sent and received) were removed."""
    if not enabled(emu):
        return 0
    removed = 0
    async with emu.transaction() as tx:
        cutoff = to_db(tx.now - timedelta(seconds=emu.settings.max_age)) if emu.settings.max_age else None
        for mail, prunable in MAIL:
            doomed = await _doomed(tx, mail.table, prunable, emu.settings.max_emails, cutoff)
            if doomed:
                await deletion.remove(tx, mail, doomed)
                removed += len(doomed)
        if cutoff is not None:
            await tx.run("DELETE FROM request_logs WHERE created_at < ?", (cutoff,))
        if emu.settings.max_emails:
            keep = LOG_ROWS_PER_EMAIL * emu.settings.max_emails
            await tx.run("DELETE FROM request_logs WHERE seq <= (SELECT seq FROM request_logs"
                         " ORDER BY seq DESC LIMIT 1 OFFSET ?)", (keep,))
    return removed


async def _doomed(tx: Tx, table: str, prunable: str, keep: int, cutoff: str | None) -> list[str]:
    ids: set[str] = set()
    if keep:
        rows = await tx.all(f"SELECT id FROM {table} WHERE {prunable} ORDER BY seq DESC LIMIT -1 OFFSET ?",
                            (keep,))
        ids.update(row["id"] for row in rows)
    if cutoff is not None:
        rows = await tx.all(f"SELECT id FROM {table} WHERE {prunable} AND created_at < ?", (cutoff,))
        ids.update(row["id"] for row in rows)
    return sorted(ids)


async def _loop(emu: Emulator, wake: asyncio.Event) -> None:
    while True:
        wake.clear()
        try:
            await prune(emu)
        except Exception:  # a failed prune is tried again on the next round; serving goes on
            log.exception("retention prune failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), timeout=PERIOD)


async def start(emu: Emulator) -> None:
    if not enabled(emu):
        return
    wake = asyncio.Event()
    emu.clock.on_change(wake.set)
    emu.state["retention_task"] = asyncio.create_task(_loop(emu, wake))


async def stop(emu: Emulator) -> None:
    task = emu.state.pop("retention_task", None)
    if task is not None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
