"""The `inbox.*` webhook events (reference/webhooks.md §6.8).

Every payload carries `source` and `inbox_id`; keys that do not apply are left out, never null, and
embedded objects never carry `html`/`text`. Objects are read when the event is emitted, so they show
the state at that moment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.core.events import emit
from emulator.resources.inboxes.store import draft_meta, inbox_body, message_meta, thread_summary

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx


async def inbox_event(tx: Tx, kind: str, inbox: Row, source: str) -> None:
    data: dict[str, Any] = {"source": source, "inbox_id": inbox["id"]}
    if kind != "inbox.deleted":
        data["inbox"] = {key: value for key, value in (await inbox_body(tx, inbox)).items()
                         if key != "updated_at"}
    await emit(tx, kind, data, subject_id=inbox["id"])


async def thread_event(tx: Tx, kind: str, thread: Row, source: str, **extra: Any) -> None:
    """`inbox.thread.folder.updated` (extra `from`, `to`) and `inbox.thread.labels.updated`
    (extra `added`, `removed`)."""
    data = {**extra, "source": source, "inbox_id": thread["inbox_id"], "thread_id": thread["id"],
            "thread": await thread_summary(tx, thread)}
    await emit(tx, kind, data, subject_id=thread["id"])


async def email_event(tx: Tx, kind: str, thread: Row, message: Row, source: str) -> None:
    """`inbox.thread.created`, `inbox.email.received`, `inbox.email.sent`."""
    data = {"source": source, "inbox_id": thread["inbox_id"], "thread_id": thread["id"],
            "email_id": message["id"], "thread": await thread_summary(tx, thread),
            "email": message_meta(message)}
    await emit(tx, kind, data, subject_id=message["id"])


async def draft_event(tx: Tx, kind: str, draft: Row, source: str, thread: Row | None,
                      message: Row | None = None) -> None:
    """`inbox.draft.*`: thread keys only for reply drafts (or a sent draft's new thread); no `draft`
    object on delete; `email` on `draft.sent` only when the message is already on the thread."""
    data: dict[str, Any] = {"source": source, "inbox_id": draft["inbox_id"]}
    if thread is not None:
        data["thread_id"] = thread["id"]
    if kind == "inbox.draft.sent":
        data["email_id"] = draft["email_id"]
    data["draft_id"] = draft["id"]
    if thread is not None:
        data["thread"] = await thread_summary(tx, thread)
    if kind != "inbox.draft.deleted":
        data["draft"] = draft_meta(draft)
    if message is not None:
        data["email"] = message_meta(message)
    await emit(tx, kind, data, subject_id=draft["id"])
