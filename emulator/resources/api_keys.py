"""API keys. Reference: reference/api-keys.md."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.api.auth import FULL_ACCESS, SENDING_ACCESS, Credential, isolated_account, keyring
from emulator.api.ops import ApiRequest, Op
from emulator.core import validate
from emulator.core.clock import from_db, pg_timestamp
from emulator.core.config import DEFAULT_ACCOUNT
from emulator.core.errors import not_found
from emulator.core.pages import fetch_page, list_body, parse_page

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx
    from emulator.core.emulator import Emulator

TABLES = [
    """CREATE TABLE IF NOT EXISTS api_keys (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        token TEXT NOT NULL UNIQUE,
        permission TEXT NOT NULL,
        domain_id TEXT,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        deleted INTEGER NOT NULL DEFAULT 0
    )""",
]


def _credential(row: Row) -> Credential:
    return Credential(row["account"], row["id"], row["permission"], row["domain_id"],
                      active=not row["deleted"])


def serialize(row: Row) -> dict[str, Any]:
    last_used = row["last_used_at"]
    return {
        "id": row["id"],
        "name": row["name"],
        "created_at": pg_timestamp(from_db(row["created_at"])),
        "last_used_at": pg_timestamp(from_db(last_used)) if last_used else None,
    }


async def _insert_key(tx: Tx, name: str, token: str, permission: str,
                      domain_id: str | None) -> Row:
    row: Row = {
        "id": tx.new_id(), "account": tx.account, "name": name, "token": token,
        "permission": permission, "domain_id": domain_id if permission == SENDING_ACCESS else None,
        "created_at": tx.now_db, "last_used_at": None, "deleted": 0,
    }
    await tx.insert("api_keys", row)
    ring = keyring(tx.emu)
    tx.after_commit(lambda: ring.put(token, _credential(row)))
    return row


async def create_api_key(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    # No length limit: the docs say 50, but the real service created and listed back a 51-character name
    # (api-keys.md §1); only the request body limit bounds it. Renaming follows the same rule.
    name = validate.string(body, "name", required_=True)
    permission = validate.one_of(body, "permission", [FULL_ACCESS, SENDING_ACCESS]) or FULL_ACCESS
    domain_id = validate.string(body, "domain_id")
    if domain_id is not None and permission == SENDING_ACCESS:
        domain = await tx.one("SELECT id FROM domains WHERE id = ? AND account = ?",
                              (domain_id, tx.account))
        if domain is None:
            raise not_found("Domain")
    row = await _insert_key(tx, name or "", tx.emu.ids.api_key(), permission, domain_id)
    return {"id": row["id"], "object": "api_key", "token": row["token"]}


async def list_api_keys(tx: Tx, query: Any) -> dict[str, Any]:
    page = parse_page(query, optional_limit=True)
    rows, has_more = await fetch_page(tx, "api_keys", page, "account = ? AND deleted = 0")
    return list_body([serialize(row) for row in rows], has_more)


async def _live_key(tx: Tx, key_id: str) -> Row:
    row = await tx.one("SELECT * FROM api_keys WHERE id = ? AND account = ? AND deleted = 0",
                       (key_id, tx.account))
    if row is None:
        raise not_found("API key")
    return row


async def update_api_key(tx: Tx, key_id: str, body: dict[str, Any]) -> dict[str, Any]:
    await _live_key(tx, key_id)
    name = validate.string(body, "name", required_=True)
    await tx.update("api_keys", key_id, {"name": name})
    return {"object": "api_key", "id": key_id}


async def delete_api_key(tx: Tx, key_id: str) -> dict[str, Any]:
    await _live_key(tx, key_id)
    # Kept as a tombstone: the docs answer 403 "API key is not active" for a deleted key.
    await tx.update("api_keys", key_id, {"deleted": 1})
    ring = keyring(tx.emu)
    tx.after_commit(lambda: ring.deactivate(key_id))
    return {"object": "api_key", "id": key_id, "deleted": True}


async def provision(emu: Emulator) -> None:
    """Create the configured keys (full access, default account) and load every key into the ring."""
    async with emu.transaction(DEFAULT_ACCOUNT) as tx:
        await tx.run("INSERT OR IGNORE INTO accounts (id, created_at) VALUES (?, ?)",
                     (DEFAULT_ACCOUNT, tx.now_db))
        for index, token in enumerate(emu.settings.provisioned_keys):
            if await tx.one("SELECT id FROM api_keys WHERE token = ?", (token,)) is None:
                await _insert_key(tx, f"Emulator key {index + 1}", token, FULL_ACCESS, None)
        rows = await tx.all("SELECT * FROM api_keys ORDER BY seq")
    ring = keyring(emu)
    ring.clear()
    for row in rows:  # by seq: an isolated account is labelled by the key that made it
        ring.put(row["token"], _credential(row))
        if row["account"] != DEFAULT_ACCOUNT:
            ring.label(row["account"], row["token"])


async def provision_isolated_account(emu: Emulator, token: str) -> Credential:
    """Isolation mode: an unknown well-formed key becomes a full-access key of a new account."""
    async with emu.transaction(isolated_account(emu, token)) as tx:
        existing = await tx.one("SELECT * FROM api_keys WHERE token = ?", (token,))
        if existing is not None:
            return _credential(existing)
        await tx.run("INSERT INTO accounts (id, created_at) VALUES (?, ?)", (tx.account, tx.now_db))
        row = await _insert_key(tx, "Isolated account key", token, FULL_ACCESS, None)
        ring = keyring(emu)
        tx.after_commit(lambda: ring.label(row["account"], token))
    return _credential(row)


def install(emu: Emulator) -> None:
    keyring(emu).provision_isolated = provision_isolated_account
    emu.reset_hooks.append(provision)


async def start(emu: Emulator) -> None:
    await provision(emu)


async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_api_key(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_api_keys(tx, req.query)


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_api_key(tx, req.params["api_key_id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_api_key(tx, req.params["api_key_id"])


OPS = [
    Op("api-keys/create", "POST", "/api-keys", http_create, status=201),
    Op("api-keys/list", "GET", "/api-keys", http_list),
    Op("api-keys/update", "PATCH", "/api-keys/{api_key_id}", http_update),
    Op("api-keys/remove", "DELETE", "/api-keys/{api_key_id}", http_delete),
]
