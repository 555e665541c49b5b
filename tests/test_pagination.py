"""Pagination rules of seed §4.5 / §7.1 (reference 00-general.md §4), each with its own test."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.core.pages import fetch_page, parse_page

LIMIT_ERROR = ("The pagination limit must be a number between 1 and 100."
               " See https://resend.com/docs/pagination for more information.")


def make_keys(client: TestClient, count: int) -> list[str]:
    """Create `count` API keys; return all key ids newest first (the provisioned key is oldest)."""
    for index in range(count):
        assert client.post("/api-keys", json={"name": f"k{index}"}).status_code == 201
    return [item["id"] for item in client.get("/api-keys").json()["data"]]


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "2.5", ""])
def test_limit_outside_1_to_100_is_422(client: TestClient, limit: str) -> None:
    response = client.get(f"/api-keys?limit={limit}")
    assert response.status_code == 422
    assert response.json() == {"statusCode": 422, "message": LIMIT_ERROR, "name": "validation_error"}


@pytest.mark.parametrize("limit", ["0\x1f", "\u0663", "1e2"])
def test_limit_with_control_characters_or_non_ascii_digits_is_422(client: TestClient, limit: str) -> None:
    """`0\\x1f` once reached int() after str.strip() let it through the check: a 500 the fuzz test found."""
    response = client.get("/webhooks/9a84b94b-9411-4aaa-8ee5-92d72a81082f/events", params={"limit": limit})
    assert response.status_code == 422
    assert response.json() == {"statusCode": 422, "message": LIMIT_ERROR, "name": "validation_error"}


@pytest.mark.parametrize("limit", ["1", "100"])
def test_limit_bounds_are_accepted(client: TestClient, limit: str) -> None:
    assert client.get(f"/api-keys?limit={limit}").status_code == 200


def test_after_and_before_together_is_422(client: TestClient) -> None:
    ids = make_keys(client, 2)
    response = client.get(f"/api-keys?after={ids[0]}&before={ids[1]}")
    assert response.status_code == 422
    assert response.json()["name"] == "validation_error"
    assert "only pass one of `before` or `after`" in response.json()["message"]


@pytest.mark.parametrize("cursor", ["not-a-real-id", "00000000-0000-4000-8000-000000000000", ""])
def test_unknown_or_malformed_cursor_is_422(client: TestClient, cursor: str) -> None:
    for direction in ("after", "before"):
        response = client.get(f"/api-keys?{direction}={cursor}")
        assert (response.status_code, response.json()["name"]) == (422, "validation_error")


def test_after_moves_to_older_items_excluding_the_cursor(client: TestClient) -> None:
    ids = make_keys(client, 5)
    page = client.get(f"/api-keys?limit=2&after={ids[1]}").json()
    assert [item["id"] for item in page["data"]] == ids[2:4]
    assert page["has_more"] is True


def test_before_moves_to_newer_items_excluding_the_cursor(client: TestClient) -> None:
    ids = make_keys(client, 5)
    page = client.get(f"/api-keys?limit=2&before={ids[4]}").json()
    assert [item["id"] for item in page["data"]] == ids[2:4]
    assert page["has_more"] is True
    last = client.get(f"/api-keys?limit=2&before={ids[2]}").json()
    assert [item["id"] for item in last["data"]] == ids[0:2]
    assert last["has_more"] is False


def test_has_more_false_on_the_last_page(client: TestClient) -> None:
    ids = make_keys(client, 3)
    page = client.get(f"/api-keys?limit=2&after={ids[1]}").json()
    assert [item["id"] for item in page["data"]] == ids[2:4]
    assert page["has_more"] is False


def test_walking_all_pages_visits_every_item_once(client: TestClient) -> None:
    ids = make_keys(client, 7)
    seen: list[str] = []
    cursor = ""
    while True:
        page = client.get(f"/api-keys?limit=3{cursor}").json()
        seen += [item["id"] for item in page["data"]]
        if not page["has_more"]:
            break
        cursor = f"&after={seen[-1]}"
    assert seen == ids


def test_rule_3_limit_omitted_returns_all(client: TestClient) -> None:
    ids = make_keys(client, 30)
    page = client.get("/api-keys").json()
    assert len(page["data"]) == len(ids) == 31
    assert page["has_more"] is False
    assert len(client.get("/domains").json()["data"]) == 0


def _events_page(client: TestClient, query: dict[str, str]) -> tuple[list[Any], bool]:
    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def run() -> tuple[list[Any], bool]:
        async with emu.transaction("default") as tx:
            return await fetch_page(tx, "events", parse_page(query, optional_limit=False))

    return client.portal.call(run)  # type: ignore[union-attr, no-any-return]


def test_always_paginated_lists_default_to_20(client: TestClient) -> None:
    for index in range(25):
        client.post("/domains", json={"name": f"d{index}.acme.dev"})
    rows, has_more = _events_page(client, {})
    assert len(rows) == 20 and has_more is True
    rows, has_more = _events_page(client, {"limit": "30"})
    assert len(rows) == 25 and has_more is False
