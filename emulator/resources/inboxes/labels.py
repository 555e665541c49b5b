"""Labels of an inbox and its agent settings (reference §3.11–3.12; seed §2.10, §2.11).

Agent settings: the seed and docs name the field `enabled_actions` with `archive_thread` and
`delete_thread`; the Python SDK preview sends `actions` with `archive` and `move_to_trash`. Both
spellings are accepted and both are served, stored once under the seed's names.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Reply
from emulator.core import validate
from emulator.core.errors import invalid, missing_field
from emulator.resources.inboxes.store import COLORS, require_inbox, require_label, ts

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

DEFAULT_COLOR = "mauve"  # [recommendation] the default is undocumented
MAX_LABEL_NAME = 64  # [recommendation]
ACTIONS = ("draft_reply", "forward_thread", "add_labels", "assign_thread", "mark_as_spam", "archive_thread",
           "delete_thread")
SDK_ACTION_NAMES = {"archive_thread": "archive", "delete_thread": "move_to_trash"}
MAX_INSTRUCTIONS = 4000
MAX_TONE = 64


def label_body(row: Row) -> dict[str, Any]:
    return {"object": "inbox_label", "id": row["id"], "name": row["name"], "color": row["color"],
            "created_at": ts(row["created_at"])}


def _label_name(body: dict[str, Any]) -> str:
    name = validate.string(body, "name", max_len=MAX_LABEL_NAME, allow_empty=False)
    assert name is not None
    return name.strip()


async def create_label(tx: Tx, inbox_id: str, body: dict[str, Any]) -> Reply:
    inbox = await require_inbox(tx, inbox_id)
    if body.get("name") is None:
        raise missing_field("name")
    name = _label_name(body)
    color = validate.one_of(body, "color", COLORS) or DEFAULT_COLOR
    row: Row = {"id": tx.new_id(), "account": tx.account, "inbox_id": inbox["id"], "name": name,
                "color": color, "created_at": tx.now_db}
    await tx.insert("inbox_labels", row)
    return Reply(label_body(row), 201)


async def list_labels(tx: Tx, inbox_id: str) -> dict[str, Any]:
    """Every label, oldest first, and no `has_more` [docs]."""
    inbox = await require_inbox(tx, inbox_id)
    rows = await tx.all("SELECT * FROM inbox_labels WHERE inbox_id = ? ORDER BY seq", (inbox["id"],))
    return {"object": "list", "data": [label_body(row) for row in rows]}


async def update_label(tx: Tx, inbox_id: str, label_id: str, body: dict[str, Any]) -> dict[str, Any]:
    label = await require_label(tx, await require_inbox(tx, inbox_id), label_id)
    if body.get("name") is None and body.get("color") is None:
        raise invalid("Provide at least one of `name` or `color`.")
    changes: dict[str, Any] = {}
    if body.get("name") is not None:
        changes["name"] = _label_name(body)
    if body.get("color") is not None:
        changes["color"] = validate.one_of(body, "color", COLORS)
    await tx.update("inbox_labels", label["id"], changes)
    return {"object": "inbox_label", "id": label["id"]}


async def delete_label(tx: Tx, inbox_id: str, label_id: str) -> dict[str, Any]:
    """Seed §2.10 result; the label leaves every thread without `inbox.thread.labels.updated` [docs]."""
    label = await require_label(tx, await require_inbox(tx, inbox_id), label_id)
    await tx.run("DELETE FROM inbox_thread_labels WHERE label_id = ?", (label["id"],))
    await tx.run("DELETE FROM inbox_labels WHERE id = ?", (label["id"],))
    return {"object": "inbox_label", "id": label["id"], "deleted": True}


# ---- agent settings -----------------------------------------------------------------------------

def agent_body(inbox: Row) -> dict[str, Any]:
    """Seed §2.11: an inbox without an agent answers null, null, []."""
    actions = json.loads(inbox["agent_actions"])
    return {"object": "inbox_agent", "instructions": inbox["agent_instructions"], "tone": inbox["agent_tone"],
            "enabled_actions": actions, "actions": [SDK_ACTION_NAMES.get(a, a) for a in actions]}


def _text_setting(body: dict[str, Any], name: str, limit: int) -> str | None:
    value = validate.string(body, name, max_len=limit)
    if value is not None and not value.strip():
        raise invalid(f"The `{name}` field must not be empty. Send `null` to clear it.")
    return value


def _actions(body: dict[str, Any]) -> list[str]:
    field = "enabled_actions" if "enabled_actions" in body else "actions"
    value = body.get(field)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise invalid(f"The `{field}` field must be an array of strings.")
    from_sdk = {sdk: seed for seed, sdk in SDK_ACTION_NAMES.items()}
    chosen: list[str] = []
    for item in value:
        action = from_sdk.get(item, item) if field == "actions" else item
        if action not in ACTIONS:
            raise invalid(f'Invalid `{field}` value "{item}". Must be one of: {", ".join(ACTIONS)}.')
        if action not in chosen:
            chosen.append(action)
    return chosen


async def get_agent(tx: Tx, inbox_id: str) -> dict[str, Any]:
    return agent_body(await require_inbox(tx, inbox_id))


async def update_agent(tx: Tx, inbox_id: str, body: dict[str, Any]) -> dict[str, Any]:
    inbox = await require_inbox(tx, inbox_id)
    if not any(name in body for name in ("instructions", "tone", "enabled_actions", "actions")):
        raise invalid("Provide at least one of `instructions`, `tone` or `enabled_actions`.")
    changes: dict[str, Any] = {"agent_id": inbox["agent_id"] or tx.new_id(), "updated_at": tx.now_db}
    if "instructions" in body:
        changes["agent_instructions"] = _text_setting(body, "instructions", MAX_INSTRUCTIONS)
    if "tone" in body:
        changes["agent_tone"] = _text_setting(body, "tone", MAX_TONE)
    if "enabled_actions" in body or "actions" in body:
        changes["agent_actions"] = json.dumps(_actions(body))
    await tx.update("inboxes", inbox["id"], changes)
    return {"object": "inbox_agent", "id": changes["agent_id"]}


async def http_create(tx: Tx, req: ApiRequest) -> Reply:
    return await create_label(tx, req.params["inbox_id"], req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_labels(tx, req.params["inbox_id"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_label(tx, req.params["inbox_id"], req.params["label_id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_label(tx, req.params["inbox_id"], req.params["label_id"])


async def http_get_agent(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_agent(tx, req.params["inbox_id"])


async def http_update_agent(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_agent(tx, req.params["inbox_id"], req.json_object())
