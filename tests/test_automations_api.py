"""Automation and event definitions over HTTP: whole bodies, graph validation, every documented refusal."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.contacts_helpers import created

T0 = "2026-05-14 09:00:00.000+00"
STEPS = [
    {"key": "start", "type": "trigger", "config": {"event_name": "user.created"}},
    {"key": "wait", "type": "delay", "config": {"duration": "30 minutes"}},
]
CONNECTIONS = [{"from": "start", "to": "wait", "type": "default"}]
UNKNOWN = "3f1c2b8e-0000-4000-8000-000000000000"


def create(client: TestClient, **fields: Any) -> Any:
    return client.post(
        "/automations", json={"name": "Welcome", "steps": STEPS, "connections": CONNECTIONS, **fields}
    )


def test_automation_lifecycle(client: TestClient) -> None:
    response = create(client)
    automation_id = created(response)
    assert response.json() == {"object": "automation", "id": automation_id}
    assert client.get(f"/automations/{automation_id}").json() == {
        "object": "automation",
        "id": automation_id,
        "name": "Welcome",
        "status": "disabled",
        "created_at": T0,
        "updated_at": T0,
        "steps": STEPS,
        "connections": CONNECTIONS,
    }
    assert client.patch(f"/automations/{automation_id}", json={"status": "enabled"}).json() == {
        "object": "automation",
        "id": automation_id,
    }
    listed = client.get("/automations?status=enabled").json()
    assert listed == {
        "object": "list",
        "has_more": False,
        "data": [
            {"id": automation_id, "name": "Welcome", "status": "enabled", "created_at": T0, "updated_at": T0}
        ],
    }
    copy = client.post(f"/automations/{automation_id}/duplicate")
    assert copy.status_code == 201
    copy_id = copy.json()["id"]
    assert copy.json() == {"object": "automation", "id": copy_id}
    assert client.get(f"/automations/{copy_id}").json() == {  # the same graph, disabled
        "object": "automation", "id": copy_id, "name": "Welcome", "status": "disabled", "created_at": T0,
        "updated_at": T0, "steps": STEPS, "connections": CONNECTIONS}
    assert client.delete(f"/automations/{automation_id}").json() == {
        "object": "automation",
        "id": automation_id,
        "deleted": True,
    }
    assert client.get(f"/automations/{automation_id}").status_code == 404


@pytest.mark.parametrize(
    ("steps", "connections", "message"),
    [
        (
            [{"key": "a", "type": "delay", "config": {"duration": "1 hour"}}],
            [],
            "An automation must have exactly one `trigger` step; found 0.",
        ),
        (STEPS, [{"from": "start", "to": "nowhere"}], "connections[0].to: `nowhere` is not a step key."),
        (STEPS, [{"from": "ghost", "to": "wait"}], "connections[0].from: `ghost` is not a step key."),
        (
            [*STEPS, {"key": "wait", "type": "delay", "config": {"duration": "1 hour"}}],
            CONNECTIONS,
            "Duplicate step key `wait`: step keys must be unique.",
        ),
        (
            [*STEPS, {"key": "t2", "type": "trigger", "config": {"event_name": "x"}}],
            CONNECTIONS,
            "An automation must have exactly one `trigger` step; found 2.",
        ),
        (
            STEPS,
            [{"from": "start", "to": "wait", "type": "condition_met"}],
            "connections[0]: a `trigger` step cannot have a `condition_met` connection (allowed: default).",
        ),
        (
            [*STEPS, {"key": "w", "type": "wait_for_event", "config": {"event_name": "paid"}}],
            [*CONNECTIONS, {"from": "wait", "to": "w"}, {"from": "w", "to": "wait"}],
            "connections[2]: a `wait_for_event` step cannot have a `default` connection"
            " (allowed: event_received, timeout).",
        ),
        (
            STEPS,
            [{"from": "start", "to": "wait", "type": "sideways"}],
            "connections[0].type must be one of: default, condition_met, condition_not_met, timeout,"
            " event_received.",
        ),
        (
            [STEPS[0], {"key": "wait", "type": "delay", "config": {"duration": "soon"}}],
            CONNECTIONS,
            "Invalid `steps[1].config.duration`: use a duration like `30 minutes`, `1 hour` or `2 days`.",
        ),
        (
            [STEPS[0], {"key": "x", "type": "teleport", "config": {}}],
            [],
            "steps[1]: `type` must be one of: trigger, send_email, delay, wait_for_event, condition,"
            " contact_update, contact_delete, add_to_segment.",
        ),
        ([], [], "An automation must have between 1 and 150 steps."),
        (
            [STEPS[0]] + [{"key": f"s{n}", "type": "contact_delete", "config": {}} for n in range(150)],
            [],
            "An automation must have between 1 and 150 steps.",
        ),
        (
            STEPS,
            [{"from": "wait", "to": "start"}],
            "connections[0]: no connection may lead into the trigger step.",
        ),
    ],
)
def test_invalid_graphs_are_422_naming_the_problem(
    client: TestClient, steps: list[Any], connections: list[Any], message: str
) -> None:
    response = client.post("/automations", json={"name": "x", "steps": steps, "connections": connections})
    assert (response.status_code, response.json()) == (
        422, {"statusCode": 422, "message": message, "name": "validation_error"})
    assert client.get("/automations").json()["data"] == []


COND = "steps[1].config"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"type": "maybe"}, f"{COND}: a condition needs a rule tree (`type` rule, and or or)."),
        ({"type": "and", "rules": []}, f"{COND}: an `and` rule needs a non-empty `rules` array."),
        (
            {"type": "or", "rules": [{"type": "rule", "field": "contact.plan", "operator": "like"}]},
            f"{COND}.rules[0].operator must be one of: eq, neq, gt, gte, lt, lte, contains, starts_with,"
            " ends_with, exists, is_empty.",
        ),
        (
            {"type": "rule", "operator": "eq", "value": 1},
            f"{COND}: a rule needs a `field` such as `contact.plan` or `event.total`.",
        ),
        (
            {"type": "rule", "field": "event.total", "operator": "gt"},
            f"{COND}: the `gt` operator needs a `value`.",
        ),
    ],
)
def test_condition_rule_trees_are_checked(client: TestClient, rule: dict[str, Any], message: str) -> None:
    steps = [STEPS[0], {"key": "check", "type": "condition", "config": rule}]
    response = client.post("/automations", json={"name": "x", "steps": steps, "connections": []})
    assert (response.status_code, response.json()["message"]) == (422, message)


def test_a_wait_for_event_filter_is_checked_like_a_condition(client: TestClient) -> None:
    exists = {"type": "rule", "field": "event.total", "operator": "exists"}
    config: dict[str, Any] = {"event_name": "paid", "filter_rule": exists}
    steps = [STEPS[0], {"key": "w", "type": "wait_for_event", "config": config}]
    response = client.post("/automations", json={"name": "x", "steps": steps, "connections": []})
    assert response.status_code == 201
    config["filter_rule"] = {"type": "rule", "field": "event.total", "operator": "~"}
    response = client.post("/automations", json={"name": "x", "steps": steps, "connections": []})
    assert response.json()["message"].startswith("steps[1].config.filter_rule.operator must be one of: eq,")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"template": "welcome"}, "steps[1]: a `send_email` step needs `config.template.id`."),
        ({"template": {"id": 7}}, "steps[1]: a `send_email` step needs `config.template.id`."),
        (
            {"template": {"id": "t", "variables": [1]}},
            "steps[1]: `config.template.variables` must be an object.",
        ),
    ],
)
def test_send_email_configs_are_checked(client: TestClient, config: Any, message: str) -> None:
    steps = [STEPS[0], {"key": "mail", "type": "send_email", "config": config}]
    response = client.post("/automations", json={"name": "x", "steps": steps, "connections": []})
    assert (response.status_code, response.json()["message"]) == (422, message)


def test_150_steps_is_the_most_a_graph_may_have(client: TestClient) -> None:
    steps = [STEPS[0]] + [{"key": f"s{n}", "type": "contact_delete", "config": {}} for n in range(149)]
    response = client.post("/automations", json={"name": "x", "steps": steps, "connections": []})
    assert response.status_code == 201


def test_an_invalid_graph_in_an_update_changes_nothing(client: TestClient) -> None:
    automation_id = created(create(client))
    refused = client.patch(
        f"/automations/{automation_id}",
        json={"name": "Renamed", "steps": STEPS, "connections": [{"from": "start", "to": "nowhere"}]},
    )
    assert (refused.status_code, refused.json()["message"]) == (
        422, "connections[0].to: `nowhere` is not a step key.")
    after = client.get(f"/automations/{automation_id}").json()
    assert (after["name"], after["connections"]) == ("Welcome", CONNECTIONS)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"steps": STEPS, "connections": CONNECTIONS}, (422, "missing_required_field")),
        ({"name": "", "steps": STEPS, "connections": CONNECTIONS}, (422, "validation_error")),
        ({"name": "x", "connections": CONNECTIONS}, (422, "missing_required_field")),
        ({"name": "x", "steps": STEPS}, (422, "missing_required_field")),
        (
            {"name": "x", "status": "paused", "steps": STEPS, "connections": CONNECTIONS},
            (422, "validation_error"),
        ),
    ],
)
def test_create_refusals(client: TestClient, body: dict[str, Any], expected: tuple[int, str]) -> None:
    response = client.post("/automations", json=body)
    assert (response.status_code, response.json()["name"]) == expected


def test_update_rules(client: TestClient) -> None:
    automation_id = created(create(client))
    for body, name, message in [
        ({"steps": STEPS}, "validation_error", "`steps` and `connections` must be updated together."),
        ({}, "missing_required_field",
         "Provide at least one of `name`, `status`, or `steps` with `connections`."),
        ({"status": None}, "validation_error",
         "Invalid `status` field. Must be one of: `enabled`, `disabled`."),
        ({"name": ""}, "validation_error", "The `name` field must not be empty."),
        ({"steps": None, "connections": None}, "missing_required_field", "Missing `steps` field."),
    ]:
        response = client.patch(f"/automations/{automation_id}", json=body)
        assert response.json() == {"statusCode": 422, "message": message, "name": name}
    assert client.get(f"/automations/{automation_id}").json()["status"] == "disabled"
    assert client.patch(f"/automations/{UNKNOWN}", json={"name": "x"}).status_code == 404
    renamed = client.patch(
        f"/automations/{automation_id}", json={"name": "New", "steps": STEPS[:1], "connections": []}
    )
    assert renamed.status_code == 200
    assert client.get(f"/automations/{automation_id}").json()["steps"] == STEPS[:1]


def test_runs_queries(client: TestClient) -> None:
    automation_id = created(create(client))
    assert client.get(f"/automations/{automation_id}/runs?status=running,completed").json()["data"] == []
    assert client.get(f"/automations/{automation_id}/runs?status=paused").status_code == 422
    assert client.get(f"/automations/{automation_id}/runs/{UNKNOWN}").status_code == 404


def test_event_definitions(client: TestClient) -> None:
    response = client.post(
        "/events", json={"name": "user.created", "schema": {"plan": "string", "seats": "number"}}
    )
    event_id = created(response)
    whole = {
        "object": "event",
        "id": event_id,
        "name": "user.created",
        "schema": {"plan": "string", "seats": "number"},
        "created_at": T0,
        "updated_at": None,
    }
    assert client.get(f"/events/{event_id}").json() == whole
    assert client.get("/events/user.created").json() == whole
    assert client.patch("/events/user.created", json={"schema": None}).json() == {
        "object": "event",
        "id": event_id,
    }
    assert client.get("/events").json()["data"] == [
        {**{k: v for k, v in whole.items() if k != "object"}, "schema": None, "updated_at": T0}
    ]
    assert client.delete(f"/events/{event_id}").json() == {"object": "event", "id": event_id, "deleted": True}
    assert client.get(f"/events/{event_id}").status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        ("POST", "/events", {"name": "resend:internal"}, (422, "validation_error")),
        ("POST", "/events", {}, (422, "missing_required_field")),
        ("POST", "/events", {"name": "x", "schema": {"a": "uuid"}}, (422, "validation_error")),
        ("PATCH", "/events/known", {}, (422, "missing_required_field")),
        ("GET", "/events/unknown", None, (404, "not_found")),
    ],
)
def test_event_refusals(
    client: TestClient, method: str, path: str, body: Any, expected: tuple[int, str]
) -> None:
    client.post("/events", json={"name": "known"})
    response = client.request(method, path, json=body)
    assert (response.status_code, response.json()["name"]) == expected


def test_send_event_coerces_the_payload_to_the_schema(client: TestClient) -> None:
    client.post("/events", json={"name": "paid", "schema": {"seats": "number", "pro": "boolean"}})
    assert (
        client.post(
            "/events/send",
            json={"event": "paid", "email": "a@b.org", "payload": {"seats": "3", "pro": "true"}},
        ).status_code
        == 202
    )
    refused = client.post(
        "/events/send", json={"event": "paid", "email": "a@b.org", "payload": {"seats": "many"}}
    )
    assert (refused.status_code, refused.json()["name"]) == (422, "validation_error")


@pytest.mark.parametrize("path", ["/automations", "/events", "/automations/{id}/runs"])
@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=x", "after={cursor}&before={cursor}",
                                   "after=3f1c2b8e-0000-4000-8000-000000000000"])
def test_lists_follow_the_seed_pagination_rules(client: TestClient, path: str, query: str) -> None:
    automation_id = created(create(client))
    cursor = created(client.post("/events", json={"name": "e"})) if path == "/events" else automation_id
    response = client.get(f"{path.format(id=automation_id)}?{query.format(cursor=cursor)}")
    assert (response.status_code, response.json()["name"]) == (422, "validation_error")


def test_automations_page_newest_first(client: TestClient) -> None:
    ids = [created(create(client, name=f"A{n}")) for n in range(3)]
    first = client.get("/automations?limit=2").json()
    assert ([item["id"] for item in first["data"]], first["has_more"]) == ([ids[2], ids[1]], True)
    rest = client.get(f"/automations?limit=2&after={ids[1]}").json()
    assert ([item["id"] for item in rest["data"]], rest["has_more"]) == ([ids[0]], False)
