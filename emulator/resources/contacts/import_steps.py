"""Processing an uploaded CSV import: a stream over the stored file, ROWS_PER_SECOND rows a second of
emulator time.

The upload stores the file as UTF-8 bytes in parts of PART_BYTES (`contact_import_parts`), so a step
reads only the parts under its cursor, never the whole file. The cursor is a byte offset into the file
(`options.position` of the import row). The rows fall due in parts: ROWS_PER_SECOND at upload + 1 s,
as many a second later, and so on (`options.due`: when the next part falls due). A step runs the parts
due by its `now`, each stamped with its own due time, in slices with breaths between (a long
transaction, core/db.py) until it is `long_enough`; it writes their contacts and memberships and
moves the cursor, the counts and `due` in the same transaction: after a crash the step that runs again
starts where the last committed one stopped, so no row is read or counted twice. A clock jumped a
minute ahead thus imports 30 000 rows in a few transactions, not sixty. Parts behind the cursor are
dropped as the import moves on; the last step drops the rest.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from emulator.core.addresses import valid_address
from emulator.core.clock import from_db, to_db
from emulator.core.events import notify
from emulator.core.jobs import DONE, MORE
from emulator.core.typed import number_or_none
from emulator.resources.contacts.store import email_key

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

JOB = "contacts.import"
# The pace on the emulator clock: `in_progress` one second after the upload, then this many rows per
# second (the reference gives no rate; its example completes 3 rows 4.5 s after upload).
ROWS_PER_SECOND = 500
PART_BYTES = 64 * 1024
TRUE, FALSE = {"true", "1", "yes", "y", "t"}, {"false", "0", "no", "n", "f"}
CONTACT_COLUMNS = ("id", "account", "email", "email_key", "first_name", "last_name", "unsubscribed",
                   "properties", "created_at", "updated_at")
INSERT_CONTACT = (f"INSERT INTO contacts ({', '.join(CONTACT_COLUMNS)})"
                  f" VALUES ({', '.join('?' for _ in CONTACT_COLUMNS)})")
JOIN_SEGMENT = ("INSERT OR IGNORE INTO segment_contacts (account, segment_id, contact_id, created_at)"
                " VALUES (?, ?, ?, ?)")
CHOOSE_TOPIC = ("INSERT INTO contact_topics (account, contact_id, topic_id, subscription, updated_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (account, contact_id, topic_id)"
                " DO UPDATE SET subscription = excluded.subscription, updated_at = excluded.updated_at")

TABLES = [
    """CREATE TABLE IF NOT EXISTS contact_import_parts (
        import_id TEXT NOT NULL,
        part INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (import_id, part)
    ) WITHOUT ROWID""",
]


# ---- the stored file ---------------------------------------------------------------------------

def rows_of(data: bytes, complete: bool) -> Iterator[tuple[int, list[str]]]:
    """(bytes of `data` read after the row, cells) of each row. With `complete` False, `data` may stop
    inside a row: a cut last line is left out, and the caller must not trust a row ending at the end."""
    lines = data.splitlines(keepends=True)
    if not complete and lines and not lines[-1].endswith((b"\n", b"\r")):
        lines.pop()
    consumed = 0

    def feed() -> Iterator[str]:
        nonlocal consumed
        for line in lines:
            consumed += len(line)  # the reader asks for a line only when its row needs it
            yield line.decode("utf-8")

    for cells in csv.reader(feed()):
        yield consumed, cells


def blank(cells: list[str]) -> bool:
    return not any(cell.strip() for cell in cells)


# A contact is an email, two names, a flag and its properties: CRM exports with every custom field run to
# a few hundred columns, so 1 000 is room for them, and a row of a million empty cells is refused.
MAX_COLUMNS = 1000
# The longest value a contact holds is a string property (a note of a few paragraphs); 10 000 characters
# is room for that, well under the csv module's own 131 072 (past which it stops reading).
MAX_FIELD_CHARS = 10_000


def check_row(cells: list[str], number: int) -> None:
    """csv.Error naming the bound a row breaks (row 1 is the header)."""
    if len(cells) > MAX_COLUMNS:
        raise csv.Error(f"row {number} has {len(cells)} columns, more than the {MAX_COLUMNS} allowed")
    if cells and max(map(len, cells)) > MAX_FIELD_CHARS:
        raise csv.Error(f"row {number} has a field longer than {MAX_FIELD_CHARS} characters")


def scan(data: bytes) -> tuple[int, int]:
    """(byte offset after the header row, number of data rows) of a whole file; csv.Error if unreadable
    or if a row is wider, or a field longer, than the bounds above."""
    rows = rows_of(data, complete=True)
    start, header = next(rows, (len(data), []))
    check_row(header, 1)
    total = 0
    for number, (_, cells) in enumerate(rows, start=2):
        check_row(cells, number)
        total += not blank(cells)
    return start, total


async def store_file(tx: Tx, import_id: str, data: bytes) -> None:
    await tx.many("INSERT INTO contact_import_parts (import_id, part, data) VALUES (?, ?, ?)",
                  [(import_id, start // PART_BYTES, data[start:start + PART_BYTES])
                   for start in range(0, len(data), PART_BYTES)])


async def _read(tx: Tx, import_id: str, start: int, length: int) -> bytes:
    """The stored bytes from `start`, at least `length` of them unless the file ends first."""
    first, last = start // PART_BYTES, (start + length) // PART_BYTES
    parts = await tx.all("SELECT data FROM contact_import_parts WHERE import_id = ? AND part BETWEEN ? AND ?"
                         " ORDER BY part", (import_id, first, last))
    return b"".join(part["data"] for part in parts)[start - first * PART_BYTES:]


# ---- one step ----------------------------------------------------------------------------------

def _cell(cells: list[str], index: int | None) -> str | None:
    if index is None or index >= len(cells):
        return None
    value = cells[index].strip()
    return value or None


def flag(value: str) -> bool:
    lowered = value.lower()
    if lowered not in TRUE | FALSE:
        raise ValueError(value)
    return lowered in TRUE


def _typed(value: str, kind: str) -> Any:
    if kind == "number":
        number = number_or_none(value)  # not `٣`, `1_0`, `inf`
        if number is None:
            raise ValueError(value)
        return int(number) if number.is_integer() and "." not in value else number
    if kind == "boolean":
        return flag(value)
    return value


def parse_row(cells: list[str], mapped: dict[str, Any]) -> dict[str, Any] | None:
    """The contact fields of a row, or None when the row is invalid (counted as failed)."""
    email = _cell(cells, mapped["email"])
    if email is None or not valid_address(email) or "<" in email:
        return None
    values: dict[str, Any] = {"email": email}
    try:
        for field in ("first_name", "last_name", "unsubscribed"):
            value = _cell(cells, mapped.get(field))
            if value is not None:
                values[field] = int(flag(value)) if field == "unsubscribed" else value
        props = {}
        for key, spec in mapped["properties"].items():
            value = _cell(cells, spec["index"])
            if value is not None:
                props[key] = _typed(value, spec["type"])
    except ValueError:
        return None
    values["properties"] = props
    return values


async def _take(tx: Tx, import_id: str, options: dict[str, Any],
                counts: dict[str, int]) -> tuple[list[dict[str, Any]], bool]:
    """Up to ROWS_PER_SECOND rows from the cursor: the valid ones parsed (bad ones counted as failed).
    Moves the cursor past them; True when the file is through."""
    position, size, window = options["position"], options["size"], 4 * PART_BYTES
    while True:
        data = await _read(tx, import_id, position, window)
        complete = position + len(data) >= size
        parsed: list[dict[str, Any]] = []
        taken = used = 0
        for after, cells in rows_of(data, complete):
            if not complete and after >= len(data):
                break  # may be cut by the window: the next read starts with it
            used = after
            if blank(cells):
                continue
            item = parse_row(cells, options["map"])
            if item is None:
                counts["failed"] += 1
            else:
                parsed.append(item)
            taken += 1
            if taken >= ROWS_PER_SECOND:
                break
        if used or complete:
            break
        window *= 2  # one row longer than the window
    options["position"] = position + used
    through = complete and not data[used:].strip()
    return parsed, through


async def _live_targets(tx: Tx) -> set[str]:
    """Targets were checked at upload; one deleted since then is skipped."""
    rows = await tx.all("SELECT id FROM topics WHERE account = ? UNION ALL SELECT id FROM segments"
                        " WHERE account = ?", (tx.account, tx.account))
    return {row["id"] for row in rows}


async def _apply(tx: Tx, parsed: list[dict[str, Any]], options: dict[str, Any],
                 counts: dict[str, int], stamp: str) -> None:
    """Write the rows' contacts, then their memberships: each kind as one statement over many rows,
    stamped `stamp` (the stored form of their part's due time)."""
    live = await _live_targets(tx)
    keys = list({email_key(item["email"]) for item in parsed})
    existing = {row["email_key"]: row for row in await tx.all(
        f"SELECT * FROM contacts WHERE account = ? AND email_key IN ({', '.join('?' for _ in keys)})",
        (tx.account, *keys))}
    created: dict[str, Row] = {}
    touched: list[str] = []
    for item in parsed:
        key = email_key(item["email"])
        row = existing.get(key)
        if row is not None and options["on_conflict"] == "skip":
            counts["skipped"] += 1
            continue
        props = item.pop("properties")
        if row is None:
            row = created[key] = {"id": tx.new_id(), "account": tx.account, "email_key": key,
                                  "first_name": None, "last_name": None, "unsubscribed": 0, **item,
                                  "properties": json.dumps(props), "created_at": stamp,
                                  "updated_at": stamp}
            counts["created"] += 1
        else:
            merged = json.dumps({**json.loads(row["properties"]), **props})
            changes = {**item, "properties": merged, "updated_at": stamp}
            if key in created:
                row.update(changes)  # a repeat of a row this step creates: fold it into the insert
            else:
                await tx.update("contacts", row["id"], changes)
                row = {**row, **changes}
            counts["updated"] += 1
        existing[key] = row
        touched.append(row["id"])
    await tx.many(INSERT_CONTACT, [tuple(row[column] for column in CONTACT_COLUMNS)
                                   for row in created.values()])
    await tx.many(JOIN_SEGMENT, [(tx.account, segment_id, contact_id, stamp)
                                 for contact_id in touched for segment_id in options["segments"]
                                 if segment_id in live])
    await tx.many(CHOOSE_TOPIC, [(tx.account, contact_id, topic_id, subscription, stamp)
                                 for contact_id in touched for topic_id, subscription in options["topics"]
                                 if topic_id in live])


async def _from_legacy_row(tx: Tx, row: Row, options: dict[str, Any]) -> None:
    """An import stored by an earlier version kept its whole file as text: move it to parts once."""
    text: str = row["csv"]
    data = text.encode()
    options["position"], options["size"] = len(text[:options["position"]].encode()), len(data)
    await store_file(tx, row["id"], data)


async def run_step(tx: Tx, job: dict[str, Any]) -> datetime | str | None:
    """The parts due by now, oldest first, until the transaction is long enough: `completed` once the file
    is through;
    MORE while parts are still due; else the time the next part falls due."""
    row = await tx.one("SELECT id, status, options, counts, csv FROM contact_imports"
                       " WHERE account = ? AND id = ?",
                       (tx.account, job["payload"]["import_id"]))
    if row is None or row["status"] in ("completed", "failed"):
        return DONE
    options, counts = json.loads(row["options"]), json.loads(row["counts"])
    if "size" not in options:
        await _from_legacy_row(tx, row, options)
    due = from_db(options.get("due") or job["due_at"])
    finished, through = due, False
    while due <= tx.now and not through:
        parsed, through = await _take(tx, row["id"], options, counts)
        if parsed:
            await _apply(tx, parsed, options, counts, to_db(due))
        finished, due = due, due + timedelta(seconds=1)
        if tx.long_enough:
            break
        await tx.breathe()
    options["due"] = to_db(due)
    await tx.update("contact_imports", row["id"], {
        "status": "completed" if through else "in_progress",
        "completed_at": to_db(finished) if through else None,
        "counts": json.dumps(counts), "options": json.dumps(options), "csv": ""})
    notify(tx, row["id"])  # for the live UI: imports emit no catalogue events
    if through:
        tx.queue("DELETE FROM contact_import_parts WHERE import_id = ?", (row["id"],))
        return DONE
    tx.queue("DELETE FROM contact_import_parts WHERE import_id = ? AND part < ?",
             (row["id"], options["position"] // PART_BYTES))
    return MORE if due <= tx.now else due
