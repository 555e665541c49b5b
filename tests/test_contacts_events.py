"""Contact and topic events reach a real webhook receiver after commit, with the catalogue's payloads."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from starlette.testclient import TestClient

from emulator.app import create_app
from tests.conftest import AUTH, make_settings
from tests.contacts_helpers import contact, segment, topic
from tests.webhooks_helpers import Receiver, create_hook, deliver, verify_all

CONTACT_EVENTS = ["contact.created", "contact.updated", "contact.deleted", "contact.topics.updated"]
TOPIC_EVENTS = ["topic.created", "topic.updated", "topic.deleted"]
ISO_FORMAT = "%Y-%m-%dT%H:%M:%S.000Z"


def frozen_at(client: TestClient) -> str:
    """The clock's time as an event's `created_at`. Frozen when the fixture starts, not at import:
    under a loaded `pytest -n 2` a module may run minutes after collection, past the verifiers'
    ±5 min window."""
    now = client.get("/_emulator/clock").json()["now"]
    return datetime.fromisoformat(now).strftime(ISO_FORMAT)



@pytest.fixture
def live(receiver: Receiver) -> Iterator[TestClient]:
    """Frozen at the real time: the verifiers compare `svix-timestamp` with the wall clock."""
    settings = make_settings(clock_start=datetime.now(UTC).replace(microsecond=0))
    with TestClient(create_app(settings), headers=AUTH, raise_server_exceptions=False) as test_client:
        yield test_client


def test_contact_lifecycle_events_carry_contact_event_data(live: TestClient, receiver: Receiver) -> None:
    hook = create_hook(live, receiver.url, CONTACT_EVENTS)
    beta = segment(live, "Beta")
    contact_id = contact(live, "lin@example.org", first_name="Lin", segments=[{"id": beta}])
    live.patch(f"/contacts/{contact_id}", json={"unsubscribed": True})
    live.delete("/contacts/lin%40example.org")
    deliver(live)
    assert receiver.types() == ["contact.created", "contact.updated", "contact.deleted"]
    iso = frozen_at(live)
    data = {"id": contact_id, "segment_ids": [beta], "created_at": iso, "updated_at": iso,
            "email": "lin@example.org", "first_name": "Lin", "last_name": None, "unsubscribed": False}
    created, updated, deleted = (got.json for got in receiver.received)
    assert created == {"type": "contact.created", "created_at": iso, "data": data}
    assert updated["data"] == {**data, "unsubscribed": True}
    assert deleted["data"] == {**data, "unsubscribed": True}
    for got in receiver.received:
        assert verify_all(hook["signing_secret"], got)[1:] == [got.json, got.json]


def test_a_refused_create_emits_nothing(live: TestClient, receiver: Receiver) -> None:
    create_hook(live, receiver.url, CONTACT_EVENTS)
    assert live.post("/contacts", json={"email": "lin@example.org", "segments": [{"id": "nope"}]}
                     ).status_code == 404
    assert live.delete("/contacts/nobody%40example.org").status_code == 200
    deliver(live)
    assert receiver.received == []


def test_topic_events_and_contact_topics_updated(live: TestClient, receiver: Receiver) -> None:
    create_hook(live, receiver.url, [*TOPIC_EVENTS, "contact.topics.updated"])
    releases = topic(live, "Releases", description="Release notes")
    live.patch(f"/topics/{releases}", json={"name": "Product updates"})
    contact_id = contact(live, "lin@example.org")
    choice = [{"id": releases, "subscription": "opt_out"}]
    live.patch(f"/contacts/{contact_id}/topics", json={"topics": choice})
    live.patch(f"/contacts/{contact_id}/topics", json={"topics": choice})  # no change: no event
    live.delete(f"/topics/{releases}")
    deliver(live)
    assert receiver.types() == ["topic.created", "topic.updated", "contact.topics.updated", "topic.deleted"]
    base = {"id": releases, "name": "Releases", "description": "Release notes",
            "default_subscription": "opt_in", "deleted": False,
            "created_at": frozen_at(live), "updated_at": frozen_at(live)}
    assert [got.json["data"] for got in receiver.received] == [
        base, {**base, "name": "Product updates"},
        {"email": "lin@example.org", "topics": choice},
        {**base, "name": "Product updates", "deleted": True}]
