"""How the API pipeline reads a request's headers (api/ops.py `CallHeaders`): as Starlette did, names
match whatever their case, and of a repeated header the first counts."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from emulator.api.ops import CallHeaders
from emulator.testing import EmulatorServer
from tests.conftest import KEY, make_settings

MAIL = {"from": "Acme <hello@acme.dev>", "to": ["delivered@resend.dev"], "subject": "Hi", "html": "<p>Hi</p>"}


def test_lookups_ignore_case_and_take_the_first_of_a_repeated_header() -> None:
    raw = [(b"x-one", b"first"), (b"content-type", b"application/json"), (b"x-one", b"second")]
    headers = CallHeaders(raw)
    assert headers.get("X-One") == headers["x-ONE"] == "first"
    assert "Content-Type" in headers and "x-two" not in headers and 3 not in headers
    assert headers.get("x-two") is None and headers.get("x-two", "none") == "none"
    with pytest.raises(KeyError):
        headers["x-two"]
    # Starlette's own methods still see every header.
    assert headers.getlist("x-one") == ["first", "second"]
    assert headers.items() == [("x-one", "first"), ("content-type", "application/json"), ("x-one", "second")]


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer(make_settings(smtp=False), port=0) as running:
        yield running


def test_a_real_request_is_read_the_same_way(server: EmulatorServer) -> None:
    with httpx.Client(base_url=server.url) as client:
        first = client.post("/emails", json=MAIL, headers=[
            ("AUTHORIZATION", f"Bearer {KEY}"), ("Idempotency-Key", "key-a"), ("idempotency-key", "key-b")])
        assert first.status_code == 200, first.text
        again = client.post("/emails", json=MAIL, headers={"authorization": f"Bearer {KEY}",
                                                           "idempotency-key": "key-a"})
        assert again.json() == first.json()  # the first of the two keys is the one that counted
        other = client.post("/emails", json=MAIL, headers={"authorization": f"Bearer {KEY}",
                                                           "idempotency-key": "key-b"})
        assert other.json()["id"] != first.json()["id"]
