"""The UI page for automations with their runs (`/_emulator/ui/automations`); the request log is
logs.py. Read-only: one short transaction each, rows as the API stores them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.web.render import UI, page
from emulator.web.sessions import account_of
from emulator.web.views import _chrome as page_chrome

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

STEP_SUMMARY = {
    "trigger": "event_name",
    "delay": "duration",
    "wait_for_event": "event_name",
    "add_to_segment": "segment_id",
}


def _json(text: str | None) -> Any:
    return json.loads(text) if text else None


def _steps(automation: Row) -> list[dict[str, Any]]:
    connections = _json(automation["connections"]) or []
    steps = []
    for step in _json(automation["steps"]) or []:
        field = STEP_SUMMARY.get(step["type"])
        summary = str(step["config"].get(field, "")) if field else ""
        if step["type"] == "send_email":
            summary = f"template {step['config'].get('template', {}).get('id', '')}"
        steps.append(
            {**step, "summary": summary, "next": [c for c in connections if c["from"] == step["key"]]}
        )
    return steps


async def _runs(tx: Tx, automation_id: str) -> list[dict[str, Any]]:
    runs = await tx.all(
        "SELECT * FROM automation_runs WHERE account = ? AND automation_id = ? ORDER BY seq DESC LIMIT 50",
        (tx.account, automation_id),
    )
    result = []
    for run in runs:
        steps = await tx.all("SELECT * FROM automation_run_steps WHERE run_id = ? ORDER BY seq", (run["id"],))
        result.append(
            {**run, "steps": [{**s, "output": _json(s["output"]), "error": _json(s["error"])} for s in steps]}
        )
    return result


async def automations(request: Request) -> Response:
    async with emulator_of(request).transaction(account_of(request)) as tx:
        rows = await tx.all("SELECT * FROM automations WHERE account = ? ORDER BY seq DESC", (tx.account,))
        items = [
            {**row, "trigger": row["trigger_event"], "steps": _steps(row), "runs": await _runs(tx, row["id"])}
            for row in rows
        ]
        header = await page_chrome(tx, "automations")
    return page(request, "automations.html", {**header, "automations": items})


ROUTES: list[BaseRoute] = [
    Route(f"{UI}/automations", automations, methods=["GET"]),
]
