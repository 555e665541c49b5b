"""Logs, Events and Automations (with runs) answers validate against Resend's OpenAPI document, and every
operation of those groups in the document is routed (a test oracle, issue 15)."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from emulator.app import all_ops
from tests.contacts_helpers import contact, created
from tests.openapi_oracle import _document, check, spec_operations

GROUPS = ("logs/", "automations/", "events/")
STEPS: list[dict[str, Any]] = [
    {"key": "start", "type": "trigger", "config": {"event_name": "user.created"}},
    {"key": "wait", "type": "delay", "config": {"duration": "1 hour"}},
    {"key": "rename", "type": "contact_update", "config": {"first_name": "Ada"}},
]
CONNECTIONS = [{"from": "start", "to": "wait", "type": "default"}, {"from": "wait", "to": "rename"}]


def _missing(schema: dict[str, Any], body: Any, where: str) -> list[str]:
    """Every property the schema declares that `body` lacks, nested objects and arrays included (the
    document lists few response fields as required, so validation alone would accept `{}`)."""
    if "$ref" in schema:
        schema = _document()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    if isinstance(body, list):
        items = schema.get("items", {})
        return [gap for n, item in enumerate(body) for gap in _missing(items, item, f"{where}[{n}]")]
    if not isinstance(body, dict):
        return []
    properties = schema.get("properties", {})
    absent = [f"{where}.{key}" for key in properties if key not in body]
    return absent + [gap for key, sub in properties.items() if key in body
                     for gap in _missing(sub, body[key], f"{where}.{key}")]


def whole(schema_name: str, body: Any) -> None:
    """`body` validates against the schema and carries every field it declares."""
    check(schema_name, body)
    assert _missing({"$ref": f"#/{schema_name}"}, body, schema_name) == []


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def test_every_operation_of_these_groups_in_the_spec_is_routed() -> None:
    routed = {op.operation_id: (op.method, op.path) for op in all_ops()}
    spec = {op_id: route for op_id, route in spec_operations().items() if op_id.startswith(GROUPS)}
    assert len(spec) == 17
    assert {op_id: routed.get(op_id) for op_id in spec} == spec


def test_event_answers_validate(client: TestClient) -> None:
    event = ok(client.post("/events", json={"name": "user.created", "schema": {"plan": "string"}}), 201)
    whole("CreateEventResponse", event)
    whole("Event", ok(client.get(f"/events/{event['id']}")))
    whole("ListEventsResponse", ok(client.get("/events")))
    whole("UpdateEventResponse", ok(client.patch("/events/user.created", json={"schema": None})))
    sent = client.post("/events/send", json={"event": "user.created", "email": "ada@example.org"})
    whole("SendEventResponse", ok(sent, 202))
    whole("RemoveEventResponse", ok(client.delete(f"/events/{event['id']}")))


def test_automation_and_run_answers_validate(client: TestClient) -> None:
    body = {"name": "Welcome", "status": "enabled", "steps": STEPS, "connections": CONNECTIONS}
    made = ok(client.post("/automations", json=body), 201)
    whole("CreateAutomationResponse", made)
    automation_id = made["id"]
    whole("Automation", ok(client.get(f"/automations/{automation_id}")))
    whole("ListAutomationsResponse", ok(client.get("/automations")))
    whole("PatchAutomationResponse", ok(client.patch(f"/automations/{automation_id}", json={"name": "W"})))
    contact(client, "ada@example.org")
    client.post("/events/send", json={"event": "user.created", "email": "ada@example.org"})
    assert client.post("/_emulator/flush").status_code == 200
    runs = ok(client.get(f"/automations/{automation_id}/runs"))
    whole("ListAutomationRunsResponse", runs)
    run = ok(client.get(f"/automations/{automation_id}/runs/{runs['data'][0]['id']}"))
    whole("AutomationRun", run)  # running: the delay is still waiting
    assert run["status"] == "running"
    copy = ok(client.post(f"/automations/{automation_id}/duplicate"), 201)
    whole("DuplicateAutomationResponse", copy)
    whole("StopAutomationResponse", ok(client.post(f"/automations/{automation_id}/stop")))
    cancelled = ok(client.get(f"/automations/{automation_id}/runs/{run['id']}"))
    whole("AutomationRun", cancelled)
    whole("DeleteAutomationResponse", ok(client.delete(f"/automations/{copy['id']}")))


def test_log_answers_validate(client: TestClient) -> None:
    created(client.post("/api-keys", json={"name": "ci"}))
    client.get("/domains/3f1c2b8e-0000-4000-8000-000000000000")  # a failed request is logged too
    listed = ok(client.get("/logs"))
    whole("ListLogsResponse", listed)
    for item in listed["data"]:
        whole("Log", ok(client.get(f"/logs/{item['id']}")))
