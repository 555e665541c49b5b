"""Idempotency-Key rules (reference 00-general.md §6), one test each, including two concurrent requests."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.testclient import TestClient

from tests.conftest import AUTH

MAIL = {"from": "Acme <hello@acme.dev>", "to": ["delivered@resend.dev"], "subject": "Hi", "text": "x"}


def send(client: TestClient, key: str, body: object = None, path: str = "/emails") -> httpx.Response:
    return client.post(path, json=MAIL if body is None else body, headers={"Idempotency-Key": key})


def emails_stored(client: TestClient) -> int:
    return len(client.get("/emails?limit=100").json()["data"])


@pytest.mark.parametrize("key", ["", "k" * 257])
def test_key_outside_1_to_256_chars_is_400(client: TestClient, key: str) -> None:
    response = send(client, key)
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400, "name": "invalid_idempotency_key",
        "message": "Idempotency keys, if present, must have between 1 and 256 characters."}
    assert emails_stored(client) == 0


def test_key_of_256_chars_is_accepted(client: TestClient) -> None:
    assert send(client, "k" * 256).status_code == 200


def test_same_key_and_body_replays_the_first_response(client: TestClient) -> None:
    first = send(client, "order-1")
    again = send(client, "order-1", {"subject": "Hi", "text": "x", "to": ["delivered@resend.dev"],
                                     "from": "Acme <hello@acme.dev>"})  # same JSON, other key order
    assert again.status_code == 200 and again.content == first.content
    assert emails_stored(client) == 1


def test_same_key_other_body_is_409(client: TestClient) -> None:
    send(client, "order-2")
    response = send(client, "order-2", {**MAIL, "subject": "Changed"})
    assert response.status_code == 409
    assert response.json()["name"] == "invalid_idempotent_request"
    assert emails_stored(client) == 1


def test_keys_are_scoped_per_endpoint(client: TestClient) -> None:
    single = send(client, "shared")
    batch = send(client, "shared", [MAIL], path="/emails/batch")
    assert single.status_code == batch.status_code == 200
    assert emails_stored(client) == 2


def test_failed_request_does_not_consume_the_key(client: TestClient) -> None:
    assert send(client, "retry-me", {**MAIL, "to": ["not-an-address"]}).status_code == 422
    assert send(client, "retry-me").status_code == 200


def test_keys_expire_after_24_hours_on_the_clock(client: TestClient) -> None:
    first = send(client, "daily")
    client.post("/_emulator/clock/advance", json={"hours": 24, "seconds": 1})
    second = send(client, "daily")
    assert second.status_code == 200 and second.json()["id"] != first.json()["id"]
    assert emails_stored(client) == 2


def test_two_concurrent_requests_with_one_key(client: TestClient) -> None:
    """While the first holds the key, the second is refused with 409 concurrent_idempotent_requests."""
    app = client.app
    emu = app.state.emu  # type: ignore[attr-defined]

    async def race() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver", headers=AUTH) as http:
            await emu.db.lock.acquire()  # hold the database so the first request stays in flight
            first = asyncio.create_task(http.post("/emails", json=MAIL, headers={"Idempotency-Key": "k"}))
            while not emu.state.get("idempotency_in_flight"):
                await asyncio.sleep(0)
            second = await http.post("/emails", json=MAIL, headers={"Idempotency-Key": "k"})
            emu.db.lock.release()
            return [await first, second]

    first, second = client.portal.call(race)  # type: ignore[union-attr]
    assert first.status_code == 200
    assert second.status_code == 409
    assert second.json() == {"statusCode": 409, "name": "concurrent_idempotent_requests",
                             "message": "There is another request in progress with the same idempotency key."}
    assert send(client, "k").content == first.content  # once finished, the key replays
