"""CSV contact imports (reference contacts.md §9): upload, then rows processed on the emulator clock.

POST checks the form (file, column map, targets), counts the rows and answers `queued`; a chunked job
(`import_steps.py`) takes the import to `in_progress` one second later and processes ROWS_PER_SECOND rows
per second of emulator time until `completed` (tests advance the clock; nothing sleeps). A bad row is
counted as `failed` and never aborts the import; a file that cannot be read is refused at upload, so
no import ends `failed`. Imports emit no `contact.created` events [openapi][docs].
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, FormBody, Op
from emulator.core import errors, jsontext
from emulator.core.errors import ApiError, invalid, missing_field, not_found
from emulator.core.jobs import schedule
from emulator.core.pages import UUID, fetch_page, list_body, parse_page
from emulator.resources.contacts import import_steps, properties, segments, topics
from emulator.resources.contacts.store import millis, require_segment, require_topic

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

JOB = import_steps.JOB
ROWS_PER_SECOND = import_steps.ROWS_PER_SECOND
SCAN_ON_LOOP_BYTES = 256 * 1024
STATUSES = ("queued", "in_progress", "completed", "failed")
FIELDS = ("email", "first_name", "last_name", "unsubscribed")
CONFLICTS = ("upsert", "skip")
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
        # The same reader as a request body: its nesting is measured before anything recurses (a
        # `column_map` nested 100 000 deep was a RecursionError, i.e. a 500: issue 36).
        return jsontext.parse(value.encode("utf-8", "surrogatepass"))
    except jsontext.BodyError as exc:
        if str(exc) == jsontext.TOO_DEEP:
            deep = f"The `{name}` field is nested more than {jsontext.MAX_DEPTH} levels deep."
            raise invalid(deep) from None
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
    try:
        import_steps.check_row(header, 1)  # before a wide header is walked below
    except csv.Error as exc:
        raise invalid(f"The CSV file could not be read: {exc}.") from None
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
    data = text.encode()
    try:
        # A big file is counted on a worker thread: parsing 100 000 rows takes ~0.1 s, during which the
        # interpreter switches back to the event loop every few milliseconds (issue 27).
        small = len(data) < SCAN_ON_LOOP_BYTES
        start, total = import_steps.scan(data) if small else await asyncio.to_thread(import_steps.scan, data)
    except csv.Error as exc:
        raise invalid(f"The CSV file could not be read: {exc}.") from None
    import_id = tx.new_id()
    options = {"map": mapped, "on_conflict": on_conflict, "segments": segment_ids, "topics": choices,
               "position": start, "size": len(data)}
    await tx.insert("contact_imports", {
        "id": import_id, "account": tx.account, "status": "queued", "options": json.dumps(options),
        "csv": "", "counts": json.dumps({**EMPTY_COUNTS, "total": total}), "created_at": tx.now_db,
        "completed_at": None,
    })
    await import_steps.store_file(tx, import_id, data)
    await schedule(tx, JOB, tx.now + timedelta(seconds=1), {"import_id": import_id})
    return {"object": "contact_import", "id": import_id}


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
    emu.jobs.chunked(JOB, import_steps.run_step, catches_up=True)
