"""Signing: the worked example of reference/webhooks.md §7.1, and secret rotation on the clock."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import standardwebhooks
from starlette.testclient import TestClient

from emulator.resources.webhooks.catalogue import base62
from emulator.resources.webhooks.signing import sign, signature_header
from tests.conftest import FROZEN_AT
from tests.webhooks_helpers import Receiver, advance, create_hook, verifies_at

BODY = (
    b'{"type":"email.delivered","created_at":"2026-01-01T00:00:00.000Z","data":{"email_id":'
    b'"4ef9a417-02e9-4d39-ad75-9611e0fcc33c","created_at":"2025-12-31T23:59:58.000Z","from":'
    b'"Acme <onboarding@example.com>","to":["delivered@example.org"],"subject":"Welcome"}}'
)
OLD = "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcY"
NEW = "whsec_ZWZnaGlqa2xtbm9wcXJzdHV2d3h5ent8"
MSG = "msg_2dGvTq8Lw3ZkRb5NcYhUa1PxE0s"


def test_worked_example_is_reproduced() -> None:
    assert len(BODY) == 255
    digest = "8479709ff60d498d69c7c7ea1f085e8f66ce4f6bf9ab330ea743a00c622fbaf9"
    assert hashlib.sha256(BODY).hexdigest() == digest
    assert sign(OLD, MSG, 1767225600, BODY) == "v1,2pYAMDZPQf+H16IEK83+Kh1XT91teT1AWTnFmYR9eGw="


def test_worked_rotation_overlap_header() -> None:
    assert signature_header([NEW, OLD], MSG, 1767225600, BODY) == (
        "v1,R1sG3SfQLIRn321Fj15KgTxcqVmuMu5pZjq6XxESHhk= v1,2pYAMDZPQf+H16IEK83+Kh1XT91teT1AWTnFmYR9eGw=")


def test_worked_example_matches_standardwebhooks_signer() -> None:
    at = datetime.fromtimestamp(1767225600, UTC)
    assert standardwebhooks.Webhook(OLD).sign(MSG, at, BODY.decode()) == sign(OLD, MSG, 1767225600, BODY)



def _deliver_one(client: TestClient, receiver: Receiver, name: str) -> None:
    before = len(receiver.received)
    assert client.post("/domains", json={"name": name}).status_code == 201
    assert client.post("/_emulator/webhooks/flush").status_code == 200
    assert len(receiver.received) == before + 1


def test_rotation_signs_with_both_secrets_for_24_hours(client: TestClient, receiver: Receiver) -> None:
    hook = create_hook(client, receiver.url, ["domain.created"])
    old = hook["signing_secret"]
    _deliver_one(client, receiver, "before.example.com")
    assert len(receiver.received[-1].headers["svix-signature"].split(" ")) == 1
    new = client.post(f"/webhooks/{hook['id']}/signing-secret/rotate").json()["signing_secret"]

    _deliver_one(client, receiver, "during.example.com")
    during = receiver.received[-1]
    assert len(during.headers["svix-signature"].split(" ")) == 2
    assert verifies_at(new, during, FROZEN_AT) and verifies_at(old, during, FROZEN_AT)

    advance(client, hours=23, minutes=59)
    _deliver_one(client, receiver, "late.example.com")
    late_now = datetime(2026, 5, 15, 8, 59, tzinfo=UTC)
    assert verifies_at(old, receiver.received[-1], late_now)

    advance(client, minutes=1)
    _deliver_one(client, receiver, "after.example.com")
    after = receiver.received[-1]
    after_now = datetime(2026, 5, 15, 9, 0, tzinfo=UTC)
    assert int(after.headers["svix-timestamp"]) == int(after_now.timestamp())
    assert len(after.headers["svix-signature"].split(" ")) == 1
    assert verifies_at(new, after, after_now)
    assert not verifies_at(old, after, after_now)


def test_second_rotation_keeps_only_the_previous_secret(client: TestClient, receiver: Receiver) -> None:
    hook = create_hook(client, receiver.url, ["domain.created"])
    first = hook["signing_secret"]
    second = client.post(f"/webhooks/{hook['id']}/signing-secret/rotate").json()["signing_secret"]
    third = client.post(f"/webhooks/{hook['id']}/signing-secret/rotate").json()["signing_secret"]
    _deliver_one(client, receiver, "example.com")
    got = receiver.received[-1]
    assert [verifies_at(s, got, FROZEN_AT) for s in (first, second, third)] == [False, True, True]


def test_timestamp_is_the_attempt_time_not_the_event_time(client: TestClient, receiver: Receiver) -> None:
    hook = create_hook(client, receiver.url, ["domain.created"])
    receiver.replies = [(500, "no")]
    _deliver_one(client, receiver, "example.com")
    advance(client, seconds=5)
    first, retry = receiver.received
    assert first.json["created_at"] == retry.json["created_at"] == "2026-05-14T09:00:00.000Z"
    assert int(retry.headers["svix-timestamp"]) == int(FROZEN_AT.timestamp()) + 5
    assert verifies_at(hook["signing_secret"], retry, FROZEN_AT.replace(second=5))


def _base62_by_the_definition(raw: bytes) -> str:
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    number, digits = int.from_bytes(raw, "big"), []
    for _ in range(27):
        number, digit = divmod(number, 62)
        digits.append(alphabet[digit])
    return "".join(reversed(digits))


def test_svix_ids_are_the_27_base62_digits_of_their_20_bytes() -> None:
    # The id of a message or an attempt must not change with how it is computed (same seed, same ids).
    samples = [bytes(20), b"\xff" * 20, bytes(range(20)), *(hashlib.sha256(bytes([n])).digest()[:20]
                                                            for n in range(200))]
    for raw in samples:
        assert base62(raw) == _base62_by_the_definition(raw)


def test_message_and_attempt_ids_are_svix_shaped_and_in_creation_order(client: TestClient,
                                                                       receiver: Receiver) -> None:
    hook = create_hook(client, receiver.url, ["domain.created"])
    for n in range(12):
        assert client.post("/domains", json={"name": f"d{n}.example.com"}).status_code == 201
    assert client.post("/_emulator/webhooks/flush").status_code == 200
    events = client.get(f"/webhooks/{hook['id']}/events").json()["data"]  # newest first
    created = [event["id"] for event in reversed(events)]
    attempts = [client.get(f"/webhooks/{hook['id']}/events/{message}/attempts").json()["data"][0]["id"]
                for message in created]
    for ids, prefix in ((created, "msg_"), (attempts, "atmpt_")):
        assert len(set(ids)) == 12 and ids == sorted(ids)  # ordered as made, as Svix's KSUIDs are
        assert all(len(i) == len(prefix) + 27 and i.startswith(prefix + "2") for i in ids)
        assert all(i.removeprefix(prefix).isalnum() for i in ids)
    assert {got.headers["svix-id"] for got in receiver.received} == set(created)
