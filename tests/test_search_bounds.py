"""The search language in range at every place that takes it (issue 36): a size, a date, a term or a
query out of range is a 422 validation_error with a sentence (in the UI, the list's inline sentence),
never a 500, and a bulk action with such a query deletes or marks nothing."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote_plus

import pytest
from starlette.testclient import TestClient

from emulator.control.query import MAX_QUERY_CHARS, MAX_SIZE, MAX_TERM_CHARS, parse
from emulator.core.substring import WINDOW, contains, needle
from tests.conftest import assert_error_shape
from tests.inboxes_helpers import ADDRESS, create_inbox, raw_mail, receiving_domain

OUT_OF_RANGE = {
    "larger-23-digits": ("larger:99999999999999999999999", "up to 1 TB"),
    "smaller-past-int64": ("smaller:9223372036854775808", "up to 1 TB"),
    "larger-400-digits": ("larger:" + "9" * 400, "up to 1 TB"),
    "before-year-0": ("before:0001-01-01T00:00:00+01:00", "between the years 1 and 9999"),
    "after-year-10000": ("after:9999-12-31T23:59:59-14:00", "between the years 1 and 9999"),
    "term-60000": ("x" * 60_000, f"at most {MAX_TERM_CHARS} characters"),
    "term-10x-bound": ('"' + "y" * (10 * MAX_TERM_CHARS) + '"', f"at most {MAX_TERM_CHARS} characters"),
    "query-10x-bound": ("ab " * (10 * MAX_QUERY_CHARS // 3), f"at most {MAX_QUERY_CHARS} characters"),
    "size-10x-bound": (f"larger:{10 * MAX_SIZE}", "up to 1 TB"),
}
# Control-plane places: (method, path); each answers a wrong query with a 422 and changes nothing.
JSON_PLACES = {
    "outbox-list": ("GET", "/_emulator/outbox"),
    "outbox-wait": ("GET", "/_emulator/outbox/wait"),
    "outbox-delete": ("DELETE", "/_emulator/outbox"),
    "outbox-read": ("POST", "/_emulator/outbox/read"),
    "outbox-unread": ("POST", "/_emulator/outbox/unread"),
    "received-delete": ("DELETE", "/_emulator/received"),
    "received-read": ("POST", "/_emulator/received/read"),
    "received-unread": ("POST", "/_emulator/received/unread"),
}
UI = "/_emulator/ui"


def _stock(client: TestClient) -> str:
    """One sent email, one received (in an inbox): what a wrong query must leave as it is."""
    sent = client.post("/emails", json={"from": "hello@acme.dev", "to": ["delivered@resend.dev"],
                                        "subject": "Welcome", "html": "<p>Hello</p>"})
    assert sent.status_code == 200, sent.text
    receiving_domain(client)
    inbox = create_inbox(client)
    raw = raw_mail("Order 7", "where is my order", "<m1@example.org>", to=ADDRESS)
    received = client.post("/_emulator/inbound", json={"raw": raw.decode()})
    assert received.status_code == 200, received.text
    return str(inbox["id"])


def _state(client: TestClient) -> dict[str, Any]:
    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def read() -> dict[str, Any]:
        async with emu.transaction() as tx:
            return {table: await tx.all(f"SELECT * FROM {table} ORDER BY 1")
                    for table in ("emails", "received_emails", "mail_reads", "inbox_messages")}

    return dict(client.portal.call(read))  # type: ignore[attr-defined]


@pytest.mark.parametrize("place", JSON_PLACES)
@pytest.mark.parametrize("case", OUT_OF_RANGE)
def test_control_plane_refuses_out_of_range_query_and_changes_nothing(client: TestClient, place: str,
                                                                       case: str) -> None:
    _stock(client)
    before = _state(client)
    method, path = JSON_PLACES[place]
    text, sentence = OUT_OF_RANGE[case]
    response = client.request(method, path, params={"q": text, "timeout": "0"})
    assert response.status_code == 422, response.text[:300]
    assert_error_shape(response)
    assert response.json()["name"] == "validation_error"
    assert sentence in response.json()["message"]
    assert _state(client) == before


@pytest.mark.parametrize("case", OUT_OF_RANGE)
@pytest.mark.parametrize("page", ["outbox", "received", "inbox"])
def test_ui_lists_answer_out_of_range_query_with_inline_sentence(client: TestClient, page: str,
                                                                  case: str) -> None:
    inbox_id = _stock(client)
    text, sentence = OUT_OF_RANGE[case]
    path = {"outbox": f"{UI}/", "received": f"{UI}/received", "inbox": f"{UI}/inboxes/{inbox_id}"}[page]
    response = client.get(f"{path}?q={quote_plus(text)}")
    assert response.status_code == 200
    if len(text) <= 200:  # the UI reads the first 200 characters of a search (what its box holds)
        assert 'id="search-error"' in response.text
        assert sentence in response.text


@pytest.mark.parametrize("box", ["outbox", "received"])
@pytest.mark.parametrize("action", ["delete", "read", "unread"])
@pytest.mark.parametrize("case", ["larger-23-digits", "before-year-0", "after-year-10000"])
def test_ui_bulk_action_with_out_of_range_query_changes_nothing(client: TestClient, box: str, action: str,
                                                                case: str) -> None:
    _stock(client)
    before = _state(client)
    text, sentence = OUT_OF_RANGE[case]
    response = client.post(f"{UI}/bulk/{box}", data={"action": action, "scope": "search", "q": text},
                           headers={"Sec-Fetch-Site": "same-origin"})  # as the UI's own page sends
    assert response.status_code == 422
    assert sentence in response.text
    assert _state(client) == before


@pytest.mark.parametrize("name", ["to", "from", "subject"])
def test_outbox_text_filter_past_term_bound_is_refused(client: TestClient, name: str) -> None:
    _stock(client)
    response = client.get("/_emulator/outbox", params={name: "z" * (10 * MAX_TERM_CHARS)})
    assert response.status_code == 422
    assert f"`{name}` takes at most {MAX_TERM_CHARS} characters" in response.json()["message"]


def test_sizes_and_dates_within_range_still_search(client: TestClient) -> None:
    _stock(client)
    for text in ("larger:1", "smaller:1048576M", "larger:1.5k", "after:0001-01-02", "before:9999-12-30",
                 "y" * MAX_TERM_CHARS):
        response = client.get("/_emulator/outbox", params={"q": text})
        assert response.status_code == 200, (text[:40], response.text)
    assert len(client.get("/_emulator/outbox", params={"q": "smaller:1048576M"}).json()["data"]) == 1


def test_size_reading_keeps_its_units() -> None:
    assert parse("larger:1.5M")[0][0].value == "1.5M"
    from emulator.control.query import size_of
    assert [size_of(t[0]) for t in parse("larger:1.5M larger:20k larger:500 larger:1024g".replace(
        " larger:1024g", ""))] == [1_572_864, 20_480, 500]


def test_substring_matches_as_like_did_across_windows() -> None:
    assert contains(needle("ORDER"), None, b"an order shipped") == 1
    assert contains(needle("É"), "é".encode()) == 1  # case and accents folded by Unicode's rules (issue 39)
    assert contains(needle("soren"), "Søren".encode()) == 1
    assert contains(needle("é"), "café".encode()) == 1
    assert contains(needle("%_"), b"100%_ done") == 1
    seam = b"a" * (WINDOW - 2) + b"needle" + b"a" * 10
    assert contains(needle("NEEDLE"), seam) == 1
    assert contains(needle("needlf"), seam) == 0


def test_received_substring_search_finds_a_term_in_a_long_hostile_body(client: TestClient) -> None:
    receiving_domain(client)
    create_inbox(client)
    body = "a" * 500_000 + "b"
    raw = raw_mail("Long", body, "<long@example.org>", to=ADDRESS)
    assert client.post("/_emulator/inbound", json={"raw": raw.decode()}).status_code == 200
    hit = client.get(f"{UI}/rows/received", params={"q": "a" * 199 + "b"}).json()
    miss = client.get(f"{UI}/rows/received", params={"q": "a" * 199 + "c"}).json()
    assert (hit["total"], "Long" in hit["rows"]) == ("1", True)
    assert miss["total"] == "0"
