"""One transaction's handle (`Tx`), and how queued writes reach SQLite.

`Database.transaction` (db.py) makes a `Tx` for each unit of work: one account, one `now`, writes
queued until the next read or the end, after-commit callbacks. See db.py for the whole story.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any, Protocol

from emulator.core.clock import Clock, to_db
from emulator.core.config import Settings
from emulator.core.ids import IdFactory

# Wall-clock work a long transaction (chunked jobs, db.py) does before it commits: requests that need the
# database wait at most about this long behind it. Longer ones write fewer pages per row (a 100 000-email
# broadcast: ~1 s less at 1 s than at 0.3 s); half a second keeps a waiting page responsive.
LONG_SECONDS = 0.5

Row = dict[str, Any]
Params = Sequence[Any] | dict[str, Any]
# (sql, params, many): one statement, or one statement over many parameter rows.
Write = tuple[str, Any, bool]
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


class Store(Protocol):
    """What a transaction needs of the database that made it (db.py's `Database`)."""

    checkpointer: Any
    group: Any
    tables: list[str]

    async def call(self, fn: Callable[[sqlite3.Connection], Any]) -> Any: ...
    @property
    def has_deferred(self) -> bool: ...
    @property
    def deferred_due(self) -> bool: ...
    @property
    def shared(self) -> bool: ...
    def take_deferred(self) -> list[Write]: ...
    def restore_deferred(self, writes: list[Write]) -> None: ...
    async def call_off_loop(self, fn: Callable[[sqlite3.Connection], Any]) -> Any: ...
    def open_group(self, taken_deferred: list[Write], begun: bool) -> Any: ...
    async def pause(self) -> bool: ...
    async def write_apart(self, sql: str, params: Params) -> int: ...


# How a transaction stores the id counter it moved (db.py); a group keeps the last one only (group.py).
COUNTER_UPSERT = "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"


@lru_cache(maxsize=512)
def insert_sql(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"


@lru_cache(maxsize=512)
def update_sql(table: str, columns: tuple[str, ...]) -> str:
    assignments = ", ".join(f"{column} = ?" for column in columns)
    return f"UPDATE {table} SET {assignments} WHERE id = ? AND account = ?"


def apply_writes(raw: sqlite3.Connection, writes: Sequence[Write]) -> None:
    """Run `writes` in order; a run of the same parameterised statement (request-log rows, job
    deletions) goes to SQLite as one `executemany`."""
    index, count = 0, len(writes)
    while index < count:
        sql, params, many = writes[index]
        end = index + 1
        if not many and params:  # parameters: a DML statement, which `executemany` takes
            while end < count and writes[end][0] == sql and not writes[end][2]:
                end += 1
        if many:
            raw.executemany(sql, params)
        elif end - index > 1:
            raw.executemany(sql, [write[1] for write in writes[index:end]])
        else:
            raw.execute(sql, params)
        index = end


def by_table(writes: list[Write]) -> list[Write]:
    """`writes` with their plain INSERTs regrouped by table, so each table's rows reach SQLite as one
    `executemany` (see `apply_writes`). Inserts keep their order within a table and never move across
    another kind of statement; inserts into different tables commute (no triggers or foreign keys
    between them)."""
    regrouped: list[Write] = []
    run: dict[str, list[Write]] = {}
    for write in writes:
        table = _insert_table(write)
        if table is None:
            regrouped += [item for items in run.values() for item in items]
            regrouped.append(write)
            run = {}
        else:
            run.setdefault(table, []).append(write)
    regrouped += [item for items in run.values() for item in items]
    return regrouped


class _TxState:
    """What views of one transaction (see `Tx.as_account`) share."""

    def __init__(self) -> None:
        self.begun = False
        self.trips = 0
        self.pending: list[Write] = []
        self.callbacks: list[Callable[[], None]] = []
        self.taken_deferred: list[Write] = []  # given back to the database if this rolls back
        self.member = False  # joined an open group: its writes sit in a savepoint of their own
        self.long = False  # a chunked job's: breathes, and commits on a worker thread (db.py)
        self.off_loop = False  # a search that scans: its statements run on a worker thread
        self.started = 0.0  # a long one's start (wall clock), for `Tx.long_enough`
        self.now_db: str | None = None
        self.now_iso: str | None = None
        self.once: dict[Hashable, int] = {}  # `after_commit(..., once=)` key → its callback's index
        self.queued: Any = None  # its writes handed to a group as they were (group.py Queued)
        self.counter = 0  # the id counter when it began or last paused (`counter_moved`)


class Tx:
    """The handle a service function gets: scoped to one account, one `now`, one transaction."""

    def __init__(self, emu: Host, db: Store, account: str | None, now: datetime,
                 state: _TxState | None = None, long: bool = False) -> None:
        self.emu = emu
        self.db = db
        self._account = account
        self.now = now
        if state is None:
            state = _TxState()
            state.member = db.group is not None
            state.long = long
            if long:
                state.started = time.perf_counter()
            state.counter = emu.ids.counter
        self._state = state

    def as_account(self, account: str) -> Tx:
        """The same transaction seen as another account (inbound mail crosses accounts; one commit)."""
        return Tx(self.emu, self.db, account, self.now, self._state)

    @property
    def begun(self) -> bool:
        return self._state.begun

    @property
    def unit(self) -> object:
        """What every view of this transaction shares (`as_account`), alive until the transaction ends:
        a key for state kept beside it (core/quota.py's in-flight counts)."""
        return self._state

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
        # Kept once made: a send stamps several rows with it (not functools.cached_property, whose lock
        # costs more than the formatting it saves on Python 3.11).
        state = self._state
        if state.now_db is None:
            state.now_db = to_db(self.now)
        return state.now_db

    @property
    def now_iso(self) -> str:
        """`now` as webhook payloads write it (`2026-05-14T09:00:00.000Z`), made once per transaction."""
        state = self._state
        if state.now_iso is None:
            # `now_db` cut to milliseconds: the same text as `iso_z(now)`, without formatting twice.
            state.now_iso = self.now_db[:23] + "Z"
        return state.now_iso

    def new_id(self) -> str:
        return self.emu.ids.uuid()

    def after_commit(self, callback: Callable[[], None], once: Hashable | None = None) -> None:
        """Run `callback` once this transaction has committed; with `once`, only the first callback
        given that key (a broadcast chunk schedules thousands of jobs due at the same time: one wake)."""
        state = self._state
        if once is not None:
            # Still there unless dropped with its job's callbacks since (jobs.py truncates the list).
            if state.once.get(once, len(state.callbacks)) < len(state.callbacks):
                return
            state.once[once] = len(state.callbacks)
        state.callbacks.append(callback)

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

    async def apart(self, work: Callable[[], Awaitable[None]]) -> Exception | None:
        """Run `work` so that, if it fails, only what it did is undone (its writes and after-commit
        callbacks) and the transaction goes on; return its exception, if any. The savepoint costs
        nothing unless `work` reads (which sends the queue): writes still queued are simply dropped."""
        callbacks, mark = len(self._state.callbacks), self.mark()
        self.queue("SAVEPOINT apart")
        try:
            await work()
        except Exception as exc:
            if self.sent_since(mark):
                await self.run("ROLLBACK TO apart")
                self.queue("RELEASE apart")
            else:
                self.unqueue(mark)
            del self._state.callbacks[callbacks:]
            return exc
        if self.sent_since(mark):
            self.queue("RELEASE apart")
        else:
            self.unqueue(mark, count=1)
        return None

    def group_inserts(self, mark: tuple[int, int]) -> None:
        """Regroup the plain INSERTs queued since `mark` by table (`by_table`): a broadcast chunk queues
        email, event, job and recipient rows per contact, ~4x fewer calls grouped. Nothing moves once
        sent (`mark` must still be valid, see `sent_since`)."""
        pending = self._state.pending
        pending[mark[0]:] = by_table(pending[mark[0]:])

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
            if state.member:
                self.db.group.prepare(raw)  # open, and earlier members' queued writes in, first
            if begin:
                raw.execute("SAVEPOINT tx" if state.member else "BEGIN IMMEDIATE")
            apply_writes(raw, writes)
            return then(raw)

        if state.off_loop:
            return await self.db.call_off_loop(work)
        return await self.db.call(work)

    def scan_off_loop(self) -> None:
        """Run this transaction's statements from here on on a worker thread: a search that scans
        stored bodies (issue 36). SQLite's C code runs there without the GIL, so the loop goes on
        serving (health checks, pages that need no database); the lock keeps the connection its own."""
        self._state.off_loop = True

    @property
    def free(self) -> bool:  # nothing of it in SQLite or queued: it may pause, or commit a chunk apart
        return not (self._state.begun or self._state.pending or self._state.long)

    async def let_others_in(self) -> None:
        """Between a search's chunks, while nothing is written: others take their turn (`Database.pause`)."""
        if self.free:
            self._state.member = await self.db.pause()
            self._state.counter = self.emu.ids.counter

    async def write_apart(self, sql: str, params: Params = ()) -> int:
        """A chunk of idempotent catch-up, COMMITted apart (inside this one once it wrote); rows changed."""
        if not self.free:
            return await self.run(sql, params)
        self._state.member = False  # the open group, if any, commits first (`Database.write_apart`)
        return await self.db.write_apart(sql, params)

    @property
    def counter_moved(self) -> bool:  # since it began or last paused: then the counter is stored at the end
        return self.emu.ids.counter != self._state.counter

    async def end(self) -> None:
        """Make this transaction's writes durable: COMMIT now, or leave them in the open group, whose
        COMMIT the caller then awaits (`Database.transaction`)."""
        state = self._state
        wrote = state.begun or bool(state.pending)
        if state.long or (not state.member and not (wrote and self.db.shared)):
            await self.commit()
            return
        if wrote and not state.begun:  # only queued writes: handed to the group as they are
            group = self.db.group or self.db.open_group([], begun=False)
            state.queued = group.queue(state.pending)
            state.pending = []
            return
        try:
            if state.member and wrote:
                await self._trip(lambda raw: raw.execute("RELEASE tx"), writes_now=True, reads=False)
            elif wrote:
                await self._trip(lambda raw: None, writes_now=True, reads=False)  # BEGIN and the writes
        except BaseException:
            await self.rollback()
            raise
        if state.member:
            assert self.db.group is not None
            self.db.group.taken_deferred += state.taken_deferred
        else:
            self.db.open_group(list(state.taken_deferred), begun=True)

    def check_queued(self) -> None:
        """After the group's COMMIT: raise what this transaction's queued writes met, if anything."""
        queued = self._state.queued
        if queued is not None and queued.error is not None:
            raise queued.error

    async def rollback(self) -> None:
        """Undo what this transaction wrote (only its own savepoint when it joined a group)."""
        state = self._state
        state.pending = []
        if state.begun:
            undo = ("ROLLBACK TO tx", "RELEASE tx") if state.member else ("ROLLBACK",)

            def run(raw: sqlite3.Connection) -> None:
                if not raw.in_transaction:
                    return  # SQLite undid it all already (it may, on a full database: SQLITE_FULL)
                for statement in undo:
                    raw.execute(statement)

            await self.db.call(run)
        self.db.restore_deferred(state.taken_deferred)

    async def commit(self) -> None:
        writes = self.begun or bool(self._state.pending)
        if not writes and not self.db.has_deferred:
            return
        # A transaction that writes nothing of its own commits only to write what was deferred.
        deferred = self.db.take_deferred() if self.db.deferred_due or not writes else []
        try:
            def finish(raw: sqlite3.Connection) -> None:
                apply_writes(raw, deferred)
                raw.execute("COMMIT")

            if self._state.long and writes:
                await self._trip(lambda raw: apply_writes(raw, deferred), writes_now=True, reads=False)
                await self.db.call_off_loop(lambda raw: raw.execute("COMMIT"))
            else:
                await self._trip(finish, writes_now=True, reads=False)
            if self.db.checkpointer is not None:
                self.db.checkpointer.committed()
        except BaseException:
            self.db.restore_deferred([*self.taken_deferred, *deferred])
            await self.db.call(lambda raw: raw.in_transaction and raw.execute("ROLLBACK"))
            raise

    @property
    def long_enough(self) -> bool:
        """Whether this long transaction has done its LONG_SECONDS of work: time to commit the chunk."""
        return time.perf_counter() - self._state.started > LONG_SECONDS

    async def breathe(self) -> None:
        """Between slices of a long transaction: send the queued writes, then let every task that is
        ready run a step (the lock stays held, so no other transaction starts meanwhile)."""
        if self._state.pending:
            await self._trip(lambda raw: None, writes_now=True, reads=False)
        await asyncio.sleep(0)

    async def one(self, sql: str, params: Params = ()) -> Row | None:
        return await self._trip(lambda raw: raw.execute(sql, params).fetchone())  # type: ignore[no-any-return]

    async def all(self, sql: str, params: Params = ()) -> list[Row]:
        return await self._trip(lambda raw: raw.execute(sql, params).fetchall())  # type: ignore[no-any-return]

    async def scan(self, sql: str, params: Params = ()) -> list[Row]:
        """A search's read of mail, leaving deferred writes (no search reads them) free to pause with."""
        return await self._trip(lambda raw: raw.execute(sql, params).fetchall(),  # type: ignore[no-any-return]
                                reads=False)

    async def run(self, sql: str, params: Params = ()) -> int:
        """Execute now and return the number of rows changed."""
        return await self._trip(lambda raw: raw.execute(sql, params).rowcount,  # type: ignore[no-any-return]
                                writes_now=True)

    async def many(self, sql: str, rows: Iterable[Params]) -> None:
        listed = list(rows)
        if listed:  # none: nothing to send, and no reason to open a write transaction
            self._state.pending.append((sql, listed, True))

    async def insert(self, table: str, values: dict[str, Any]) -> None:
        self._state.pending.append((insert_sql(table, tuple(values)), tuple(values.values()), False))

    async def insert_now(self, table: str, values: dict[str, Any]) -> int:
        """Insert at once (with the writes queued before it) and return the new row's rowid."""
        sql, params = insert_sql(table, tuple(values)), tuple(values.values())
        return await self._trip(lambda raw: raw.execute(sql, params).lastrowid,  # type: ignore[no-any-return]
                                writes_now=True, reads=False)

    async def update(self, table: str, row_id: str, values: dict[str, Any]) -> None:
        if not values:
            return
        self.queue(update_sql(table, tuple(values)), (*values.values(), row_id, self.account))


def _insert_table(write: Write) -> str | None:
    """The table a single-row `INSERT INTO t (...)` writes to; None for any other statement."""
    sql, _, many = write
    if many or not sql.startswith("INSERT INTO "):
        return None
    return sql[12:sql.index(" ", 12)]
