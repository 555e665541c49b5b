"""Labels: names a QA engineer puts on sent mail by hand ("checked", "bug-1234"), unlike the `tags` the
sender gave (issue 39). Searchable as `label:NAME` (search.py), shown in the list and the message view.
Routes (control/outbox_labels.py):

    GET    /_emulator/outbox/{id}/labels            {"object": "list", "data": ["checked", ...]}
    POST   /_emulator/outbox/{id}/labels            {"labels": ["checked"]} (or {"label": "checked"}): added
    DELETE /_emulator/outbox/{id}/labels/{name}     removed

A label is 1 to MAX_CHARS characters, spaces inside it kept (collapsed to one), no quote mark (it could
not be searched for) and no control character; an email holds at most MAX_PER_EMAIL. Labels compare by
Unicode case folding: `Checked` and `checked` are one label, shown as first written. They go with their
email (deletion.py, retention.py) and with a reset.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any

from emulator.core.errors import invalid
from emulator.core.events import notify

if TYPE_CHECKING:
    from emulator.core.db import Tx

TABLES = [
    """CREATE TABLE IF NOT EXISTS email_labels (
        email_id TEXT NOT NULL,
        folded TEXT NOT NULL,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (email_id, folded)
    ) WITHOUT ROWID""",
]
MAX_CHARS = 40
MAX_PER_EMAIL = 20


def normal(name: Any) -> str:
    """The label as stored, or a 422 saying what is wrong with it."""
    if not isinstance(name, str):
        raise invalid("A label must be a string.")
    text = " ".join(name.split())
    if not text:
        raise invalid("A label needs at least one character.")
    if len(text) > MAX_CHARS:
        raise invalid(f"A label takes at most {MAX_CHARS} characters.")
    if '"' in text or any(unicodedata.category(char) in ("Cc", "Cf") for char in text):
        raise invalid("A label cannot hold a quote mark or a control character.")
    return text


def folded(name: str) -> str:
    return unicodedata.normalize("NFKC", " ".join(name.split()).casefold())


def clause(value: str) -> tuple[str, list[Any]]:
    """`label:NAME` over the emails table."""
    return ("EXISTS (SELECT 1 FROM email_labels l WHERE l.email_id = emails.id"
            " AND l.account = emails.account AND l.folded = ?)"), [folded(value)]


async def labels_of(tx: Tx, email_id: str) -> list[str]:
    rows = await tx.all("SELECT name FROM email_labels WHERE email_id = ? AND account = ?"
                        " ORDER BY created_at, folded", (email_id, tx.account))
    return [row["name"] for row in rows]


async def labels_for(tx: Tx, ids: list[str]) -> dict[str, list[str]]:
    """The labels of each of these emails (of the transaction's account), for a list page."""
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = await tx.all(f"SELECT email_id, name FROM email_labels WHERE account = ? AND email_id IN ({marks})"
                        " ORDER BY created_at, folded", (tx.account, *ids))
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(row["email_id"], []).append(row["name"])
    return found


async def add(tx: Tx, email_id: str, names: list[Any]) -> list[str]:
    """Add these labels to one email of the account (callers check it exists); its labels after."""
    held = await labels_of(tx, email_id)
    known = {folded(name) for name in held}
    new: list[str] = []
    for name in map(normal, names):  # one label per folded form, as first written
        if folded(name) not in known:
            known.add(folded(name))
            new.append(name)
    if len(held) + len(new) > MAX_PER_EMAIL:
        raise invalid(f"An email holds at most {MAX_PER_EMAIL} labels; this one has {len(held)}.")
    for name in new:
        await tx.run("INSERT OR IGNORE INTO email_labels (email_id, folded, account, name, created_at)"
                     " VALUES (?, ?, ?, ?, ?)", (email_id, folded(name), tx.account, name, tx.now_db))
    notify(tx, "outbox")
    return [*held, *new]


async def remove(tx: Tx, email_id: str, name: str) -> list[str]:
    await tx.run("DELETE FROM email_labels WHERE email_id = ? AND account = ? AND folded = ?",
                 (email_id, tx.account, folded(name)))
    notify(tx, "outbox")
    return await labels_of(tx, email_id)
