"""Automation runs, step by step on the emulator clock (reference logs-automations-events.md §2).

A sent event starts a run of every enabled automation whose trigger names it, for that contact. A run walks
its graph in one job until a step has to wait: `delay` resumes by a job due after the duration;
`wait_for_event` resumes when the contact's next matching event arrives (`event_received`) or by a job at
its timeout (`timeout`), whichever comes first. Steps that act do so through the same services as the API
(send through POST /emails' path, contact update/delete, add to segment); a step that fails ends the run as
`failed` with the step's error.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.core.errors import ApiError
from emulator.core.jobs import schedule
from emulator.resources.automations.conditions import matches, resolve
from emulator.resources.automations.graph import duration
from emulator.resources.automations.store import loads
from emulator.resources.contacts import (
    add_contact_to_segment,
    contact_properties,
    delete_contact,
    find_contact,
    update_contact,
)
from emulator.resources.emails.service import send_email

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

STEP_JOB = "automation.step"
MAX_HOPS = 500  # a graph with a cycle of instant steps fails instead of spinning
WAIT = "wait"


async def start_runs(tx: Tx, event_name: str, contact: Row, payload: dict[str, Any]) -> None:
    """Runs for every enabled automation this event triggers; resumes the contact's runs waiting for it."""
    automations = await tx.all(
        "SELECT * FROM automations WHERE account = ? AND status = 'enabled'"
        " AND trigger_event = ? ORDER BY seq",
        (tx.account, event_name),
    )
    for automation in automations:
        run_id = tx.new_id()
        await tx.insert(
            "automation_runs",
            {
                "id": run_id,
                "account": tx.account,
                "automation_id": automation["id"],
                "contact_id": contact["id"],
                "payload": json.dumps(payload),
                "steps": automation["steps"],
                "connections": automation["connections"],
                "status": "running",
                "waiting_event": None,
                "waiting_key": None,
                "started_at": tx.now_db,
                "completed_at": None,
                "created_at": tx.now_db,
            },
        )
        trigger = next(step for step in loads(automation["steps"]) if step["type"] == "trigger")
        await schedule(tx, STEP_JOB, tx.now, {"run_id": run_id, "key": trigger["key"]})
    waiting = await tx.all(
        "SELECT id, waiting_key FROM automation_runs WHERE account = ? AND status = 'running'"
        " AND contact_id = ? AND waiting_event = ?",
        (tx.account, contact["id"], event_name),
    )
    for run in waiting:
        await schedule(
            tx, STEP_JOB, tx.now, {"run_id": run["id"], "key": run["waiting_key"], "event": payload}
        )


async def run_step(tx: Tx, job: dict[str, Any]) -> None:
    payload = job["payload"]
    run = await tx.one(
        "SELECT * FROM automation_runs WHERE account = ? AND id = ?", (tx.account, payload["run_id"])
    )
    if run is None or run["status"] != "running":
        return  # stopped, deleted or already finished
    steps = {step["key"]: step for step in loads(run["steps"])}
    key: str | None = payload["key"]
    resume = payload
    for _ in range(MAX_HOPS):
        assert key is not None
        try:
            taken = await _execute(tx, run, steps[key], resume)
        except ApiError as error:
            await _fail(tx, run, steps[key], {"name": error.kind.name, "message": error.message})
            return
        if taken == WAIT:
            return
        key, resume = _next(run, key, taken), {}
        if key is None:
            await _finish(tx, run, "completed")
            return
    await _fail(
        tx, run, steps[key or payload["key"]], {"message": "The automation graph loops without waiting."}
    )


def _next(run: Row, key: str, kind: str) -> str | None:
    for connection in loads(run["connections"]):
        if connection["from"] == key and connection["type"] == kind:
            return str(connection["to"])
    return None


async def _execute(tx: Tx, run: Row, step: dict[str, Any], resume: dict[str, Any]) -> str:
    """Do one step; return the connection type to follow, or WAIT."""
    kind, config = step["type"], step["config"]
    if kind == "delay":
        return await _delay(tx, run, step, resume)
    if kind == "wait_for_event":
        return await _wait(tx, run, step, resume)
    context = await _context(tx, run)
    output: Any = None
    taken = "default"
    if kind == "condition":
        met = matches(config, context)
        taken, output = ("condition_met" if met else "condition_not_met"), {"met": met}
    elif kind == "send_email":
        output = await _send(tx, config, context)
    elif kind == "contact_update":
        await update_contact(tx, _contact_id(run), _contact_changes(config, context))
    elif kind == "contact_delete":
        await delete_contact(tx, _contact_id(run))
    elif kind == "add_to_segment":
        await add_contact_to_segment(tx, _contact_id(run), str(config["segment_id"]))
    await _record(tx, run, step, "completed", output=output)
    return taken


def _contact_id(run: Row) -> str:
    return str(run["contact_id"])


async def _context(tx: Tx, run: Row) -> dict[str, Any]:
    contact = await find_contact(tx, _contact_id(run))
    fields = (
        {}
        if contact is None
        else {
            "id": contact["id"],
            "email": contact["email"],
            "first_name": contact["first_name"],
            "last_name": contact["last_name"],
            "unsubscribed": bool(contact["unsubscribed"]),
            "properties": contact_properties(contact),
            **contact_properties(contact),
        }
    )
    return {"contact": fields, "event": loads(run["payload"]) or {}}


async def _send(tx: Tx, config: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    template = config["template"]
    variables = {name: resolve(value, context) for name, value in (template.get("variables") or {}).items()}
    body: dict[str, Any] = {
        "to": [context["contact"].get("email")],
        "template": {"id": template["id"], "variables": variables},
    }
    for field, key in (
        ("from", "from"),
        ("subject", "subject"),
        ("reply_to", "reply_to"),
        ("topic_id", "topic_id"),
    ):
        if config.get(key) is not None:
            body[field] = config[key]
    sent = await send_email(tx, body, None, source="automation")
    return {"email_id": sent["id"]}


def _contact_changes(config: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    changes: dict[str, Any] = {
        field: resolve(config[field], context)
        for field in ("first_name", "last_name", "unsubscribed")
        if field in config
    }
    if isinstance(config.get("properties"), dict):
        changes["properties"] = {key: resolve(value, context) for key, value in config["properties"].items()}
    return changes


async def _delay(tx: Tx, run: Row, step: dict[str, Any], resume: dict[str, Any]) -> str:
    if resume.get("delay_done"):
        await _settle(tx, run, step, "completed", None)
        return "default"
    await _record(tx, run, step, "running", completed=False)
    due = tx.now + duration(step["config"]["duration"], "duration")
    await schedule(tx, STEP_JOB, due, {"run_id": run["id"], "key": step["key"], "delay_done": True})
    return WAIT


async def _wait(tx: Tx, run: Row, step: dict[str, Any], resume: dict[str, Any]) -> str:
    config = step["config"]
    if "event" in resume or resume.get("timed_out"):
        if run["waiting_key"] != step["key"]:
            return WAIT  # the other way out came first
        if (
            "event" in resume
            and config.get("filter_rule")
            and not matches(config["filter_rule"], {**await _context(tx, run), "event": resume["event"]})
        ):
            return WAIT  # not the event this step waits for; keep waiting
        tx.queue(
            "UPDATE automation_runs SET waiting_event = NULL, waiting_key = NULL WHERE id = ?", (run["id"],)
        )
        if "event" in resume:
            await _settle(tx, run, step, "completed", {"event": resume["event"]})
            return "event_received"
        await _settle(tx, run, step, "completed", {"timed_out": True})
        return "timeout"
    await _record(tx, run, step, "waiting", completed=False)
    tx.queue(
        "UPDATE automation_runs SET waiting_event = ?, waiting_key = ? WHERE id = ?",
        (config["event_name"], step["key"], run["id"]),
    )
    if config.get("timeout"):
        due = tx.now + duration(config["timeout"], "timeout")
        await schedule(tx, STEP_JOB, due, {"run_id": run["id"], "key": step["key"], "timed_out": True})
    return WAIT


async def _record(
    tx: Tx, run: Row, step: dict[str, Any], status: str, output: Any = None, completed: bool = True
) -> None:
    await tx.insert(
        "automation_run_steps",
        {
            "account": tx.account,
            "run_id": run["id"],
            "key": step["key"],
            "type": step["type"],
            "status": status,
            "started_at": tx.now_db,
            "completed_at": tx.now_db if completed else None,
            "output": json.dumps(output) if output is not None else None,
            "error": None,
            "created_at": tx.now_db,
        },
    )


async def _settle(tx: Tx, run: Row, step: dict[str, Any], status: str, output: Any) -> None:
    """Finish the step row a waiting step left open."""
    tx.queue(
        "UPDATE automation_run_steps SET status = ?, completed_at = ?, output = ?"
        " WHERE seq = (SELECT MAX(seq) FROM automation_run_steps WHERE run_id = ? AND key = ?)",
        (status, tx.now_db, json.dumps(output) if output is not None else None, run["id"], step["key"]),
    )


async def _fail(tx: Tx, run: Row, step: dict[str, Any], error: dict[str, Any]) -> None:
    await tx.insert(
        "automation_run_steps",
        {
            "account": tx.account,
            "run_id": run["id"],
            "key": step["key"],
            "type": step["type"],
            "status": "failed",
            "started_at": tx.now_db,
            "completed_at": tx.now_db,
            "output": None,
            "error": json.dumps(error),
            "created_at": tx.now_db,
        },
    )
    await _finish(tx, run, "failed")


async def _finish(tx: Tx, run: Row, status: str) -> None:
    tx.queue(
        "UPDATE automation_runs SET status = ?, completed_at = ?, waiting_event = NULL WHERE id = ?",
        (status, tx.now_db, run["id"]),
    )


def install(emu: Any) -> None:
    emu.jobs.tx_handler(STEP_JOB, run_step)
