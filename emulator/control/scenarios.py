"""Seed scenarios: ready-made states in JSON (`fixtures/*.json`), loaded at start or per test.

    resend-emulator --seed-file fixtures/basic.json          into the default account, at start
    POST /_emulator/scenario {"name": "basic"}                a bundled one, by name
    POST /_emulator/scenario {"path": "/abs/file.json"}       any file
    POST /_emulator/scenario {"scenario": {...}}              inline

A scenario loads into the account of the `Authorization: Bearer` key (or `api_key` in the body) when
one is given — in isolation mode, that key's own account — and into the default account otherwise.
Each kind goes through the same service functions as the API, so a seeded domain, template or webhook
is exactly what the API would have made. Kinds, in load order:

    domains    [{"name", "region"?, "status"?: "verified"|"not_started"|"failed"|...}]
    api_keys   [{"name", "token"?, "permission"?, "domain"?}]   a fixed `token` makes a known key
    templates  [{...POST /templates body, "publish"?: true}]
    webhooks   [{"endpoint", "events", "signing_secret"?}]
    contact_properties [{...POST /contact-properties body}]
    segments   [{"name"}]   (also `audiences`: the same record)
    topics     [{...POST /topics body}]
    contacts   [{...POST /contacts body}]   `segments` and `topics` may name them instead of ids:
               "segments": ["Newsletter"],
               "topics": [{"name": "Product updates", "subscription": "opt_out"}]
    emails     [{...POST /emails body}]
    demo       {"days"?: 7, "emails"?: 60}   a week of varied mail for the outbox UI (demo.py)

A kind this build does not have (broadcasts, until its group lands) is a clear 422 before anything
is written. Everything but emails and the demo loads in one transaction (all or nothing); the
domain checks then run, so emails of the same scenario see verified domains.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.auth import (
    FULL_ACCESS,
    SENDING_ACCESS,
    Credential,
    account_label,
    account_of_key,
    keyring,
)
from emulator.api.ops import emulator_of, json_response
from emulator.control.base import PREFIX, body_of
from emulator.control.fields import OBJECT, STRING, Spec
from emulator.core.bundled import FIXTURES, scenario_names
from emulator.core.config import DEFAULT_ACCOUNT, StartupError
from emulator.core.errors import ApiError, invalid
from emulator.resources import api_keys, contacts
from emulator.resources.contacts import properties, segments, topics
from emulator.resources.domains import service as domains
from emulator.resources.emails import service as emails
from emulator.resources.templates import service as templates
from emulator.resources.webhooks import service as webhooks

if TYPE_CHECKING:
    from emulator.core.db import Tx
    from emulator.core.emulator import Emulator


KINDS = ("api_keys", "domains", "templates", "webhooks", "contact_properties", "segments", "audiences",
         "topics", "contacts", "emails", "demo")
PLANNED = {"broadcasts"}
DESCRIPTIVE = {"name", "description"}
LOAD: Spec = {"name": STRING, "path": STRING, "scenario": OBJECT, "api_key": STRING}
DOMAIN_OUTCOMES = ("verified", "failed", "partially_verified", "partially_failed", "temporary_failure")


def read(source: str | Path) -> dict[str, Any]:
    """A scenario by bundled name (`basic`, `demo`) or file path."""
    path = Path(source)
    if not path.suffix and not path.exists():
        path = FIXTURES / f"{source}.json"
    if not path.is_file():
        bundled = ", ".join(scenario_names())
        raise invalid(f"No scenario `{source}` (bundled: {bundled}).")
    try:
        scenario = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise invalid(f"Scenario `{path}` is not valid JSON: {exc}.") from None
    return check(scenario)


def check(scenario: Any) -> dict[str, Any]:
    if not isinstance(scenario, dict):
        raise invalid("A scenario must be a JSON object of kinds.")
    for kind in scenario:
        if kind in PLANNED:
            raise invalid(f"Scenario kind `{kind}` is not supported by this emulator build yet"
                          f" (supported: {', '.join(KINDS)}).")
        if kind not in KINDS and kind not in DESCRIPTIVE:
            raise invalid(f"Unknown scenario kind `{kind}` (supported: {', '.join(KINDS)}).")
        if kind in KINDS and kind != "demo" and not isinstance(scenario[kind], list):
            raise invalid(f"Scenario kind `{kind}` must be a list of objects.")
    return scenario


def _items(scenario: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    items = scenario.get(kind, [])
    for item in items:
        if not isinstance(item, dict):
            raise invalid(f"Every item of `{kind}` must be an object.")
    return items  # type: ignore[no-any-return]


async def load(emu: Emulator, scenario: dict[str, Any], account: str = DEFAULT_ACCOUNT) -> dict[str, Any]:
    """Load `scenario` into `account`; return the ids made, by kind (`{"domains": [{"id", "name"}]}`)."""
    check(scenario)
    made: dict[str, list[dict[str, Any]]] = {}
    async with emu.transaction(account) as tx:
        await tx.run("INSERT OR IGNORE INTO accounts (id, created_at) VALUES (?, ?)", (account, tx.now_db))
        made["domains"] = [await _domain(tx, item) for item in _items(scenario, "domains")]
        made["api_keys"] = [await _api_key(tx, item) for item in _items(scenario, "api_keys")]
        made["templates"] = [await _template(tx, item) for item in _items(scenario, "templates")]
        made["webhooks"] = [await _webhook(tx, item) for item in _items(scenario, "webhooks")]
        made.update(await _contacts(tx, scenario))
    # Domain checks and delivery outcomes are jobs: run them so the scenario is settled on return.
    await emu.jobs.flush()
    credential = Credential(account, "scenario", FULL_ACCESS)
    if scenario.get("emails"):
        async with emu.transaction(account) as tx:
            made["emails"] = [await _email(tx, item, credential) for item in _items(scenario, "emails")]
        await emu.jobs.flush()
    if "demo" in scenario:
        from emulator.control.demo import load_demo

        made["demo"] = [await load_demo(emu, scenario["demo"], credential)]
    return {"object": "scenario", "account": account, "account_label": account_label(emu, account),
            "loaded": {k: v for k, v in made.items() if v}}


async def _api_key(tx: Tx, item: dict[str, Any]) -> dict[str, Any]:
    token = item.get("token")
    body = {key: value for key, value in item.items() if key not in ("token", "domain")}
    if "domain" in item:
        row = await tx.one("SELECT id FROM domains WHERE account = ? AND name = ?",
                           (tx.account, item["domain"]))
        if row is None:
            raise invalid(f"API key `{item.get('name')}`: no domain `{item['domain']}` in the scenario.")
        body["domain_id"] = row["id"]
    if token is None:
        created = await api_keys.create_api_key(tx, body)
        return {"id": created["id"], "name": body.get("name"), "token": created["token"]}
    if not isinstance(token, str) or not token.startswith("re_") or keyring(tx.emu).by_token.get(token):
        raise invalid(f"API key token `{token}` must start with `re_` and not be in use.")
    permission = body.get("permission", FULL_ACCESS)
    if permission not in (FULL_ACCESS, SENDING_ACCESS):
        raise invalid(f"API key permission must be {FULL_ACCESS} or {SENDING_ACCESS}.")
    # Scenario keys are known in advance (CI secrets, fixtures), so the token is given, not drawn.
    row = await api_keys._insert_key(tx, body.get("name") or "Scenario key", token, permission,
                                     body.get("domain_id"))
    return {"id": row["id"], "name": row["name"], "token": token}


async def _domain(tx: Tx, item: dict[str, Any]) -> dict[str, Any]:
    status = item.get("status", "verified")
    body = {key: value for key, value in item.items() if key != "status"}
    created = await domains.create_domain(tx, body)
    if status in DOMAIN_OUTCOMES:
        await domains.set_verify_outcome(tx, created["id"], status)
        await domains.verify_domain(tx, created["id"])
    elif status != "not_started":
        raise invalid(f"Domain `{created['name']}`: `status` must be not_started or one of"
                      f" {', '.join(DOMAIN_OUTCOMES)}.")
    return {"id": created["id"], "name": created["name"]}


async def _template(tx: Tx, item: dict[str, Any]) -> dict[str, Any]:
    body = {key: value for key, value in item.items() if key != "publish"}
    created = await templates.create_template(tx, body)
    if item.get("publish", True):
        await templates.publish_template(tx, created["id"])
    return {"id": created["id"], "name": body.get("name"), "alias": body.get("alias")}


async def _webhook(tx: Tx, item: dict[str, Any]) -> dict[str, Any]:
    secret = item.get("signing_secret")
    body = {key: value for key, value in item.items() if key not in ("signing_secret", "status")}
    created = await webhooks.create_webhook(tx, body)
    if "status" in item:
        await webhooks.update_webhook(tx, created["id"], {"status": item["status"]})
    if secret is not None:
        if not isinstance(secret, str) or not secret.startswith("whsec_"):
            raise invalid("A webhook's `signing_secret` must start with `whsec_`.")
        await tx.update("webhooks", created["id"], {"secret": secret})
    return {"id": created["id"], "endpoint": body["endpoint"],
            "signing_secret": secret or created["signing_secret"]}


async def _contacts(tx: Tx, scenario: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Contact properties, segments (and audiences), topics, then contacts naming them."""
    made: dict[str, list[dict[str, Any]]] = {"contact_properties": [], "segments": [], "audiences": [],
                                              "topics": []}
    for item in _items(scenario, "contact_properties"):
        created = await properties.create_property(tx, item)
        made["contact_properties"].append({"id": created["id"], "key": item.get("key")})
    for kind in ("segments", "audiences"):
        for item in _items(scenario, kind):
            created = await segments.create_segment(tx, item, kind=kind[:-1])
            made[kind].append({"id": created["id"], "name": created["name"]})
    for item in _items(scenario, "topics"):
        created = await topics.create_topic(tx, item)
        made["topics"].append({"id": created["id"], "name": item.get("name")})
    by_name = {item["name"]: item["id"]
               for kind in ("segments", "audiences", "topics") for item in made[kind]}
    made["contacts"] = []
    for item in _items(scenario, "contacts"):
        created = await contacts.create_contact(tx, _named(item, by_name))
        made["contacts"].append({"id": created["id"], "email": item.get("email")})
    return made


def _named(item: dict[str, Any], by_name: dict[str, str]) -> dict[str, Any]:
    """A contact item whose `segments`/`topics` may name the scenario's own records instead of ids."""
    def resolve(ref: Any) -> Any:
        if isinstance(ref, str):
            return {"id": by_name.get(ref, ref)}
        if isinstance(ref, dict) and "name" in ref:
            rest = {key: value for key, value in ref.items() if key != "name"}
            return {**rest, "id": by_name.get(ref["name"], ref["name"])}
        return ref

    body = dict(item)
    for field in ("segments", "topics"):
        if isinstance(item.get(field), list):
            body[field] = [resolve(ref) for ref in item[field]]
    return body


async def _email(tx: Tx, item: dict[str, Any], credential: Credential) -> dict[str, Any]:
    return await emails.send_email(tx, item, credential)


async def _account_for(emu: Emulator, request: Request, body: dict[str, Any]) -> str:
    """The key's account (from `api_key` or the bearer header); an isolated key not used yet gets its
    account now, so the scenario's rows have an owner."""
    # Only a Bearer key names an account: under --ui-auth-file this header carries the Basic sign-in.
    scheme, _, bearer = request.headers.get("authorization", "").strip().partition(" ")
    token = body.get("api_key") or (bearer.strip() if scheme.lower() == "bearer" else "") or None
    if token is None:
        return DEFAULT_ACCOUNT
    account = account_of_key(emu, token)
    if account is None:
        raise invalid("Unknown API key: no account uses it.")
    if token not in keyring(emu).by_token:
        await api_keys.provision_isolated_account(emu, token)
    return account


async def load_route(request: Request) -> Response:
    emu, body = emulator_of(request), await body_of(request, LOAD)
    if "scenario" in body:
        scenario = check(body["scenario"])
    elif isinstance(body.get("name") or body.get("path"), str):
        scenario = read(body.get("path") or body["name"])
    else:
        raise invalid("Give a bundled scenario `name`, a file `path`, or an inline `scenario` object.")
    account = await _account_for(emu, request, body)
    return json_response(await load(emu, scenario, account), 201)


async def start(emu: Emulator) -> None:
    """Load --scenario once: into a database that has not had one, recording its name in `meta`, so a
    restart on the same --db keeps the state and adds nothing."""
    source = emu.settings.seed_file
    if not source:
        return
    name, loaded_before = identity(source), await _recorded(emu)
    if loaded_before == name:
        emu.state["scenario_summary"] = (f"scenario {source}: loaded before into {emu.settings.db},"
                                         " nothing added")
        return
    if loaded_before is not None:
        # Refused, not loaded on top: two fixtures mixed are a state neither describes, and the second
        # may clash with the first (the same domain) after part of it is written.
        raise StartupError("--scenario", source, f"{emu.settings.db} already holds scenario {loaded_before}",
                           f"start with --scenario {loaded_before} or without --scenario, or give a new"
                           " --db file")
    # A database without a record (used without --scenario until now) gets the scenario: that is what
    # was asked for, and a clash with its rows is refused below with the database named.
    before = await _counts(emu)
    try:
        await load(emu, read(source))
    except ApiError as error:
        advice = ("give a bundled scenario's name or a JSON scenario file" if emu.db.fresh else
                  f"it clashes with what {emu.settings.db} holds: give a new --db file, or start"
                  " without --scenario")
        raise StartupError("--scenario", source, error.message, advice) from None
    async with emu.transaction() as tx:
        await tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (SCENARIO_KEY, name))
    after = await _counts(emu)
    loaded = [_noun(after[table] - before[table], *names) for table, *names in COUNTED
              if after[table] > before[table]]
    # What the banner says the scenario brought: rows counted, so it cannot drift from the fixtures.
    emu.state["scenario_summary"] = f"scenario {source}: {', '.join(loaded) or 'nothing loaded'}"


SCENARIO_KEY = "scenario"


def identity(source: str) -> str:
    """What `meta` records of a --scenario: a bundled one's name, a file's absolute path (as `read`
    tells them apart), so the same file named from another folder is the same scenario."""
    path = Path(source)
    return source if not path.suffix and not path.exists() else str(path.resolve())


async def _recorded(emu: Emulator) -> str | None:
    async with emu.transaction() as tx:
        row = await tx.one("SELECT value FROM meta WHERE key = ?", (SCENARIO_KEY,))
    return str(row["value"]) if row else None


COUNTED = [("emails", "email", "emails"), ("domains", "domain", "domains"),
           ("contacts", "contact", "contacts"), ("segments", "segment", "segments"),
           ("topics", "topic", "topics"), ("contact_properties", "contact property", "contact properties"),
           ("templates", "template", "templates"), ("webhooks", "webhook", "webhooks"),
           ("api_keys", "API key", "API keys")]


async def _counts(emu: Emulator) -> dict[str, int]:
    counts: dict[str, int] = {}
    async with emu.transaction() as tx:
        for table, *_ in COUNTED:
            row = await tx.one(f"SELECT COUNT(*) AS n FROM {table}")
            counts[table] = int(row["n"]) if row else 0
    return counts


def _noun(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


async def reset_and_reload(emu: Emulator) -> None:
    """The UI's "Reset emulator": a fresh start, then the --scenario the emulator was started with."""
    await emu.reset()
    if emu.settings.seed_file:
        await load(emu, read(emu.settings.seed_file))


ROUTES = [Route(f"{PREFIX}/scenario", load_route, methods=["POST"])]
