"""The Logs and Webhooks pages at 100 000 rows each (issue 39 item 8): keyset pages ≤ 200 KB of HTML,
filters that combine and survive paging, walking every page returns each row once in order, and a bad
filter value gets a sentence, never a 500; a person filters and pages both in Chromium at three sizes. Rows
are seeded by SQL into a file database between two runs of a real server."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect

from emulator.testing import EmulatorServer
from tests.conftest import AUTH, THREE_IDS, THREE_SCREENS, make_settings

UI = "/_emulator/ui"
ROWS = 100_000
MAX_PAGE = 200 * 1024
HOOKS = ("hook-a", "hook-b")
PATHS = ("/emails", "/emails/{}", "/domains", "/emails/{}/cancel")
METHODS = ("POST", "GET", "GET", "POST")
STATUSES = (200, 404, 422, 500, 201)
KINDS = ("success", "failed", "attempting", "pending")
TYPES = ("email.sent", "email.delivered", "email.bounced")


def _log_row(n: int) -> tuple[object, ...]:
    kind = n % 4
    path = PATHS[kind].format(f"id-{n}")
    body = json.dumps({"from": "a@acme.dev", "to": [f"user{n}@example.org"], "subject": f"Order {n}"})
    return (f"log-{n:06d}", "default", f"2026-05-14T09:{(n // 60) % 60:02d}:{n % 60:02d}.000000Z", path,
            METHODS[kind], STATUSES[n % 5], "python-httpx/0.27", body, json.dumps({"id": f"id-{n}"}))


def _delivery_row(n: int) -> tuple[object, ...]:
    payload = json.dumps({"type": TYPES[n % 3], "created_at": "2026-05-14T09:00:00.000Z",
                          "data": {"email_id": f"id-{n}", "from": "a@acme.dev",
                                   "to": [f"user{n}@example.org"], "subject": f"Order {n}"}})
    return (f"msg-{n:06d}", "default", HOOKS[n % 2], f"evt-{n}", TYPES[n % 3], payload, KINDS[n % 4], 1, 1,
            None, "2026-05-14T09:00:00.000000Z")


def _seed(path: Path) -> None:
    with sqlite3.connect(path) as raw:
        raw.execute("DELETE FROM request_logs")
        raw.executemany("INSERT INTO request_logs (id, account, created_at, endpoint, method,"
                        " response_status, user_agent, request_body, response_body)"
                        " VALUES (?,?,?,?,?,?,?,?,?)",
                        (_log_row(n) for n in range(ROWS)))
        raw.executemany("INSERT INTO webhooks (id, account, endpoint, events, status, secret, created_at)"
                        " VALUES (?, 'default', ?, '[\"email.sent\"]', 'enabled', 'whsec_x', ?)",
                        [(hook, f"http://127.0.0.1:9/{hook}", "2026-05-14T09:00:00.000000Z")
                         for hook in HOOKS])
        raw.executemany("INSERT INTO webhook_messages (id, account, webhook_id, event_id, type, payload,"
                        " status, attempts, tries, next_attempt_at, created_at)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        (_delivery_row(n) for n in range(ROWS)))
        raw.executemany("INSERT INTO webhook_attempts (id, account, webhook_id, message_id, http_status_code,"
                        " response, reason, sent_at) VALUES (?, 'default', ?, ?, 500, 'no', 'status',"
                        " '2026-05-14T09:00:01.000000Z')",
                        [(f"att-{n}", HOOKS[n % 2], f"msg-{n:06d}") for n in range(ROWS - 200, ROWS)])


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    path = tmp_path_factory.mktemp("paging") / "emulator.db"
    with EmulatorServer(make_settings(port=0, db=str(path))) as first:  # lays out the tables
        assert httpx.get(f"{first.url}/domains", headers=AUTH).status_code == 200
    _seed(path)
    with EmulatorServer(make_settings(port=0, db=str(path))) as server, \
            httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def _seqs(html: str, kind: str) -> list[int]:
    if kind == "logs":
        return [int(n) + 1 for n in re.findall(r'class="mono"><a href="/_emulator/ui/logs/log-(\d+)"', html)]
    return [int(n) for n in re.findall(r'class="delivery-row" data-id="msg-(\d+)"', html)]


def _older(html: str) -> str | None:
    found = re.search(r'href="([^"]+)" rel="next" id="older"', html)
    return found.group(1).replace("&amp;", "&") if found else None


def _walk(ui: httpx.Client, url: str, kind: str) -> tuple[list[int], int]:
    seen: list[int] = []
    largest = 0
    next_url: str | None = url
    while next_url:
        response = ui.get(next_url)
        assert response.status_code == 200, response.text[:500]
        largest = max(largest, len(response.text.encode()))
        seen += _seqs(response.text, kind)
        next_url = _older(response.text)
    return seen, largest


def test_log_pages_stay_small_and_walk_every_row_once_in_order(ui: httpx.Client) -> None:
    first = ui.get(f"{UI}/logs")
    assert first.status_code == 200 and len(first.text.encode()) <= MAX_PAGE
    assert _seqs(first.text, "logs") == list(range(ROWS, ROWS - 50, -1))
    # status 404 and method GET: 1 row in 20 (n % 5 == 1 and n % 4 in (1, 2)); a walk of 5 000 rows
    seen, largest = _walk(ui, f"{UI}/logs?status=404&method=GET", "logs")
    expected = [n + 1 for n in range(ROWS - 1, -1, -1) if n % 5 == 1 and n % 4 in (1, 2)]
    assert seen == expected and largest <= MAX_PAGE


def test_log_filters_combine_and_paging_keeps_them(ui: httpx.Client) -> None:
    page = ui.get(f"{UI}/logs", params={"status": "5xx", "path": "/emails/{id}/cancel"}).text
    seqs = _seqs(page, "logs")
    assert seqs == [n + 1 for n in range(ROWS - 1, -1, -1) if n % 5 == 3 and n % 4 == 3][:50]
    older = _older(page)
    assert older is not None and "status=5xx" in older and "path=%2Femails%2F%7Bid%7D%2Fcancel" in older
    newer_page = ui.get(older).text
    newer = re.search(r'href="([^"]+)" rel="prev" id="newer"', newer_page)
    assert newer is not None and _seqs(ui.get(newer.group(1).replace("&amp;", "&")).text, "logs") == seqs
    # a template matches whole segments: `/emails/{id}` is not `/emails/x/cancel`
    single = _seqs(ui.get(f"{UI}/logs", params={"path": "/emails/{id}"}).text, "logs")
    assert single and all((seq - 1) % 4 == 1 for seq in single)
    substring = _seqs(ui.get(f"{UI}/logs", params={"path": "/cancel"}).text, "logs")
    assert substring and all((seq - 1) % 4 == 3 for seq in substring)


def test_bad_log_filters_say_why_and_an_empty_result_says_so(ui: httpx.Client) -> None:
    for query, sentence in ((("status", "abc"), "Status takes 2xx"), (("status", "99999999999999999999999"),
                            "Status takes 2xx"), (("method", "BREW"), "Method takes one of")):
        response = ui.get(f"{UI}/logs", params=dict([query]))
        assert response.status_code == 200 and sentence in response.text
        assert 'id="filter-error"' in response.text
    empty = ui.get(f"{UI}/logs", params={"path": "/nowhere"})
    assert "No API requests match these filters." in empty.text and _older(empty.text) is None


def test_delivery_pages_stay_small_and_walk_every_row_once_in_order(ui: httpx.Client) -> None:
    first = ui.get(f"{UI}/webhooks")
    assert first.status_code == 200 and len(first.text.encode()) <= MAX_PAGE
    assert f'id="delivery-count">{ROWS}<' in first.text
    assert _seqs(first.text, "webhooks") == list(range(ROWS - 1, ROWS - 51, -1))
    # failed deliveries of hook-b about email.bounced: n % 4 == 1, n % 2 == 1, n % 3 == 2 → 1 in 12
    url = f"{UI}/webhooks?status=failed&endpoint=hook-b&type=email.bounced"
    seen, largest = _walk(ui, url, "webhooks")
    assert seen == [n for n in range(ROWS - 1, -1, -1) if n % 4 == 1 and n % 3 == 2]
    assert largest <= MAX_PAGE


def test_bad_delivery_filters_say_why(ui: httpx.Client) -> None:
    for params, sentence in (({"status": "lost"}, "Status takes success"),
                             ({"type": "email.nope"}, "is not a webhook event type"),
                             ({"endpoint": "hook-z"}, "no webhook endpoint with the id")):
        response = ui.get(f"{UI}/webhooks", params=params)
        assert response.status_code == 200 and sentence in response.text, params
    empty = ui.get(f"{UI}/webhooks", params={"type": "domain.created"})
    assert "No deliveries match these filters." in empty.text


# ---- in Chromium, as a person pages them ------------------------------------------------------------

@pytest.mark.browser
@pytest.mark.parametrize("viewport", THREE_SCREENS, ids=THREE_IDS)
def test_a_person_filters_and_pages_the_logs_and_the_deliveries(ui: httpx.Client, browser: Browser,
                                                                viewport: dict[str, int]) -> None:
    context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    page = context.new_page()
    base = str(ui.base_url).rstrip("/")
    try:
        page.goto(f"{base}{UI}/logs")
        page.fill("#log-status", "5xx")
        page.fill("#log-path", "/emails/{id}/cancel")
        page.press("#log-path", "Enter")
        expect(page).to_have_url(re.compile(r"status=5xx"))
        matching = [n + 1 for n in range(ROWS - 1, -1, -1) if n % 5 == 3 and n % 4 == 3]
        assert _seqs(page.content(), "logs") == matching[:50]
        page.locator("#older").click()
        expect(page).to_have_url(re.compile(r"status=5xx"))
        assert _seqs(page.content(), "logs") == matching[50:100]  # the next 50, the filters kept

        page.goto(f"{base}{UI}/webhooks")
        page.select_option("#delivery-status-filter", "failed")  # submits itself (data-autosubmit)
        expect(page).to_have_url(re.compile(r"status=failed"))
        failed = [n for n in range(ROWS - 1, -1, -1) if n % 4 == 1]
        assert _seqs(page.content(), "webhooks") == failed[:50]
        page.locator("#older").click()
        expect(page).to_have_url(re.compile(r"status=failed"))
        assert _seqs(page.content(), "webhooks") == failed[50:100]
    finally:
        context.close()
