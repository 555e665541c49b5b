"""Broadcasts count against `--daily-quota` / `--monthly-quota` like any send, refused whole before anything
goes out (issue 36, finding 9); and `"scheduled_at": ""`, which Resend's Go SDK sends on every "send now",
means now wherever `scheduled_at` is taken (finding 10)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import resend
from starlette.testclient import TestClient

from emulator.testing import EmulatorServer
from tests.conftest import api_client, make_settings
from tests.contacts_helpers import contact, created, segment, topic
from tests.emails_helpers import email
from tests.templates_helpers import sdk_against

DAILY_EXCEEDED = {"statusCode": 429, "message": "You have exceeded your daily email sending quota.",
                  "name": "daily_quota_exceeded"}
MONTHLY_EXCEEDED = {"statusCode": 429, "message": "You have exceeded your monthly email sending quota.",
                    "name": "monthly_quota_exceeded"}


def used(client: TestClient) -> tuple[int, int]:
    headers = client.get("/domains").headers
    return int(headers.get("x-resend-daily-quota", 0)), int(headers.get("x-resend-monthly-quota", 0))


def audience_of_two(client: TestClient) -> tuple[str, str]:
    """A segment of five of whom a broadcast on its topic emails two: Ada and Bob (Cy unsubscribed, Di
    out of the topic, Ed suppressed)."""
    segment_id, topic_id = segment(client, "Everyone"), topic(client, "News")
    people = [contact(client, "ada@example.org"), contact(client, "bob@example.org"),
              contact(client, "cy@example.org", unsubscribed=True),
              contact(client, "di@example.org", topics=[{"id": topic_id, "subscription": "opt_out"}]),
              contact(client, "ed@example.org")]
    for contact_id in people:
        assert client.post(f"/contacts/{contact_id}/segments/{segment_id}").status_code == 200
    assert client.post("/suppressions", json={"email": "ed@example.org"}).status_code == 201
    return segment_id, topic_id


def broadcast_body(segment_id: str, topic_id: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"segment_id": segment_id, "topic_id": topic_id, "from": "Acme <news@acme.dev>",
            "subject": "News", "html": "<p>News</p>", **fields}


def outbox(client: TestClient) -> list[dict[str, Any]]:
    assert client.post("/_emulator/flush").status_code == 200
    return list(client.get("/_emulator/outbox").json()["data"])


@pytest.fixture
def quota_of(request: pytest.FixtureRequest) -> Iterator[TestClient]:
    daily, monthly = request.param
    with api_client(make_settings(daily_quota=daily, monthly_quota=monthly)) as client:
        yield client


# ---- finding 9 --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("quota_of", "refusal"), [((1, 0), DAILY_EXCEEDED), ((0, 1), MONTHLY_EXCEEDED)],
                         indirect=["quota_of"])
def test_a_broadcast_past_the_quota_is_refused_whole_before_anything_is_sent(
        quota_of: TestClient, refusal: dict[str, Any]) -> None:
    client = quota_of
    segment_id, topic_id = audience_of_two(client)
    broadcast_id = created(client.post("/broadcasts", json=broadcast_body(segment_id, topic_id)))
    refused = client.post(f"/broadcasts/{broadcast_id}/send")
    assert (refused.status_code, refused.json()) == (429, refusal)
    assert client.get(f"/broadcasts/{broadcast_id}").json()["status"] == "draft"
    at_once = client.post("/broadcasts", json=broadcast_body(segment_id, topic_id, send=True))
    assert (at_once.status_code, at_once.json()) == (429, refusal)
    assert [item["id"] for item in client.get("/broadcasts").json()["data"]] == [broadcast_id]
    assert outbox(client) == []
    assert used(client) == (0, 0)


@pytest.mark.parametrize("quota_of", [(2, 0)], indirect=True)
def test_a_broadcast_counts_each_recipient_it_emails_against_the_quota(quota_of: TestClient) -> None:
    client = quota_of
    segment_id, topic_id = audience_of_two(client)  # five members, two emailed: fits a quota of 2
    sent = client.post("/broadcasts", json=broadcast_body(segment_id, topic_id, send=True))
    assert sent.status_code == 201, sent.text
    assert sorted(item["to"][0] for item in outbox(client)) == ["ada@example.org", "bob@example.org"]
    assert used(client) == (2, 2)
    refused = client.post("/emails", json=email(to=["zed@example.org"]))
    assert (refused.status_code, refused.json()) == (429, DAILY_EXCEEDED)
    again = created(client.post("/broadcasts", json=broadcast_body(segment_id, topic_id)))
    assert client.post(f"/broadcasts/{again}/send").json() == DAILY_EXCEEDED
    assert len(outbox(client)) == 2


def test_without_a_quota_a_broadcast_is_never_refused(client: TestClient) -> None:
    segment_id, topic_id = audience_of_two(client)
    sent = client.post("/broadcasts", json=broadcast_body(segment_id, topic_id, send=True))
    assert sent.status_code == 201, sent.text
    assert len(outbox(client)) == 2
    assert used(client) == (2, 2)


# ---- finding 10 -------------------------------------------------------------------------------------

def _read(client: TestClient, email_id: str) -> dict[str, Any]:
    body = client.get(f"/emails/{email_id}").json()
    return {key: value for key, value in body.items() if key not in ("id", "message_id")}


def test_an_email_sent_with_an_empty_scheduled_at_goes_out_now(client: TestClient) -> None:
    plain = client.post("/emails", json=email()).json()["id"]
    empty = client.post("/emails", json=email(scheduled_at=""))
    assert empty.status_code == 200, empty.text
    assert _read(client, empty.json()["id"]) == _read(client, plain)
    assert _read(client, plain)["scheduled_at"] is None


def test_a_batch_item_with_an_empty_scheduled_at_goes_out_now(client: TestClient) -> None:
    batch = client.post("/emails/batch", json=[email(), email(scheduled_at="")])
    assert batch.status_code == 200, batch.text
    first, second = (item["id"] for item in batch.json()["data"])
    assert _read(client, second) == _read(client, first)


def test_rescheduling_to_an_empty_scheduled_at_sends_now(client: TestClient) -> None:
    email_id = client.post("/emails", json=email(scheduled_at="in 1 hour")).json()["id"]
    moved = client.patch(f"/emails/{email_id}", json={"scheduled_at": ""})
    assert moved.status_code == 200, moved.text
    assert client.post("/_emulator/flush").status_code == 200
    assert client.get(f"/emails/{email_id}").json()["last_event"] not in ("scheduled", "canceled")
    sent = client.post("/emails", json=email()).json()["id"]
    refused = client.patch(f"/emails/{sent}", json={"scheduled_at": ""})  # not scheduled: as before
    assert refused.status_code == 422 and "Only scheduled emails" in refused.json()["message"]


def test_broadcasts_take_an_empty_scheduled_at_as_now(client: TestClient) -> None:
    segment_id, topic_id = audience_of_two(client)
    draft = client.post("/broadcasts", json=broadcast_body(segment_id, topic_id, scheduled_at=""))
    assert draft.status_code == 201, draft.text  # no `send`: still a draft, not a 422
    draft_id = draft.json()["id"]
    assert client.patch(f"/broadcasts/{draft_id}", json={"scheduled_at": "", "name": "N"}).status_code == 200
    assert client.get(f"/broadcasts/{draft_id}").json()["status"] == "draft"
    assert client.post(f"/broadcasts/{draft_id}/send", json={"scheduled_at": ""}).json() == {"id": draft_id}
    at_once = created(client.post("/broadcasts", json=broadcast_body(segment_id, topic_id, send=True,
                                                                       scheduled_at="")))
    assert len(outbox(client)) == 4
    for broadcast_id in (draft_id, at_once):
        read = client.get(f"/broadcasts/{broadcast_id}").json()
        assert (read["status"], read["scheduled_at"]) == ("sent", None)


@pytest.mark.parametrize("value", [" ", "soon", 0])
def test_a_blank_or_unusable_scheduled_at_is_still_refused(client: TestClient, value: object) -> None:
    refused = client.post("/emails", json=email(scheduled_at=value))
    assert (refused.status_code, refused.json()["name"]) == (422, "validation_error")
    assert outbox(client) == []


@pytest.fixture
def sdk(live_server: EmulatorServer) -> Iterator[EmulatorServer]:
    live_server.reset()
    with sdk_against(live_server.url):
        yield live_server


def test_the_python_sdk_sends_with_an_empty_scheduled_at(sdk: EmulatorServer) -> None:
    sent = resend.Emails.send({**email(), "scheduled_at": ""})  # type: ignore[typeddict-item]
    assert resend.Emails.get(sent["id"])["scheduled_at"] is None
    later = resend.Emails.send({**email(), "scheduled_at": "in 1 hour"})  # type: ignore[typeddict-item]
    assert resend.Emails.update({"id": later["id"], "scheduled_at": ""})["id"] == later["id"]
    segment_id = resend.Segments.create({"name": "Everyone"})["id"]
    contact_id = resend.Contacts.create({"email": "lin@example.org"})["id"]
    resend.Contacts.Segments.add({"contact_id": contact_id, "segment_id": segment_id})
    broadcast = resend.Broadcasts.create({"segment_id": segment_id, "from": "Acme <news@acme.dev>",
                                          "subject": "News", "html": "<p>News</p>"})
    sent_now = resend.Broadcasts.send({"broadcast_id": broadcast["id"], "scheduled_at": ""})
    assert sent_now["id"] == broadcast["id"]
    assert httpx.post(f"{sdk.url}/_emulator/flush").status_code == 200
    assert resend.Broadcasts.get(broadcast["id"])["status"] == "sent"
    assert resend.Emails.get(later["id"])["last_event"] not in ("scheduled", "canceled")
