"""The delivery simulation on the clock: test addresses, suppression list, scheduling, batches."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from tests.emails_helpers import SENDER, Recorder, advance, email, last_event, send


@pytest.mark.parametrize(("to", "final", "sequence"), [
    ("delivered@resend.dev", "delivered", ["email.sent", "email.delivered"]),
    ("delivered+signup@resend.dev", "delivered", ["email.sent", "email.delivered"]),
    ("bounced@resend.dev", "bounced", ["email.sent", "email.bounced"]),
    ("bounced+x@resend.dev", "bounced", ["email.sent", "email.bounced"]),
    ("complained@resend.dev", "complained", ["email.sent", "email.delivered", "email.complained"]),
    ("complained+y@resend.dev", "complained", ["email.sent", "email.delivered", "email.complained"]),
    ("suppressed@resend.dev", "suppressed", ["email.sent", "email.suppressed"]),
    ("suppressed+z@resend.dev", "delivered", ["email.sent", "email.delivered"]),  # no +label support
    ("anyone@example.org", "delivered", ["email.sent", "email.delivered"]),
])
def test_test_addresses(client: TestClient, to: str, final: str, sequence: list[str]) -> None:
    recorder = Recorder(client)
    email_id = send(client, to=to)
    assert last_event(client, email_id) == "sent"
    advance(client, 10)
    assert last_event(client, email_id) == final
    assert recorder.types(email_id) == sequence


def test_delivery_timeline(client: TestClient) -> None:
    """sent at once; delivered 2 s later; a complaint 3 s after delivery."""
    email_id = send(client, to="complained@resend.dev")
    advance(client, 1.9)
    assert last_event(client, email_id) == "sent"
    advance(client, 0.1)
    assert last_event(client, email_id) == "delivered"
    advance(client, 2.9)
    assert last_event(client, email_id) == "delivered"
    advance(client, 0.1)
    assert last_event(client, email_id) == "complained"


def test_bounce_payload_and_suppression(client: TestClient) -> None:
    recorder = Recorder(client)
    email_id = send(client, to="bounced@resend.dev")
    advance(client, 2)
    assert recorder.data(email_id, "email.bounced") == {
        "email_id": email_id, "created_at": "2026-05-14T09:00:00.000Z", "from": SENDER,
        "to": ["bounced@resend.dev"], "subject": "Your receipt", "message_id": f"<{email_id}@mail.acme.dev>",
        "bounce": {"diagnosticCode": ["smtp; 550 5.1.1 user unknown"],
                   "message": "The recipient's email provider sent a hard bounce message, but didn't specify"
                              " the reason for the hard bounce. We recommend removing the recipient's email"
                              " address from your mailing list. Sending messages to addresses that produce"
                              " hard bounces can have a negative impact on your reputation as a sender.",
                   "subType": "NoEmail", "type": "Permanent"},
    }
    added = recorder.of_type("suppression.added")
    assert [(s["email"], s["origin"], s["source_id"]) for s in added] == [
        ("bounced@resend.dev", "bounce", email_id)]
    assert added[0]["created_at"] == "2026-05-14 09:00:02.000+00"
    # A test address keeps its documented behaviour even once it is on the list.
    again = send(client, to="bounced@resend.dev")
    advance(client, 2)
    assert last_event(client, again) == "bounced"
    assert len(recorder.of_type("suppression.added")) == 1


def test_suppressed_payload(client: TestClient) -> None:
    recorder = Recorder(client)
    email_id = send(client, to="suppressed@resend.dev")
    advance(client, 2)
    data = recorder.data(email_id, "email.suppressed")
    assert data["to"] == ["suppressed@resend.dev"]
    assert data["suppressed"]["reason"] == "previous_bounce" and data["suppressed"]["type"] == "Suppressed"
    assert set(data["suppressed"]) == {"diagnosticCode", "message", "reason", "type"}


def test_account_suppression_list(client: TestClient) -> None:
    """A complaint puts a plain address on the list; the next email to it is suppressed."""
    from emulator.resources import suppressions

    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def suppress() -> None:
        async with emu.transaction("default") as tx:
            await suppressions.add(tx, "Jane@Example.org", "complaint", None)

    client.portal.call(suppress)  # type: ignore[union-attr]
    recorder = Recorder(client)
    email_id = send(client, to=["jane@example.org", "john@example.org"])
    advance(client, 2)
    assert recorder.types(email_id) == ["email.sent", "email.delivered", "email.suppressed"]
    assert recorder.data(email_id, "email.delivered")["to"] == ["john@example.org"]
    suppressed = recorder.data(email_id, "email.suppressed")
    assert suppressed["to"] == ["jane@example.org"]
    assert suppressed["suppressed"]["type"] == "OnAccountSuppressionList"
    assert suppressed["suppressed"]["reason"] == "previous_complaint"
    assert last_event(client, email_id) == "suppressed"


def test_mixed_recipients_cc_bcc(client: TestClient) -> None:
    recorder = Recorder(client)
    email_id = send(client, to="delivered@resend.dev", cc="bounced@resend.dev", bcc="complained@resend.dev")
    advance(client, 10)
    assert recorder.types(email_id) == ["email.sent", "email.delivered", "email.bounced", "email.complained"]
    delivered = recorder.data(email_id, "email.delivered")["to"]
    assert delivered == ["delivered@resend.dev", "complained@resend.dev"]
    assert recorder.data(email_id, "email.bounced")["to"] == ["bounced@resend.dev"]
    assert recorder.data(email_id, "email.sent")["to"] == ["delivered@resend.dev"]


# ---- scheduling --------------------------------------------------------------------------------

def test_scheduled_email_waits_for_the_clock(client: TestClient) -> None:
    recorder = Recorder(client)
    email_id = send(client, scheduled_at="2026-05-14T10:00:00.000Z")
    got = client.get(f"/emails/{email_id}").json()
    assert (got["last_event"], got["scheduled_at"]) == ("scheduled", "2026-05-14 10:00:00+00")
    assert recorder.types(email_id) == ["email.scheduled"]
    advance(client, 3599)
    assert last_event(client, email_id) == "scheduled"
    advance(client, 1)
    assert last_event(client, email_id) == "sent"
    advance(client, 2)
    assert recorder.types(email_id) == ["email.scheduled", "email.sent", "email.delivered"]


def test_canceled_email_never_goes_out(client: TestClient) -> None:
    recorder = Recorder(client)
    email_id = send(client, scheduled_at="in 1 min")
    canceled = client.post(f"/emails/{email_id}/cancel", json={})
    assert canceled.status_code == 200
    assert canceled.json()["object"] == "email" and canceled.json()["id"] == email_id
    advance(client, 3600 * 24)
    assert last_event(client, email_id) == "canceled"
    assert recorder.types(email_id) == ["email.scheduled"]


def test_reschedule_later_and_earlier(client: TestClient) -> None:
    email_id = send(client, scheduled_at="in 10 min")
    moved = client.patch(f"/emails/{email_id}", json={"id": email_id, "scheduled_at": "in 1 hour"}).json()
    assert moved["object"] == "email" and moved["id"] == email_id
    assert moved["scheduled_at"] == "2026-05-14 10:00:00+00" and moved["last_event"] == "scheduled"
    advance(client, 11 * 60)
    assert last_event(client, email_id) == "scheduled"  # the old time passed; nothing went out
    client.patch(f"/emails/{email_id}", json={"scheduled_at": "2026-05-14T09:20:00Z"})
    advance(client, 9 * 60)
    assert last_event(client, email_id) == "sent"


def test_schedule_now_sends_at_once(client: TestClient) -> None:
    email_id = send(client, scheduled_at="now")
    assert last_event(client, email_id) == "sent"


def test_deleted_key_fails_scheduled_email(client: TestClient) -> None:
    key = client.post("/api-keys", json={"name": "temp"}).json()
    response = client.post("/emails", json=email(scheduled_at="in 1 hour"),
                           headers={"Authorization": f"Bearer {key['token']}"})
    email_id = response.json()["id"]
    assert client.delete(f"/api-keys/{key['id']}").status_code == 200
    recorder = Recorder(client)
    advance(client, 3600)
    assert last_event(client, email_id) == "failed"
    assert recorder.data(email_id, "email.failed")["failed"] == {"reason": "api_key_not_active"}


# ---- batches -----------------------------------------------------------------------------------

def test_batch_of_100_accepted_in_order(client: TestClient) -> None:
    body = [email(subject=f"#{i}") for i in range(100)]
    response = client.post("/emails/batch", json=body)
    assert response.status_code == 200
    ids = [item["id"] for item in response.json()["data"]]
    assert list(response.json()) == ["data"] and len(set(ids)) == 100
    assert [client.get(f"/emails/{i}").json()["subject"] for i in ids[:3]] == ["#0", "#1", "#2"]


def test_batch_of_101_refused(client: TestClient) -> None:
    response = client.post("/emails/batch", json=[email()] * 101)
    assert (response.status_code, response.json()["name"]) == (422, "validation_error")
    assert client.get("/emails").json()["data"] == []


def test_batch_emails_start_queued_then_go_out(client: TestClient) -> None:
    recorder = Recorder(client)
    emu = client.app.state.emu  # type: ignore[attr-defined]
    emu.jobs.wake_for = lambda due_at: None  # hold the runner so the queued state can be observed
    ids = [item["id"] for item in client.post("/emails/batch", json=[email(), email()]).json()["data"]]
    assert [last_event(client, i) for i in ids] == ["queued", "queued"]
    assert client.post("/_emulator/flush").status_code == 200
    assert [last_event(client, i) for i in ids] == ["sent", "sent"]
    advance(client, 2)
    assert [recorder.types(i) for i in ids] == [["email.sent", "email.delivered"]] * 2


def test_batch_permissive_reports_per_index(client: TestClient) -> None:
    body = [email(subject="ok-0"), email(to="nope"), email(subject="ok-2"),
            email(tags=[{"name": "a b", "value": "c"}])]
    response = client.post("/emails/batch", json=body, headers={"x-batch-validation": "permissive"})
    assert response.status_code == 200
    result = response.json()
    assert [e["index"] for e in result["errors"]] == [1, 3]
    assert result["errors"][0]["message"].startswith("Invalid `to` field.")
    assert [client.get(f"/emails/{d['id']}").json()["subject"] for d in result["data"]] == ["ok-0", "ok-2"]


def test_batch_permissive_all_valid_has_empty_errors(client: TestClient) -> None:
    response = client.post("/emails/batch", json=[email()], headers={"x-batch-validation": "permissive"})
    assert response.json()["errors"] == []


def test_batch_items_may_be_scheduled(client: TestClient) -> None:
    body = [email(scheduled_at="in 1 hour"), email()]
    ids = [d["id"] for d in client.post("/emails/batch", json=body).json()["data"]]
    client.post("/_emulator/flush")
    assert [last_event(client, i) for i in ids] == ["scheduled", "sent"]


def test_batch_idempotency_covers_whole_batch(client: TestClient) -> None:
    headers = {"Idempotency-Key": "batch-1"}
    first = client.post("/emails/batch", json=[email(), email()], headers=headers).json()
    assert client.post("/emails/batch", json=[email(), email()], headers=headers).json() == first
    assert len(client.get("/emails").json()["data"]) == 2


# ---- metrics -----------------------------------------------------------------------------------

def test_metrics_follow_the_simulation(client: TestClient) -> None:
    for to in ("delivered@resend.dev", "delivered@resend.dev", "bounced@resend.dev", "complained@resend.dev"):
        send(client, to=to)
    advance(client, 10)
    body = client.get("/emails/metrics", params={"metrics": "sent,delivered,bounced,bounce_rate,complained",
                                                 "dimensions": "period"}).json()
    assert body == {
        "object": "metrics", "start_date": "2026-05-08T00:00:00.000Z", "end_date": "2026-05-14T09:00:10.000Z",
        "metrics": ["sent", "delivered", "bounced", "bounce_rate", "complained"], "dimensions": ["period"],
        "granularity": "daily",
        "totals": {"sent": 4, "delivered": 3, "bounced": 1, "bounce_rate": 25.0, "complained": 1},
        "data": [{"period": "2026-05-14", "sent": 4, "delivered": 3, "bounced": 1, "bounce_rate": 25.0,
                  "complained": 1}],
    }
    by_email = client.get("/emails/metrics", params=[("metrics", "sent"), ("metrics", "bounced_permanent"),
                                                     ("dimensions", "email")]).json()
    assert len(by_email["data"]) == 4 and by_email["totals"] == {"sent": 4, "bounced_permanent": 1}
    assert "data" not in client.get("/emails/metrics").json()
