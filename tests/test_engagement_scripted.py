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


# The real service's text (reference webhooks.md §6.9, issue 17), written out here, not imported.
HARD_BOUNCE = (
    "The recipient's email provider sent a hard bounce message, but didn't specify the reason for the hard"
    " bounce. We recommend removing the recipient's email address from your mailing list. Sending messages"
    " to addresses that produce hard bounces can have a negative impact on your reputation as a sender."
)


def timeline(recorder: Recorder, email_id: str) -> list[tuple[str, str]]:
    """(type, clock time) of every event about the email, in the order they were emitted."""
    return [(e["type"], e["created_at"].strftime("%H:%M:%S")) for e in recorder.events
            if e["subject_id"] == email_id]


def test_delivery_delayed_then_delivered_after_the_minutes(client: TestClient) -> None:
    recorder = Recorder(client)
    script(client, to="lin@example.org", outcome="delivery_delayed", minutes=30)
    email_id = send(client, to="lin@example.org")
    advance(client, 2)
    assert last_event(client, email_id) == "delivery_delayed"
    advance(client, 30 * 60 - 1)
    assert (last_event(client, email_id), timeline(recorder, email_id)) == (
        "delivery_delayed", [("email.sent", "09:00:00"), ("email.delivery_delayed", "09:00:02")])
    advance(client, 1)
    assert (last_event(client, email_id), timeline(recorder, email_id)) == ("delivered", [
        ("email.sent", "09:00:00"), ("email.delivery_delayed", "09:00:02"), ("email.delivered", "09:30:02")])
    assert recorder.data(email_id, "email.delivery_delayed")["to"] == ["lin@example.org"]
    # Used once: the next email to the address is delivered at once.
    again = send(client, to="lin@example.org")
    advance(client, 2)
    assert timeline(recorder, again) == [("email.sent", "09:30:02"), ("email.delivered", "09:30:04")]


def test_failed_with_a_reason(client: TestClient) -> None:
    recorder = Recorder(client)
    email_id = send(client, to="lin@example.org")
    script(client, email_id=email_id, outcome="failed", reason="reached_daily_quota")
    advance(client, 1)
    assert last_event(client, email_id) == "sent"
    advance(client, 1)
    assert timeline(recorder, email_id) == [("email.sent", "09:00:00"), ("email.failed", "09:00:02")]
    assert recorder.data(email_id, "email.failed")["failed"] == {"reason": "reached_daily_quota"}
    assert last_event(client, email_id) == "failed"
    advance(client, 3600)
    assert len(timeline(recorder, email_id)) == 2  # failed is final: nothing follows


def test_transient_bounce_with_its_subtype_is_not_suppressed(client: TestClient) -> None:
    recorder = Recorder(client)
    script(client, to="lin@example.org", outcome="bounced", bounce_type="Transient",
           bounce_subtype="MailboxFull")
    email_id = send(client, to="lin@example.org")
    advance(client, 2)
    assert timeline(recorder, email_id) == [("email.sent", "09:00:00"), ("email.bounced", "09:00:02")]
    assert recorder.data(email_id, "email.bounced")["bounce"] == {
        "diagnosticCode": ["smtp; 452 4.2.2 mailbox full"],
        "message": "The recipient's email provider sent a soft bounce message because the recipient's inbox"
                   " is full. Resend may succeed in delivering later emails to this address.",
        "subType": "MailboxFull", "type": "Transient"}
    assert (last_event(client, email_id), recorder.of_type("suppression.added")) == ("bounced", [])


def test_permanent_bounce_suppresses_and_says_what_the_real_service_says(client: TestClient) -> None:
    recorder = Recorder(client)
    script(client, to="lin@example.org", outcome="bounced")
    email_id = send(client, to="lin@example.org")
    advance(client, 2)
    assert timeline(recorder, email_id) == [("email.sent", "09:00:00"), ("email.bounced", "09:00:02")]
    assert recorder.data(email_id, "email.bounced")["bounce"] == {
        "diagnosticCode": ["smtp; 550 5.1.1 user unknown"], "message": HARD_BOUNCE, "subType": "NoEmail",
        "type": "Permanent"}
    assert last_event(client, email_id) == "bounced"
    assert [(entry["email"], entry["origin"]) for entry in recorder.of_type("suppression.added")] == [
        ("lin@example.org", "bounce")]
    later = send(client, to="lin@example.org")
    advance(client, 2)
    assert timeline(recorder, later) == [("email.sent", "09:00:02"), ("email.suppressed", "09:00:04")]
    assert recorder.data(later, "email.suppressed")["suppressed"] == {
        "diagnosticCode": ["smtp; 550 5.1.1 recipient is on the account suppression list"],
        "message": "Resend has suppressed sending to this address because it is on the account-level"
                   " suppression list. This does not count toward your bounce rate metric",
        "reason": "previous_bounce", "type": "OnAccountSuppressionList"}
    assert last_event(client, later) == "suppressed"


def test_complained_after_delivery(client: TestClient) -> None:
    recorder = Recorder(client)
    script(client, to="lin@example.org", outcome="complained")
    email_id = send(client, to="lin@example.org")
    advance(client, 2)
    assert last_event(client, email_id) == "delivered"
    advance(client, 3)
    assert timeline(recorder, email_id) == [
        ("email.sent", "09:00:00"), ("email.delivered", "09:00:02"), ("email.complained", "09:00:05")]
    assert last_event(client, email_id) == "complained"
    assert [(entry["email"], entry["origin"]) for entry in recorder.of_type("suppression.added")] == [
        ("lin@example.org", "complaint")]


def test_a_script_for_one_address_leaves_other_recipients_alone(client: TestClient) -> None:
    recorder = Recorder(client)
    script(client, to="lin@example.org", outcome="failed")
    email_id = send(client, to=["lin@example.org", "ada@example.org"])
    advance(client, 2)
    assert recorder.data(email_id, "email.delivered")["to"] == ["ada@example.org"]
    assert recorder.data(email_id, "email.failed")["to"] == ["lin@example.org"]
    assert recorder.data(email_id, "email.failed")["failed"] == {"reason": "reached_daily_quota"}


def test_simulated_open_without_a_browser(client: TestClient) -> None:
    recorder = Recorder(client)
    email_id = send(client, to="lin@example.org")
    advance(client, 2)
    opened = client.post(f"/_emulator/emails/{email_id}/open").json()
    assert opened == {"object": "email", "id": email_id, "last_event": "opened"}
    advance(client, 60)
    client.post(f"/_emulator/emails/{email_id}/open")  # a repeat open is an event of its own
    assert timeline(recorder, email_id) == [("email.sent", "09:00:00"), ("email.delivered", "09:00:02"),
                                            ("email.opened", "09:00:02"), ("email.opened", "09:01:02")]
    assert last_event(client, email_id) == "opened"


def test_simulated_click_without_a_browser(client: TestClient) -> None:
    recorder = Recorder(client)
    email_id = send(client, to="lin@example.org")
    advance(client, 2)
    click = {"link": "https://acme.dev/a", "user_agent": "Bot/1", "ip_address": "10.0.0.7"}
    clicked = client.post(f"/_emulator/emails/{email_id}/click", json=click)
    assert clicked.json() == {"object": "email", "id": email_id, "last_event": "clicked"}
    assert timeline(recorder, email_id) == [("email.sent", "09:00:00"), ("email.delivered", "09:00:02"),
                                            ("email.clicked", "09:00:02")]
    assert recorder.data(email_id, "email.clicked")["click"] == {
        "ipAddress": "10.0.0.7", "link": "https://acme.dev/a", "timestamp": "2026-05-14T09:00:02.000Z",
        "userAgent": "Bot/1"}
    assert last_event(client, email_id) == "clicked"


def test_a_simulated_click_on_a_tracking_url_reports_the_original_link(client: TestClient) -> None:
    recorder = Recorder(client)
    assert client.post("/domains", json={"name": "mail.acme.dev", "click_tracking": True}).status_code == 201
    email_id = send(client, html='<a href="https://acme.dev/pricing">Pricing</a>')
    html = client.get(f"/emails/{email_id}").json()["html"]
    tracking_url = html.split('href="', 1)[1].split('"', 1)[0]
    assert "/_emulator/t/click/" in tracking_url
    client.post(f"/_emulator/emails/{email_id}/click", json={"link": tracking_url})
    assert recorder.data(email_id, "email.clicked")["click"]["link"] == "https://acme.dev/pricing"


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
