"""WAL checkpoints of a database file, on a thread of their own instead of inside a request's commit.

SQLite copies the write-ahead log back into the database file once the log passes
`wal_autocheckpoint` pages, inside whichever commit crossed the line: with the default (1 000 pages,
about 100 sends) a POST /emails now and then waited for a thousand page copies and an fsync. Here the
commit path only counts commits; every CHECKPOINT_EVERY of them, a worker thread with its own
connection runs a PASSIVE checkpoint (it never waits for, nor blocks, the writer; SQLite releases the
GIL while it copies). The connection's own automatic checkpoint stays as a backstop at SAFETY_PAGES,
should the thread ever fall behind. Measured (issue 18, `--db FILE`, 8 connections): ~330 → ~305 µs
of CPU per send, and no request waits for a checkpoint.

Durability is unchanged: a commit is in the log when it returns, as before (`synchronous=NORMAL`).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from concurrent.futures import Future, ThreadPoolExecutor

log = logging.getLogger(__name__)

# Write commits between checkpoints (a commit holds one send's ~10 pages, or a group's ~25). A checkpoint
# stalls the writer for a time that grows with its size, and frequent ones copy hot pages again and
# again. Measured (issue 18, `--db FILE`, 8 connections, p99 / CPU per send): every 1 000 commits 51 ms,
# 400: 288 µs, 100: 20-24 ms / 292 µs, 25: 10 ms / 316 µs.
CHECKPOINT_EVERY = 100
# The connection's own automatic checkpoint: a backstop for requests, and what checkpoints the long
# transactions of chunked jobs (db.py), whose few commits hold thousands of pages each, mostly the same
# index pages again: a log of this many pages copies each of them once per several commits (issue 27,
# 100 000-email broadcast: 1.2 s less CPU than at 20 000). `shrink` gives the file back afterwards.
SAFETY_PAGES = 100_000


class Checkpointer:
    def __init__(self, path: str) -> None:
        self.path = path
        self.done = 0  # checkpoints run, for tests
        self._commits = 0
        self._conn: sqlite3.Connection | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wal-checkpoint")
        self._running: Future[None] | None = None

    def committed(self) -> None:
        """One write commit happened; start a checkpoint when enough have."""
        self._commits += 1
        if self._commits >= CHECKPOINT_EVERY and (self._running is None or self._running.done()):
            self._commits = 0
            self._running = self._executor.submit(self._checkpoint)

    def shrink(self) -> None:
        """After long work: copy the whole log back and cut its file to nothing, on the thread (a log of
        up to SAFETY_PAGES stays on disk otherwise). Should a write come meanwhile, it simply fails."""
        self._running = self._executor.submit(self._checkpoint, "TRUNCATE")

    def _checkpoint(self, mode: str = "PASSIVE") -> None:
        try:
            if self._conn is None:
                self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
            self.done += 1
        except sqlite3.Error:  # the connection's own automatic checkpoint still bounds the log
            log.warning("WAL checkpoint failed", exc_info=True)

    async def wait(self) -> None:
        """Until the checkpoint under way (if any) has finished."""
        running = self._running
        if running is not None:
            await asyncio.wrap_future(running)

    async def close(self) -> None:
        await self.wait()
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        self._executor.shutdown(wait=True)
