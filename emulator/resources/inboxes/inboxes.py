"""Inboxes: create, list, get (by id or address), update, delete (reference/inboxes.md §3.1–3.4).

Domain rules follow the emails group: the domain must be one of the account's; it must be verified
only under --strict-domains (as for sending), and it must have receiving enabled unless `forwarding`
asks for a receiving address on the account's managed `.resend.app` domain.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Reply
from emulator.core import errors, validate
from emulator.core.accounts import managed_domain
from emulator.core.errors import ApiError, invalid, missing_field
from emulator.core.pages import INBOX_DOCS, list_body, parse_page
from emulator.resources.inboxes.events import inbox_event
from emulator.resources.inboxes.store import inbox_body, inbox_item, require_inbox, seek

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

_LOCAL = re.compile(r"^[a-z0-9._%+-]{1,64}$")
_FROM_NAME_FORBIDDEN = re.compile(r"[:<>\x00-\x1f\x7f]")
IN_USE = "The email address `{address}` is already used by another inbox."
NOT_ON_ACCOUNT = "The domain `{name}` was not found on your account. Add it at resend.com/domains."


def _address(body: dict[str, Any]) -> tuple[str, str]:
    raw = validate.string(body, "email_address", required_=True)
    assert raw is not None
    address = raw.strip().lower()
    local, at, domain = address.rpartition("@")
    if not at or not _LOCAL.match(local) or local.startswith(".") or local.endswith(".") or ".." in local \
            or "." not in domain:
        raise invalid("Invalid `email_address` field. The email address needs to follow the"
                      " `email@example.com` format.")
    return address, domain


def _name(body: dict[str, Any]) -> str | None:
    value = validate.string(body, "name", max_len=64)
    if value is not None and not value.strip():
        raise invalid("The `name` field must not be empty.")
    return value.strip() if value is not None else None


def _from_name(body: dict[str, Any]) -> str | None:
    """A plain display name (not `Name <addr>`), at most 78 characters; `""` leaves it unset [sdk]."""
    value = validate.string(body, "from_name", max_len=78)
    if value is None or not value.strip():
        return None
    if _FROM_NAME_FORBIDDEN.search(value):
        raise invalid("The `from_name` field must be a plain name: no colon, `<`, `>` or line breaks.")
    return value.strip()


async def _domain(tx: Tx, name: str, forwarding: bool) -> Row:
    row = await tx.one("SELECT * FROM domains WHERE account = ? AND name = ?", (tx.account, name))
    if row is None:
        raise invalid(NOT_ON_ACCOUNT.format(name=name))
    if tx.emu.settings.strict_domains and row["status"] != "verified":
        raise invalid(f"The domain `{name}` is not verified. Please, add and verify your domain.")
    if not forwarding and row["receiving"] != "enabled":
        raise invalid(f"The domain `{name}` does not have receiving enabled. Enable receiving on the"
                      " domain, or create the inbox with `forwarding: true`.")
    return row


async def _check_free(tx: Tx, column: str, address: str, domain_name: str) -> None:
    """Addresses are unique across accounts: mail to one address reaches one inbox. Taken in this
    account: 409 ([docs]; the error name is undocumented, [recommendation] `conflict`). Taken in another
    (another team, or another isolated key): the domain is that account's, so the answer is the one for a
    domain the caller does not own, and tells nothing about the other account's inboxes."""
    row = await tx.one(f"SELECT account FROM inboxes WHERE {column} = ?", (address,))
    if row is None:
        return
    if row["account"] == tx.account:
        raise ApiError(errors.CONFLICT, IN_USE.format(address=address))
    raise invalid(NOT_ON_ACCOUNT.format(name=domain_name))


async def create_inbox(tx: Tx, body: dict[str, Any], source: str = "api") -> Reply:
    if body.get("email_address") is None:
        raise missing_field("email_address")
    address, domain_name = _address(body)
    name, from_name = _name(body), _from_name(body)
    forwarding = bool(validate.boolean(body, "forwarding"))
    domain = await _domain(tx, domain_name, forwarding)
    receiving = None
    if forwarding:
        receiving = f"{address.partition('@')[0]}.{domain_name.split('.')[0]}@{managed_domain(tx.account)}"
    await _check_free(tx, "email_address", address, domain_name)
    if receiving is not None:  # on the account's own managed domain: taken only by its own inboxes
        await _check_free(tx, "receiving_address", receiving, managed_domain(tx.account))
    row: Row = {"id": tx.new_id(), "account": tx.account, "name": name or address, "email_address": address,
                "domain_id": domain["id"], "receiving_address": receiving, "from_name": from_name,
                "agent_actions": "[]", "created_at": tx.now_db, "updated_at": tx.now_db}
    await tx.insert("inboxes", row)
    row = await require_inbox(tx, row["id"])
    await inbox_event(tx, "inbox.created", row, source)
    return Reply(await inbox_body(tx, row), 201)


async def list_inboxes(tx: Tx, query: Any) -> dict[str, Any]:
    page = parse_page(query, optional_limit=False, uuid_cursors=True, docs=INBOX_DOCS)
    rows, has_more = await seek(tx, "inboxes", page, "account = ?", [tx.account], order="seq")
    return list_body([await inbox_item(tx, row) for row in rows], has_more)


async def get_inbox(tx: Tx, inbox_id: str) -> dict[str, Any]:
    return await inbox_body(tx, await require_inbox(tx, inbox_id))


async def update_inbox(tx: Tx, inbox_id: str, body: dict[str, Any], source: str = "api") -> dict[str, Any]:
    row = await require_inbox(tx, inbox_id)
    if "name" not in body and "from_name" not in body:
        raise invalid("Provide at least one of `name` or `from_name`.")
    changes: dict[str, Any] = {"updated_at": tx.now_db}
    if "name" in body:
        name = _name(body)
        if name is None:
            raise invalid("The `name` field must not be empty.")
        changes["name"] = name
    if "from_name" in body:
        changes["from_name"] = _from_name(body)
    await tx.update("inboxes", row["id"], changes)
    row = {**row, **changes}
    await inbox_event(tx, "inbox.updated", row, source)
    return {"object": "inbox", "id": row["id"]}


async def delete_inbox(tx: Tx, inbox_id: str, source: str = "api") -> dict[str, Any]:
    row = await require_inbox(tx, inbox_id)
    threads = "SELECT id FROM inbox_threads WHERE inbox_id = ?"
    await tx.run(f"DELETE FROM inbox_thread_labels WHERE thread_id IN ({threads})", (row["id"],))
    await tx.run("DELETE FROM inbox_draft_files WHERE draft_id IN (SELECT id FROM inbox_drafts"
                 " WHERE inbox_id = ?)", (row["id"],))
    for table in ("inbox_messages", "inbox_threads", "inbox_drafts", "inbox_labels"):
        await tx.run(f"DELETE FROM {table} WHERE inbox_id = ?", (row["id"],))
    await tx.run("DELETE FROM inboxes WHERE id = ?", (row["id"],))
    await inbox_event(tx, "inbox.deleted", row, source)
    return {"object": "inbox", "id": row["id"], "deleted": True}


async def http_create(tx: Tx, req: ApiRequest) -> Reply:
    return await create_inbox(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_inboxes(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_inbox(tx, req.params["inbox_id"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_inbox(tx, req.params["inbox_id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_inbox(tx, req.params["inbox_id"])
