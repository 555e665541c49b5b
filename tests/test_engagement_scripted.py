"""Scripted delivery outcomes and simulated opens/clicks: each gives exactly the events and `last_event`
the real service would, in order, on the emulator clock."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.emails_helpers import Recorder, advance, last_event, send


def script(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/_emulator/outcomes", json=body)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def test_delivery_delayed_then_delivered_after_the_minutes(client: TestClient) -> None:
    recorder = Recorder(client)
    script(client, to="lin@example.org", outcome="delivery_delayed", minutes=30)
    email_id = send(client, to="lin@example.org")
    advance(client, 2)
    assert (last_event(client, email_id), recorder.types(email_id)) == (
        "delivery_delayed", ["email.sent", "email.delivery_delayed"])
    advance(client, 30 * 60 - 1)
    assert last_event(client, email_id) == "delivery_delayed"
    advance(client, 1)
    assert (last_event(client, email_id), recorder.types(email_id)) == (
        "delivered", ["email.sent", "email.delivery_delayed", "email.delivered"])
    # Used once: the next email to the address is delivered at once.
    again = send(client, to="lin@example.org")
    advance(client, 2)
    assert recorder.types(again) == ["email.sent", "email.delivered"]


def test_failed_with_a_reason(client: TestClient) -> None:
    recorder = Recorder(client)
    email_id = send(client, to="lin@example.org")
    script(client, email_id=email_id, outcome="failed", reason="reached_daily_quota")
    advance(client, 2)
    assert recorder.types(email_id) == ["email.sent", "email.failed"]
    assert recorder.data(email_id, "email.failed")["failed"] == {"reason": "reached_daily_quota"}
    assert last_event(client, email_id) == "failed"


def test_transient_bounce_with_its_subtype_is_not_suppressed(client: TestClient) -> None:
    recorder = Recorder(client)
    script(client, to="lin@example.org", outcome="bounced", bounce_type="Transient",
           bounce_subtype="MailboxFull")
    email_id = send(client, to="lin@example.org")
    advance(client, 2)
    bounce = recorder.data(email_id, "email.bounced")["bounce"]
    assert (bounce["type"], bounce["subType"], bounce["diagnosticCode"]) == (
        "Transient", "MailboxFull", ["smtp; 452 4.2.2 mailbox full"])
    assert "inbox is full" in bounce["message"]
    assert (last_event(client, email_id), recorder.of_type("suppression.added")) == ("bounced", [])


def test_permanent_bounce_suppresses_and_says_what_the_real_service_says(client: TestClient) -> None:
    recorder = Recorder(client)
    script(client, to="lin@example.org", outcome="bounced")
    email_id = send(client, to="lin@example.org")
    advance(client, 2)
    bounce = recorder.data(email_id, "email.bounced")["bounce"]
    assert bounce["message"].startswith("The recipient's email provider sent a hard bounce message")
    assert (bounce["type"], bounce["subType"]) == ("Permanent", "NoEmail")
    assert [entry["origin"] for entry in recorder.of_type("suppression.added")] == ["bounce"]
    later = send(client, to="lin@example.org")
    advance(client, 2)
    suppressed = recorder.data(later, "email.suppressed")["suppressed"]
    assert suppressed["message"] == ("Resend has suppressed sending to this address because it is on the"
                                     " account-level suppression list. This does not count toward your"
                                     " bounce rate metric")


def test_complained_after_delivery(client: TestClient) -> None:
    recorder = Recorder(client)
    script(client, to="lin@example.org", outcome="complained")
    email_id = send(client, to="lin@example.org")
    advance(client, 2)
    assert last_event(client, email_id) == "delivered"
    advance(client, 3)
    assert recorder.types(email_id) == ["email.sent", "email.delivered", "email.complained"]
    assert last_event(client, email_id) == "complained"


def test_a_script_for_one_address_leaves_other_recipients_alone(client: TestClient) -> None:
    recorder = Recorder(client)
    script(client, to="lin@example.org", outcome="failed")
    email_id = send(client, to=["lin@example.org", "ada@example.org"])
    advance(client, 2)
    assert recorder.data(email_id, "email.delivered")["to"] == ["ada@example.org"]
    assert recorder.data(email_id, "email.failed")["to"] == ["lin@example.org"]


def test_simulated_open_and_click_without_a_browser(client: TestClient) -> None:
    recorder = Recorder(client)
    email_id = send(client, to="lin@example.org")
    advance(client, 2)
    assert client.post(f"/_emulator/emails/{email_id}/open").json()["last_event"] == "opened"
    clicked = client.post(f"/_emulator/emails/{email_id}/click",
                          json={"link": "https://acme.dev/a", "user_agent": "Bot/1",
                                "ip_address": "10.0.0.7"})
    assert clicked.json()["last_event"] == "clicked"
    assert recorder.types(email_id) == ["email.sent", "email.delivered", "email.opened", "email.clicked"]
    assert recorder.data(email_id, "email.clicked")["click"] == {
        "ipAddress": "10.0.0.7", "link": "https://acme.dev/a", "timestamp": "2026-05-14T09:00:02.000Z",
        "userAgent": "Bot/1"}
    assert last_event(client, email_id) == "clicked"


def test_scripts_are_listed_and_cleared(client: TestClient) -> None:
    made = script(client, to="Lin@Example.org", outcome="delivery_delayed")
    assert made["to"] == "lin@example.org" and made["minutes"] == 60
    assert client.get("/_emulator/outcomes").json()["data"] == [made]
    assert client.delete("/_emulator/outcomes").json() == {"cleared": True}
    assert client.get("/_emulator/outcomes").json()["data"] == []


@pytest.mark.parametrize("body", [
    {"to": "lin@example.org"},
    {"to": "lin@example.org", "outcome": "exploded"},
    {"outcome": "failed"},
    {"to": "lin@example.org", "email_id": "x", "outcome": "failed"},
    {"to": "lin@example.org", "outcome": "bounced", "bounce_type": "Soft"},
    {"to": "lin@example.org", "outcome": "delivery_delayed", "minutes": -1},
])
def test_bad_scripts_are_refused(client: TestClient, body: dict[str, Any]) -> None:
    response = client.post("/_emulator/outcomes", json=body)
    assert (response.status_code, response.json()["name"]) == (422, "validation_error")


def test_simulating_on_an_unknown_email_is_404(client: TestClient) -> None:
    assert client.post("/_emulator/emails/3f1c2b8e-0000-4000-8000-000000000000/open").status_code == 404
