"""Contacts: create, list, get, update, delete, by id or email; the legacy audience-scoped paths.

Reference contacts.md §1, §2. Emails are unique per account, compared case-insensitively [rec].
Duplicate email at create (undocumented): the existing contact is kept unchanged and its id answered
with 201, after joining the segments/topics/audience the request names; the real service is reported
to accept repeated creates silently, and sync jobs that "create" every user on each run rely on it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core import validate
from emulator.core.addresses import valid_address
from emulator.core.clock import from_db, iso_z
from emulator.core.errors import invalid, missing_field, not_found
from emulator.core.events import emit
from emulator.core.pages import fetch_page, list_body, parse_page
from emulator.resources.contacts import properties, segments, topics
from emulator.resources.contacts.store import (
    SEGMENT_MEMBERS,
    contact_body,
    contact_item,
    contact_properties,
    email_key,
    find_contact,
    require_contact,
    require_segment,
)

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

EMAIL_FORMAT = "Invalid `email` field. The email address needs to follow the `email@example.com` format."


def _email(body: dict[str, Any]) -> str:
    value = body.get("email")
    if value is None:
        raise missing_field("email")
    if not isinstance(value, str) or "<" in value or not valid_address(value):
        raise invalid(EMAIL_FORMAT)
    return value.strip()


def _names(body: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field in ("first_name", "last_name"):
        if field in body:
            values[field] = validate.string(body, field)
    unsubscribed = validate.boolean(body, "unsubscribed")
    if unsubscribed is not None:  # null leaves it as it is
        values["unsubscribed"] = int(unsubscribed)
    return values


async def event_data(tx: Tx, row: Row, segment_ids: list[str] | None = None) -> dict[str, Any]:
    """ContactEventData [openapi]: the payload of contact.created / updated / deleted."""
    ids = segment_ids if segment_ids is not None else await segments.segment_ids_of(tx, row["id"])
    return {"id": row["id"], "segment_ids": ids, "created_at": iso_z(from_db(row["created_at"])),
            "updated_at": iso_z(from_db(row["updated_at"])), "email": row["email"],
            "first_name": row["first_name"], "last_name": row["last_name"],
            "unsubscribed": bool(row["unsubscribed"])}


async def _targets(tx: Tx, body: dict[str, Any], audience_id: str | None) -> tuple[list[str], Any]:
    """The segment ids (checked to exist) and topic choices a create names."""
    segment_ids = segments.segment_refs(body.get("segments"))
    given_audience = audience_id or validate.string(body, "audience_id")
    if given_audience:
        segment_ids.append(given_audience)
    for segment_id in segment_ids:
        await require_segment(tx, segment_id, "Segment")
    choices = topics.parse_choices(body["topics"]) if body.get("topics") is not None else []
    return list(dict.fromkeys(segment_ids)), choices


async def create_contact(tx: Tx, body: dict[str, Any], audience_id: str | None = None) -> dict[str, Any]:
    """POST /contacts (or /audiences/{audience_id}/contacts, which also joins that audience)."""
    email = _email(body)
    values = _names(body)
    props = await properties.check_values(tx, body.get("properties"))
    segment_ids, choices = await _targets(tx, body, audience_id)
    existing = await find_contact(tx, email)
    contact_id = existing["id"] if existing else tx.new_id()
    for segment_id in segment_ids:
        await segments.join(tx, contact_id, segment_id)
    if existing is None:
        row = {"id": contact_id, "account": tx.account, "email": email, "email_key": email_key(email),
               "first_name": None, "last_name": None, "unsubscribed": 0, **values,
               "properties": json.dumps(properties.merged({}, props)),
               "created_at": tx.now_db, "updated_at": tx.now_db}
        await tx.insert("contacts", row)
        await emit(tx, "contact.created", await event_data(tx, row, segment_ids), subject_id=contact_id)
    await topics.set_subscriptions(tx, contact_id, choices)
    return {"object": "contact", "id": contact_id}


async def get_contact(tx: Tx, id_or_email: str) -> dict[str, Any]:
    return await _body(tx, await require_contact(tx, id_or_email))


async def _body(tx: Tx, row: Row) -> dict[str, Any]:
    types = {key: item["type"] for key, item in (await properties.definitions(tx)).items()}
    return contact_body(row, types)


async def update_contact(tx: Tx, id_or_email: str, body: dict[str, Any]) -> dict[str, Any]:
    """PATCH: names, `unsubscribed`, `properties` (null clears a key), `email` [openapi]."""
    row = await require_contact(tx, id_or_email)
    values = _names(body)
    if body.get("email") is not None:
        email = _email(body)
        clash = await find_contact(tx, email)
        if clash is not None and clash["id"] != row["id"]:
            raise invalid(f"A contact with the email `{email}` already exists.")
        values.update(email=email, email_key=email_key(email))
    if body.get("properties") is not None:
        changes = await properties.check_values(tx, body["properties"])
        values["properties"] = json.dumps(properties.merged(contact_properties(row), changes))
    values["updated_at"] = tx.now_db
    await tx.update("contacts", row["id"], values)
    # Emitted on every update, unsubscribes included (seed §6).
    await emit(tx, "contact.updated", await event_data(tx, {**row, **values}), subject_id=row["id"])
    return {"object": "contact", "id": row["id"]}


async def delete_contact(tx: Tx, id_or_email: str) -> dict[str, Any]:
    """`contact` is the contact id (even when deleted by email); an unknown contact still answers 200
    with the identifier as given [rec]."""
    row = await find_contact(tx, id_or_email)
    if row is None:
        return {"object": "contact", "contact": id_or_email, "deleted": True}
    data = await event_data(tx, row)
    for table in ("segment_contacts", "contact_topics"):
        await tx.run(f"DELETE FROM {table} WHERE account = ? AND contact_id = ?", (tx.account, row["id"]))
    await tx.run("DELETE FROM contacts WHERE account = ? AND id = ?", (tx.account, row["id"]))
    await emit(tx, "contact.deleted", data, subject_id=row["id"])
    return {"object": "contact", "contact": row["id"], "deleted": True}


async def list_contacts(tx: Tx, query: Any, segment_id: str | None = None) -> dict[str, Any]:
    """Newest first; all of them when `limit` is omitted (seed §4.5 rule 3)."""
    page = parse_page(query, optional_limit=True)
    segment_id = segment_id or query.get("segment_id")
    if segment_id:
        segment = await require_segment(tx, segment_id, segments.NOT_FOUND)
        rows, has_more = await fetch_page(tx, SEGMENT_MEMBERS, page, where="account = ? AND segment_id = ?",
                                          params=[tx.account, segment["id"]])
    else:
        rows, has_more = await fetch_page(tx, "contacts", page)
    return list_body([contact_item(row) for row in rows], has_more)


# ---- audience-scoped paths (legacy) ------------------------------------------------------------

async def _member(tx: Tx, audience_id: str, id_or_email: str) -> Row:
    """The contact, if it belongs to the audience; else 404 "Contact not found"."""
    row = await find_contact(tx, id_or_email)
    if row is None or await tx.one(
            "SELECT 1 FROM segment_contacts WHERE account = ? AND segment_id = ? AND contact_id = ?",
            (tx.account, audience_id, row["id"])) is None:
        raise not_found("Contact")
    return row


async def http_audience_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    # The Python SDK repeats `audience_id` in the body; the path's audience is the one joined.
    body = {key: value for key, value in req.json_object().items() if key != "audience_id"}
    await require_segment(tx, req.params["audience_id"], segments.NOT_FOUND)
    return await create_contact(tx, body, audience_id=req.params["audience_id"])


async def http_audience_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_contacts(tx, req.query, segment_id=req.params["audience_id"])


async def http_audience_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await _body(tx, await _member(tx, req.params["audience_id"], req.params["id"]))


async def http_audience_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    row = await _member(tx, req.params["audience_id"], req.params["id"])
    return await update_contact(tx, row["id"], req.json_object())


async def http_audience_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    """[rec] 200 even for unknown ids, `contact` = the identifier as given. The contact is one record
    shared by all audiences, so deleting it here deletes it everywhere."""
    identifier = req.params["id"]
    return {**await delete_contact(tx, identifier), "contact": identifier}


# ---- HTTP --------------------------------------------------------------------------------------

async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_contact(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_contacts(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_contact(tx, req.params["id"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_contact(tx, req.params["id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_contact(tx, req.params["id"])


OPS = [
    Op("contacts/create", "POST", "/contacts", http_create, status=201),
    Op("contacts/list", "GET", "/contacts", http_list),
    Op("contacts/get", "GET", "/contacts/{id}", http_get),
    Op("contacts/update", "PATCH", "/contacts/{id}", http_update),
    Op("contacts/remove", "DELETE", "/contacts/{id}", http_delete),
    Op("audiences/create-contact", "POST", "/audiences/{audience_id}/contacts", http_audience_create,
       status=201),
    Op("audiences/list-contacts", "GET", "/audiences/{audience_id}/contacts", http_audience_list),
    Op("audiences/get-contact", "GET", "/audiences/{audience_id}/contacts/{id}", http_audience_get),
    Op("audiences/update-contact", "PATCH", "/audiences/{audience_id}/contacts/{id}", http_audience_update),
    Op("audiences/remove-contact", "DELETE", "/audiences/{audience_id}/contacts/{id}", http_audience_delete),
]
