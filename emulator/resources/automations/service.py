"""Automations: create, list, get, update, delete, duplicate, stop, and their runs (reference
logs-automations-events.md §2). Runs themselves execute in `runner.py`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core import validate
from emulator.core.errors import MISSING_REQUIRED_FIELD, ApiError, invalid, not_found
from emulator.core.pages import fetch_page, list_body, parse_page
from emulator.resources.automations.graph import validate_graph
from emulator.resources.automations.store import loads, millis, require_automation

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

STATUSES = ("enabled", "disabled")
RUN_STATUSES = ("running", "completed", "failed", "cancelled")


def list_item(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "status": row["status"],
        "created_at": millis(row["created_at"]),
        "updated_at": millis(row["updated_at"]),
    }


def serialize(row: Row) -> dict[str, Any]:
    return {
        "object": "automation",
        **list_item(row),
        "steps": loads(row["steps"]),
        "connections": loads(row["connections"]),
    }


def _name(body: dict[str, Any]) -> str:
    name = validate.string(body, "name", required_=True, allow_empty=False)
    assert name is not None
    return name


async def create_automation(tx: Tx, body: dict[str, Any]) -> dict[str, Any]:
    name = _name(body)
    status = validate.one_of(body, "status", STATUSES) or "disabled"
    steps, connections, trigger = validate_graph(body)
    automation_id = tx.new_id()
    await tx.insert(
        "automations",
        {
            "id": automation_id,
            "account": tx.account,
            "name": name,
            "status": status,
            "trigger_event": trigger,
            "steps": json.dumps(steps),
            "connections": json.dumps(connections),
            "created_at": tx.now_db,
            "updated_at": tx.now_db,
        },
    )
    return {"object": "automation", "id": automation_id}


async def list_automations(tx: Tx, query: Any) -> dict[str, Any]:
    status = query.get("status")
    if status is not None and status not in STATUSES:
        raise invalid("Invalid `status` query parameter. Must be one of: `enabled`, `disabled`.")
    where, params = "account = ?", [tx.account]
    if status is not None:
        where, params = "account = ? AND status = ?", [tx.account, status]
    rows, has_more = await fetch_page(
        tx, "automations", parse_page(query, optional_limit=False), where=where, params=params
    )
    return list_body([list_item(row) for row in rows], has_more)


async def get_automation(tx: Tx, automation_id: str) -> dict[str, Any]:
    return serialize(await require_automation(tx, automation_id))


async def update_automation(tx: Tx, automation_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """At least one of `name`, `status`, or `steps` together with `connections`."""
    row = await require_automation(tx, automation_id)
    changes: dict[str, Any] = {}
    if "name" in body:
        changes["name"] = _name(body)
    if "status" in body:
        changes["status"] = validate.one_of(body, "status", STATUSES)
        if changes["status"] is None:  # `null` is not a status (the column would refuse it: a 500)
            raise invalid("Invalid `status` field. Must be one of: `enabled`, `disabled`.")
    if ("steps" in body) != ("connections" in body):
        raise invalid("`steps` and `connections` must be updated together.")
    if "steps" in body:
        steps, connections, trigger = validate_graph(body)
        changes.update(steps=json.dumps(steps), connections=json.dumps(connections), trigger_event=trigger)
    if not changes:
        raise ApiError(MISSING_REQUIRED_FIELD, "Provide at least one of `name`, `status`, or `steps` with"
                       " `connections`.")
    await tx.update("automations", row["id"], {**changes, "updated_at": tx.now_db})
    return {"object": "automation", "id": row["id"]}


async def delete_automation(tx: Tx, automation_id: str) -> dict[str, Any]:
    row = await require_automation(tx, automation_id)
    await _cancel_runs(tx, row["id"])
    await tx.run("DELETE FROM automations WHERE account = ? AND id = ?", (tx.account, row["id"]))
    return {"object": "automation", "id": row["id"], "deleted": True}


async def duplicate_automation(tx: Tx, automation_id: str) -> dict[str, Any]:
    """A copy, disabled (so it does not start runs beside the original) [recommendation]."""
    row = await require_automation(tx, automation_id)
    copy = {**row, "id": tx.new_id(), "status": "disabled", "created_at": tx.now_db, "updated_at": tx.now_db}
    copy.pop("seq")
    await tx.insert("automations", copy)
    return {"object": "automation", "id": copy["id"]}


async def stop_automation(tx: Tx, automation_id: str) -> dict[str, Any]:
    """Disable it and cancel its running runs."""
    row = await require_automation(tx, automation_id)
    await tx.update("automations", row["id"], {"status": "disabled", "updated_at": tx.now_db})
    await _cancel_runs(tx, row["id"])
    return {"object": "automation", "id": row["id"], "status": "disabled"}


async def _cancel_runs(tx: Tx, automation_id: str) -> None:
    tx.queue(
        "UPDATE automation_runs SET status = 'cancelled', completed_at = ?, waiting_event = NULL"
        " WHERE account = ? AND automation_id = ? AND status = 'running'",
        (tx.now_db, tx.account, automation_id),
    )


def run_item(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "status": row["status"],
        "started_at": millis(row["started_at"]),
        "completed_at": millis(row["completed_at"]),
        "created_at": millis(row["created_at"]),
    }


async def list_runs(tx: Tx, automation_id: str, query: Any) -> dict[str, Any]:
    row = await require_automation(tx, automation_id)
    wanted = [part.strip() for part in str(query.get("status") or "").split(",") if part.strip()]
    if any(status not in RUN_STATUSES for status in wanted):
        raise invalid(
            f"Invalid `status` query parameter. Use a comma-separated subset of: {', '.join(RUN_STATUSES)}."
        )
    where, params = "account = ? AND automation_id = ?", [tx.account, row["id"]]
    if wanted:
        where += f" AND status IN ({','.join('?' for _ in wanted)})"
        params += wanted
    rows, has_more = await fetch_page(
        tx, "automation_runs", parse_page(query, optional_limit=False), where=where, params=params
    )
    return list_body([run_item(run) for run in rows], has_more)


async def get_run(tx: Tx, automation_id: str, run_id: str) -> dict[str, Any]:
    run = await tx.one(
        "SELECT * FROM automation_runs WHERE account = ? AND automation_id = ? AND id = ?",
        (tx.account, automation_id, run_id),
    )
    if run is None:
        raise not_found("Automation run")
    steps = await tx.all("SELECT * FROM automation_run_steps WHERE run_id = ? ORDER BY seq", (run["id"],))
    return {
        "object": "automation_run",
        **run_item(run),
        "steps": [
            {
                "key": step["key"],
                "type": step["type"],
                "status": step["status"],
                "started_at": millis(step["started_at"]),
                "completed_at": millis(step["completed_at"]),
                "output": loads(step["output"]),
                "error": loads(step["error"]),
                "created_at": millis(step["created_at"]),
            }
            for step in steps
        ],
    }


async def http_create(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await create_automation(tx, req.json_object())


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_automations(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_automation(tx, req.params["automation_id"])


async def http_update(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await update_automation(tx, req.params["automation_id"], req.json_object())


async def http_delete(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await delete_automation(tx, req.params["automation_id"])


async def http_duplicate(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await duplicate_automation(tx, req.params["automation_id"])


async def http_stop(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await stop_automation(tx, req.params["automation_id"])


async def http_runs(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_runs(tx, req.params["automation_id"], req.query)


async def http_run(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_run(tx, req.params["automation_id"], req.params["run_id"])


BASE = "/automations/{automation_id}"
OPS = [
    Op("automations/create", "POST", "/automations", http_create, status=201),
    Op("automations/list", "GET", "/automations", http_list),
    Op("automations/get", "GET", BASE, http_get),
    Op("automations/update", "PATCH", BASE, http_update),
    Op("automations/remove", "DELETE", BASE, http_delete),
    Op("automations/duplicate", "POST", f"{BASE}/duplicate", http_duplicate, status=201),
    Op("automations/stop", "POST", f"{BASE}/stop", http_stop),
    Op("automations/list-runs", "GET", f"{BASE}/runs", http_runs),
    Op("automations/get-run", "GET", f"{BASE}/runs/{{run_id}}", http_run),
]
