"""Webhook isolation (issue 11): a receiver that never answers delays only its own deliveries, and a
flush with such a receiver takes about one timeout, not one per queued delivery."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.ui_helpers import running_server
from tests.webhooks_helpers import Receiver, running_receiver

EVENTS = 40  # more than the runner's shared slots (16): without lanes the hanging endpoint took them all


@pytest.fixture
def live() -> Iterator[EmulatorServer]:
    with running_server() as server:
        yield server


@pytest.fixture
def api(live: EmulatorServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, headers=AUTH, timeout=60) as client:
        yield client


@pytest.fixture
def receivers() -> Iterator[tuple[Receiver, Receiver]]:
    with running_receiver() as hanging, running_receiver() as healthy:
        hanging.stall.set()  # answers nothing until released (at teardown, or after 10 s)
        yield hanging, healthy


def _subscribe(api: httpx.Client, *receivers: Receiver) -> None:
    for receiver in receivers:
        created = api.post("/webhooks", json={"endpoint": receiver.url, "events": ["contact.created"]})
        assert created.status_code == 201, created.text


def _wait_for(receiver: Receiver, count: int, limit: float) -> float:
    started = time.monotonic()
    while len(receiver.received) < count and time.monotonic() - started < limit:
        time.sleep(0.01)
    return time.monotonic() - started


def test_a_hanging_receiver_does_not_delay_a_healthy_one(api: httpx.Client,
                                                         receivers: tuple[Receiver, Receiver]) -> None:
    hanging, healthy = receivers
    _subscribe(api, hanging, healthy)
    for index in range(EVENTS):
        assert api.post("/contacts", json={"email": f"c{index}@acme.dev"}).status_code == 201
        # Each event is due the moment its contact is created: the healthy receiver has it in well under
        # the hanging receiver's 15 s timeout (5 s: slack for a loaded machine).
        assert _wait_for(healthy, index + 1, 10.0) < 5.0, index
    assert len({item.json["data"]["email"] for item in healthy.received}) == EVENTS
    assert hanging.received == []  # it never answered anything


def test_flush_with_a_hanging_receiver_takes_about_one_timeout(api: httpx.Client,
                                                                receivers: tuple[Receiver, Receiver]) -> None:
    hanging, healthy = receivers
    assert api.post("/_emulator/webhooks/config", json={"timeout_ms": 2000}).status_code == 200
    _subscribe(api, hanging, healthy)
    started = time.monotonic()
    for index in range(EVENTS):
        assert api.post("/contacts", json={"email": f"f{index}@acme.dev"}).status_code == 201
    assert api.post("/_emulator/webhooks/flush").json() == {"flushed": True}
    # About one timeout (2 s) plus slack for a loaded machine; one per queued delivery would be 20 s.
    assert time.monotonic() - started < 8.0
    assert len(healthy.received) == EVENTS and hanging.received == []
