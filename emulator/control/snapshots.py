"""Snapshots: the whole state saved to a file and put back, so a suite builds an expensive state once.

    POST /_emulator/snapshot/save     {"path": "/tmp/state.db"}   → {"path", "bytes", "emails"}
    POST /_emulator/snapshot/restore  {"path": "/tmp/state.db"}   → {"path", "restored": true}
    resend-emulator --restore /tmp/state.db                       (at start, before --seed-file)

A snapshot is a plain SQLite file written with SQLite's online backup API (fast, page by page, and
consistent while the server runs). The state that lives outside tables goes into the `meta` table
first: the id counter (already there) and the clock. Restoring copies the file back into the live
connection, reloads that state, and runs the reset hooks so in-memory rings (API keys, fault books,
live UI clients) follow the restored tables. Fault rules are test scaffolding, not state: a restore
clears them as a reset does.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiosqlite
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api import request_log
from emulator.api.auth import keyring
from emulator.api.ops import emulator_of, json_response
from emulator.control import counts
from emulator.control.base import PREFIX, body_of
from emulator.control.fields import STRING
from emulator.core.accounts import migrate_key_named_accounts
from emulator.core.config import StartupError
from emulator.core.errors import ApiError, invalid
from emulator.core.ids import ACCOUNT_COUNTER_PREFIX
from emulator.resources import api_keys

if TYPE_CHECKING:
    from emulator.core.emulator import Emulator


async def _persist_memory_state(emu: Emulator) -> None:
    # A transaction also writes the queued request logs, so the file holds every answered request.
    async with emu.transaction() as tx:
        await tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('clock', ?)",
                     (json.dumps(emu.clock.export()),))
        counters = {"id_counter": emu.ids.main_counter,
                    **{ACCOUNT_COUNTER_PREFIX + account: n for account, n in emu.ids.accounts.items()}}
        # Rows of accounts a reset forgot must not come back with the snapshot.
        await tx.run("DELETE FROM meta WHERE key LIKE 'id_counter%'")
        await tx.many("INSERT INTO meta (key, value) VALUES (?, ?)",
                      [(key, str(value)) for key, value in counters.items()])


async def copy_to(emu: Emulator, target: aiosqlite.Connection) -> None:
    """Copy the whole live state into `target` (a file or an in-memory database)."""
    await _persist_memory_state(emu)
    async with emu.db.exclusive():
        await emu.db.conn.backup(target)


def is_snapshot(path: Path) -> bool:
    """A regular file that SQLite opens and whose `meta` table holds the clock a save writes."""
    if not path.is_file():
        return False
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
            return conn.execute("SELECT 1 FROM meta WHERE key = 'clock'").fetchone() is not None
    except sqlite3.Error:
        return False


def _replaceable(path: Path) -> bool:
    """Nothing there, an empty file (what `mktemp` leaves), or an emulator snapshot."""
    if not path.exists() and not path.is_symlink():
        return True
    return path.is_file() and (path.stat().st_size == 0 or is_snapshot(path))


def _cannot_write(path: Path) -> ApiError:
    # One message for every refusal, so a caller learns nothing about what exists where (issue 11).
    return invalid(f"Cannot write a snapshot to `{path}`: give a new file in an existing directory"
                   " (inside --snapshot-dir when set), or an emulator snapshot to replace.")


async def save(emu: Emulator, path: str) -> dict[str, Any]:
    """Write the whole state to `path`: a new file or an older snapshot, never any other file.

    The copy goes to a private temporary file beside it (owner-only: it holds keys and secrets),
    which then replaces `path` atomically; on any failure the temporary file is removed.
    """
    destination = Path(path)
    if not destination.parent.is_dir() or not _replaceable(destination):
        raise _cannot_write(destination)
    partial: str | None = None
    try:
        handle, partial = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".partial",
                                           dir=destination.parent)
        os.close(handle)
        target = await aiosqlite.connect(partial)
        try:
            await copy_to(emu, target)
        finally:
            await target.close()
        os.replace(partial, destination)
    except (OSError, sqlite3.Error) as exc:  # a full disk, a read-only directory: the caller's to fix
        raise invalid(f"Could not write the snapshot to `{destination}`: {exc}.") from None
    finally:
        if partial is not None:
            Path(partial).unlink(missing_ok=True)
    return {"path": str(destination), "bytes": destination.stat().st_size}


async def _copy_back(emu: Emulator, source: aiosqlite.Connection,
                     then: Callable[[sqlite3.Connection], Any]) -> Any:
    """Copy `source` over the live database; return `then(raw)`, run in the same lock."""
    async with emu.jobs.paused(), emu.db.exclusive():
        emu.db.take_deferred()  # writes queued for the state being replaced
        # A cancelled job's last database call may still be running on the live connection's thread
        # (cancelling the awaiter does not stop it); the backup runs on the source's thread and would
        # find the destination busy. One empty call on the live thread waits for it (FIFO queue).
        await emu.db.call(lambda raw: None)
        await source.backup(emu.db.conn)
        return await emu.db.call(then)


async def _settle(emu: Emulator, skip: Callable[..., Any] | None = None) -> None:
    """In-memory state follows the restored tables: reset hooks (key ring, fault books, live UI)."""
    emu.state.pop("rate_windows", None)
    for hook in emu.reset_hooks:
        if hook is not skip:
            await hook(emu)
    emu.jobs.wake()


async def restore_from(emu: Emulator, source: aiosqlite.Connection) -> None:
    """Replace the live state with `source`'s, then bring the in-memory state in line with it."""
    # A file may come from an older build lacking newer tables: create what is missing.
    statements, seed = emu.ddl, emu.settings.seed

    def reload(raw: sqlite3.Connection) -> dict[str, str]:
        for statement in statements:
            raw.execute(statement)
        migrate_key_named_accounts(raw, seed)  # a snapshot saved before issue 36
        counts.ensure_built(raw)  # a snapshot saved before issue 39 has no mail counters
        return {row["key"]: row["value"] for row in raw.execute("SELECT key, value FROM meta")}

    meta: dict[str, str] = await _copy_back(emu, source, reload)
    emu.ids.load_counters(meta)
    if "clock" in meta:
        emu.clock.load(json.loads(meta["clock"]))
    await request_log.start(emu)
    await _settle(emu)


async def restore(emu: Emulator, path: str) -> dict[str, Any]:
    """Replace the whole state with the snapshot file at `path`."""
    if not is_snapshot(Path(path)):  # missing, a directory, or another kind of file: one answer
        raise invalid(f"No emulator snapshot at `{path}`.")
    source = await aiosqlite.connect(f"{Path(path).as_uri()}?mode=ro", uri=True)
    try:
        await restore_from(emu, source)
    except aiosqlite.DatabaseError:
        raise invalid(f"No emulator snapshot at `{path}`.") from None
    finally:
        await source.close()
    return {"path": path, "restored": True}


class Baseline:
    """An in-memory snapshot: what the pytest plugin restores before every test.

    Besides the tables it keeps the in-memory state as it was (id counters, clock, key ring), so a
    restore is one page copy plus assignments: no query reads that state back.
    """

    def __init__(self, connection: aiosqlite.Connection, emu: Emulator) -> None:
        self.connection = connection
        self.counters = (emu.ids.main_counter, dict(emu.ids.accounts))
        self.log_counter = request_log.log_ids(emu).counter
        self.clock = emu.clock.export()
        self.keys = dict(keyring(emu).by_token)

    @classmethod
    async def take(cls, emu: Emulator) -> Baseline:
        # Usable from the event loop's thread too: `restore` copies back there (see below).
        connection = await aiosqlite.connect(":memory:", check_same_thread=False)
        await copy_to(emu, connection)
        return cls(connection, emu)

    async def restore(self, emu: Emulator) -> None:
        # The copy runs on the loop's thread, where the live connection's statements run (core/db.py),
        # rather than on the baseline connection's worker: the hop there and back cost about as much as
        # the copy of a test's baseline itself (issue 28: per-test reset 1.21 → ~1.0x the DELETE-based one).
        source: sqlite3.Connection = self.connection._conn  # type: ignore[assignment]
        async with emu.jobs.paused(), emu.db.exclusive():
            emu.db.take_deferred()  # writes queued for the state being replaced
            await emu.db.call(lambda raw: source.backup(raw))
        emu.ids.main_counter, accounts = self.counters
        emu.ids.accounts = dict(accounts)
        request_log.log_ids(emu).counter = self.log_counter
        emu.clock.load(self.clock)
        ring = keyring(emu)
        ring.clear()
        ring.by_token.update(self.keys)
        # The key ring is already as it was; re-reading it from the tables is what `provision` adds.
        await _settle(emu, skip=api_keys.provision)

    async def close(self) -> None:
        await self.connection.close()

PATH = {"path": STRING}


def _path(emu: Emulator, body: dict[str, Any], refusal: Callable[[Path], ApiError]) -> str:
    """The file the body names; with --snapshot-dir, relative to it and never outside it."""
    path = body.get("path")
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise invalid("`path` must be a file path on the emulator's machine.")
    folder = emu.settings.snapshot_dir
    if folder is None:
        return os.path.abspath(os.path.expanduser(path))
    root = os.path.realpath(folder)
    resolved = os.path.realpath(os.path.join(root, path))
    if resolved == root or os.path.commonpath([root, resolved]) != root:  # symlinks resolved first
        raise refusal(Path(path))
    return resolved


async def save_route(request: Request) -> Response:
    emu = emulator_of(request)
    return json_response(await save(emu, _path(emu, await body_of(request, PATH), _cannot_write)))


async def restore_route(request: Request) -> Response:
    emu = emulator_of(request)
    body = await body_of(request, PATH)
    path = _path(emu, body, lambda path: invalid(f"No emulator snapshot at `{path}`."))
    return json_response(await restore(emu, path))


async def start(emu: Emulator) -> None:
    source = emu.settings.restore
    if source:
        try:
            await restore(emu, os.path.abspath(source))
        except ApiError as error:
            raise StartupError("--restore", source, error.message,
                               "give a file written by POST /_emulator/snapshot/save") from None


ROUTES = [
    Route(f"{PREFIX}/snapshot/save", save_route, methods=["POST"]),
    Route(f"{PREFIX}/snapshot/restore", restore_route, methods=["POST"]),
]
