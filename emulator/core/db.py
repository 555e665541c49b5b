"""One aiosqlite connection; one transaction at a time; plain dict rows.

Every request runs inside `transaction()`: transactions never interleave because they share one lock.
Side effects registered with `Tx.after_commit` run only once the transaction has committed.

Speed: statements run on the event loop's own thread (`Database.call`), not on aiosqlite's worker: the
hop to that thread and back cost ~50–100 µs per call on this machine, more than the statements of a
whole send (~50 µs in memory), and bought no overlap, since every transaction holds the one lock
anyway. Measured (issue 18): POST /emails at 8 connections went from 0.37 to 0.53 of the one-row
ceiling. aiosqlite still opens and closes the connection and runs snapshot backups. A transaction
still batches its work into as few calls ("trips") as it can. Writes that need no answer (`insert`, `update`,
`many`, `queue`) wait in the transaction and travel with the next read or with the commit; `BEGIN` rides
along with the first trip that writes. A send that reads nothing costs one trip in all, and a
transaction that only reads costs one trip per read. Writes deferred past the transaction (request
logs, `last_used_at`: `Database.defer`) wait for a later commit, in batches (DEFER_ROWS), and any read
takes them in first; closing the database writes what is left.

Group commit: when other transactions are under way as one that wrote ends, its COMMIT waits. The
SQLite transaction stays open, the transactions that run meanwhile add their writes to it (each inside
a savepoint of its own, so a failing one undoes only itself), and one COMMIT, a loop iteration later,
makes them all durable at once. No caller returns before the COMMIT that holds its writes, so an
answered request is still in the database; only the cost is shared. Requests under way (`expecting`)
count as company, and the COMMIT waits one loop turn for them. Measured (issue 18, 8 connections,
`--db FILE`): ~7 sends per COMMIT, whose pages are mostly shared index and table pages; CPU per send
~330 → ~295 µs. In memory too, though a COMMIT there costs little: the SQLite work of the members,
run together, stays in the CPU's caches, where one send's statements alone find them evicted by the
network and Python work since the last (issue 28, 8 connections over HTTP: ~350 → ~250 µs CPU per send;
an instruction count, which sees no cache, had shown the opposite). A transaction alone commits at once.
A member that only queued writes (a send) hands them to the group as they are, to run with the other
members' together (core/group.py).

Long transactions (`transaction(..., long=True)`, for chunked jobs: an import's rows, a broadcast's
emails): a database file writes every page a transaction changed into the log at its COMMIT, and a
random index (an email's id, its events' subject) changes a page per row, so a few thousand rows per
transaction write far fewer pages per row than a few hundred (issue 27, 100 000 emails: ~5 000 rows per
COMMIT wrote half the log of 200). Such a transaction holds the lock for longer (until its step finds
it `long_enough`: tx.py LONG_SECONDS), so it `breathe()`s between bounded slices of work: its queued
writes go to SQLite and every task that is ready runs a step (health checks and anything else that
needs no database answer at once; a request that does waits for the lock). Its COMMIT then runs on a
worker thread, where SQLite writes the log without the GIL, so the loop goes on serving meanwhile;
nothing else touches the connection, since the transaction still holds the lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

from emulator.core.checkpoint import SAFETY_PAGES, Checkpointer
from emulator.core.config import DEFAULT_ACCOUNT
from emulator.core.group import Group
from emulator.core.net import Requests
from emulator.core.substring import register as register_substring
from emulator.core.threads import finish_even_if_cancelled
from emulator.core.tx import COUNTER_UPSERT, Host, Params, Row, Tx, Write, apply_writes

__all__ = ["DEFER_ROWS", "KERNEL_TABLES", "Database", "Host", "Params", "Row", "Tx", "Write"]

# Deferred writes (request logs, `last_used_at`) ride with a writing commit only once this many wait or
# the oldest has waited this long (wall-clock seconds); any read brings them in first, so no read ever
# misses one. Per send that saves the log row, its id index and the key's row from each commit: 3 of
# ~13 pages a send writes to a database file's WAL.
DEFER_ROWS = 64
DEFER_SECONDS = 0.2
# How much of a database file SQLite reads through a memory mapping (fewer copies than read calls).
MMAP_BYTES = 1 << 30
# The log file is cut back to this size whenever it starts over after a checkpoint. Without it the file
# keeps the largest size it ever reached: the soak (issue 38, --db with retention, 2 h) saw a 14 MB
# database beside a 123 MB log left by one busy minute.
WAL_KEEP_BYTES = 32 * 1024 * 1024



KERNEL_TABLES = [
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, created_at TEXT NOT NULL)",
]
# Tables that survive reset (the schema itself), never listed in `tables`.
_KEEP_ON_RESET = {"meta"}


def _trim_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's `malloc_trim`; elsewhere nothing)."""
    import ctypes  # here: ~2 ms of every start, for work that only follows long jobs

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


_memdb_names = itertools.count(1)


def _memdb_uri() -> str:
    """An in-memory database on SQLite's `memdb` file system, private to its one connection (no leading
    `/` in the name). A plain `:memory:` database's COMMIT costs grow with the database: after 80 000
    sends 45 µs each against 7 µs here, where the cost stays flat (issue 28). memdb grows to at most
    1 GiB (SQLite's default); beyond that, SQLite answers `database or disk is full`."""
    return f"file:resend-emulator-{os.getpid()}-{next(_memdb_names)}?vfs=memdb"


def _dict_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> Row:
    return {column[0]: value for column, value in zip(cursor.description, row, strict=True)}


class Database:
    def __init__(self, path: str) -> None:
        self.path = path
        # An in-memory database dies with the process, and a snapshot of it writes the id counters itself
        # (control/snapshots.py): only a file needs them stored with every transaction that moved them.
        self.in_memory = path in ("", ":memory:")
        self.lock = asyncio.Lock()
        self.tables: list[str] = []
        self.fresh = True  # no table stood in the database before `open` made the schema
        self._conn: aiosqlite.Connection | None = None
        self._deferred: list[Write] = []
        self._latest: dict[Any, Write] = {}
        self._deferred_since: float | None = None
        self.checkpointer: Checkpointer | None = None  # for a database file (core/checkpoint.py)
        self.group: Group | None = None  # transactions awaiting their shared COMMIT (group.py)
        self._active = 0  # transactions entered and not yet ended (waiting for the lock included)
        self.callers = 0  # requests under way that will likely open a transaction (see `expecting`)

    @property
    def conn(self) -> aiosqlite.Connection:
        assert self._conn is not None, "database is not open"
        return self._conn

    async def call(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run `fn(raw_connection)` on the event loop's thread, however much it does."""
        return fn(self.conn._conn)  # aiosqlite's own connection, opened with check_same_thread=False

    async def call_off_loop(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run `fn(raw_connection)` on a worker thread: for statements that wait on the disk without the
        GIL (a long transaction's COMMIT). The caller holds the lock, so nothing else uses the connection:
        even cancelled (a stop), it waits for `fn` to end first (issue 40: its ROLLBACK ran beside a
        COMMIT still under way)."""
        return await finish_even_if_cancelled(asyncio.to_thread(fn, self.conn._conn))

    async def open(self, ddl: Iterable[str]) -> None:
        in_memory = self.in_memory
        self._conn = await aiosqlite.connect(_memdb_uri() if in_memory else self.path, uri=in_memory,
                                             isolation_level=None, check_same_thread=False)
        self._conn.row_factory = _dict_row  # type: ignore[assignment]
        pragmas = ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA temp_store=MEMORY"]
        if not in_memory and not self.path.startswith("file:"):
            self.checkpointer = Checkpointer(self.path)
            pragmas[:0] = [f"PRAGMA wal_autocheckpoint={SAFETY_PAGES}", "PRAGMA cache_size=-131072",
                           f"PRAGMA mmap_size={MMAP_BYTES}", f"PRAGMA journal_size_limit={WAL_KEEP_BYTES}"]
        # The schema as one script in one transaction: one commit, not one per table (issue 28, start).
        schema = ";\n".join(["BEGIN", *KERNEL_TABLES, *ddl, "COMMIT"])

        def create(raw: sqlite3.Connection) -> list[str]:
            register_substring(raw)  # the search language's substring test (core/substring.py)
            for pragma in pragmas:
                raw.execute(pragma)
            self.fresh = raw.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None
            raw.executescript(schema)
            rows = raw.execute(
                "SELECT name, sql FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            ).fetchall()
            # A full-text table keeps its index in shadow tables (`<name>_data`, `<name>_config`, …)
            # that only the table itself may empty: they are not tables of their own here.
            virtual = [row["name"] for row in rows if (row["sql"] or "").upper().startswith("CREATE VIRTUAL")]
            return [row["name"] for row in rows
                    if not any(row["name"].startswith(f"{name}_") for name in virtual)]

        names: list[str] = await self.call(create)
        self.tables = [name for name in names if name not in _KEEP_ON_RESET]

    async def close(self) -> None:
        if self._conn is not None:
            await self.settle()
        if self._conn is not None and self.has_deferred:
            writes = self.take_deferred()

            def flush(raw: sqlite3.Connection) -> None:
                raw.execute("BEGIN IMMEDIATE")
                apply_writes(raw, writes)
                raw.execute("COMMIT")

            await self.call(flush)
        if self.checkpointer is not None:
            await self.checkpointer.close()
            self.checkpointer = None
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    def defer(self, sql: str, params: Params, latest: Any = None) -> None:
        """Queue a write that may wait for the next commit (request logs, `last_used_at`). Writes
        given the same `latest` key replace each other: only the newest is made."""
        if self._deferred_since is None:
            self._deferred_since = time.monotonic()
        if latest is None:
            self._deferred.append((sql, params, False))
        else:
            self._latest[latest] = (sql, params, False)

    @property
    def has_deferred(self) -> bool:
        return bool(self._deferred or self._latest)

    @property
    def deferred_due(self) -> bool:
        """Whether the deferred writes should ride with the next commit (see DEFER_ROWS)."""
        since = self._deferred_since
        return since is not None and (len(self._deferred) >= DEFER_ROWS
                                      or time.monotonic() - since >= DEFER_SECONDS)

    def take_deferred(self) -> list[Write]:
        taken = [*self._deferred, *self._latest.values()]
        self._deferred, self._latest, self._deferred_since = [], {}, None
        return taken

    def restore_deferred(self, writes: list[Write]) -> None:
        if writes:
            self._deferred[:0] = writes
            self._deferred_since = self._deferred_since or time.monotonic()

    async def wipe(self) -> None:
        """Empty every table but `meta` (caller holds the lock)."""
        await self.settle()
        self.take_deferred()
        tables = list(self.tables)

        def wipe_all(raw: sqlite3.Connection) -> None:
            raw.execute("BEGIN")
            for table in tables:
                raw.execute(f"DELETE FROM {table}")
            raw.execute("COMMIT")

        await self.call(wipe_all)

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """The lock, with no transaction open: for work on the whole database (backups, wipes)."""
        async with self.lock:
            await self.settle()
            yield

    async def release_memory(self) -> None:
        """Give back what long work filled: SQLite's page cache (up to cache_size) and, for a file, the
        pages read through its mapping, which count as the process's own memory while mapped (issue 27:
        +287 MB after a 100 000-email broadcast). Changing the mapping's size maps the file afresh;
        pages needed again come back from the kernel's cache. The cache's pages go back to the C heap,
        which keeps them (+152 MB) until asked to return its free pages to the system. The log file is
        cut back too (see `Checkpointer.shrink`)."""
        def release(raw: sqlite3.Connection) -> None:
            raw.execute("PRAGMA shrink_memory")
            if self.checkpointer is not None:
                raw.execute(f"PRAGMA mmap_size={MMAP_BYTES - 4096}")
                raw.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            _trim_heap()

        async with self.exclusive():
            await self.call(release)
        if self.checkpointer is not None:
            self.checkpointer.shrink()

    async def settle(self) -> None:
        """COMMIT the open group now, if there is one (caller holds the lock)."""
        group, self.group = self.group, None
        if group is None:
            return
        deferred = self.take_deferred() if self.deferred_due else []

        def finish(raw: sqlite3.Connection) -> None:
            group.prepare(raw)
            apply_writes(raw, deferred)
            raw.execute("COMMIT")

        try:
            await self.call(finish)
        except BaseException as exc:
            self.restore_deferred([*group.taken_deferred, *deferred])
            await self.call(lambda raw: raw.in_transaction and raw.execute("ROLLBACK"))
            group.done.set_exception(exc)
            raise
        group.done.set_result(None)
        if self.checkpointer is not None:
            self.checkpointer.committed()

    async def pause(self) -> bool:
        """Between the chunks of a transaction that has written nothing (issue 36: a search's windows):
        the transactions waiting for the lock run (asyncio's lock is fair), then the caller takes it
        back. Reads before a write run in autocommit mode, so each chunk is as if a transaction of its
        own. Returns whether a group is open now (the caller is then one of its members)."""
        self.lock.release()
        cancelled = False
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            cancelled = True
        while True:  # the caller's `transaction` releases the lock at its end: it must hold it then
            try:
                await self.lock.acquire()
                break
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError
        return self.group is not None

    async def write_apart(self, sql: str, params: Params) -> int:
        """One write COMMITted on its own, off the loop (caller holds the lock, has written nothing):
        the open group's COMMIT first. Returns the rows changed."""
        await self.settle()

        def chunk(raw: sqlite3.Connection) -> int:
            raw.execute("BEGIN IMMEDIATE")
            try:
                changed: int = raw.execute(sql, params).rowcount
            except BaseException:
                raw.execute("ROLLBACK")
                raise
            raw.execute("COMMIT")
            return changed

        changed: int = await self.call_off_loop(chunk)
        if self.checkpointer is not None:
            self.checkpointer.committed()
        return changed

    async def _commit_group(self) -> None:
        # One loop turn first, so requests under way reach their transactions and join: measured (issue
        # 18, `--db FILE`, 8 connections) 3.5 → 7 transactions per COMMIT, ~310 → ~297 µs per send.
        await asyncio.sleep(0)
        async with self.lock:  # after the transactions already waiting for it, which join the group
            with contextlib.suppress(Exception):  # each member hears of a failure from `group.done`
                await self.settle()

    def open_group(self, taken_deferred: list[Write], begun: bool) -> Group:
        """A group for the transaction ending now; `begun`: it has opened the SQLite transaction."""
        group = self.group = Group(taken_deferred, begun)
        group.committer = asyncio.get_running_loop().create_task(self._commit_group())
        return group

    def expecting(self) -> _Expecting:
        """Mark a request under way that will likely write (an API call, an SMTP message): a group
        then waits for its transaction rather than committing without it."""
        return _Expecting(self)

    @property
    def shared(self) -> bool:
        """Whether other transactions or requests are under way (started, or received over HTTP and not
        yet started: net.py `Requests`), so a COMMIT now would likely be followed by theirs."""
        return self._active > 1 or self.callers > 1 or Requests.under_way > 1

    def transaction(self, emu: Host, account: str | None, long: bool = False,
                    turn: bool = True) -> Transaction:
        """`async with db.transaction(emu, account) as tx:` one unit of work (see the module docstring).
        `turn=False`, for a task that runs one transaction and ends (an API request), skips the loop turn
        before the lock when no other request is under way: alone, the turn buys nothing and costs a
        request ~15 µs (a test suite's sends one at a time, issue 28)."""
        return Transaction(self, emu, account, long, turn)


class Transaction:
    """The context manager of `Database.transaction`: a plain class rather than a generator-based one,
    whose extra frames cost every request a few µs (issue 28).

    Entering: one loop turn first (for an API request, only when `shared`: see `Database.transaction`),
    then the lock. The turn lets the requests under way reach their transactions and join a group
    (issue 28: without it, one COMMIT per send); and since statements do not suspend the caller
    (`Database.call`), a task running transactions back to back, a burst of events or a broadcast,
    would otherwise starve every other task, webhook deliveries included. Leaving: roll
    back on an exception; otherwise persist a moved id counter, end (COMMIT or join the group), release
    the lock, wait for the group's COMMIT if the writes joined one, and run the after-commit callbacks."""

    __slots__ = ("account", "db", "emu", "long", "scope", "turn", "tx")

    def __init__(self, db: Database, emu: Host, account: str | None, long: bool, turn: bool) -> None:
        self.db, self.emu, self.account, self.long, self.turn = db, emu, account, long, turn
        self.scope: contextlib.AbstractContextManager[None] | None = None

    async def __aenter__(self) -> Tx:
        db, emu = self.db, self.emu
        db._active += 1
        try:
            if self.turn or db.shared:
                await asyncio.sleep(0)
            await db.lock.acquire()
        except BaseException:
            db._active -= 1
            raise
        try:
            if self.long:
                await db.settle()  # its own COMMIT, not a share of a group's
            if emu.settings.isolate_keys and self.account not in (None, DEFAULT_ACCOUNT):
                self.scope = emu.ids.account_scope(self.account)
                self.scope.__enter__()
            self.tx = Tx(emu, db, self.account, emu.clock.now(), long=self.long)  # in scope: its counter
        except BaseException:
            db.lock.release()
            db._active -= 1
            raise
        return self.tx

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: object) -> None:
        db, tx, ids = self.db, self.tx, self.emu.ids
        try:
            try:
                if error is not None:
                    await tx.rollback()
                    return
                if tx.counter_moved and not db.in_memory:
                    tx.queue(COUNTER_UPSERT, (ids.meta_key, str(ids.counter)))
                await tx.end()
            finally:
                if self.scope is not None:
                    self.scope.__exit__(None, None, None)
                db.lock.release()
            # Writes of this one, or reads of writes not yet committed: answer after the COMMIT.
            group = db.group
        finally:
            db._active -= 1
        if group is not None:
            await asyncio.shield(group.done)
            tx.check_queued()
        for callback in tx.callbacks:
            callback()


class _Expecting:
    """`with db.expecting():` counts the block as a request under way (a plain class: cheaper per
    request than a generator-based context manager)."""

    __slots__ = ("db",)

    def __init__(self, db: Database) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.callers += 1

    def __exit__(self, *exc: object) -> None:
        self.db.callers -= 1
