"""Domains: records, regions, capabilities, tracking, verification, claims (reference/domains.md)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core import errors, validate
from emulator.core.clock import from_db, iso_z, pg_timestamp
from emulator.core.errors import ApiError, invalid, not_found
from emulator.core.events import emit
from emulator.core.jobs import schedule
from emulator.core.pages import fetch_page, list_body, parse_page

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx
    from emulator.core.emulator import Emulator

TABLES = [
    """CREATE TABLE IF NOT EXISTS domains (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        region TEXT NOT NULL,
        custom_return_path TEXT NOT NULL,
        open_tracking INTEGER NOT NULL,
        click_tracking INTEGER NOT NULL,
        tls TEXT NOT NULL,
        sending TEXT NOT NULL,
        receiving TEXT NOT NULL,
        tracking_subdomain TEXT,
        dkim TEXT NOT NULL,
        records TEXT NOT NULL,
        verify_outcome TEXT NOT NULL DEFAULT 'verified',
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS domains_name ON domains (name)",
]
REGIONS = ["us-east-1", "eu-west-1", "sa-east-1", "ap-northeast-1"]
TLS_MODES = ["opportunistic", "enforced"]
CAPABILITY = ["enabled", "disabled"]
# Outcomes a test can choose for the next verification (control plane); `verified` by default.
OUTCOMES = ["verified", "failed", "partially_verified", "partially_failed", "temporary_failure"]
DOMAIN_NAME = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
DKIM_PREFIX = "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ"


# ---- records -----------------------------------------------------------------------------------

def _zone_suffix(name: str) -> str:
    """`mail.acme.dev` → `.mail` (labels are relative to the registrable zone, DNS convention)."""
    labels = name.split(".")
    return "." + ".".join(labels[:-2]) if len(labels) > 2 else ""


def build_records(domain: Row, status: str) -> list[dict[str, Any]]:
    suffix, region = _zone_suffix(domain["name"]), domain["region"]
    return_path = domain["custom_return_path"] + suffix
    records: list[dict[str, Any]] = []
    if domain["sending"] == "enabled":
        records += [
            {"record": "SPF", "name": return_path, "type": "MX", "ttl": "Auto", "status": status,
             "value": f"feedback-smtp.{region}.amazonses.com", "priority": 10},
            {"record": "SPF", "name": return_path, "type": "TXT", "ttl": "Auto", "status": status,
             "value": '"v=spf1 include:amazonses.com ~all"'},
            {"record": "DKIM", "name": f"resend._domainkey{suffix}", "type": "TXT", "ttl": "Auto",
             "status": status, "value": f"p={domain['dkim']}"},
        ]
    if domain["receiving"] == "enabled":
        records.append({"record": "Receiving", "name": suffix.lstrip(".") or "@", "type": "MX",
                        "ttl": "Auto", "status": status,
                        "value": f"inbound-smtp.{region}.amazonaws.com", "priority": 10})
    if domain["tracking_subdomain"]:
        records.append({"record": "Tracking", "name": f"{domain['tracking_subdomain']}.{domain['name']}",
                        "type": "CNAME", "ttl": "Auto", "status": status,
                        "value": "links1.resend-dns.com"})
    return records


# ---- serialisation -----------------------------------------------------------------------------

def _capabilities(row: Row) -> dict[str, str]:
    return {"sending": row["sending"], "receiving": row["receiving"]}


def list_item(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"], "name": row["name"], "status": row["status"],
        "created_at": pg_timestamp(from_db(row["created_at"])), "region": row["region"],
        "open_tracking": bool(row["open_tracking"]), "click_tracking": bool(row["click_tracking"]),
        "capabilities": _capabilities(row),
    }


def serialize(row: Row, with_object: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"object": "domain"} if with_object else {}
    body.update(list_item(row))
    # Always present, null until set (the docs' create/get examples; the OpenAPI marks it nullable).
    body["tracking_subdomain"] = row["tracking_subdomain"] or None
    body["records"] = json.loads(row["records"])
    return body


def event_data(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"], "name": row["name"], "status": row["status"],
        "created_at": iso_z(from_db(row["created_at"])), "region": row["region"],
        "records": json.loads(row["records"]),
    }


# ---- validation --------------------------------------------------------------------------------

def parse_domain_name(body: dict[str, Any]) -> str:
    name = validate.string(body, "name", required_=True)
    assert name is not None
    name = name.strip().lower().rstrip(".")
    if not DOMAIN_NAME.match(name):
        raise invalid("Invalid `name` field. The domain name must be a valid domain, like `example.com`.")
    return name


def parse_region(body: dict[str, Any]) -> str:
    region = body.get("region", "us-east-1")
    if region not in REGIONS:
        raise ApiError(errors.INVALID_REGION,
                       f"Invalid `region` field. Must be one of: {', '.join(REGIONS)}.")
    return str(region)


def _label(body: dict[str, Any], field: str) -> str | None:
    value = validate.string(body, field)
    if value is not None and not LABEL.match(value.lower()):
        raise invalid(f"Invalid `{field}` field. It must be a valid subdomain label, like `send`.")
    return value.lower() if value is not None else None


def _capability_values(body: dict[str, Any], current: dict[str, str]) -> dict[str, str]:
    given = validate.obj(body, "capabilities") or {}
    merged = dict(current)
    for key in ("sending", "receiving"):
        if key in given:
            if given[key] not in CAPABILITY:
                raise invalid(f"Invalid `capabilities.{key}` field. Must be `enabled` or `disabled`.")
            merged[key] = given[key]
    if "enabled" not in merged.values():
        raise invalid("At least one of `capabilities.sending` or `capabilities.receiving` must be enabled.")
    return merged


# ---- services ----------------------------------------------------------------------------------

async def _registered(tx: Tx, name: str) -> None:
    sql, params = "SELECT id FROM domains WHERE name = ?", [name]
    if tx.emu.settings.isolate_keys:
        # Isolated accounts stand for separate test runs sharing one server, not rival teams.
        sql, params = sql + " AND account = ?", [name, tx.account]
    if await tx.one(sql, params) is not None:
        raise ApiError(errors.FORBIDDEN, f"The `{name}` domain has been registered already.")


def _new_dkim(tx: Tx) -> str:
    return DKIM_PREFIX + tx.emu.ids.base64_secret(96).rstrip("=")[:178] + "IDAQAB"


async def insert_domain(tx: Tx, name: str, body: dict[str, Any], capabilities: dict[str, str],
                         tls: str) -> Row:
    row: Row = {
        "id": tx.new_id(), "account": tx.account, "name": name, "status": "not_started",
        "region": parse_region(body), "custom_return_path": _label(body, "custom_return_path") or "send",
        "open_tracking": int(bool(validate.boolean(body, "open_tracking"))),
        "click_tracking": int(bool(validate.boolean(body, "click_tracking"))),
        "tls": tls, "sending": capabilities["sending"], "receiving": capabilities["receiving"],
        "tracking_subdomain": _label(body, "tracking_subdomain"), "dkim": _new_dkim(tx),
        "records": "[]", "verify_outcome": "verified", "created_at": tx.now_db,
    }
    row["records"] = json.dumps(build_records(row, "not_started"))
    await tx.insert("domains", row)
    domains_changed(tx)
    await emit(tx, "domain.created", event_data(row), subject_id=row["id"])
    return row


async def create_domain(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    name = parse_domain_name(body)
    capabilities = _capability_values(body, {"sending": "enabled", "receiving": "disabled"})
    tls = validate.one_of(body, "tls", TLS_MODES) or "opportunistic"
    await _registered(tx, name)
    row = await insert_domain(tx, name, body, capabilities, tls)
    return serialize(row, with_object=False)


async def get_domain_row(tx: Tx, domain_id: str) -> Row:
    row = await tx.one("SELECT * FROM domains WHERE id = ? AND account = ?", (domain_id, tx.account))
    if row is None:
        raise not_found("Domain")
    return row


async def list_domains(tx: Tx, query: Any) -> dict[str, Any]:
    rows, has_more = await fetch_page(tx, "domains", parse_page(query, optional_limit=True))
    return list_body([list_item(row) for row in rows], has_more)


async def update_domain(tx: Tx, domain_id: str, body: dict[str, Any]) -> dict[str, Any]:
    row = await get_domain_row(tx, domain_id)
    changes: dict[str, Any] = {}
    for flag in ("open_tracking", "click_tracking"):
        value = validate.boolean(body, flag)
        if value is not None:
            changes[flag] = int(value)
    tls = validate.one_of(body, "tls", TLS_MODES)
    if tls is not None:
        changes["tls"] = tls
    if "capabilities" in body:
        changes.update(_capability_values(body, _capabilities(row)))
    if "tracking_subdomain" in body:
        # Documented: a tracking subdomain may be changed once set but never removed.
        if body["tracking_subdomain"] in (None, ""):
            raise invalid("The `tracking_subdomain` field cannot be removed once set.")
        changes["tracking_subdomain"] = _label(body, "tracking_subdomain")
    row.update(changes)
    old = {(r["record"], r["type"], r["name"]): r["status"] for r in json.loads(row["records"])}
    records = build_records(row, "not_started")
    for record in records:
        record["status"] = old.get((record["record"], record["type"], record["name"]), "not_started")
    changes["records"] = json.dumps(records)
    await tx.update("domains", domain_id, changes)
    domains_changed(tx)
    row["records"] = changes["records"]
    await emit(tx, "domain.updated", event_data(row), subject_id=domain_id)
    return {"object": "domain", "id": domain_id}


async def delete_domain(tx: Tx, domain_id: str) -> dict[str, Any]:
    row = await get_domain_row(tx, domain_id)
    await tx.run("DELETE FROM domains WHERE id = ?", (domain_id,))
    domains_changed(tx)
    await tx.run("UPDATE domain_claims SET status = 'canceled' WHERE domain_id = ? AND status = 'pending'",
                 (domain_id,))
    await emit(tx, "domain.deleted", event_data(row), subject_id=domain_id)
    return {"object": "domain", "id": domain_id, "deleted": True}


async def _set_status(tx: Tx, row: Row, status: str, record_status: str) -> None:
    records = json.loads(row["records"])
    for record in records:
        record["status"] = record_status
    row.update(status=status, records=json.dumps(records))
    await tx.update("domains", row["id"], {"status": status, "records": row["records"]})
    domains_changed(tx)
    await emit(tx, "domain.updated", event_data(row), subject_id=row["id"])


async def verify_domain(tx: Tx, domain_id: str) -> dict[str, Any]:
    """`pending` now; the DNS check (a job, due at once) settles on the chosen outcome."""
    row = await get_domain_row(tx, domain_id)
    await _set_status(tx, row, "pending", "pending")
    await schedule(tx, "domain.verify", tx.now, {"domain_id": domain_id})
    return {"object": "domain", "id": domain_id}


RECORD_STATUS = {"verified": "verified", "failed": "failed", "temporary_failure": "temporary_failure",
                 "partially_verified": "verified", "partially_failed": "failed"}


async def finish_verification(tx: Tx, job: dict[str, Any]) -> None:
    row = await tx.one("SELECT * FROM domains WHERE id = ? AND account = ?",
                       (job["payload"]["domain_id"], tx.account))
    if row is None or row["status"] != "pending":
        return
    outcome = row["verify_outcome"]
    await _set_status(tx, row, outcome, RECORD_STATUS[outcome])


async def set_verify_outcome(tx: Tx, domain_id: str, outcome: str) -> None:
    if outcome not in OUTCOMES:
        raise invalid(f"`outcome` must be one of: {', '.join(OUTCOMES)}.")
    await get_domain_row(tx, domain_id)
    await tx.update("domains", domain_id, {"verify_outcome": outcome})


CACHE = "receiving_domains"
TRACKING_CACHE = "tracking_domains"


def domains_changed(tx: Tx) -> None:
    """Call in any transaction that writes the domains table (drops the domain caches)."""
    emu = tx.emu
    _drop_caches(emu)
    tx.after_commit(lambda: _drop_caches(emu))


def _drop_caches(emu: Any) -> None:
    for name in (CACHE, TRACKING_CACHE):
        emu.invalidate(name)


async def tracking_of(tx: Tx, name: str) -> tuple[bool, bool]:
    """(open_tracking, click_tracking) of the account's domain `name`; (False, False) if none.

    The real service applies tracking once a tracking subdomain is configured and verified; nothing is
    resolved here, so the flags alone decide. Every send asks, so the answer is cached per domain change.
    """
    flags = tx.emu.cache.get(TRACKING_CACHE)
    if flags is None:
        rows = await tx.all("SELECT account, name, open_tracking, click_tracking FROM domains"
                            " WHERE open_tracking = 1 OR click_tracking = 1")
        flags = tx.emu.cache[TRACKING_CACHE] = {
            (row["account"], row["name"]): (bool(row["open_tracking"]), bool(row["click_tracking"]))
            for row in rows}
    return flags.get((tx.account, name.lower()), (False, False))  # type: ignore[no-any-return]


async def receiving_domains(tx: Tx) -> dict[str, str]:
    """Domain name → owning account, for every domain that receives mail (any account).

    Every sent email asks this (mail to a receiving address loops back in), so it is cached until a
    domain changes. Unverified domains receive too unless --strict-domains asks for realism.
    """
    routes = tx.emu.cache.get(CACHE)
    if routes is None:
        status = " AND status = 'verified'" if tx.emu.settings.strict_domains else ""
        rows = await tx.all(f"SELECT name, account FROM domains WHERE receiving = 'enabled'{status}"
                            " ORDER BY seq DESC")
        routes = tx.emu.cache[CACHE] = {row["name"]: row["account"] for row in rows}
    return routes  # type: ignore[no-any-return]


async def verified_domain(tx: Tx, name: str) -> Row | None:
    """The account's verified domain for a `from` host (sending rules in emails.md)."""
    return await tx.one(
        "SELECT * FROM domains WHERE account = ? AND name = ? AND status = 'verified'",
        (tx.account, name.lower()),
    )


# ---- HTTP --------------------------------------------------------------------------------------

async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_domain(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_domains(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return serialize(await get_domain_row(tx, req.params["domain_id"]))


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_domain(tx, req.params["domain_id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_domain(tx, req.params["domain_id"])


async def http_verify(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await verify_domain(tx, req.params["domain_id"])


def install(emu: Emulator) -> None:
    emu.jobs.tx_handler("domain.verify", finish_verification)


OPS = [
    Op("domains/create", "POST", "/domains", http_create, status=201),
    Op("domains/list", "GET", "/domains", http_list),
    Op("domains/get", "GET", "/domains/{domain_id}", http_get),
    Op("domains/update", "PATCH", "/domains/{domain_id}", http_update),
    Op("domains/remove", "DELETE", "/domains/{domain_id}", http_delete),
    Op("domains/verify", "POST", "/domains/{domain_id}/verify", http_verify),
]
