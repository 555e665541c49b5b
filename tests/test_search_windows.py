"""Searches that scan walk their table in windows of `seq` (control/windows.py, issue 36): the rows and
counts they find are exactly those one statement finds. Windows shrunk to one row each here, so every
list, page, count and bulk action below crosses dozens of window edges."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from emulator.control import deletion, windows
from tests.test_mail_housekeeping import OUTBOX, RECEIVED, count, receive, send

UI = "/_emulator/ui"
MAIL = 30


@pytest.fixture(autouse=True)
def one_row_windows(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(windows, "FIRST_SPAN", 1)
    monkeypatch.setattr(windows, "WINDOW_SECONDS", 1e-9)  # every window costs more: spans stay at 1
    monkeypatch.setattr(deletion, "CHUNK", 4)
    yield


def _subject(n: int) -> str:
    return f"Refund #{n}" if n % 3 == 0 else f"Order #{n}"


def _sent(client: TestClient) -> list[str]:
    """Sent mail, a third of it refunds; the refunds' ids newest first."""
    ids = [send(client, subject=_subject(n)) for n in range(MAIL)]
    return [email_id for n, email_id in reversed(list(enumerate(ids))) if n % 3 == 0]


def _pages(client: TestClient, cursor: str, start: str | None = None) -> list[list[str]]:
    pages, params = [], {"subject": "REFUND", "limit": "4"}
    if start is not None:
        params[cursor] = start
    while True:
        body = client.get(OUTBOX, params=params).json()
        pages.append([item["id"] for item in body["data"]])
        if not body["has_more"]:
            return pages
        params[cursor] = pages[-1][-1 if cursor == "after" else 0]


def test_outbox_pages_of_a_scanning_filter_hold_exactly_its_matches_in_order(client: TestClient) -> None:
    refunds = _sent(client)
    older = _pages(client, "after")
    assert [email_id for page in older for email_id in page] == refunds
    assert [len(page) for page in older] == [4, 4, 2]
    newer = _pages(client, "before", refunds[-1])
    assert [email_id for page in reversed(newer) for email_id in page] == refunds[:-1]
    waited = client.get(f"{OUTBOX}/wait", params={"subject": "refund", "timeout": "1"})
    assert waited.json()["id"] == refunds[0]


def test_outbox_search_with_a_substring_term_finds_the_same_rows_as_before(client: TestClient) -> None:
    refunds = _sent(client)
    found = client.get(OUTBOX, params={"q": "cc:x OR subject:refund", "limit": "100"}).json()
    assert [item["id"] for item in found["data"]] == refunds
    shown = client.get(f"{UI}/rows/outbox", params={"q": "-message-id:zz subject:refund"}).json()
    assert shown["total"] == str(len(refunds))
    assert shown["rows"].count('class="subject">Refund #') == len(refunds)


def test_received_page_count_and_bulk_actions_cover_exactly_the_matches(client: TestClient) -> None:
    for n in range(MAIL):
        receive(client, _subject(n))
    shown = client.get(f"{UI}/rows/received", params={"q": "refund"}).json()
    assert shown["total"] == str(MAIL // 3) and shown["rows"].count('class="subject">Refund #') == MAIL // 3
    marked = client.post(f"{RECEIVED}/read", params={"q": "subject:refund"}).json()
    assert marked == {"object": "list", "updated": MAIL // 3, "read": True}
    assert client.get(f"{UI}/rows/received", params={"q": "is:read"}).json()["total"] == str(MAIL // 3)
    deleted = client.delete(RECEIVED, params={"q": "subject:refund"}).json()
    assert deleted == {"object": "list", "deleted": MAIL // 3}
    assert count(client, "received_emails") == MAIL - MAIL // 3
    assert client.get(f"{UI}/rows/received", params={"q": "refund"}).json()["total"] == "0"


def test_deleting_sent_mail_by_a_scanning_filter_keeps_the_rest(client: TestClient) -> None:
    refunds = _sent(client)
    assert client.delete(OUTBOX, params={"subject": "refund"}).json() == {"object": "list",
                                                                           "deleted": len(refunds)}
    assert count(client, "emails") == MAIL - len(refunds)
    assert all(client.get(f"{OUTBOX}/{email_id}").status_code == 404 for email_id in refunds)
