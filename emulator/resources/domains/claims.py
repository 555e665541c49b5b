"""Domain claims: taking over a domain verified by another team (reference/domains.md §7)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op, Reply
from emulator.core.clock import from_db, pg_timestamp, to_db
from emulator.core.errors import not_found
from emulator.resources.domains.service import (
    domains_changed,
    get_domain_row,
    insert_domain,
    parse_domain_name,
    parse_region,
)

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

TABLES = [
    """CREATE TABLE IF NOT EXISTS domain_claims (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        domain_id TEXT NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        region TEXT NOT NULL,
        token TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
    )""",
]
CLAIM_LIFETIME = timedelta(days=7)


# ---- services ------------------------------------------------------------------------------------

def claim_body(claim: Row) -> dict[str, Any]:
    return {
        "object": "domain_claim", "id": claim["id"], "name": claim["name"], "status": claim["status"],
        "domain_id": claim["domain_id"], "region": claim["region"],
        "record": {"type": "TXT", "name": claim["name"],
                   "value": f"resend-domain-verification={claim['token']}", "ttl": "Auto"},
        "blocked_reason": None, "failure_reason": None,
        "created_at": pg_timestamp(from_db(claim["created_at"])),
        "expires_at": pg_timestamp(from_db(claim["expires_at"])),
    }


async def create_claim(tx: Tx, body: dict[str, Any]) -> Reply:
    name = parse_domain_name(body)
    region = parse_region(body)
    existing = await tx.one(
        "SELECT * FROM domain_claims WHERE account = ? AND name = ? AND status = 'pending'"
        " AND region = ? AND expires_at > ? ORDER BY seq DESC",
        (tx.account, name, region, tx.now_db),
    )
    if existing is not None:
        return Reply(claim_body(existing), 200)
    await tx.run("UPDATE domain_claims SET status = 'superseded' WHERE account = ? AND name = ?"
                 " AND status = 'pending'", (tx.account, name))
    placeholder = await tx.one("SELECT * FROM domains WHERE account = ? AND name = ?", (tx.account, name))
    if placeholder is None:
        placeholder = await insert_domain(tx, name, body, {"sending": "enabled", "receiving": "disabled"},
                                           "opportunistic")
    claim: Row = {
        "id": tx.new_id(), "account": tx.account, "domain_id": placeholder["id"], "name": name,
        "status": "pending", "region": region, "token": tx.emu.ids.hex(16), "created_at": tx.now_db,
        "expires_at": to_db(tx.now + CLAIM_LIFETIME),
    }
    await tx.insert("domain_claims", claim)
    return Reply(claim_body(claim), 201)


async def _latest_claim(tx: Tx, domain_id: str) -> Row:
    await get_domain_row(tx, domain_id)
    claim = await tx.one("SELECT * FROM domain_claims WHERE account = ? AND domain_id = ?"
                         " ORDER BY seq DESC LIMIT 1", (tx.account, domain_id))
    if claim is None:
        raise not_found("Domain claim")
    return claim


async def get_claim(tx: Tx, domain_id: str) -> dict[str, Any]:
    claim = await _latest_claim(tx, domain_id)
    if claim["status"] == "pending" and claim["expires_at"] <= tx.now_db:
        claim["status"] = "expired"
        await tx.update("domain_claims", claim["id"], {"status": "expired"})
    return claim_body(claim)


async def verify_claim(tx: Tx, domain_id: str) -> dict[str, Any]:
    """The DNS proof is accepted at once: the domain leaves its other owner and the claim completes."""
    claim = await _latest_claim(tx, domain_id)
    if claim["status"] == "pending":
        others = await tx.all("SELECT * FROM domains WHERE name = ? AND id != ?", (claim["name"], domain_id))
        for other in others:
            await tx.run("DELETE FROM domains WHERE id = ?", (other["id"],))
            domains_changed(tx)
        claim["status"] = "completed"
        await tx.update("domain_claims", claim["id"], {"status": "completed"})
    return claim_body(claim)


# ---- HTTP --------------------------------------------------------------------------------------

async def http_create_claim(tx: Tx, req: ApiRequest) -> Reply:
    return await create_claim(tx, req.json_object())


async def http_get_claim(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_claim(tx, req.params["domain_id"])


async def http_verify_claim(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await verify_claim(tx, req.params["domain_id"])


OPS = [
    Op("domains/create-claim", "POST", "/domains/claim", http_create_claim, status=201),
    Op("domains/get-claim", "GET", "/domains/{domain_id}/claim", http_get_claim),
    Op("domains/verify-claim", "POST", "/domains/{domain_id}/claim/verify", http_verify_claim),
]
