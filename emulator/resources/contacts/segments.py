"""Segments, audiences (the same record, deprecated name) and contact ↔ segment membership.

Reference contacts.md §3, §4, §5; seed §2.5, §4.2. Lists of segments and of a segment's contacts
return everything when `limit` is omitted (seed §4.5 rule 3). Lookups of an unknown segment answer
"Audience not found", the legacy wording the real service uses [rec].
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core import validate
from emulator.core.errors import invalid, missing_field
from emulator.core.pages import fetch_page, list_body, parse_page
from emulator.resources.contacts.store import (
    SEGMENT_MEMBERS,
    contact_item,
    millis,
    postgres,
    require_contact,
    require_segment,
)

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

NOT_FOUND = "Audience"  # the real message for an unknown segment id [rec]


def _item(row: Row) -> dict[str, Any]:
    return {"id": row["id"], "name": row["name"], "created_at": postgres(row["created_at"])}


async def create_segment(tx: Tx, body: dict[str, Any], kind: str = "segment") -> dict[str, Any]:
    """`kind` is `segment` or `audience`: the object name the response carries."""
    if body.get("name") is None:
        raise missing_field("name")
    name = validate.string(body, "name", allow_empty=False)
    segment_filter = validate.obj(body, "filter")
    segment_id = tx.new_id()
    await tx.insert("segments", {
        "id": segment_id, "account": tx.account, "name": name, "kind": kind,
        "filter": json.dumps(segment_filter) if segment_filter is not None else None,
        "created_at": tx.now_db,
    })
    return {"object": kind, "id": segment_id, "name": name}


async def get_segment(tx: Tx, segment_id: str, kind: str = "segment") -> dict[str, Any]:
    row = await require_segment(tx, segment_id, NOT_FOUND)
    return {"object": kind, **_item(row)}


async def list_segments(tx: Tx, query: Any) -> dict[str, Any]:
    rows, has_more = await fetch_page(tx, "segments", parse_page(query, optional_limit=True))
    return list_body([_item(row) for row in rows], has_more)


async def update_segment(tx: Tx, segment_id: str, body: dict[str, Any]) -> dict[str, Any]:
    row = await require_segment(tx, segment_id, NOT_FOUND)
    if "name" in body:
        name = validate.string(body, "name", required_=True, allow_empty=False)
        await tx.update("segments", row["id"], {"name": name})
    return {"object": "segment", "id": row["id"]}


async def delete_segment(tx: Tx, segment_id: str, kind: str = "segment") -> dict[str, Any]:
    """Memberships go with the segment; the contacts stay. An unknown id still answers 200 [rec]."""
    await tx.run("DELETE FROM segment_contacts WHERE account = ? AND segment_id = ?",
                 (tx.account, segment_id))
    await tx.run("DELETE FROM segments WHERE account = ? AND id = ?", (tx.account, segment_id))
    return {"object": kind, "id": segment_id, "deleted": True}


# ---- membership --------------------------------------------------------------------------------

async def join(tx: Tx, contact_id: str, segment_id: str) -> None:
    """Make the contact a member (idempotent: an existing membership keeps its `created_at`)."""
    tx.queue("INSERT OR IGNORE INTO segment_contacts (account, segment_id, contact_id, created_at)"
             " VALUES (?, ?, ?, ?)", (tx.account, segment_id, contact_id, tx.now_db))


async def add_contact_to_segment(tx: Tx, id_or_email: str, segment_id: str) -> dict[str, Any]:
    contact = await require_contact(tx, id_or_email)
    segment = await require_segment(tx, segment_id, NOT_FOUND)
    await join(tx, contact["id"], segment["id"])
    return _membership(contact["id"], segment["id"])


def _membership(contact_id: str, segment_id: str) -> dict[str, Any]:
    # The OpenAPI body, plus the `id` both SDKs' types declare: the segment's, as in the docs' example.
    return {"object": "contact_segment", "id": segment_id, "contact_id": contact_id, "segment_id": segment_id}


async def remove_contact_from_segment(tx: Tx, id_or_email: str, segment_id: str) -> dict[str, Any]:
    """[rec] Removing a membership that does not exist is a 200 as well, like deletes of contacts."""
    contact = await require_contact(tx, id_or_email)
    segment = await require_segment(tx, segment_id, NOT_FOUND)
    await tx.run("DELETE FROM segment_contacts WHERE account = ? AND segment_id = ? AND contact_id = ?",
                 (tx.account, segment["id"], contact["id"]))
    # The docs' example names the contact as `id` here (and the segment on add).
    return {**_membership(contact["id"], segment["id"]), "id": contact["id"], "deleted": True}


async def segment_ids_of(tx: Tx, contact_id: str) -> list[str]:
    rows = await tx.all("SELECT segment_id FROM segment_contacts WHERE account = ? AND contact_id = ?"
                        " ORDER BY seq", (tx.account, contact_id))
    return [row["segment_id"] for row in rows]


async def segment_contacts(tx: Tx, segment_id: str) -> list[Row]:
    """Every contact of the segment (contact rows), oldest first; [] for an unknown segment."""
    return await tx.all(f"SELECT * FROM {SEGMENT_MEMBERS} WHERE account = ? AND segment_id = ? ORDER BY seq",
                        (tx.account, segment_id))


async def segment_members_after(tx: Tx, segment_id: str, after: int, limit: int,
                                topic_id: str | None) -> list[Row]:
    """Up to `limit` contacts of the segment that joined after membership `after`, in joining order: each
    contact's id, email, names, `unsubscribed` and `properties`, with `member_seq` (the cursor for the
    next call) and `subscription` to `topic_id` (the contact's choice, else the topic's default; None
    without a topic). Only what a send needs: a broadcast reads 100 000 of these."""
    page = (tx.account, segment_id, after, limit)
    if topic_id is None:  # no topic to look up per member: ~10% of a broadcast's time went to this read
        return await tx.all(f"SELECT {_MEMBER_COLUMNS}, NULL AS subscription {_MEMBERS} {_PAGE}", page)
    return await tx.all(f"SELECT {_MEMBER_COLUMNS}, {_SUBSCRIPTION} {_MEMBERS} {_TOPIC_JOINS} {_PAGE}",
                        (topic_id, *page))


_MEMBER_COLUMNS = ("c.id, c.email, c.first_name, c.last_name, c.unsubscribed, c.properties,"
                   " sc.seq AS member_seq")
_MEMBERS = "FROM segment_contacts sc JOIN contacts c ON c.account = sc.account AND c.id = sc.contact_id"
_SUBSCRIPTION = "COALESCE(ct.subscription, t.default_subscription) AS subscription"
_TOPIC_JOINS = ("LEFT JOIN topics t ON t.account = sc.account AND t.id = ?"
                " LEFT JOIN contact_topics ct"
                " ON ct.account = sc.account AND ct.contact_id = c.id AND ct.topic_id = t.id")
_PAGE = "WHERE sc.account = ? AND sc.segment_id = ? AND sc.seq > ? ORDER BY sc.seq LIMIT ?"


async def segment_audience(tx: Tx, segment_id: str, topic_id: str | None) -> int:
    """How many contacts of the segment a broadcast would email now: not unsubscribed, opted in to
    `topic_id` when there is one (the contact's choice, else the topic's default), not suppressed."""
    topic = f"{_TOPIC_JOINS} " if topic_id is not None else ""
    opted = " AND COALESCE(ct.subscription, t.default_subscription) = 'opt_in'" if topic_id else ""
    row = await tx.one(
        f"SELECT COUNT(*) AS n {_MEMBERS} {topic}"
        "LEFT JOIN suppressions sp ON sp.account = sc.account AND sp.email = lower(trim(c.email))"
        f" WHERE sc.account = ? AND sc.segment_id = ? AND NOT c.unsubscribed AND sp.email IS NULL{opted}",
        (*((topic_id,) if topic_id is not None else ()), tx.account, segment_id))
    return int(row["n"]) if row else 0


async def segment_size(tx: Tx, segment_id: str) -> int:
    row = await tx.one("SELECT COUNT(*) AS n FROM segment_contacts WHERE account = ? AND segment_id = ?",
                       (tx.account, segment_id))
    return int(row["n"]) if row else 0


_MEMBERSHIPS = ("(SELECT sc.seq AS seq, s.id AS id, s.name AS name, sc.created_at AS created_at,"
                " sc.account AS account, sc.contact_id AS contact_id FROM segment_contacts sc"
                " JOIN segments s ON s.account = sc.account AND s.id = sc.segment_id)")


async def list_contact_segments(tx: Tx, id_or_email: str, query: Any) -> dict[str, Any]:
    """Seed §4.2: items `{id, name, created_at}`, `created_at` = when the contact joined, in ms form."""
    contact = await require_contact(tx, id_or_email)
    rows, has_more = await fetch_page(tx, _MEMBERSHIPS, parse_page(query, optional_limit=True),
                                      where="account = ? AND contact_id = ?",
                                      params=[tx.account, contact["id"]])
    return list_body([{"id": row["id"], "name": row["name"], "created_at": millis(row["created_at"])}
                      for row in rows], has_more)


async def list_segment_contacts(tx: Tx, segment_id: str, query: Any) -> dict[str, Any]:
    segment = await require_segment(tx, segment_id, NOT_FOUND)
    page = parse_page(query, optional_limit=True)
    rows, has_more = await fetch_page(tx, SEGMENT_MEMBERS, page, where="account = ? AND segment_id = ?",
                                      params=[tx.account, segment["id"]])
    return list_body([contact_item(row) for row in rows], has_more)


def segment_refs(given: Any, field: str = "segments") -> list[str]:
    """`segments` at create: `[{id}]` (docs, SDKs, recordings) or `["id"]` (OpenAPI): both accepted."""
    if given is None:
        return []
    if not isinstance(given, list):
        raise invalid(f"The `{field}` field must be an `array`.")
    ids = []
    for item in given:
        value = item.get("id") if isinstance(item, dict) else item
        if not isinstance(value, str) or not value:
            raise invalid(f"Each item of `{field}` must be an `object` with a string `id`.")
        ids.append(value)
    return ids


# ---- HTTP --------------------------------------------------------------------------------------

async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_segment(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_segments(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_segment(tx, req.params["id"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_segment(tx, req.params["id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_segment(tx, req.params["id"])


async def http_segment_contacts(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_segment_contacts(tx, req.params["id"], req.query)


async def http_audience_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_segment(tx, req.json_object(), kind="audience")


async def http_audience_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_segment(tx, req.params["id"], kind="audience")


async def http_audience_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_segment(tx, req.params["id"], kind="audience")


async def http_contact_segments(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_contact_segments(tx, req.params["contact_id"], req.query)


async def http_add(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await add_contact_to_segment(tx, req.params["contact_id"], req.params["segment_id"])


async def http_remove(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await remove_contact_from_segment(tx, req.params["contact_id"], req.params["segment_id"])


OPS = [
    Op("segments/create", "POST", "/segments", http_create, status=201),
    Op("segments/list", "GET", "/segments", http_list),
    Op("segments/get", "GET", "/segments/{id}", http_get),
    Op("segments/update", "PATCH", "/segments/{id}", http_update),
    Op("segments/remove", "DELETE", "/segments/{id}", http_delete),
    Op("segments/list-contacts", "GET", "/segments/{id}/contacts", http_segment_contacts),
    Op("audiences/create", "POST", "/audiences", http_audience_create, status=201),
    Op("audiences/list", "GET", "/audiences", http_list),
    Op("audiences/get", "GET", "/audiences/{id}", http_audience_get),
    Op("audiences/remove", "DELETE", "/audiences/{id}", http_audience_delete),
    Op("contacts/list-segments", "GET", "/contacts/{contact_id}/segments", http_contact_segments),
    Op("contacts/add-segment", "POST", "/contacts/{contact_id}/segments/{segment_id}", http_add),
    Op("contacts/remove-segment", "DELETE", "/contacts/{contact_id}/segments/{segment_id}", http_remove),
]
