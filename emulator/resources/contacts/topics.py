"""Topics and a contact's topic subscriptions (reference contacts.md §6, §7).

A contact without an explicit choice for a topic has the topic's `default_subscription`. Topic lists
are always paginated (seed §4.5 rule 4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core import validate
from emulator.core.clock import from_db, iso_z
from emulator.core.errors import invalid, missing_field
from emulator.core.events import emit
from emulator.core.pages import fetch_page, list_body, parse_page
from emulator.resources.contacts.store import millis, require_contact, require_topic

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

SUBSCRIPTIONS = ("opt_in", "opt_out")
VISIBILITIES = ("public", "private")


def list_item(row: Row) -> dict[str, Any]:
    # List items carry no `object` (docs list-topics); the single-topic view does.
    return {"id": row["id"], "name": row["name"], "description": row["description"],
            "default_subscription": row["default_subscription"], "visibility": row["visibility"],
            "created_at": millis(row["created_at"])}


def serialize(row: Row) -> dict[str, Any]:
    return {"object": "topic", **list_item(row)}


def _event_data(row: Row, deleted: bool = False) -> dict[str, Any]:
    # TopicEventData [docs]: no `visibility`, a `deleted` flag; ISO `Z` times like every event payload.
    return {"id": row["id"], "name": row["name"], "description": row["description"],
            "default_subscription": row["default_subscription"], "deleted": deleted,
            "created_at": iso_z(from_db(row["created_at"])), "updated_at": iso_z(from_db(row["updated_at"]))}


def _editable(body: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if "name" in body:
        values["name"] = validate.string(body, "name", required_=True, max_len=50, allow_empty=False)
    if "description" in body:
        values["description"] = validate.string(body, "description", max_len=200)
    if "visibility" in body:
        values["visibility"] = validate.one_of(body, "visibility", VISIBILITIES) or "private"
    return values


async def create_topic(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    if body.get("name") is None:
        raise missing_field("name")
    if body.get("default_subscription") is None:
        raise missing_field("default_subscription")
    values = {"description": None, "visibility": "private", **_editable(body)}
    default = validate.one_of(body, "default_subscription", SUBSCRIPTIONS)
    row = {"id": tx.new_id(), "account": tx.account, **values, "default_subscription": default,
           "created_at": tx.now_db, "updated_at": tx.now_db}
    await tx.insert("topics", row)
    await emit(tx, "topic.created", _event_data(row), subject_id=row["id"])
    return {"object": "topic", "id": row["id"]}


async def get_topic(tx: Tx, topic_id: str) -> dict[str, Any]:
    return serialize(await require_topic(tx, topic_id))


async def list_topics(tx: Tx, query: Any) -> dict[str, Any]:
    rows, has_more = await fetch_page(tx, "topics", parse_page(query, optional_limit=False))
    return list_body([list_item(row) for row in rows], has_more)


async def update_topic(tx: Tx, topic_id: str, body: dict[str, Any]) -> dict[str, Any]:
    row = await require_topic(tx, topic_id)
    if "default_subscription" in body and body["default_subscription"] != row["default_subscription"]:
        raise invalid("The `default_subscription` of a topic cannot be changed after creation.")
    values = _editable(body)
    if values:
        values["updated_at"] = tx.now_db
        await tx.update("topics", row["id"], values)
        await emit(tx, "topic.updated", _event_data({**row, **values}), subject_id=row["id"])
    return {"object": "topic", "id": row["id"]}


async def delete_topic(tx: Tx, topic_id: str) -> dict[str, Any]:
    row = await require_topic(tx, topic_id)
    await tx.run("DELETE FROM contact_topics WHERE account = ? AND topic_id = ?", (tx.account, row["id"]))
    await tx.run("DELETE FROM topics WHERE account = ? AND id = ?", (tx.account, row["id"]))
    await emit(tx, "topic.deleted", _event_data({**row, "updated_at": tx.now_db}, deleted=True),
               subject_id=row["id"])
    return {"object": "topic", "id": row["id"], "deleted": True}


# ---- a contact's subscriptions ----------------------------------------------------------------

async def topic_subscription(tx: Tx, contact_id: str, topic_id: str) -> str:
    """`opt_in` or `opt_out`: the contact's explicit choice, else the topic's default."""
    row = await tx.one(
        "SELECT COALESCE(ct.subscription, t.default_subscription) AS subscription FROM topics t"
        " LEFT JOIN contact_topics ct ON ct.account = t.account AND ct.topic_id = t.id AND ct.contact_id = ?"
        " WHERE t.account = ? AND t.id = ?", (contact_id, tx.account, topic_id))
    if row is None:
        await require_topic(tx, topic_id)
    assert row is not None
    return str(row["subscription"])


def parse_choices(given: Any, field: str = "topics") -> list[tuple[str, str]]:
    """`[{id, subscription}]` → [(topic_id, subscription)], each checked for shape."""
    if not isinstance(given, list):
        raise invalid(f"The `{field}` field must be an `array`.")
    choices = []
    for item in given:
        if not isinstance(item, dict):
            raise invalid(f"Each item of `{field}` must be an `object` with `id` and `subscription`.")
        topic_id = validate.string(item, "id", required_=True)
        subscription = validate.one_of(item, "subscription", SUBSCRIPTIONS)
        if subscription is None:
            raise missing_field("subscription")
        choices.append((str(topic_id), subscription))
    return choices


def record_choice(tx: Tx, contact_id: str, topic_id: str, subscription: str) -> None:
    """Queue the contact's choice for an existing topic (no read: imports record thousands)."""
    tx.queue("INSERT INTO contact_topics (account, contact_id, topic_id, subscription, updated_at)"
             " VALUES (?, ?, ?, ?, ?) ON CONFLICT (account, contact_id, topic_id)"
             " DO UPDATE SET subscription = excluded.subscription, updated_at = excluded.updated_at",
             (tx.account, contact_id, topic_id, subscription, tx.now_db))


async def set_subscriptions(tx: Tx, contact_id: str, choices: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Record the contact's choices (topics must exist); returns those that changed the effective value."""
    changed = []
    for topic_id, subscription in choices:
        topic = await require_topic(tx, topic_id)
        before = await topic_subscription(tx, contact_id, topic["id"])
        record_choice(tx, contact_id, topic["id"], subscription)
        if before != subscription:
            changed.append({"id": topic["id"], "subscription": subscription})
    return changed


async def list_contact_topics(tx: Tx, id_or_email: str, query: Any) -> dict[str, Any]:
    """Every topic with the contact's effective subscription [recommendation], newest topic first; all of
    them when `limit` is omitted (the docs mark this list's limit optional, unlike GET /topics)."""
    contact = await require_contact(tx, id_or_email)
    rows, has_more = await fetch_page(tx, "topics", parse_page(query, optional_limit=True))
    chosen = {row["topic_id"]: row["subscription"] for row in await tx.all(
        "SELECT topic_id, subscription FROM contact_topics WHERE account = ? AND contact_id = ?",
        (tx.account, contact["id"]))}
    data = [{"id": row["id"], "name": row["name"], "description": row["description"],
             "subscription": chosen.get(row["id"], row["default_subscription"])} for row in rows]
    return list_body(data, has_more)


async def update_contact_topics(tx: Tx, id_or_email: str, given: Any) -> dict[str, Any]:
    contact = await require_contact(tx, id_or_email)
    if given is None:
        raise missing_field("topics")
    choices = parse_choices(given)
    changed = await set_subscriptions(tx, contact["id"], choices)
    if changed:
        await emit(tx, "contact.topics.updated", {"email": contact["email"], "topics": changed},
                   subject_id=contact["id"])
    # The OpenAPI body, plus the `id` (the contact's) both SDKs' types declare.
    return {"object": "contact_topics", "id": contact["id"], "contact_id": contact["id"],
            "topics": [{"id": topic_id, "subscription": sub} for topic_id, sub in choices]}


# ---- HTTP --------------------------------------------------------------------------------------

async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_topic(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_topics(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_topic(tx, req.params["id"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_topic(tx, req.params["id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_topic(tx, req.params["id"])


async def http_contact_topics(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_contact_topics(tx, req.params["contact_id"], req.query)


async def http_update_contact_topics(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    # The Python SDK sends the bare array; the OpenAPI body is `{topics: [...]}`. Both are accepted.
    body = req.body
    given = body.get("topics") if isinstance(body, dict) else body
    return await update_contact_topics(tx, req.params["contact_id"], given)


OPS = [
    Op("topics/create", "POST", "/topics", http_create, status=201),
    Op("topics/list", "GET", "/topics", http_list),
    Op("topics/get", "GET", "/topics/{id}", http_get),
    Op("topics/update", "PATCH", "/topics/{id}", http_update),
    Op("topics/remove", "DELETE", "/topics/{id}", http_delete),
    Op("contacts/list-topics", "GET", "/contacts/{contact_id}/topics", http_contact_topics),
    Op("contacts/update-topics", "PATCH", "/contacts/{contact_id}/topics", http_update_contact_topics),
]
