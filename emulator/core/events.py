"""The event catalogue's bus. Resource services call `emit()` inside their transaction.

`emit` stores the event and lets in-transaction hooks (webhook deliveries) add their rows to the same
transaction; listeners (the UI's live updates, waiters) hear of it only after commit, so a rolled-back
request emits nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from emulator.core.jsontext import compact

if TYPE_CHECKING:
    from emulator.core.db import Tx

# `id` is not UNIQUE: only `emit` writes it, from the deterministic id sequence, and nothing looks an
# event up by it (timelines go by subject, webhook messages keep their own copy). Without the index each
# event is one random B-tree insert cheaper, two per send (issue 28). Files from before keep theirs.
TABLES = [
    """CREATE TABLE IF NOT EXISTS events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL,
        account TEXT NOT NULL,
        type TEXT NOT NULL,
        subject_id TEXT,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS events_subject ON events (account, subject_id)",
]

Event = dict[str, Any]
TxHook = Callable[["Tx", Event], Awaitable[None]]
Listener = Callable[[Event], None]


class EventBus:
    def __init__(self) -> None:
        self.tx_hooks: list[TxHook] = []
        self.listeners: list[Listener] = []

    def on_emit(self, hook: TxHook) -> None:
        """Run `hook(tx, event)` inside the emitting transaction."""
        self.tx_hooks.append(hook)

    def listen(self, listener: Listener) -> None:
        """Call `listener(event)` after the emitting transaction commits."""
        self.listeners.append(listener)

    def unlisten(self, listener: Listener) -> None:
        if listener in self.listeners:
            self.listeners.remove(listener)

    def _publish(self, event: Event) -> None:
        for listener in list(self.listeners):
            listener(event)


async def emit(tx: Tx, event_type: str, data: dict[str, Any], subject_id: str | None = None,
               context: dict[str, Any] | None = None) -> Event:
    """Record `event_type` with its payload `data` (the webhook `data` object) for `tx.account`.

    `subject_id` names the resource the event is about (an email id, a domain id) so timelines can
    find it. `context` carries facts for in-transaction hooks that the payload lacks (an email's cc and
    bcc recipients); it is not stored. The returned event carries `id`, `type`, `created_at`
    (datetime), `account`, `data`, `context`.
    """
    event: Event = {
        "id": tx.new_id(),
        "context": context or {},
        "account": tx.account,
        "type": event_type,
        "subject_id": subject_id,
        "created_at": tx.now,
        "data": data,
    }
    await tx.insert("events", {
        "id": event["id"], "account": tx.account, "type": event_type, "subject_id": subject_id,
        "created_at": tx.now_db, "data": compact(data),
    })
    bus: EventBus = tx.emu.events
    for hook in bus.tx_hooks:
        await hook(tx, event)
    tx.after_commit(lambda: bus._publish(event))
    return event


def notify(tx: Tx, subject_id: str) -> None:
    """Tell listeners (live UI, outbox waiters) after commit that `subject_id` changed in a way no
    catalogue event describes (a cancel, a reschedule). Nothing is stored and no webhook fires."""
    notice: Event = {"id": None, "context": {}, "account": tx.account, "type": "emulator.changed",
                     "subject_id": subject_id, "created_at": tx.now, "data": {}}
    bus: EventBus = tx.emu.events
    tx.after_commit(lambda: bus._publish(notice))
