"""`GET /_emulator/metrics`: the emulator's counters (core/metrics.py) and gauges read at scrape time, in
the Prometheus text exposition format 0.0.4, for a team host's Prometheus (issue 38).

Part of the control plane: the sign-in that covers `/_emulator/*` covers it (health stays open). The
gauges are whole-table counts, which SQLite answers from the smallest index without reading rows
(`emails`, `received_emails`: ~16 ms a million rows, measured; run off the loop), and one pass over
`jobs`, a table that holds only work still to do. No count is kept in memory beside the tables: nothing
can drift from them after a reset, a restore or a restart.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.ops import emulator_of
from emulator.core import metrics
from emulator.core.metrics import CONTENT_TYPE, gauge
from emulator.resources.webhooks.catalogue import DELIVER_JOB

if TYPE_CHECKING:
    from emulator.core.db import Tx
    from emulator.core.emulator import Emulator

PATH = "/_emulator/metrics"
BOXES = (("sent", "emails"), ("received", "received_emails"))
STARTED = "metrics_started"


def install(emu: Emulator) -> None:
    emu.state[STARTED] = time.time()
    metrics.of(emu)


async def _jobs(tx: Tx) -> dict[str, int]:
    rows = await tx.all("SELECT kind, count(*) AS n FROM jobs GROUP BY kind")
    return {row["kind"]: int(row["n"]) for row in rows}


async def _stored(tx: Tx) -> list[tuple[dict[str, str], float]]:
    samples: list[tuple[dict[str, str], float]] = []
    for box, table in BOXES:
        row = await tx.one(f"SELECT count(*) AS n FROM {table}")
        samples.append(({"box": box}, int(row["n"]) if row else 0))
    return samples


async def _database_bytes(emu: Emulator, tx: Tx) -> int:
    path = emu.db.path
    if emu.db.in_memory or path.startswith("file:"):
        count, size = await tx.one("PRAGMA page_count"), await tx.one("PRAGMA page_size")
        return int(next(iter(count.values()))) * int(next(iter(size.values()))) if count and size else 0
    # The file and its write-ahead log: what the disk holds (the -shm index is a few pages of memory).
    return sum(os.path.getsize(name) for name in (path, f"{path}-wal") if os.path.exists(name))


async def _gauges(emu: Emulator) -> list[str]:
    async with emu.transaction() as tx:
        tx.scan_off_loop()  # a million emails take ~16 ms to count: on a worker thread, not the loop's
        jobs, stored, size = await _jobs(tx), await _stored(tx), await _database_bytes(emu, tx)
    started = emu.state[STARTED]
    return [
        *gauge("webhook_deliveries_pending", "Webhook deliveries waiting for an attempt (first ones and"
               " scheduled retries).", [({}, jobs.get(DELIVER_JOB, 0))]),
        *gauge("jobs_pending", "Jobs not yet done (scheduled sends, delivery outcomes, retries, fan-outs),"
               " by kind.", [({"kind": kind}, count) for kind, count in sorted(jobs.items())]),
        *gauge("emails_stored", "Emails held in the database, sent and received.", stored),
        *gauge("database_bytes", "Size of the database: in memory, its pages; with --db, the file and its"
               " write-ahead log.", [({}, size)]),
        *gauge("start_time_seconds", "When the emulator started, in seconds since the Unix epoch.",
               [({}, started)]),
        *gauge("uptime_seconds", "Seconds since the emulator started.", [({}, time.time() - started)]),
    ]


def _lines(emu: Emulator, gauges: list[str]) -> Iterator[str]:
    yield from metrics.of(emu).counted()
    yield from gauges


async def scrape(request: Request) -> Response:
    emu = emulator_of(request)
    body = metrics.exposition(_lines(emu, await _gauges(emu)))
    return Response(body, headers={"content-type": CONTENT_TYPE})


ROUTES = [Route(PATH, scrape, methods=["GET"])]
