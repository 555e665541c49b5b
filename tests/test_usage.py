"""GET /usage counted from the account's rows on the emulator clock: the UTC day and month windows move
with the clock, `used` is what the quota headers count, and the rate limit and the quotas are the ones
the API enforces."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.conftest import make_settings
from tests.contacts_helpers import advance, contact, created, segment

MAIL = {"from": "hi@acme.dev", "to": ["lin@example.org"], "subject": "Hi", "html": "<p>Hi</p>"}


def usage(client: TestClient) -> dict[str, Any]:
    response = client.get("/usage")
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_usage_counts_the_accounts_rows(client: TestClient) -> None:
    """Two emails and a broadcast's one email, a contact, a segment, a domain, a sent broadcast, a run."""
    client.post("/domains", json={"name": "acme.dev"})
    for _ in range(2):
        assert client.post("/emails", json=MAIL).status_code == 200
    segment_id = segment(client, "All")
    ada = contact(client, "ada@example.org")
    assert client.post(f"/contacts/{ada}/segments/{segment_id}").status_code == 200
    created(client.post("/broadcasts", json={"segment_id": segment_id, "from": "hi@acme.dev",
                                             "subject": "News", "html": "<p>News</p>", "send": True}))
    created(client.post("/automations", json={
        "name": "A", "status": "enabled", "connections": [],
        "steps": [{"key": "start", "type": "trigger", "config": {"event_name": "go"}}]}))
    assert client.post("/events/send", json={"event": "go", "email": "ada@example.org"}).status_code == 202
    assert client.post("/_emulator/flush").status_code == 200
    assert usage(client) == {
        "object": "usage",
        "generated_at": "2026-05-14T09:00:00.000Z",
        "emails": {
            "daily": {"used": 3, "sent": 3, "received": 0, "resets_at": "2026-05-15T00:00:00.000Z",
                      "limit": 100},
            "monthly": {"used": 3, "sent": 3, "received": 0, "resets_at": "2026-06-01T00:00:00.000Z",
                        "limit": 3000},
        },
        "contacts": {"used": 1, "limit": 1000},
        "segments": {"used": 1, "limit": None},
        "broadcasts": {"used": 1, "limit": None},
        "ai_credits": {"used": 0, "limit": None, "next_increase_at": None},
        "automation_runs": {"used": 1, "limit": 1000, "resets_at": "2026-06-01T00:00:00.000Z"},
        "domains": {"used": 1, "limit": None},
        "rate_limit": {"limit": 10, "duration": "1000ms"},
    }


def test_the_day_and_month_windows_follow_the_clock(client: TestClient) -> None:
    assert client.post("/emails", json=MAIL).status_code == 200
    advance(client, 15 * 3600)  # 2026-05-15 00:00: a new UTC day, the same month
    emails = usage(client)["emails"]
    assert (emails["daily"]["sent"], emails["daily"]["resets_at"]) == (0, "2026-05-16T00:00:00.000Z")
    assert emails["monthly"]["sent"] == 1
    advance(client, 17 * 86400)  # 2026-06-01: a new month
    emails = usage(client)["emails"]
    assert (emails["monthly"]["sent"], emails["monthly"]["resets_at"]) == (0, "2026-07-01T00:00:00.000Z")


@pytest.mark.parametrize("settings", [make_settings(rate_limit=4)])
def test_the_rate_limit_is_the_one_the_api_enforces(client: TestClient) -> None:
    response = client.get("/usage")
    assert response.json()["rate_limit"] == {"limit": 4, "duration": "1000ms"}
    assert response.headers["ratelimit-limit"] == "4"


@pytest.mark.parametrize("settings", [make_settings(daily_quota=7, monthly_quota=50)])
def test_used_is_what_the_quota_headers_count_and_the_limits_are_the_enforced_ones(
        client: TestClient) -> None:
    client.post("/domains", json={"name": "in.acme.dev", "capabilities": {"sending": "disabled",
                                                                          "receiving": "enabled"}})
    sent = client.post("/emails", json={**MAIL, "to": ["a@example.org", "b@example.org"],
                                        "cc": ["c@example.org"]})
    assert client.post("/_emulator/inbound", json={"from": "jane@customer.io",
                                                   "to": "help@in.acme.dev"}).status_code == 200
    response = client.get("/usage")
    daily, monthly = response.json()["emails"]["daily"], response.json()["emails"]["monthly"]
    assert sent.headers["x-resend-daily-quota"] == "3"  # each recipient counts
    assert response.headers["x-resend-daily-quota"] == "4"  # and the received email
    assert {key: daily[key] for key in ("used", "sent", "received", "limit")} == {
        "used": 4, "sent": 1, "received": 1, "limit": 7}
    assert (monthly["used"], monthly["limit"]) == (4, 50)
