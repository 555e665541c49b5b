"""The Suppressions API: add, batch add, batch remove, list, get and remove (reference/suppressions.md §2).

Seed §2.6/§4.2/§8: batch add takes 1..100 addresses and answers 200 `{data:[{object, id}]}`, one entry per
address in request order. Entries added here have origin `manual`; bounces and complaints add theirs
through `store.add` from the delivery simulation, and every entry is visible here alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core.addresses import BARE_ADDRESS
from emulator.core.errors import invalid, missing_field, not_found
from emulator.core.pages import fetch_page, list_body, parse_page
from emulator.resources.suppressions.store import ORIGINS, add, event_data, find, normalize, remove, serialize

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

BATCH_LIMIT = 100
EMAIL_FORMAT = "Invalid `{field}` field. The email address needs to follow the `email@example.com` format."


def _address(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise invalid(f"The `{field}` field must be a `string`.")
    if not BARE_ADDRESS.match(value.strip()):
        raise invalid(EMAIL_FORMAT.format(field=field))
    return normalize(value)


def _batch(body: dict[str, Any], field: str) -> list[str]:
    """A 1..100 list of strings, or the documented 422s."""
    values = body.get(field)
    if values is None:
        raise missing_field(field)
    if not isinstance(values, list):
        raise invalid(f"The `{field}` field must be an `array`.")
    if not 1 <= len(values) <= BATCH_LIMIT:
        raise invalid(f"The `{field}` field must contain between 1 and {BATCH_LIMIT} items.")
    return values


async def _by_id(tx: Tx, suppression_id: str) -> Row | None:
    return await tx.one("SELECT * FROM suppressions WHERE account = ? AND id = ?",
                        (tx.account, suppression_id))


async def require(tx: Tx, id_or_email: str) -> Row:
    """The suppression by id, or by address when the identifier holds an `@` (SDKs percent-encode it)."""
    if "@" in id_or_email:
        row = await find(tx, id_or_email)
    else:
        row = await _by_id(tx, id_or_email)
    if row is None:
        raise not_found("Suppression")
    return row


async def add_suppression(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    if body.get("email") is None:
        raise missing_field("email")
    row = await add(tx, _address(body["email"], "email"), "manual")
    return {"object": "suppression", "id": row["id"]}


async def batch_add(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    # Every address is checked before any is written: a bad entry rejects the batch and writes nothing.
    emails = [_address(value, "emails") for value in _batch(body, "emails")]
    rows = [await add(tx, email, "manual") for email in emails]
    return {"data": [{"object": "suppression", "id": row["id"]} for row in rows]}


async def batch_remove(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    """`emails` or `ids`, not both; unknown entries are skipped [recommendation in the reference]."""
    if body.get("emails") is not None and body.get("ids") is not None:
        raise invalid("Provide either `emails` or `ids`, not both.")
    field = "ids" if body.get("ids") is not None else "emails"
    identifiers = _batch(body, field)
    if not all(isinstance(value, str) for value in identifiers):
        raise invalid(f"Each item of `{field}` must be a `string`.")
    removed: list[dict[str, Any]] = []
    for identifier in identifiers:
        row = await find(tx, identifier) if field == "emails" else await _by_id(tx, identifier)
        if row is not None and row["id"] not in {entry["id"] for entry in removed}:
            await remove(tx, row)
            removed.append({"object": "suppression", "id": row["id"], "deleted": True})
    return {"data": removed}


async def list_suppressions(tx: Tx, query: Any) -> dict[str, Any]:
    """Newest first. The reference lists suppressions among neither the optional-limit nor the
    always-paginated lists; we assume the default of 20 like the other recent list endpoints."""
    origin = query.get("origin")
    if origin is not None and origin not in ORIGINS:
        options = ", ".join(f"`{choice}`" for choice in ORIGINS)
        raise invalid(f"Invalid `origin` query parameter. Must be one of: {options}.")
    page = parse_page(query, optional_limit=False)
    where, params = "account = ?", [tx.account]
    if origin is not None:
        where, params = "account = ? AND origin = ?", [tx.account, origin]
    rows, has_more = await fetch_page(tx, "suppressions", page, where=where, params=params)
    return list_body([event_data(row) for row in rows], has_more)


async def get_suppression(tx: Tx, id_or_email: str) -> dict[str, Any]:
    return serialize(await require(tx, id_or_email))


async def remove_suppression(tx: Tx, id_or_email: str) -> dict[str, Any]:
    row = await require(tx, id_or_email)
    await remove(tx, row)
    return {"object": "suppression", "id": row["id"], "deleted": True}


async def http_add(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await add_suppression(tx, req.json_object())


async def http_batch_add(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await batch_add(tx, req.json_object())


async def http_batch_remove(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await batch_remove(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_suppressions(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_suppression(tx, req.params["suppression"])


async def http_remove(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await remove_suppression(tx, req.params["suppression"])


OPS = [
    Op("suppressions/add", "POST", "/suppressions", http_add, status=201),
    Op("suppressions/list", "GET", "/suppressions", http_list),
    Op("suppressions/batch-add", "POST", "/suppressions/batch/add", http_batch_add),
    Op("suppressions/batch-remove", "POST", "/suppressions/batch/remove", http_batch_remove),
    Op("suppressions/get", "GET", "/suppressions/{suppression}", http_get),
    Op("suppressions/remove", "DELETE", "/suppressions/{suppression}", http_remove),
]
