"""Templates: create, list, get, update, delete, publish, duplicate. Reference: reference/templates.md.

A template is a row of template-level fields (name, alias, status, publication) plus versions holding
the content (from, subject, reply_to, html, text, variables). `current_version_id` is the version being
edited; `published_version_id` the one sends use. Editing a published template starts a new draft
version, so sends keep using the published content until the next publish [docs] version-history.
Every `{id}` in a path is an id or an alias, never UUID-validated. Templates emit no webhook events.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core import errors
from emulator.core.clock import from_db, pg_timestamp
from emulator.core.errors import ApiError, invalid, missing_field, not_found
from emulator.core.pages import fetch_page, parse_page
from emulator.resources.templates import fields
from emulator.resources.templates.render import (
    RenderedTemplate,
    check_send_variables,
    render,
    resolve_values,
)

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TABLES = [
    """CREATE TABLE IF NOT EXISTS templates (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        alias TEXT,
        status TEXT NOT NULL,
        current_version_id TEXT NOT NULL,
        published_version_id TEXT,
        published_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS templates_alias ON templates (account, alias)",
    # `reply_to` and `variables` are JSON; variable timestamps are stored in the db text form.
    """CREATE TABLE IF NOT EXISTS template_versions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        template_id TEXT NOT NULL,
        from_addr TEXT,
        subject TEXT,
        reply_to TEXT,
        html TEXT NOT NULL,
        text TEXT,
        variables TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS template_versions_template ON template_versions (account, template_id)",
]
Content = dict[str, Any]


def _ts(value: str | None) -> str | None:
    return pg_timestamp(from_db(value)) if value is not None else None


# ---- storage -----------------------------------------------------------------------------------

def _content_of(version: Row) -> Content:
    return {
        "from": version["from_addr"], "subject": version["subject"],
        "reply_to": json.loads(version["reply_to"]) if version["reply_to"] is not None else None,
        "html": version["html"], "text": version["text"], "variables": json.loads(version["variables"]),
    }


def _version_columns(content: Content) -> dict[str, Any]:
    reply = content["reply_to"]
    return {
        "from_addr": content["from"], "subject": content["subject"],
        "reply_to": json.dumps(reply) if reply is not None else None,
        "html": content["html"], "text": content["text"], "variables": json.dumps(content["variables"]),
    }


async def _insert_version(tx: Tx, template_id: str, content: Content) -> str:
    version_id = tx.new_id()
    await tx.insert("template_versions", {
        "id": version_id, "account": tx.account, "template_id": template_id,
        **_version_columns(content), "created_at": tx.now_db,
    })
    return version_id


async def _version(tx: Tx, version_id: str) -> Content:
    row = await tx.one("SELECT * FROM template_versions WHERE id = ? AND account = ?",
                       (version_id, tx.account))
    assert row is not None, "a template always has its versions"
    return _content_of(row)


async def find_template(tx: Tx, id_or_alias: str) -> Row:
    """The account's template whose id or alias is `id_or_alias` (an id match wins)."""
    row = await tx.one(
        "SELECT * FROM templates WHERE account = ? AND (id = ? OR alias = ?) ORDER BY id = ? DESC LIMIT 1",
        (tx.account, id_or_alias, id_or_alias, id_or_alias),
    )
    if row is None:
        raise not_found("Template")
    return row


async def published_version(tx: Tx, template: Row) -> Content | None:
    """The content sends use, or None for a template never published."""
    version_id = template["published_version_id"]
    return await _version(tx, version_id) if version_id is not None else None


def _stamp_variables(new: list[dict[str, Any]], old: list[dict[str, Any]], tx: Tx) -> list[dict[str, Any]]:
    """Give each variable an id and timestamps; a key that already existed keeps its id and `created_at`."""
    previous = {item["key"]: item for item in old}
    stamped = []
    for item in new:
        before = previous.get(item["key"])
        if before is not None and (before["type"], before["fallback_value"]) == (item["type"],
                                                                                item["fallback_value"]):
            stamped.append(before)
            continue
        stamped.append({
            "id": before["id"] if before else tx.new_id(), "key": item["key"], "type": item["type"],
            "fallback_value": item["fallback_value"],
            "created_at": before["created_at"] if before else tx.now_db, "updated_at": tx.now_db,
        })
    return stamped


async def _check_alias(tx: Tx, alias: str | None, template_id: str | None = None) -> None:
    # Undocumented; [rec] 422 validation_error so that aliases stay unique within the account.
    if alias is None:
        return
    clash = await tx.one("SELECT id FROM templates WHERE account = ? AND (alias = ? OR id = ?) AND id != ?",
                         (tx.account, alias, alias, template_id or ""))
    if clash is not None:
        raise invalid(f"The alias `{alias}` is already used by another template.")


# ---- serialisation -----------------------------------------------------------------------------

def _variable_body(item: dict[str, Any]) -> dict[str, Any]:
    return {"id": item["id"], "key": item["key"], "type": item["type"],
            "fallback_value": item["fallback_value"],
            "created_at": _ts(item["created_at"]), "updated_at": _ts(item["updated_at"])}


def list_item(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"], "name": row["name"], "status": row["status"],
        "published_at": _ts(row["published_at"]), "created_at": _ts(row["created_at"]),
        "updated_at": _ts(row["updated_at"]), "alias": row["alias"],
    }


def has_unpublished_versions(row: Row) -> bool:
    # A never-published draft counts as unpublished: its only version is (templates.md [rec]).
    return bool(row["current_version_id"] != row["published_version_id"])


def serialize(row: Row, content: Content) -> dict[str, Any]:
    return {
        "object": "template", "id": row["id"], "current_version_id": row["current_version_id"],
        "alias": row["alias"], "name": row["name"],
        "created_at": _ts(row["created_at"]), "updated_at": _ts(row["updated_at"]),
        "status": row["status"], "published_at": _ts(row["published_at"]),
        "from": content["from"], "subject": content["subject"], "reply_to": content["reply_to"],
        "html": content["html"], "text": content["text"],
        "variables": [_variable_body(item) for item in content["variables"]],
        "has_unpublished_versions": has_unpublished_versions(row),
    }


def _ref(template_id: str) -> dict[str, Any]:
    return {"id": template_id, "object": "template"}


# ---- services ----------------------------------------------------------------------------------

async def _insert_template(tx: Tx, name: str, alias: str | None, content: Content) -> str:
    template_id = tx.new_id()
    content = {**content, "variables": _stamp_variables(content["variables"], [], tx)}
    version_id = await _insert_version(tx, template_id, content)
    await tx.insert("templates", {
        "id": template_id, "account": tx.account, "name": name, "alias": alias, "status": "draft",
        "current_version_id": version_id, "published_version_id": None, "published_at": None,
        "created_at": tx.now_db, "updated_at": tx.now_db,
    })
    return template_id


async def create_template(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    name, alias, content = fields.create_body(body)
    await _check_alias(tx, alias)
    return _ref(await _insert_template(tx, name, alias, content))


async def get_template(tx: Tx, id_or_alias: str) -> dict[str, Any]:
    """The latest (draft) content, `status` telling whether a version was ever published [rec]."""
    row = await find_template(tx, id_or_alias)
    return serialize(row, await _version(tx, row["current_version_id"]))


async def list_templates(tx: Tx, query: Any) -> dict[str, Any]:
    rows, has_more = await fetch_page(tx, "templates", parse_page(query, optional_limit=False))
    # Key order of the docs' example: object, data, has_more.
    return {"object": "list", "data": [list_item(row) for row in rows], "has_more": has_more}


async def _edit_draft(tx: Tx, row: Row, changes: Content) -> str:
    """Apply content changes to the draft; a published current version is left alone and copied."""
    current = await _version(tx, row["current_version_id"])
    if "variables" in changes:
        changes["variables"] = _stamp_variables(changes["variables"] or [], current["variables"], tx)
    merged = {**current, **changes}
    if row["current_version_id"] == row["published_version_id"]:
        return await _insert_version(tx, row["id"], merged)
    await tx.update("template_versions", row["current_version_id"], _version_columns(merged))
    return str(row["current_version_id"])


async def update_template(tx: Tx, id_or_alias: str, body: dict[str, Any]) -> dict[str, Any]:
    row = await find_template(tx, id_or_alias)
    updates: dict[str, Any] = {}
    if "name" in body:
        updates["name"] = fields.name(body, required=False)
    if "alias" in body:
        updates["alias"] = fields.alias(body)
        await _check_alias(tx, updates["alias"], row["id"])
    changes = fields.content(body, creating=False)
    # [rec] Only content edits make a draft; renaming or re-aliasing applies to the template at once.
    if changes:
        updates["current_version_id"] = await _edit_draft(tx, row, changes)
    if updates:
        updates["updated_at"] = tx.now_db
        await tx.update("templates", row["id"], updates)
    return _ref(row["id"])


async def delete_template(tx: Tx, id_or_alias: str) -> dict[str, Any]:
    row = await find_template(tx, id_or_alias)
    await tx.run("DELETE FROM template_versions WHERE account = ? AND template_id = ?",
                 (tx.account, row["id"]))
    await tx.run("DELETE FROM templates WHERE account = ? AND id = ?", (tx.account, row["id"]))
    return {"object": "template", "id": row["id"], "deleted": True}


async def publish_template(tx: Tx, id_or_alias: str) -> dict[str, Any]:
    row = await find_template(tx, id_or_alias)
    # [rec] Publishing with nothing new to publish is an idempotent 200 that changes nothing.
    if has_unpublished_versions(row):
        await tx.update("templates", row["id"], {
            "status": "published", "published_version_id": row["current_version_id"],
            "published_at": tx.now_db, "updated_at": tx.now_db,
        })
    return _ref(row["id"])


async def duplicate_template(tx: Tx, id_or_alias: str) -> dict[str, Any]:
    """[rec] A draft copy of the latest content named `<name> (Copy)`, without alias (aliases are unique)."""
    row = await find_template(tx, id_or_alias)
    content = await _version(tx, row["current_version_id"])
    plain = [{key: item[key] for key in ("key", "type", "fallback_value")} for item in content["variables"]]
    return _ref(await _insert_template(tx, f"{row['name']} (Copy)", None, {**content, "variables": plain}))


# ---- HTTP --------------------------------------------------------------------------------------

async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_template(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_templates(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_template(tx, req.params["id"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_template(tx, req.params["id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_template(tx, req.params["id"])


async def http_publish(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await publish_template(tx, req.params["id"])


async def http_duplicate(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await duplicate_template(tx, req.params["id"])


OPS = [
    Op("templates/create", "POST", "/templates", http_create, status=201),
    Op("templates/list", "GET", "/templates", http_list),
    Op("templates/get", "GET", "/templates/{id}", http_get),
    Op("templates/update", "PATCH", "/templates/{id}", http_update),
    Op("templates/remove", "DELETE", "/templates/{id}", http_delete),
    Op("templates/publish", "POST", "/templates/{id}/publish", http_publish),
    Op("templates/duplicate", "POST", "/templates/{id}/duplicate", http_duplicate),
]


# ---- sends -------------------------------------------------------------------------------------

def _template_id(template: Any) -> str:
    if not isinstance(template, dict):
        raise invalid("The `template` field must be an `object`.")
    template_id = template.get("id")
    if template_id is None:
        raise missing_field("template.id")
    if not isinstance(template_id, str) or not template_id:
        raise invalid("The `template.id` field must be a non-empty `string`.")
    return template_id


async def resolve_template(tx: Tx, template: Any) -> RenderedTemplate:
    """Render the send's `template: {id, variables}` (id or alias) from the last *published* version."""
    template_id = _template_id(template)
    given = check_send_variables(template.get("variables"))
    row = await find_template(tx, template_id)
    version = await published_version(tx, row)
    if version is None:
        # [seed] "a template must be published before it can be used"; status/message [rec].
        raise ApiError(errors.VALIDATION_ERROR, f"The template `{template_id}` is not published yet."
                       " Publish it before using it to send emails.")
    values = resolve_values(version["variables"], given)
    text = version["text"]
    return RenderedTemplate(
        template_id=row["id"],
        from_=version["from"],
        subject=render(version["subject"], values) if version["subject"] is not None else None,
        reply_to=version["reply_to"],
        html=render(version["html"], values),
        text=render(text, values) if text is not None else None,
    )
