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
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager, nullcontext
from datetime import datetime
from typing import Any, Protocol

import aiosqlite

from emulator.core.checkpoint import SAFETY_PAGES, Checkpointer
from emulator.core.clock import Clock, to_db
from emulator.core.config import DEFAULT_ACCOUNT, Settings
from emulator.core.ids import IdFactory

Row = dict[str, Any]
Params = Sequence[Any] | dict[str, Any]
# (sql, params, many): one statement, or one statement over many parameter rows.
Write = tuple[str, Any, bool]
# Deferred writes (request logs, `last_used_at`) ride with a writing commit only once this many wait or
# the oldest has waited this long (wall-clock seconds); any read brings them in first, so no read ever
# misses one. Per send that saves the log row, its id index and the key's row from each commit: 3 of
# ~13 pages a send writes to a database file's WAL.
DEFER_ROWS = 64
DEFER_SECONDS = 0.2



class Host(Protocol):
    """The running emulator as a transaction sees it (`core/emulator.py`'s Emulator is one).

    Declared here rather than imported, so storage sits below the Emulator that owns it. The event bus
    and the job runner sit above storage, so they are `Any` here; their own modules type them.
    """

    settings: Settings
    clock: Clock
    ids: IdFactory
    state: dict[str, Any]
    cache: dict[str, Any]
    events: Any
    jobs: Any

    def invalidate(self, name: str) -> None: ...


KERNEL_TABLES = [
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, created_at TEXT NOT NULL)",
]
# Tables that survive reset (the schema itself), never listed in `tables`.
_KEEP_ON_RESET = {"meta"}


def _dict_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> Row:
    return {column[0]: value for column, value in zip(cursor.description, row, strict=True)}


def _apply(raw: sqlite3.Connection, writes: Iterable[Write]) -> None:
    for sql, params, many in writes:
        if many:
            raw.executemany(sql, params)
        else:
            raw.execute(sql, params)


class Database:
    def __init__(self, path: str) -> None:
        self.path = path
        self.lock = asyncio.Lock()
        self.tables: list[str] = []
        self._conn: aiosqlite.Connection | None = None
        self._deferred: list[Write] = []
        self._latest: dict[Any, Write] = {}
        self._deferred_since: float | None = None
        self.checkpointer: Checkpointer | None = None  # for a database file (core/checkpoint.py)

    @property
    def conn(self) -> aiosqlite.Connection:
        assert self._conn is not None, "database is not open"
        return self._conn

    async def call(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run `fn(raw_connection)` on the event loop's thread, however much it does."""
        return fn(self.conn._conn)  # aiosqlite's own connection, opened with check_same_thread=False

    async def open(self, ddl: Iterable[str]) -> None:
        self._conn = await aiosqlite.connect(self.path or ":memory:", isolation_level=None,
                                               check_same_thread=False)
        self._conn.row_factory = _dict_row  # type: ignore[assignment]
        statements = ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", *KERNEL_TABLES, *ddl]
        if self.path not in ("", ":memory:") and not self.path.startswith("file:"):
            self.checkpointer = Checkpointer(self.path)
            statements.insert(0, f"PRAGMA wal_autocheckpoint={SAFETY_PAGES}")

        def create(raw: sqlite3.Connection) -> list[str]:
            for statement in statements:
                raw.execute(statement)
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
        if self._conn is not None and self.has_deferred:
            writes = self.take_deferred()

            def flush(raw: sqlite3.Connection) -> None:
                raw.execute("BEGIN IMMEDIATE")
                _apply(raw, writes)
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
        self.take_deferred()
        tables = list(self.tables)

        def wipe_all(raw: sqlite3.Connection) -> None:
            raw.execute("BEGIN")
            for table in tables:
                raw.execute(f"DELETE FROM {table}")
            raw.execute("COMMIT")

        await self.call(wipe_all)

    @asynccontextmanager
    async def transaction(self, emu: Host, account: str | None) -> AsyncIterator[Tx]:
        isolated = emu.settings.isolate_keys and account not in (None, DEFAULT_ACCOUNT)
        # Statements no longer suspend the caller (see `call`), so a task running transactions back to
        # back (a burst of events, a broadcast) would starve every other task, webhook deliveries
        # included, until it ends: each transaction first lets the tasks that are ready run a step.
        await asyncio.sleep(0)
        async with self.lock:
            tx = Tx(emu, self, account, emu.clock.now())
            with emu.ids.account_scope(account) if isolated and account else nullcontext():
                start_counter = emu.ids.counter
                try:
                    yield tx
                except BaseException:
                    if tx.begun:
                        await self.call(lambda raw: raw.execute("ROLLBACK"))
                    self.restore_deferred(tx.taken_deferred)
                    raise
                if emu.ids.counter != start_counter:
                    tx.queue("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                             (emu.ids.meta_key, str(emu.ids.counter)))
                await tx.commit()
        for callback in tx.callbacks:
            callback()


class _TxState:
    """What views of one transaction (see `Tx.as_account`) share."""

    def __init__(self) -> None:
        self.begun = False
        self.trips = 0
        self.pending: list[Write] = []
        self.callbacks: list[Callable[[], None]] = []
        self.taken_deferred: list[Write] = []  # given back to the database if this rolls back


class Tx:
    """The handle a service function gets: scoped to one account, one `now`, one transaction."""

    def __init__(self, emu: Host, db: Database, account: str | None, now: datetime,
                 state: _TxState | None = None) -> None:
        self.emu = emu
        self.db = db
        self._account = account
        self.now = now
        self._state = state or _TxState()

    def as_account(self, account: str) -> Tx:
        """The same transaction seen as another account (inbound mail crosses accounts; one commit)."""
        return Tx(self.emu, self.db, account, self.now, self._state)

    @property
    def begun(self) -> bool:
        return self._state.begun

    @property
    def callbacks(self) -> list[Callable[[], None]]:
        return self._state.callbacks

    @property
    def taken_deferred(self) -> list[Write]:
        return self._state.taken_deferred

    @property
    def account(self) -> str:
        assert self._account is not None, "this transaction is not scoped to an account"
        return self._account

    @property
    def now_db(self) -> str:
        return to_db(self.now)

    def new_id(self) -> str:
        return self.emu.ids.uuid()

    def after_commit(self, callback: Callable[[], None]) -> None:
        self._state.callbacks.append(callback)

    def queue(self, sql: str, params: Params = ()) -> None:
        """A write whose result is not needed: it travels with the next read or the commit."""
        self._state.pending.append((sql, params, False))

    def include_deferred(self) -> None:
        """Bring the writes deferred to a later commit (request logs) into this transaction now, so
        its reads see them. Every read does this itself (see `_trip`)."""
        taken = self.db.take_deferred()
        self._state.taken_deferred += taken
        self._state.pending[:0] = taken

    def mark(self) -> tuple[int, int]:
        """A point to undo queued writes back to (see `unqueue`), valid while nothing is sent."""
        return len(self._state.pending), self._state.trips

    def sent_since(self, mark: tuple[int, int]) -> bool:
        """Whether queued writes have reached the database since `mark` (then only SQL can undo them)."""
        return self._state.trips != mark[1]

    def unqueue(self, mark: tuple[int, int], count: int | None = None) -> None:
        """Drop the writes queued since `mark` (all of them, or the first `count`)."""
        end = None if count is None else mark[0] + count
        del self._state.pending[mark[0]:end]

    async def _trip(self, then: Callable[[sqlite3.Connection], Any], writes_now: bool = False,
                    reads: bool = True) -> Any:
        if reads and self.db.has_deferred:
            self.include_deferred()
        state = self._state
        state.trips += 1
        writes, state.pending = state.pending, []
        # BEGIN only once something is written: reads before that run in autocommit mode, which is
        # just as consistent here (the lock keeps every other writer out), and a transaction that
        # only reads then needs no COMMIT trip at all.
        begin = not state.begun and bool(writes or writes_now)
        state.begun = state.begun or begin

        def work(raw: sqlite3.Connection) -> Any:
            if begin:
                raw.execute("BEGIN IMMEDIATE")
            _apply(raw, writes)
            return then(raw)

        return await self.db.call(work)

    async def commit(self) -> None:
        writes = self.begun or bool(self._state.pending)
        if not writes and not self.db.has_deferred:
            return
        # A transaction that writes nothing of its own commits only to write what was deferred.
        deferred = self.db.take_deferred() if self.db.deferred_due or not writes else []
        try:
            def finish(raw: sqlite3.Connection) -> None:
                _apply(raw, deferred)
                raw.execute("COMMIT")

            await self._trip(finish, writes_now=True, reads=False)
            if self.db.checkpointer is not None:
                self.db.checkpointer.committed()
        except BaseException:
            self.db.restore_deferred([*self.taken_deferred, *deferred])
            await self.db.call(lambda raw: raw.in_transaction and raw.execute("ROLLBACK"))
            raise

    async def one(self, sql: str, params: Params = ()) -> Row | None:
        return await self._trip(lambda raw: raw.execute(sql, params).fetchone())  # type: ignore[no-any-return]

    async def all(self, sql: str, params: Params = ()) -> list[Row]:
        return await self._trip(lambda raw: raw.execute(sql, params).fetchall())  # type: ignore[no-any-return]

    async def run(self, sql: str, params: Params = ()) -> int:
        """Execute now and return the number of rows changed."""
        return await self._trip(lambda raw: raw.execute(sql, params).rowcount,  # type: ignore[no-any-return]
                                writes_now=True)

    async def many(self, sql: str, rows: Iterable[Params]) -> None:
        self._state.pending.append((sql, list(rows), True))

    async def insert(self, table: str, values: dict[str, Any]) -> None:
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        self.queue(f"INSERT INTO {table} ({columns}) VALUES ({marks})",
                   tuple(values.values()))

    async def update(self, table: str, row_id: str, values: dict[str, Any]) -> None:
        if not values:
            return
        assignments = ", ".join(f"{column} = ?" for column in values)
        self.queue(f"UPDATE {table} SET {assignments} WHERE id = ? AND account = ?",
                   (*values.values(), row_id, self.account))
