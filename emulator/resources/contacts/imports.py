"""CSV contact imports (reference contacts.md §9): upload, then rows processed on the emulator clock.

POST checks the form (file, column map, targets) and answers `queued`; a job takes the import to
`in_progress` one second later and processes ROWS_PER_SECOND rows per second of emulator time until
`completed` (tests advance the clock; nothing sleeps). A bad row is counted as `failed` and never
aborts the import; a file that cannot be read is refused at upload, so no import ends `failed`.
Imports emit no `contact.created` events [openapi][docs].
"""

from __future__ import annotations

import csv
import io
import json
import math
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, FormBody, Op
from emulator.core import errors
from emulator.core.addresses import valid_address
from emulator.core.errors import ApiError, invalid, missing_field, not_found
from emulator.core.jobs import schedule
from emulator.core.pages import UUID, fetch_page, list_body, parse_page
from emulator.resources.contacts import properties, segments, topics
from emulator.resources.contacts.store import email_key, millis, require_segment, require_topic

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

JOB = "contacts.import"
ROWS_PER_SECOND = 500
STATUSES = ("queued", "in_progress", "completed", "failed")
FIELDS = ("email", "first_name", "last_name", "unsubscribed")
CONFLICTS = ("upsert", "skip")
TRUE, FALSE = {"true", "1", "yes", "y", "t"}, {"false", "0", "no", "n", "f"}
EMPTY_COUNTS = {"total": 0, "created": 0, "updated": 0, "skipped": 0, "failed": 0}


def serialize(row: Row) -> dict[str, Any]:
    return {"object": "contact_import", "id": row["id"], "status": row["status"],
            "created_at": millis(row["created_at"]),
            "completed_at": millis(row["completed_at"]) if row["completed_at"] else None,
            "counts": json.loads(row["counts"])}


# ---- the form ----------------------------------------------------------------------------------

def _json_field(form: dict[str, Any], name: str) -> Any:
    value = form.get(name)
    if value is None or not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        raise invalid(f"The `{name}` field must be valid JSON.") from None


def _form_of(req: ApiRequest) -> tuple[str, dict[str, Any]]:
    """(CSV text, other fields) from multipart/form-data, or from JSON with `file` as CSV text."""
    if isinstance(req.body, FormBody):
        fields = req.body.fields
        if "file" not in fields:
            raise missing_field("file")
        return fields["file"].text, {name: item.text for name, item in fields.items() if name != "file"}
    body = req.json_object()
    if body.get("file") is None:
        raise missing_field("file")
    if not isinstance(body["file"], str):
        raise invalid("The `file` field must be a CSV file.")
    return body["file"], body


def _header(text: str) -> list[str]:
    try:
        header = next(csv.reader(io.StringIO(text)), None)
    except csv.Error:
        header = None
    if not header:
        raise invalid("The CSV file is empty or has no header row.")
    return [name.strip() for name in header]


def _column_map(given: Any, header: list[str]) -> dict[str, Any]:
    """The column index of each field and property; without a map, columns named like the fields."""
    if given is None:
        given = {name: column for name in FIELDS for column in header if column.lower() == name}
    if not isinstance(given, dict):
        raise invalid("The `column_map` field must be an `object`.")
    position = {name: index for index, name in reversed(list(enumerate(header)))}

    def index_of(column: Any, label: str) -> int:
        if not isinstance(column, str) or column.strip() not in position:
            raise invalid(f"The column `{column}` mapped to `{label}` is not in the CSV header.")
        return position[column.strip()]

    if given.get("email") is None:
        raise invalid("The `column_map` must map `email` to a column of the CSV file.")
    mapped: dict[str, Any] = {name: index_of(given[name], name) for name in FIELDS if given.get(name)}
    props = given.get("properties") or {}
    if not isinstance(props, dict):
        raise invalid("The `column_map.properties` field must be an `object`.")
    mapped["properties"] = {}
    for key, spec in props.items():
        column = spec.get("column") if isinstance(spec, dict) else spec
        kind = spec.get("type", "string") if isinstance(spec, dict) else "string"
        mapped["properties"][key] = {"index": index_of(column, f"properties.{key}"), "type": kind}
    return mapped


async def _check_properties(tx: Tx, mapped: dict[str, Any]) -> None:
    """Mapped keys must be contact properties of that type (the type may be left out)."""
    known = await properties.definitions(tx)
    for key, spec in mapped["properties"].items():
        row = known.get(key)
        if row is None:
            raise invalid(f"The property `{key}` does not exist."
                          " Create it with POST /contact-properties first.")
        if spec["type"] not in ("string", "number", "boolean"):
            raise invalid(f"Invalid type for property `{key}`."
                          " Must be one of: `string`, `number`, `boolean`.")
        if spec["type"] != row["type"]:
            raise invalid(f"The property `{key}` is a `{row['type']}`, not a `{spec['type']}`.")


async def create_import(tx: Tx, text: str, form: dict[str, Any]) -> dict[str, Any]:
    header = _header(text)
    mapped = _column_map(_json_field(form, "column_map"), header)
    await _check_properties(tx, mapped)
    on_conflict = form.get("on_conflict") or "skip"  # the OpenAPI's and the Python SDK's default
    if on_conflict not in CONFLICTS:
        raise invalid("Invalid `on_conflict` field. Must be one of: `upsert`, `skip`.")
    segment_ids = segments.segment_refs(_json_field(form, "segments"))
    for segment_id in segment_ids:
        await require_segment(tx, segment_id, "Segment")
    given_topics = _json_field(form, "topics")
    choices = topics.parse_choices(given_topics) if given_topics is not None else []
    for topic_id, _ in choices:
        await require_topic(tx, topic_id)
    try:
        total = sum(1 for _, cells in _rows(text, 0) if not _blank(cells))
    except csv.Error as exc:
        raise invalid(f"The CSV file could not be read: {exc}.") from None
    import_id = tx.new_id()
    options = {"map": mapped, "on_conflict": on_conflict, "segments": segment_ids, "topics": choices,
               "position": 0}
    await tx.insert("contact_imports", {
        "id": import_id, "account": tx.account, "status": "queued", "options": json.dumps(options),
        "csv": text, "counts": json.dumps({**EMPTY_COUNTS, "total": total}), "created_at": tx.now_db,
        "completed_at": None,
    })
    await schedule(tx, JOB, tx.now + timedelta(seconds=1), {"import_id": import_id})
    return {"object": "contact_import", "id": import_id}


# ---- processing --------------------------------------------------------------------------------

def _blank(cells: list[str]) -> bool:
    return not any(cell.strip() for cell in cells)


def _rows(text: str, position: int) -> Any:
    """(position after the row, cells) of each data row from `position` (0 = skip the header)."""
    stream = io.StringIO(text)
    stream.seek(position)
    reader = csv.reader(stream)
    if position == 0:
        next(reader, None)
    for cells in reader:
        yield stream.tell(), cells


def _cell(cells: list[str], index: int | None) -> str | None:
    if index is None or index >= len(cells):
        return None
    value = cells[index].strip()
    return value or None


def _typed(value: str, kind: str) -> Any:
    if kind == "number":
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(value)
        return int(number) if number.is_integer() and "." not in value else number
    if kind == "boolean":
        return _flag(value)
    return value


def _flag(value: str) -> bool:
    lowered = value.lower()
    if lowered not in TRUE | FALSE:
        raise ValueError(value)
    return lowered in TRUE


def _parse_row(cells: list[str], mapped: dict[str, Any]) -> dict[str, Any] | None:
    """The contact fields of a row, or None when the row is invalid (counted as failed)."""
    email = _cell(cells, mapped["email"])
    if email is None or not valid_address(email) or "<" in email:
        return None
    values: dict[str, Any] = {"email": email}
    try:
        for field in ("first_name", "last_name", "unsubscribed"):
            value = _cell(cells, mapped.get(field))
            if value is not None:
                values[field] = int(_flag(value)) if field == "unsubscribed" else value
        props = {}
        for key, spec in mapped["properties"].items():
            value = _cell(cells, spec["index"])
            if value is not None:
                props[key] = _typed(value, spec["type"])
    except ValueError:
        return None
    values["properties"] = props
    return values


async def _apply(tx: Tx, parsed: list[dict[str, Any]], options: dict[str, Any],
                 counts: dict[str, int]) -> None:
    # Targets were checked at upload; one deleted since then is skipped.
    live = {row["id"] for row in await tx.all("SELECT id FROM topics WHERE account = ? UNION ALL"
                                               " SELECT id FROM segments WHERE account = ?",
                                               (tx.account, tx.account))}
    keys = list({email_key(item["email"]) for item in parsed})
    marks = ", ".join("?" for _ in keys)
    existing = {row["email_key"]: row for row in await tx.all(
        f"SELECT * FROM contacts WHERE account = ? AND email_key IN ({marks})", (tx.account, *keys))}
    for item in parsed:
        key = email_key(item["email"])
        row = existing.get(key)
        if row is not None and options["on_conflict"] == "skip":
            counts["skipped"] += 1
            continue
        props = item.pop("properties")
        if row is None:
            row = {"id": tx.new_id(), "account": tx.account, "email_key": key, "first_name": None,
                   "last_name": None, "unsubscribed": 0, **item,
                   "properties": json.dumps(props), "created_at": tx.now_db, "updated_at": tx.now_db}
            await tx.insert("contacts", row)
            counts["created"] += 1
        else:
            current = json.loads(row["properties"])
            changes = {**item, "properties": json.dumps({**current, **props}), "updated_at": tx.now_db}
            await tx.update("contacts", row["id"], changes)
            row = {**row, **changes}
            counts["updated"] += 1
        existing[key] = row
        for segment_id in options["segments"]:
            if segment_id in live:
                await segments.join(tx, row["id"], segment_id)
        for topic_id, subscription in options["topics"]:
            if topic_id in live:
                topics.record_choice(tx, row["id"], topic_id, subscription)


def _take(text: str, position: int, mapped: dict[str, Any],
          counts: dict[str, int]) -> tuple[list[dict[str, Any]], int]:
    """Up to ROWS_PER_SECOND rows from `position`: the valid ones parsed (bad ones counted as failed),
    and the position after them."""
    parsed: list[dict[str, Any]] = []
    taken = 0
    for after, cells in _rows(text, position):
        position = after
        if _blank(cells):
            continue
        item = _parse_row(cells, mapped)
        if item is None:
            counts["failed"] += 1
        else:
            parsed.append(item)
        taken += 1
        if taken >= ROWS_PER_SECOND:
            break
    return parsed, position


async def run_import(tx: Tx, job: dict[str, Any]) -> None:
    """One step a second: the next ROWS_PER_SECOND rows; `completed` once the file is through."""
    row = await tx.one("SELECT * FROM contact_imports WHERE account = ? AND id = ?",
                       (tx.account, job["payload"]["import_id"]))
    if row is None or row["status"] in ("completed", "failed"):
        return
    options, counts = json.loads(row["options"]), json.loads(row["counts"])
    parsed, options["position"] = _take(row["csv"], options["position"], options["map"], counts)
    if parsed:
        await _apply(tx, parsed, options, counts)
    done = not row["csv"][options["position"]:].strip()
    await tx.update("contact_imports", row["id"], {
        "status": "completed" if done else "in_progress", "completed_at": tx.now_db if done else None,
        "counts": json.dumps(counts), "options": json.dumps(options),
        **({"csv": ""} if done else {})})  # the file is not kept once it is through
    if not done:
        await schedule(tx, JOB, tx.now + timedelta(seconds=1), job["payload"])


async def get_import(tx: Tx, import_id: str) -> dict[str, Any]:
    if not UUID.match(import_id):
        raise ApiError(errors.INVALID_PARAMETER, "The `id` must be a valid UUID.")
    row = await tx.one("SELECT * FROM contact_imports WHERE account = ? AND id = ?", (tx.account, import_id))
    if row is None:
        raise not_found("Contact import")
    return serialize(row)


async def list_imports(tx: Tx, query: Any) -> dict[str, Any]:
    page = parse_page(query, optional_limit=False)
    status = query.get("status")
    if status is not None and status not in STATUSES:
        raise invalid("Invalid `status` parameter."
                      " Must be one of: `queued`, `in_progress`, `completed`, `failed`.")
    where, params = ("account = ? AND status = ?", [tx.account, status]) if status else ("account = ?", None)
    rows, has_more = await fetch_page(tx, "contact_imports", page, where=where, params=params,
                                      columns="seq, id, status, counts, created_at, completed_at")
    return list_body([serialize(row) for row in rows], has_more)


async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    text, form = _form_of(req)
    return await create_import(tx, text, form)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_import(tx, req.params["id"])


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_imports(tx, req.query)


OPS = [
    Op("contacts/create-import", "POST", "/contacts/imports", http_create, status=201, form=True),
    Op("contacts/list-imports", "GET", "/contacts/imports", http_list),
    Op("contacts/get-import", "GET", "/contacts/imports/{id}", http_get),
]


def install(emu: Any) -> None:
    emu.jobs.tx_handler(JOB, run_import)
