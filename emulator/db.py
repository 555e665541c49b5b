"""One aiosqlite connection; one transaction at a time; plain dict rows.

Every request runs inside `transaction()`: transactions never interleave because they share one lock.
Side effects registered with `Tx.after_commit` run only once the transaction has committed.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import aiosqlite

from emulator.clock import to_db

if TYPE_CHECKING:
    from emulator.context import Emulator

Row = dict[str, Any]
Params = Sequence[Any] | dict[str, Any]

KERNEL_TABLES = [
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, created_at TEXT NOT NULL)",
]
# Tables that survive reset (the schema itself), never listed in `tables`.
_KEEP_ON_RESET = {"meta"}


def _dict_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> Row:
    return {column[0]: value for column, value in zip(cursor.description, row, strict=True)}


class Database:
    def __init__(self, path: str) -> None:
        self.path = path
        self.lock = asyncio.Lock()
        self.tables: list[str] = []
        self._conn: aiosqlite.Connection | None = None
        self._deferred: list[tuple[str, Params]] = []

    @property
    def conn(self) -> aiosqlite.Connection:
        assert self._conn is not None, "database is not open"
        return self._conn

    async def open(self, ddl: Iterable[str]) -> None:
        self._conn = await aiosqlite.connect(self.path or ":memory:", isolation_level=None)
        self._conn.row_factory = _dict_row
        await self._conn.execute("PRAGMA journal_mode=WAL")
        await self._conn.execute("PRAGMA synchronous=NORMAL")
        await self._conn.execute("PRAGMA foreign_keys=OFF")
        for statement in [*KERNEL_TABLES, *ddl]:
            await self._conn.execute(statement)
        rows = await self._conn.execute_fetchall(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        )
        self.tables = [r["name"] for r in rows if r["name"] not in _KEEP_ON_RESET]  # type: ignore[index, call-overload]

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    def defer(self, sql: str, params: Params) -> None:
        """Queue a write that may wait for the next transaction (request logs, `last_used_at`)."""
        self._deferred.append((sql, params))

    async def _flush_deferred(self) -> None:
        pending, self._deferred = self._deferred, []
        grouped: dict[str, list[Params]] = {}
        for sql, params in pending:
            grouped.setdefault(sql, []).append(params)
        for sql, rows in grouped.items():
            await self.conn.executemany(sql, rows)

    async def wipe(self) -> None:
        """Empty every table but `meta` (caller holds the lock)."""
        await self.conn.execute("BEGIN")
        self._deferred.clear()
        for table in self.tables:
            await self.conn.execute(f"DELETE FROM {table}")  # noqa: S608 - names come from our schema
        await self.conn.execute("COMMIT")

    @asynccontextmanager
    async def transaction(self, emu: Emulator, account: str | None) -> AsyncIterator[Tx]:
        async with self.lock:
            tx = Tx(emu, self.conn, account, emu.clock.now())
            # Ids used by a rolled-back request are not handed out again: other coroutines may
            # have drawn ids meanwhile, and the sequence stays deterministic either way.
            start_counter = emu.ids.counter
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                await self._flush_deferred()
                await self.conn.execute("SAVEPOINT request")
                yield tx
            except BaseException:
                # Deferred writes stay; only the request's own work is undone.
                await self.conn.execute("ROLLBACK TO request")
                await self.conn.execute("COMMIT")
                raise
            if emu.ids.counter != start_counter:
                await self.conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('id_counter', ?)",
                    (str(emu.ids.counter),),
                )
            await self.conn.execute("COMMIT")
        for callback in tx.callbacks:
            callback()


class Tx:
    """The handle a service function gets: scoped to one account, one `now`, one transaction."""

    def __init__(self, emu: Emulator, conn: aiosqlite.Connection, account: str | None,
                 now: datetime) -> None:
        self.emu = emu
        self.conn = conn
        self._account = account
        self.now = now
        self.callbacks: list[Callable[[], None]] = []

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
        self.callbacks.append(callback)

    async def one(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.conn.execute_fetchall(sql, params)
        for row in rows:
            return row  # type: ignore[return-value]
        return None

    async def all(self, sql: str, params: Params = ()) -> list[Row]:
        return list(await self.conn.execute_fetchall(sql, params))  # type: ignore[arg-type]

    async def run(self, sql: str, params: Params = ()) -> int:
        cursor = await self.conn.execute(sql, params)
        return cursor.rowcount

    async def many(self, sql: str, rows: Iterable[Params]) -> None:
        await self.conn.executemany(sql, rows)

    async def insert(self, table: str, values: dict[str, Any]) -> None:
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        await self.conn.execute(
            f"INSERT INTO {table} ({columns}) VALUES ({marks})",  # noqa: S608 - our own names
            tuple(values.values()),
        )

    async def update(self, table: str, row_id: str, values: dict[str, Any]) -> None:
        if not values:
            return
        assignments = ", ".join(f"{column} = ?" for column in values)
        await self.conn.execute(
            f"UPDATE {table} SET {assignments} WHERE id = ? AND account = ?",  # noqa: S608
            (*values.values(), row_id, self.account),
        )
