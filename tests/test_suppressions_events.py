"""`suppression.added` / `suppression.removed` reach a real webhook receiver after commit, signed, with the
SuppressionEventData payload (webhooks.md §6.6): manual and batch adds, removals, automatic bounces."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from starlette.testclient import TestClient

from emulator.app import create_app
from tests.conftest import AUTH, make_settings
from tests.emails_helpers import send
from tests.webhooks_helpers import Receiver, create_hook, deliver, verify_all


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


def test_manual_and_batch_adds_and_removals_are_delivered(live: TestClient, receiver: Receiver,
                                                           start: datetime) -> None:
    hook = create_hook(live, receiver.url, ["suppression.added", "suppression.removed"])
    one = live.post("/suppressions", json={"email": "Ada@Lovelace.dev"}).json()["id"]
    [two] = [entry["id"] for entry in live.post("/suppressions/batch/add", json={"emails": ["b@x.org"]}
                                                ).json()["data"]]
    assert live.delete(f"/suppressions/{one}").status_code == 200
    deliver(live)
    ada = {"id": one, "email": "ada@lovelace.dev", "origin": "manual", "source_id": None,
           "created_at": start.strftime("%Y-%m-%d %H:%M:%S.000+00")}
    # Deliveries to one endpoint start oldest first but run side by side: they may arrive in any order.
    assert sorted((got.json["type"], got.json["data"]["email"]) for got in receiver.received) == [
        ("suppression.added", "ada@lovelace.dev"), ("suppression.added", "b@x.org"),
        ("suppression.removed", "ada@lovelace.dev")]
    assert {got.json["data"]["email"]: got.json["data"] for got in receiver.received} == {
        "ada@lovelace.dev": ada, "b@x.org": {**ada, "id": two, "email": "b@x.org"}}
    for got in receiver.received:
        assert verify_all(hook["signing_secret"], got)[1:] == [got.json, got.json]


def test_a_refused_batch_emits_nothing(live: TestClient, receiver: Receiver) -> None:
    create_hook(live, receiver.url, ["suppression.added"])
    refused = live.post("/suppressions/batch/add", json={"emails": ["ok@x.org", "not-an-address"]})
    assert refused.status_code == 422
    deliver(live)
    assert receiver.received == []


def test_a_hard_bounce_adds_the_address_with_its_source(live: TestClient, receiver: Receiver) -> None:
    create_hook(live, receiver.url, ["suppression.added"])
    email_id = send(live, to="bounced@resend.dev")
    assert live.post("/_emulator/clock/advance", json={"seconds": 10}).status_code == 200
    deliver(live)
    [added] = receiver.received
    assert added.json["data"]["email"] == "bounced@resend.dev"
    assert (added.json["data"]["origin"], added.json["data"]["source_id"]) == ("bounce", email_id)
