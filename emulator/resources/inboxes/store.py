"""Inbox storage: tables, lookups, ordering and the wire shapes (reference/inboxes.md §1).

Threads and drafts are listed by activity, not by creation: `tick` is a per-inbox counter bumped on
every new message (threads) or save (drafts), so "most recently active first" stays a keyset order
even when the clock is frozen and every timestamp is equal.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.core import errors
from emulator.core.clock import from_db, iso_z
from emulator.core.errors import ApiError
from emulator.core.pages import BAD_CURSOR_TEXT, INBOX_DOCS, Page, fetch_page
from emulator.resources.emails.service import check_uuid

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TABLES = [
    # agent_actions: JSON list of the seed's action names; agent_id set on the first agent update.
    """CREATE TABLE IF NOT EXISTS inboxes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        email_address TEXT NOT NULL,
        domain_id TEXT NOT NULL,
        receiving_address TEXT,
        from_name TEXT,
        agent_id TEXT,
        agent_instructions TEXT,
        agent_tone TEXT,
        agent_actions TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS inboxes_account ON inboxes (account, seq)",
    # Every received email asks whether an inbox owns one of its addresses.
    "CREATE INDEX IF NOT EXISTS inboxes_address ON inboxes (email_address)",
    "CREATE INDEX IF NOT EXISTS inboxes_receiving ON inboxes (receiving_address)",
    """CREATE TABLE IF NOT EXISTS inbox_threads (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        inbox_id TEXT NOT NULL,
        subject TEXT,
        folder TEXT NOT NULL,
        trash_until TEXT,
        tick INTEGER NOT NULL,
        active_at TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS inbox_threads_inbox ON inbox_threads (inbox_id, tick)",
    # JSON columns: to_addrs, cc, bcc, reply_to, attachments ([{id, filename, size}]), header_to (the
    # whole To header, for reply-all). header_id: the Message-ID later mail names to join the thread
    # (outbound messages show `message_id` null [docs] but keep theirs here). source_id: the received
    # or sent email the message is (its files live there).
    """CREATE TABLE IF NOT EXISTS inbox_messages (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        inbox_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        direction TEXT NOT NULL,
        from_addr TEXT NOT NULL,
        to_addrs TEXT NOT NULL,
        cc TEXT NOT NULL,
        bcc TEXT NOT NULL,
        reply_to TEXT NOT NULL,
        subject TEXT,
        message_id TEXT,
        header_id TEXT,
        header_to TEXT NOT NULL,
        source_id TEXT NOT NULL,
        html TEXT,
        text TEXT,
        attachments TEXT NOT NULL,
        read INTEGER NOT NULL,
        received_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS inbox_messages_thread ON inbox_messages (thread_id, seq)",
    "CREATE INDEX IF NOT EXISTS inbox_messages_header ON inbox_messages (inbox_id, header_id)",
    """CREATE TABLE IF NOT EXISTS inbox_labels (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        inbox_id TEXT NOT NULL,
        name TEXT NOT NULL,
        color TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS inbox_thread_labels (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        thread_id TEXT NOT NULL,
        label_id TEXT NOT NULL,
        UNIQUE (thread_id, label_id)
    )""",
    # to_addrs NULL: never given (the draft shape keeps `to` null apart from `[]`).
    """CREATE TABLE IF NOT EXISTS inbox_drafts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        inbox_id TEXT NOT NULL,
        type TEXT NOT NULL,
        to_addrs TEXT,
        cc TEXT NOT NULL,
        bcc TEXT NOT NULL,
        subject TEXT,
        html TEXT,
        text TEXT,
        thread_id TEXT,
        reply_to_email_id TEXT,
        email_id TEXT,
        tick INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS inbox_drafts_inbox ON inbox_drafts (inbox_id, tick)",
    """CREATE TABLE IF NOT EXISTS inbox_draft_files (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        draft_id TEXT NOT NULL,
        filename TEXT,
        content_type TEXT NOT NULL,
        content_id TEXT,
        path TEXT,
        size INTEGER NOT NULL,
        content BLOB NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS inbox_draft_files_draft ON inbox_draft_files (draft_id, seq)",
]

FOLDERS = ("inbox", "archive", "spam", "sent", "trash")
MOVABLE_FOLDERS = ("inbox", "archive", "spam", "trash")
COLORS = ("cyan", "teal", "grass", "lime", "yellow", "orange", "iris", "plum", "crimson", "bronze", "mauve")


def ts(value: str | None) -> str | None:
    return iso_z(from_db(value)) if value is not None else None


def loads(text: str | None) -> Any:
    return json.loads(text) if text is not None else None


def missing(what: str) -> ApiError:
    """`Inbox not found.` is documented word for word; the other objects follow its form."""
    return ApiError(errors.NOT_FOUND, f"{what} not found.")


# ---- lookups ------------------------------------------------------------------------------------

async def require_inbox(tx: Tx, id_or_address: str) -> Row:
    """By id, or by address (case-insensitive) when the identifier holds an `@` (SDKs percent-encode)."""
    if "@" in id_or_address:
        row = await tx.one("SELECT * FROM inboxes WHERE account = ? AND email_address = ?",
                           (tx.account, id_or_address.strip().lower()))
    else:
        row = await tx.one("SELECT * FROM inboxes WHERE account = ? AND id = ?",
                           (tx.account, check_uuid(id_or_address, "inbox_id")))
    if row is None:
        raise missing("Inbox")
    return row


async def _child(tx: Tx, table: str, parent: str, parent_id: str, child_id: str, field: str,
                 absent: ApiError) -> Row:
    """A row of `table` by its id (checked as the UUID `field`) under its parent, or `absent`."""
    row = await tx.one(f"SELECT * FROM {table} WHERE {parent} = ? AND id = ?",
                       (parent_id, check_uuid(child_id, field)))
    if row is None:
        raise absent
    return row


async def require_thread(tx: Tx, inbox: Row, thread_id: str) -> Row:
    return await _child(tx, "inbox_threads", "inbox_id", inbox["id"], thread_id, "thread_id",
                        missing("Thread"))


async def require_message(tx: Tx, thread: Row, email_id: str) -> Row:
    return await _child(tx, "inbox_messages", "thread_id", thread["id"], email_id, "email_id",
                        missing("Email"))


async def require_label(tx: Tx, inbox: Row, label_id: str) -> Row:
    absent = ApiError(errors.NOT_FOUND, f'Label "{label_id}" not found.')
    return await _child(tx, "inbox_labels", "inbox_id", inbox["id"], label_id, "label_id", absent)


async def require_draft(tx: Tx, inbox: Row, draft_id: str) -> Row:
    return await _child(tx, "inbox_drafts", "inbox_id", inbox["id"], draft_id, "draft_id", missing("Draft"))


async def next_tick(tx: Tx, table: str, inbox_id: str) -> int:
    row = await tx.one(f"SELECT COALESCE(MAX(tick), 0) + 1 AS tick FROM {table} WHERE inbox_id = ?",
                       (inbox_id,))
    assert row is not None
    return int(row["tick"])


async def seek(tx: Tx, table: str, page: Page, where: str, params: list[Any], order: str = "tick",
               oldest_first: bool = False) -> tuple[list[Row], bool]:
    """A keyset page; a cursor outside the selection is a 404 in the inbox lists [docs]."""
    return await fetch_page(tx, table, page, where, params, order=order, oldest_first=oldest_first,
                            unknown_cursor=ApiError(errors.NOT_FOUND, f"{BAD_CURSOR_TEXT} {INBOX_DOCS}"))


# ---- wire shapes --------------------------------------------------------------------------------

async def inbox_counts(tx: Tx, inbox_id: str) -> dict[str, Any]:
    """`unread`: unread threads in the Inbox folder; `drafts`: unsent drafts; `last_received`: newest
    received message in the Inbox folder [sdk]. Counted on read, so they cannot drift."""
    unread = await tx.one(
        "SELECT COUNT(DISTINCT t.id) AS n FROM inbox_threads t JOIN inbox_messages m ON m.thread_id = t.id"
        " WHERE t.inbox_id = ? AND t.folder = 'inbox' AND m.read = 0", (inbox_id,))
    drafts = await tx.one("SELECT COUNT(*) AS n FROM inbox_drafts WHERE inbox_id = ? AND email_id IS NULL",
                          (inbox_id,))
    last = await tx.one(
        "SELECT MAX(m.received_at) AS at FROM inbox_threads t JOIN inbox_messages m ON m.thread_id = t.id"
        " WHERE t.inbox_id = ? AND t.folder = 'inbox' AND m.direction = 'inbound'", (inbox_id,))
    assert unread is not None and drafts is not None and last is not None
    return {"unread": unread["n"], "drafts": drafts["n"], "last_received": ts(last["at"])}


async def inbox_body(tx: Tx, row: Row) -> dict[str, Any]:
    counts = await inbox_counts(tx, row["id"])
    return {"object": "inbox", "id": row["id"], "name": row["name"], "email_address": row["email_address"],
            "domain_id": row["domain_id"], "receiving_address": row["receiving_address"],
            "from_name": row["from_name"], **counts, "created_at": ts(row["created_at"]),
            "updated_at": ts(row["updated_at"])}


async def inbox_item(tx: Tx, row: Row) -> dict[str, Any]:
    # The docs list six keys; the SDK's InboxListItem also declares created_at and updated_at.
    counts = await inbox_counts(tx, row["id"])
    return {"id": row["id"], "name": row["name"], "email_address": row["email_address"],
            "from_name": row["from_name"], "unread": counts["unread"],
            "last_received": counts["last_received"],
            "created_at": ts(row["created_at"]), "updated_at": ts(row["updated_at"])}


async def thread_labels(tx: Tx, thread_id: str) -> list[dict[str, Any]]:
    rows = await tx.all("SELECT l.id, l.name, l.color FROM inbox_thread_labels tl JOIN inbox_labels l"
                        " ON l.id = tl.label_id WHERE tl.thread_id = ? ORDER BY tl.seq", (thread_id,))
    return [{"id": row["id"], "name": row["name"], "color": row["color"]} for row in rows]


async def thread_messages(tx: Tx, thread_id: str) -> list[Row]:
    return await tx.all("SELECT * FROM inbox_messages WHERE thread_id = ? ORDER BY seq", (thread_id,))


async def thread_summary(tx: Tx, row: Row) -> dict[str, Any]:
    """`{object, id, subject, folder, labels, read}`: PATCH's answer and the embedded webhook `thread`."""
    unread = await tx.one("SELECT COUNT(*) AS n FROM inbox_messages WHERE thread_id = ? AND read = 0",
                          (row["id"],))
    assert unread is not None
    return {"object": "inbox_thread", "id": row["id"], "subject": row["subject"], "folder": row["folder"],
            "labels": await thread_labels(tx, row["id"]), "read": unread["n"] == 0}


def message_meta(row: Row) -> dict[str, Any]:
    """The message shape without its bodies (the embedded webhook `email`)."""
    return {"id": row["id"], "direction": row["direction"], "from": row["from_addr"],
            "to": loads(row["to_addrs"]), "cc": loads(row["cc"]), "bcc": loads(row["bcc"]),
            "reply_to": loads(row["reply_to"]), "subject": row["subject"], "message_id": row["message_id"],
            "attachments": loads(row["attachments"]), "read": bool(row["read"]),
            "received_at": ts(row["received_at"])}


def message_body(row: Row) -> dict[str, Any]:
    """Seed §2.8 message shape, keys in the documented order."""
    meta = message_meta(row)
    body = {key: meta[key] for key in ("id", "direction", "from", "to", "cc", "bcc", "reply_to", "subject",
                                       "message_id")}
    body.update({"html": row["html"], "text": row["text"], "attachments": meta["attachments"],
                 "read": meta["read"], "received_at": meta["received_at"]})
    return body


def draft_meta(row: Row) -> dict[str, Any]:
    """The single-draft shape without html/text (the embedded webhook `draft`)."""
    return {"object": "inbox_draft", "id": row["id"], "type": row["type"], "to": loads(row["to_addrs"]),
            "cc": loads(row["cc"]), "bcc": loads(row["bcc"]), "subject": row["subject"],
            "thread_id": row["thread_id"], "reply_to_email_id": row["reply_to_email_id"],
            "email_id": row["email_id"], "created_at": ts(row["created_at"]),
            "updated_at": ts(row["updated_at"])}
