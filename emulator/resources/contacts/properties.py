"""Contact properties: the account's typed custom fields (reference contacts.md §8, seed §2.4).

A property is a key and a type (`string` or `number`), both fixed at creation, and an optional fallback
value of that type. Contacts carry values only for existing keys; `check_values` types them.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core import validate
from emulator.core.errors import invalid, not_found
from emulator.core.pages import fetch_page, list_body, parse_page
from emulator.resources.contacts.store import postgres

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TYPES = ("string", "number")
KEY = re.compile(r"^[A-Za-z0-9_]{1,50}$")
# The contact's own fields; a property of the same name could never be told apart in templates [rec].
RESERVED = {"id", "email", "first_name", "last_name", "unsubscribed", "created_at", "updated_at",
            "properties", "segments", "topics"}


def _fits(value: Any, kind: str) -> bool:
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)


def _fallback(body: dict[str, Any], kind: str) -> Any:
    value = body.get("fallback_value")
    if value is not None and not _fits(value, kind):
        raise invalid(f"The `fallback_value` field must be a `{kind}` to match the property type.")
    return value


def serialize(row: Row) -> dict[str, Any]:
    return {"object": "contact_property", "id": row["id"], "key": row["key"], "type": row["type"],
            "fallback_value": json.loads(row["fallback_value"]), "created_at": postgres(row["created_at"])}


async def definitions(tx: Tx) -> dict[str, Row]:
    """The account's properties by key."""
    rows = await tx.all("SELECT * FROM contact_properties WHERE account = ?", (tx.account,))
    return {row["key"]: row for row in rows}


async def property_fallbacks(tx: Tx) -> dict[str, Any]:
    """Each property key of the account → its `fallback_value` (None when it has none)."""
    return {key: json.loads(row["fallback_value"]) for key, row in (await definitions(tx)).items()}


async def _require(tx: Tx, property_id: str) -> Row:
    row = await tx.one("SELECT * FROM contact_properties WHERE account = ? AND id = ?",
                       (tx.account, property_id))
    if row is None:
        raise not_found("Contact property")
    return row


async def check_values(tx: Tx, given: Any) -> dict[str, Any]:
    """A contact's `properties` as given: existing keys only, values of the key's type or null (clears)."""
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise invalid("The `properties` field must be an `object`.")
    known = await definitions(tx) if given else {}
    for key, value in given.items():
        row = known.get(key)
        if row is None:
            raise invalid(f"The property `{key}` does not exist."
                          " Create it with POST /contact-properties first.")
        if value is not None and not _fits(value, row["type"]):
            raise invalid(f"The property `{key}` must be a `{row['type']}`.")
    return dict(given)


def merged(current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """Current values with `changes` applied; a null value removes the key."""
    result = {**current, **changes}
    return {key: value for key, value in result.items() if value is not None}


async def create_property(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    key = validate.string(body, "key", required_=True)
    assert key is not None
    if not KEY.match(key):
        raise invalid("The `key` field must be at most 50 characters and contain only letters, numbers"
                      " and underscores.")
    if key in RESERVED:
        raise invalid(f"The key `{key}` is reserved.")
    kind = validate.string(body, "type", required_=True)
    if kind not in TYPES:
        raise invalid("Invalid `type` field. Must be one of: `string`, `number`.")
    fallback = _fallback(body, kind)
    if await tx.one("SELECT id FROM contact_properties WHERE account = ? AND key = ?", (tx.account, key)):
        raise invalid(f"A contact property with the key `{key}` already exists.")
    property_id = tx.new_id()
    await tx.insert("contact_properties", {
        "id": property_id, "account": tx.account, "key": key, "type": kind,
        "fallback_value": json.dumps(fallback), "created_at": tx.now_db,
    })
    return {"object": "contact_property", "id": property_id}


async def get_property(tx: Tx, property_id: str) -> dict[str, Any]:
    return serialize(await _require(tx, property_id))


async def list_properties(tx: Tx, query: Any) -> dict[str, Any]:
    # Not among the seed's limit-optional lists (§4.5 rule 3), so paginated by default.
    rows, has_more = await fetch_page(tx, "contact_properties", parse_page(query, optional_limit=False))
    items = []
    for row in rows:
        item = serialize(row)
        del item["object"]
        items.append(item)
    return list_body(items, has_more)


async def update_property(tx: Tx, property_id: str, body: dict[str, Any]) -> dict[str, Any]:
    row = await _require(tx, property_id)
    for fixed in ("key", "type"):
        if fixed in body and body[fixed] != row[fixed]:
            raise invalid(f"The `{fixed}` of a contact property cannot be changed.")
    if "fallback_value" in body:
        await tx.update("contact_properties", row["id"],
                        {"fallback_value": json.dumps(_fallback(body, row["type"]))})
    return {"object": "contact_property", "id": row["id"]}


async def delete_property(tx: Tx, property_id: str) -> dict[str, Any]:
    """Deleting a property removes its values from every contact (the key no longer exists) [rec]."""
    row = await _require(tx, property_id)
    await tx.run("DELETE FROM contact_properties WHERE account = ? AND id = ?", (tx.account, row["id"]))
    await tx.run("UPDATE contacts SET properties = json_remove(properties, ?) WHERE account = ?"
                 " AND json_type(properties, ?) IS NOT NULL",
                 (f'$."{row["key"]}"', tx.account, f'$."{row["key"]}"'))
    # Real key order: object, deleted, id [rec].
    return {"object": "contact_property", "deleted": True, "id": row["id"]}


async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_property(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_properties(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_property(tx, req.params["id"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_property(tx, req.params["id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_property(tx, req.params["id"])


OPS = [
    Op("contact-properties/create", "POST", "/contact-properties", http_create, status=201),
    Op("contact-properties/list", "GET", "/contact-properties", http_list),
    Op("contact-properties/get", "GET", "/contact-properties/{id}", http_get),
    Op("contact-properties/update", "PATCH", "/contact-properties/{id}", http_update),
    Op("contact-properties/remove", "DELETE", "/contact-properties/{id}", http_delete),
]
