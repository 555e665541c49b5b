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


@pytest.fixture
def start() -> datetime:
    """The real time when the test starts (not at import: a long `-n 2` run reaches this module minutes
    later, and the verifiers refuse a `svix-timestamp` older than 5 minutes)."""
    return datetime.now(UTC).replace(microsecond=0)


@pytest.fixture
def live(receiver: Receiver, start: datetime) -> Iterator[TestClient]:
    """Frozen at the real time: the verifiers compare `svix-timestamp` with the wall clock."""
    with TestClient(create_app(make_settings(clock_start=start)), headers=AUTH,
                    raise_server_exceptions=False) as test_client:
        yield test_client


def test_contact_lifecycle_events_carry_contact_event_data(live: TestClient, receiver: Receiver,
                                                            start: datetime) -> None:
    iso = start.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    hook = create_hook(live, receiver.url, CONTACT_EVENTS)
    beta = segment(live, "Beta")
    contact_id = contact(live, "lin@example.org", first_name="Lin", segments=[{"id": beta}])
    live.patch(f"/contacts/{contact_id}", json={"unsubscribed": True})
    live.delete("/contacts/lin%40example.org")
    deliver(live)
    kinds = ["contact.created", "contact.updated", "contact.deleted"]
    created, updated, deleted = receiver.one_of_each(kinds)
    data = {"id": contact_id, "segment_ids": [beta], "created_at": iso, "updated_at": iso,
            "email": "lin@example.org", "first_name": "Lin", "last_name": None, "unsubscribed": False}
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


def test_topic_events_and_contact_topics_updated(live: TestClient, receiver: Receiver,
                                                  start: datetime) -> None:
    iso = start.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    create_hook(live, receiver.url, [*TOPIC_EVENTS, "contact.topics.updated"])
    releases = topic(live, "Releases", description="Release notes")
    live.patch(f"/topics/{releases}", json={"name": "Product updates"})
    contact_id = contact(live, "lin@example.org")
    choice = [{"id": releases, "subscription": "opt_out"}]
    live.patch(f"/contacts/{contact_id}/topics", json={"topics": choice})
    live.patch(f"/contacts/{contact_id}/topics", json={"topics": choice})  # no change: no event
    live.delete(f"/topics/{releases}")
    deliver(live)
    got = receiver.one_of_each(["topic.created", "topic.updated", "contact.topics.updated", "topic.deleted"])
    base = {"id": releases, "name": "Releases", "description": "Release notes",
            "default_subscription": "opt_in", "deleted": False,
            "created_at": iso, "updated_at": iso}
    assert [body["data"] for body in got] == [
        base, {**base, "name": "Product updates"},
        {"email": "lin@example.org", "topics": choice},
        {**base, "name": "Product updates", "deleted": True}]
