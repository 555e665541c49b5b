"""Automations that really run: events start runs, steps execute on the emulator clock."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.contacts_helpers import advance, contact, created, prop, segment


def template(client: TestClient, name: str, html: str) -> str:
    template_id = created(
        client.post(
            "/templates",
            json={
                "name": name,
                "from": "Acme <hi@acme.dev>",
                "subject": name,
                "html": html,
                "variables": [{"key": "NAME", "type": "string", "fallback_value": "there"}],
            },
        )
    )
    assert client.post(f"/templates/{template_id}/publish").status_code == 200
    return template_id


def automation(client: TestClient, steps: list[dict[str, Any]], connections: list[dict[str, Any]]) -> str:
    return created(
        client.post(
            "/automations",
            json={"name": "Welcome flow", "status": "enabled", "steps": steps, "connections": connections},
        )
    )


def send_event(client: TestClient, **body: Any) -> None:
    response = client.post("/events/send", json=body)
    assert (response.status_code, response.json()) == (202, {"object": "event", "event": body["event"]})


def outbox(client: TestClient) -> list[dict[str, Any]]:
    assert client.post("/_emulator/flush").status_code == 200
    return list(client.get("/_emulator/outbox").json()["data"])


def runs(client: TestClient, automation_id: str) -> list[dict[str, Any]]:
    listed = client.get(f"/automations/{automation_id}/runs").json()["data"]
    return [client.get(f"/automations/{automation_id}/runs/{run['id']}").json() for run in listed]


@pytest.mark.parametrize(
    ("plan", "subject", "html", "branch"),
    [
        ("pro", "Pro welcome", "<p>Welcome to Pro, Ada</p>", "send_pro"),
        ("free", "Free welcome", "<p>Welcome, there</p>", "send_free"),
    ],
)
def test_delay_then_condition_sends_the_right_template(
    client: TestClient, plan: str, subject: str, html: str, branch: str
) -> None:
    prop(client, "plan")
    pro = template(client, "Pro welcome", "<p>Welcome to Pro, {{{NAME}}}</p>")
    free = template(client, "Free welcome", "<p>Welcome, {{{NAME}}}</p>")
    automation_id = automation(
        client,
        steps=[
            {"key": "start", "type": "trigger", "config": {"event_name": "user.created"}},
            {"key": "wait", "type": "delay", "config": {"duration": "1 hour"}},
            {
                "key": "is_pro",
                "type": "condition",
                "config": {"type": "rule", "field": "contact.plan", "operator": "eq", "value": "pro"},
            },
            {
                "key": "send_pro",
                "type": "send_email",
                "config": {"template": {"id": pro, "variables": {"NAME": {"var": "event.name"}}}},
            },
            {"key": "send_free", "type": "send_email", "config": {"template": {"id": free}}},
        ],
        connections=[
            {"from": "start", "to": "wait"},
            {"from": "wait", "to": "is_pro"},
            {"from": "is_pro", "to": "send_pro", "type": "condition_met"},
            {"from": "is_pro", "to": "send_free", "type": "condition_not_met"},
        ],
    )
    contact(client, "ada@example.org", properties={"plan": plan})
    send_event(client, event="user.created", email="ada@example.org", payload={"name": "Ada"})
    assert outbox(client) == []
    assert [run["status"] for run in runs(client, automation_id)] == ["running"]
    advance(client, 3599)
    assert outbox(client) == []
    advance(client, 1)
    [email] = outbox(client)
    assert (email["to"], email["subject"]) == (["ada@example.org"], subject)
    assert client.get(f"/emails/{email['id']}").json()["html"] == html
    [run] = runs(client, automation_id)
    assert (run["status"], run["started_at"], run["completed_at"]) == (
        "completed",
        "2026-05-14 09:00:00.000+00",
        "2026-05-14 10:00:00.000+00",
    )
    assert [(step["key"], step["status"], step["completed_at"]) for step in run["steps"]] == [
        ("start", "completed", "2026-05-14 09:00:00.000+00"),
        ("wait", "completed", "2026-05-14 10:00:00.000+00"),
        ("is_pro", "completed", "2026-05-14 10:00:00.000+00"),
        (branch, "completed", "2026-05-14 10:00:00.000+00"),
    ]
    assert [step["started_at"] for step in run["steps"]] == [
        "2026-05-14 09:00:00.000+00", "2026-05-14 09:00:00.000+00", "2026-05-14 10:00:00.000+00",
        "2026-05-14 10:00:00.000+00"]
    assert run["steps"][2]["output"] == {"met": plan == "pro"}
    assert run["steps"][3]["output"] == {"email_id": email["id"]}


def test_free_plan_takes_the_other_branch(client: TestClient) -> None:
    prop(client, "plan")
    pro, free = template(client, "Pro", "<p>Pro</p>"), template(client, "Free", "<p>Free {{{NAME}}}</p>")
    automation(
        client,
        steps=[
            {"key": "start", "type": "trigger", "config": {"event_name": "user.created"}},
            {
                "key": "is_pro",
                "type": "condition",
                "config": {
                    "type": "and",
                    "rules": [
                        {"type": "rule", "field": "contact.plan", "operator": "eq", "value": "pro"},
                        {"type": "rule", "field": "event.seats", "operator": "gte", "value": 1},
                    ],
                },
            },
            {"key": "pro", "type": "send_email", "config": {"template": {"id": pro}}},
            {
                "key": "free",
                "type": "send_email",
                "config": {"template": {"id": free, "variables": {"NAME": {"var": "contact.first_name"}}}},
            },
        ],
        connections=[
            {"from": "start", "to": "is_pro"},
            {"from": "is_pro", "to": "pro", "type": "condition_met"},
            {"from": "is_pro", "to": "free", "type": "condition_not_met"},
        ],
    )
    contact_id = contact(client, "bob@example.org", first_name="Bob", properties={"plan": "free"})
    send_event(client, event="user.created", contact_id=contact_id, payload={"seats": 3})
    [email] = outbox(client)
    assert (email["subject"], email["to"]) == ("Free", ["bob@example.org"])
    sent = client.get(f"/emails/{email['id']}").json()  # through the emails pipeline: GET /emails knows it
    assert (sent["html"], sent["last_event"]) == ("<p>Free Bob</p>", "sent")


def wait_flow(client: TestClient) -> str:
    thanks, nudge = template(client, "Thanks", "<p>Thanks</p>"), template(client, "Nudge", "<p>Nudge</p>")
    return automation(
        client,
        steps=[
            {"key": "start", "type": "trigger", "config": {"event_name": "cart.created"}},
            {
                "key": "wait",
                "type": "wait_for_event",
                "config": {"event_name": "order.paid", "timeout": "1 day"},
            },
            {"key": "thanks", "type": "send_email", "config": {"template": {"id": thanks}}},
            {"key": "nudge", "type": "send_email", "config": {"template": {"id": nudge}}},
        ],
        connections=[
            {"from": "start", "to": "wait"},
            {"from": "wait", "to": "thanks", "type": "event_received"},
            {"from": "wait", "to": "nudge", "type": "timeout"},
        ],
    )


def test_wait_for_event_follows_timeout_when_the_clock_passes_it(client: TestClient) -> None:
    automation_id = wait_flow(client)
    contact(client, "lin@example.org")
    send_event(client, event="cart.created", email="lin@example.org")
    advance(client, 86399)
    assert outbox(client) == []
    advance(client, 1)
    assert [email["subject"] for email in outbox(client)] == ["Nudge"]
    send_event(client, event="order.paid", email="lin@example.org")  # too late: nothing more
    assert len(outbox(client)) == 1
    [run] = runs(client, automation_id)
    assert (run["status"], run["completed_at"]) == ("completed", "2026-05-15 09:00:00.000+00")
    steps = [(step["key"], step["status"], step["started_at"], step["completed_at"]) for step in run["steps"]]
    assert steps == [
        ("start", "completed", "2026-05-14 09:00:00.000+00", "2026-05-14 09:00:00.000+00"),
        ("wait", "completed", "2026-05-14 09:00:00.000+00", "2026-05-15 09:00:00.000+00"),
        ("nudge", "completed", "2026-05-15 09:00:00.000+00", "2026-05-15 09:00:00.000+00"),
    ]
    assert run["steps"][1]["output"] == {"timed_out": True}


def test_wait_for_event_follows_event_received_when_it_comes_first(client: TestClient) -> None:
    automation_id = wait_flow(client)
    contact(client, "lin@example.org")
    send_event(client, event="cart.created", email="lin@example.org")
    advance(client, 3600)
    send_event(client, event="order.paid", email="lin@example.org", payload={"total": 42})
    assert [email["subject"] for email in outbox(client)] == ["Thanks"]
    advance(client, 86400)
    assert len(outbox(client)) == 1  # the timeout no longer fires
    [run] = runs(client, automation_id)
    assert (run["status"], run["steps"][1]["output"]) == ("completed", {"event": {"total": 42}})
    assert [(step["key"], step["completed_at"]) for step in run["steps"]] == [
        ("start", "2026-05-14 09:00:00.000+00"), ("wait", "2026-05-14 10:00:00.000+00"),
        ("thanks", "2026-05-14 10:00:00.000+00")]


def test_contact_steps(client: TestClient) -> None:
    segment_id = segment(client, "Customers")
    automation(
        client,
        steps=[
            {"key": "start", "type": "trigger", "config": {"event_name": "order.paid"}},
            {
                "key": "name",
                "type": "contact_update",
                "config": {"first_name": {"var": "event.first_name"}, "unsubscribed": False},
            },
            {"key": "join", "type": "add_to_segment", "config": {"segment_id": segment_id}},
        ],
        connections=[{"from": "start", "to": "name"}, {"from": "name", "to": "join"}],
    )
    send_event(client, event="order.paid", email="new@example.org", payload={"first_name": "Nia"})
    assert client.post("/_emulator/flush").status_code == 200
    body = client.get("/contacts/new%40example.org").json()  # created for the run [docs]
    assert body["first_name"] == "Nia"
    members = client.get(f"/segments/{segment_id}/contacts").json()["data"]
    assert [member["email"] for member in members] == ["new@example.org"]


def test_a_failing_step_fails_the_run_with_its_error(client: TestClient) -> None:
    automation_id = automation(
        client,
        steps=[
            {"key": "start", "type": "trigger", "config": {"event_name": "go"}},
            {"key": "send", "type": "send_email", "config": {"template": {"id": "no-such-template"}}},
        ],
        connections=[{"from": "start", "to": "send"}],
    )
    contact(client, "lin@example.org")
    send_event(client, event="go", email="lin@example.org")
    assert client.post("/_emulator/flush").status_code == 200
    [run] = runs(client, automation_id)
    assert (run["status"], run["steps"][-1]["status"]) == ("failed", "failed")
    assert run["steps"][-1]["error"]["name"] == "not_found"


def test_stop_cancels_running_runs_and_disabled_automations_do_not_start(client: TestClient) -> None:
    automation_id = wait_flow(client)
    contact(client, "lin@example.org")
    send_event(client, event="cart.created", email="lin@example.org")
    assert client.post("/_emulator/flush").status_code == 200
    stopped = client.post(f"/automations/{automation_id}/stop").json()
    assert stopped == {"object": "automation", "id": automation_id, "status": "disabled"}
    assert [run["status"] for run in runs(client, automation_id)] == ["cancelled"]
    [cancelled] = runs(client, automation_id)
    assert (cancelled["completed_at"], cancelled["steps"][-1]["key"]) == (
        "2026-05-14 09:00:00.000+00", "wait")
    by_status = {query: [run["status"] for run in client.get(
        f"/automations/{automation_id}/runs?status={query}").json()["data"]]
        for query in ("running", "cancelled", "running,cancelled", "completed,failed")}
    assert by_status == {"running": [], "cancelled": ["cancelled"], "running,cancelled": ["cancelled"],
                         "completed,failed": []}
    advance(client, 86400)
    send_event(client, event="cart.created", email="lin@example.org")
    assert outbox(client) == [] and len(runs(client, automation_id)) == 1


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"event": "x"}, (422, "validation_error")),
        ({"event": "x", "email": "a@b.org", "contact_id": "c"}, (422, "validation_error")),
        ({"email": "a@b.org"}, (422, "missing_required_field")),
        ({"event": "x", "contact_id": "3f1c2b8e-0000-4000-8000-000000000000"}, (404, "not_found")),
        ({"event": "x", "email": "a@b.org", "payload": [1]}, (422, "validation_error")),
        ({"event": "x", "email": "not-an-email"}, (422, "validation_error")),
        ({"event": "", "email": "a@b.org"}, (422, "validation_error")),
    ],
)
def test_send_event_refusals(client: TestClient, body: dict[str, Any], expected: tuple[int, str]) -> None:
    response = client.post("/events/send", json=body)
    assert (response.status_code, response.json()["name"]) == expected


def test_a_cycle_of_instant_steps_fails_the_run_instead_of_spinning(client: TestClient) -> None:
    automation_id = automation(
        client,
        steps=[
            {"key": "start", "type": "trigger", "config": {"event_name": "go"}},
            {"key": "a", "type": "contact_update", "config": {"first_name": "A"}},
            {"key": "b", "type": "contact_update", "config": {"first_name": "B"}},
        ],
        connections=[{"from": "start", "to": "a"}, {"from": "a", "to": "b"}, {"from": "b", "to": "a"}],
    )
    contact(client, "lin@example.org")
    send_event(client, event="go", email="lin@example.org")
    assert client.post("/_emulator/flush").status_code == 200
    [run] = runs(client, automation_id)
    assert (run["status"], run["steps"][-1]["status"]) == ("failed", "failed")
    assert run["steps"][-1]["error"] == {"message": "The automation graph loops without waiting."}


def test_wait_for_event_filter_lets_only_matching_events_through(client: TestClient) -> None:
    big = template(client, "Big order", "<p>Big</p>")
    automation_id = automation(
        client,
        steps=[
            {"key": "start", "type": "trigger", "config": {"event_name": "cart.created"}},
            {
                "key": "wait",
                "type": "wait_for_event",
                "config": {
                    "event_name": "order.paid",
                    "timeout": "1 day",
                    "filter_rule": {"type": "rule", "field": "event.total", "operator": "gte", "value": 100},
                },
            },
            {"key": "thanks", "type": "send_email", "config": {"template": {"id": big}}},
        ],
        connections=[
            {"from": "start", "to": "wait"},
            {"from": "wait", "to": "thanks", "type": "event_received"},
        ],
    )
    contact(client, "lin@example.org")
    send_event(client, event="cart.created", email="lin@example.org")
    send_event(client, event="order.paid", email="lin@example.org", payload={"total": 20})
    assert outbox(client) == []
    assert runs(client, automation_id)[0]["steps"][1]["status"] == "waiting"
    send_event(client, event="order.paid", email="lin@example.org", payload={"total": 120})
    assert [email["subject"] for email in outbox(client)] == ["Big order"]
    [run] = runs(client, automation_id)
    assert (run["status"], run["steps"][1]["output"]) == ("completed", {"event": {"total": 120}})


def test_send_event_refusal_messages(client: TestClient) -> None:
    for body, message in [
        ({"event": "x"}, "Provide exactly one of `contact_id` or `email`."),
        ({"email": "a@b.org"}, "Missing `event` field."),
        ({"event": "x", "email": "a@b.org", "payload": [1]}, "The `payload` field must be an `object`."),
        ({"event": "x", "email": "Ada <a@b.org>"},
         "Invalid `email` field. The email address needs to follow the `email@example.com` format."),
    ]:
        assert client.post("/events/send", json=body).json()["message"] == message


def test_an_event_nothing_listens_to_is_accepted_and_creates_no_contact(client: TestClient) -> None:
    send_event(client, event="nobody.listens", email="new@example.org", payload={"a": 1})
    assert client.post("/_emulator/flush").status_code == 200
    assert client.get("/contacts").json()["data"] == []
