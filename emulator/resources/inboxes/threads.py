"""Threads: list, get, update (read, folder, label), delete to trash (purged 30 days later), and the
labels on a thread (reference/inboxes.md §3.5, §3.7; seed §2.8). How mail joins them: filing.py."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest
from emulator.core import validate
from emulator.core.clock import from_db, to_db
from emulator.core.errors import invalid
from emulator.core.jobs import schedule
from emulator.core.pages import list_body
from emulator.resources.inboxes import filters
from emulator.resources.inboxes.events import thread_event
from emulator.resources.inboxes.store import (
    MOVABLE_FOLDERS,
    loads,
    message_body,
    require_inbox,
    require_label,
    require_thread,
    seek,
    thread_labels,
    thread_messages,
    thread_summary,
    ts,
)

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TRASH_LIFETIME = timedelta(days=30)
PURGE_JOB = "inbox.thread.purge"


# ---- list ---------------------------------------------------------------------------------------

async def list_item(tx: Tx, thread: Row) -> dict[str, Any]:
    """[docs] list item; the SDK calls the count `email_count` and adds `folder`: both are served."""
    messages = await thread_messages(tx, thread["id"])
    last = messages[-1]
    draft = await tx.one("SELECT id FROM inbox_drafts WHERE thread_id = ? AND email_id IS NULL LIMIT 1",
                         (thread["id"],))
    return {"id": thread["id"], "subject": thread["subject"], "from": last["from_addr"],
            "to": loads(last["to_addrs"]), "cc": loads(last["cc"]), "bcc": loads(last["bcc"]),
            "labels": await thread_labels(tx, thread["id"]), "message_count": len(messages),
            "email_count": len(messages), "has_attachment": bool(loads(last["attachments"])),
            "has_draft": draft is not None, "read": all(m["read"] for m in messages),
            "received_at": ts(thread["active_at"]), "folder": thread["folder"]}


UNREAD = "EXISTS (SELECT 1 FROM inbox_messages m WHERE m.thread_id = inbox_threads.id AND m.read = 0)"
# [sdk] A thread is listed under every folder one of its emails is in: a conversation in the Inbox or
# Archive that the inbox answered also shows under `sent`.
ANSWERED = ("(folder IN ('inbox', 'archive') AND EXISTS (SELECT 1 FROM inbox_messages m WHERE"
            " m.thread_id = inbox_threads.id AND m.direction = 'outbound'))")


def thread_where(inbox: Row, folders: list[str], labels: list[str] | None,
                 read: bool | None) -> tuple[list[str], list[Any]]:
    """The thread-level conditions shared by list and search."""
    in_folders = f"folder IN ({','.join('?' for _ in folders)})"
    where = ["inbox_id = ?", f"({in_folders} OR {ANSWERED})" if "sent" in folders else in_folders]
    params: list[Any] = [inbox["id"], *folders]
    if labels:
        where.append(f"id IN (SELECT thread_id FROM inbox_thread_labels WHERE label_id IN"
                     f" ({','.join('?' for _ in labels)}))")
        params += labels
    if read is not None:
        where.append(f"NOT {UNREAD}" if read else UNREAD)
    return where, params


async def list_threads(tx: Tx, inbox_id: str, query: Any) -> dict[str, Any]:
    inbox = await require_inbox(tx, inbox_id)
    text = filters.text_query(query)
    labels = await filters.labels(tx, inbox, query)
    where, params = thread_where(inbox, filters.folders(query, labels is not None), labels,
                                 filters.flag(query, "read"))
    if text is not None:
        # [docs] case-insensitive substring of the subject and of the thread's label names.
        where.append("(LOWER(COALESCE(subject, '')) LIKE ? OR id IN (SELECT tl.thread_id FROM"
                     " inbox_thread_labels tl JOIN inbox_labels l ON l.id = tl.label_id WHERE"
                     " LOWER(l.name) LIKE ?))")
        needle = "%" + text.lower().replace("%", "").replace("_", "") + "%"
        params += [needle, needle]
    rows, has_more = await seek(tx, "inbox_threads", filters.page(query), " AND ".join(where), params)
    return list_body([await list_item(tx, row) for row in rows], has_more)


# ---- one thread ---------------------------------------------------------------------------------

async def get_thread(tx: Tx, inbox_id: str, thread_id: str) -> dict[str, Any]:
    """Seed §2.8/§4.3: the thread with its whole history, oldest message first."""
    thread = await require_thread(tx, await require_inbox(tx, inbox_id), thread_id)
    body = await thread_summary(tx, thread)
    body["messages"] = [message_body(row) for row in await thread_messages(tx, thread["id"])]
    return body


async def move(tx: Tx, thread: Row, folder: str, source: str) -> Row:
    if folder == thread["folder"]:
        return thread
    trash_until = tx.now + TRASH_LIFETIME if folder == "trash" else None
    changes = {"folder": folder, "trash_until": to_db(trash_until) if trash_until else None}
    await tx.update("inbox_threads", thread["id"], changes)
    if trash_until is not None:
        await schedule(tx, PURGE_JOB, trash_until, {"thread_id": thread["id"]})
    moved = {**thread, **changes}
    await thread_event(tx, "inbox.thread.folder.updated", moved, source,
                       **{"from": thread["folder"], "to": folder})
    return moved


async def update_thread(tx: Tx, inbox_id: str, thread_id: str, body: dict[str, Any],
                        source: str = "api") -> dict[str, Any]:
    inbox = await require_inbox(tx, inbox_id)
    thread = await require_thread(tx, inbox, thread_id)
    if all(body.get(key) is None for key in ("read", "folder", "label_id")):
        raise invalid("Provide at least one of `read`, `folder` or `label_id`.")
    read = validate.boolean(body, "read")
    folder = validate.one_of(body, "folder", MOVABLE_FOLDERS)
    label = await require_label(tx, inbox, str(body["label_id"])) if body.get("label_id") else None
    if read is not None:  # [sdk] read first, then folder
        await tx.run("UPDATE inbox_messages SET read = ? WHERE thread_id = ?", (int(read), thread["id"]))
    if folder is not None:
        thread = await move(tx, thread, folder, source)
    if label is not None:
        await add_labels(tx, thread, [label], source)
    return await thread_summary(tx, thread)


async def delete_thread(tx: Tx, inbox_id: str, thread_id: str, source: str = "api") -> dict[str, Any]:
    """To trash for 30 days; `deleted` is false when the thread was already there [docs]."""
    thread = await require_thread(tx, await require_inbox(tx, inbox_id), thread_id)
    moved = thread["folder"] != "trash"
    await move(tx, thread, "trash", source)
    return {"object": "inbox_thread", "id": thread["id"], "deleted": moved}


async def purge(tx: Tx, job: dict[str, Any]) -> None:
    """A thread still in trash when its 30 days are up is deleted with its messages and drafts;
    one moved out meanwhile has no deadline any more and stays."""
    thread = await tx.one("SELECT * FROM inbox_threads WHERE id = ? AND account = ?",
                          (job["payload"]["thread_id"], tx.account))
    if thread is None or thread["trash_until"] is None or from_db(thread["trash_until"]) > tx.now:
        return
    await tx.run("DELETE FROM inbox_draft_files WHERE draft_id IN (SELECT id FROM inbox_drafts"
                 " WHERE thread_id = ?)", (thread["id"],))
    for table, column in (("inbox_thread_labels", "thread_id"), ("inbox_messages", "thread_id"),
                          ("inbox_drafts", "thread_id"), ("inbox_threads", "id")):
        await tx.run(f"DELETE FROM {table} WHERE {column} = ?", (thread["id"],))


# ---- labels on a thread -------------------------------------------------------------------------

async def add_labels(tx: Tx, thread: Row, labels: list[Row], source: str) -> None:
    present = {label["id"] for label in await thread_labels(tx, thread["id"])}
    for label in labels:
        if label["id"] in present:
            continue
        present.add(label["id"])
        await tx.insert("inbox_thread_labels", {"thread_id": thread["id"], "label_id": label["id"]})
        await thread_event(tx, "inbox.thread.labels.updated", thread, source,
                           added=[_label(label)], removed=[])


async def remove_labels(tx: Tx, thread: Row, label_ids: list[str], source: str) -> None:
    for label in await thread_labels(tx, thread["id"]):
        if label["id"] in label_ids:
            await tx.run("DELETE FROM inbox_thread_labels WHERE thread_id = ? AND label_id = ?",
                         (thread["id"], label["id"]))
            await thread_event(tx, "inbox.thread.labels.updated", thread, source, added=[], removed=[label])


def _label(row: Row) -> dict[str, Any]:
    return {"id": row["id"], "name": row["name"], "color": row["color"]}


async def _label_rows(tx: Tx, inbox: Row, body: dict[str, Any], low: int, high: int) -> list[Row]:
    ids = body.get("labels")
    if ids is None:
        raise invalid("Missing `labels` field.")
    if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
        raise invalid("The `labels` field must be an array of label IDs.")
    if not low <= len(ids) <= high:
        raise invalid(f"The `labels` field must contain between {low} and {high} label IDs.")
    return [await require_label(tx, inbox, label_id) for label_id in ids]


async def change_thread_labels(tx: Tx, inbox_id: str, thread_id: str, body: dict[str, Any], replace: bool,
                               source: str = "api") -> dict[str, Any]:
    """[sdk] POST adds 1..10 labels; PUT replaces them all (0..100). Unknown label: 404, no change."""
    inbox = await require_inbox(tx, inbox_id)
    thread = await require_thread(tx, inbox, thread_id)
    labels = await _label_rows(tx, inbox, body, 0 if replace else 1, 100 if replace else 10)
    if replace:
        keep = {label["id"] for label in labels}
        current = [label["id"] for label in await thread_labels(tx, thread["id"])]
        await remove_labels(tx, thread, [label_id for label_id in current if label_id not in keep], source)
    await add_labels(tx, thread, labels, source)
    return {"object": "list", "data": await thread_labels(tx, thread["id"])}


async def remove_thread_label(tx: Tx, inbox_id: str, thread_id: str, label_id: str,
                              source: str = "api") -> dict[str, Any]:
    inbox = await require_inbox(tx, inbox_id)
    thread = await require_thread(tx, inbox, thread_id)
    label = await require_label(tx, inbox, label_id)
    await remove_labels(tx, thread, [label["id"]], source)
    return {"object": "list", "data": await thread_labels(tx, thread["id"])}


# ---- HTTP ---------------------------------------------------------------------------------------

async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_threads(tx, req.params["inbox_id"], req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_thread(tx, req.params["inbox_id"], req.params["thread_id"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_thread(tx, req.params["inbox_id"], req.params["thread_id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_thread(tx, req.params["inbox_id"], req.params["thread_id"])


async def http_add_labels(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await change_thread_labels(tx, req.params["inbox_id"], req.params["thread_id"],
                                      req.json_object(), replace=False)


async def http_set_labels(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await change_thread_labels(tx, req.params["inbox_id"], req.params["thread_id"],
                                      req.json_object(), replace=True)


async def http_remove_label(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await remove_thread_label(tx, req.params["inbox_id"], req.params["thread_id"],
                                     req.params["label_id"])
