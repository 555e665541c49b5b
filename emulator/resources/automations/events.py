"""Custom events: definitions with an optional schema, and send-event, which starts automation runs
(reference logs-automations-events.md §3; seed §6 rule 3: an event name, a contact by id OR email, a
payload object)."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op, Reply
from emulator.core import validate
from emulator.core.addresses import valid_address
from emulator.core.errors import ApiError, invalid, missing_field, not_found
from emulator.core.pages import UUID, fetch_page, list_body, parse_page
from emulator.core.typed import instant, number_or_none
from emulator.resources.automations.runner import start_runs
from emulator.resources.automations.store import loads, millis
from emulator.resources.contacts import create_contact, find_contact
from emulator.resources.contacts.service import EMAIL_FORMAT

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TYPES = ("string", "number", "boolean", "date")
RESERVED = "resend:"


def item(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "schema": loads(row["schema"]),
        "created_at": millis(row["created_at"]),
        "updated_at": millis(row["updated_at"]),
    }


def _schema(body: dict[str, Any]) -> str | None:
    schema = validate.obj(body, "schema")
    if schema is None:
        return None
    for key, kind in schema.items():
        if kind not in TYPES:
            raise invalid(f"Invalid `schema.{key}`: the type must be one of: {', '.join(TYPES)}.")
    return json.dumps(schema)


async def find_event(tx: Tx, identifier: str) -> Row | None:
    column = "id" if UUID.match(identifier) else "name"
    return await tx.one(
        f"SELECT * FROM event_definitions WHERE account = ? AND {column} = ?", (tx.account, identifier)
    )


async def _require(tx: Tx, identifier: str) -> Row:
    row = await find_event(tx, identifier)
    if row is None:
        raise not_found("Event")
    return row


async def create_event(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    name = validate.string(body, "name", required_=True, allow_empty=False)
    assert name is not None
    if name.startswith(RESERVED):
        raise invalid(f"Event names starting with `{RESERVED}` are reserved.")
    if await find_event(tx, name) is not None:
        raise invalid(f"An event named `{name}` already exists.")
    event_id = tx.new_id()
    await tx.insert(
        "event_definitions",
        {
            "id": event_id,
            "account": tx.account,
            "name": name,
            "schema": _schema(body),
            "created_at": tx.now_db,
            "updated_at": None,
        },
    )
    return {"object": "event", "id": event_id}


async def list_events(tx: Tx, query: Any) -> dict[str, Any]:
    rows, has_more = await fetch_page(tx, "event_definitions", parse_page(query, optional_limit=False))
    return list_body([item(row) for row in rows], has_more)


async def get_event(tx: Tx, identifier: str) -> dict[str, Any]:
    return {"object": "event", **item(await _require(tx, identifier))}


async def update_event(tx: Tx, identifier: str, body: dict[str, Any]) -> dict[str, Any]:
    row = await _require(tx, identifier)
    if "schema" not in body:
        raise missing_field("schema")
    await tx.update("event_definitions", row["id"], {"schema": _schema(body), "updated_at": tx.now_db})
    return {"object": "event", "id": row["id"]}


async def delete_event(tx: Tx, identifier: str) -> dict[str, Any]:
    row = await _require(tx, identifier)
    await tx.run("DELETE FROM event_definitions WHERE account = ? AND id = ?", (tx.account, row["id"]))
    return {"object": "event", "id": row["id"], "deleted": True}


def _coerce(value: Any, kind: str, key: str) -> Any:
    """A payload value as its schema type [docs: values are validated and coerced]."""
    if value is None:
        return None
    if kind == "string" and isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    if kind == "number" and not isinstance(value, bool):
        if isinstance(value, int | float) and math.isfinite(value):
            return value
        number = number_or_none(value) if isinstance(value, str) else None  # not `٣`, `1_0`, `inf`
        if number is not None:
            return int(number) if number.is_integer() and "." not in value else number
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    if kind == "date" and isinstance(value, str):
        try:
            instant(value, f"payload.{key}")  # a real date in the years 1–9999, ASCII digits only
            return value
        except ApiError:
            pass
    raise invalid(f"Invalid `payload.{key}`: expected a `{kind}` as the event's schema says.")


async def _contact(tx: Tx, body: dict[str, Any], event_name: str) -> Row | None:
    contact_id, email = validate.string(body, "contact_id"), validate.string(body, "email")
    if (contact_id is None) == (email is None):
        raise invalid("Provide exactly one of `contact_id` or `email`.")
    if email is not None and ("<" in email or not valid_address(email)):
        raise invalid(EMAIL_FORMAT)  # refused whether or not an automation would run for it
    contact = await find_contact(tx, str(contact_id or email))
    if contact is None and contact_id is not None:
        raise not_found("Contact")
    if contact is None:
        # [docs] an unknown email gets a contact when an automation runs for it.
        triggered = await tx.one(
            "SELECT 1 AS yes FROM automations WHERE account = ? AND status = 'enabled' AND trigger_event = ?",
            (tx.account, event_name),
        )
        if triggered:
            await create_contact(tx, {"email": email})
            contact = await find_contact(tx, str(email))
    return contact


async def send_event(tx: Tx, body: dict[str, Any]) -> Reply:
    name = validate.string(body, "event", required_=True, allow_empty=False)
    assert name is not None
    payload = validate.obj(body, "payload") or {}
    definition = await find_event(tx, name)
    schema = loads(definition["schema"]) if definition else None
    if schema:
        payload = {
            key: _coerce(value, schema[key], key) if key in schema else value
            for key, value in payload.items()
        }
    contact = await _contact(tx, body, name)
    if contact is not None:
        await start_runs(tx, name, contact, payload)
    return Reply({"object": "event", "event": name}, 202)


async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_event(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_events(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_event(tx, req.params["identifier"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_event(tx, req.params["identifier"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_event(tx, req.params["identifier"])


async def http_send(tx: Tx, req: ApiRequest) -> Reply:
    return await send_event(tx, req.json_object())


OPS = [
    Op("events/create", "POST", "/events", http_create, status=201),
    Op("events/list", "GET", "/events", http_list),
    Op("events/send", "POST", "/events/send", http_send, status=202),
    Op("events/get", "GET", "/events/{identifier}", http_get),
    Op("events/update", "PATCH", "/events/{identifier}", http_update),
    Op("events/remove", "DELETE", "/events/{identifier}", http_delete),
]
