"""Thread search: words, phrases, exclusions, sender and attachment filters, dates, highlights, and every
documented error with its exact message (reference/inboxes.md §3.6)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.inboxes_helpers import create_inbox, error, inject, raw_mail, receiving_domain

UNKNOWN = "7f9c1d2e-4a6b-4c3d-8e15-9b0a7c6d5e34"
DOCS = "See https://resend.com/docs/api-reference/pagination for more information."


@pytest.fixture
def inbox(client: TestClient) -> dict[str, Any]:
    receiving_domain(client)
    found = create_inbox(client)
    inject(client, raw_mail("Refund for order 1041", "Could I get a refund for the blue kettle?",
                            "<a@example.org>", attachment=("receipt.pdf", b"%PDF receipt")))
    inject(client, raw_mail("Invoice question", "The invoice total looks wrong.", "<b@example.org>",
                            sender="Grace Hopper <grace@navy.example>"))
    return found


def search(client: TestClient, inbox: dict[str, Any], **params: Any) -> Any:
    return client.get(f"/inboxes/{inbox['id']}/threads/search", params=params)


def subjects(client: TestClient, inbox: dict[str, Any], **params: Any) -> list[str]:
    reply = search(client, inbox, **params)
    assert reply.status_code == 200, reply.text
    return [item["subject"] for item in reply.json()["data"]]


def test_every_word_must_match_in_one_email(client: TestClient, inbox: dict[str, Any]) -> None:
    assert subjects(client, inbox, query="refund kettle") == ["Refund for order 1041"]
    assert subjects(client, inbox, query="refund invoice") == []
    assert subjects(client, inbox, query='"blue kettle"') == ["Refund for order 1041"]
    assert subjects(client, inbox, query='"kettle blue"') == []
    assert subjects(client, inbox, query="-refund") == ["Invoice question"]
    assert subjects(client, inbox, query="receipt.pdf") == ["Refund for order 1041"]


def test_sender_attachment_and_date_filters(client: TestClient, inbox: dict[str, Any]) -> None:
    assert subjects(client, inbox, **{"from": "GRACE,nobody"}) == ["Invoice question"]
    assert subjects(client, inbox, has_attachment="true") == ["Refund for order 1041"]
    assert subjects(client, inbox, has_attachment="false") == ["Invoice question"]
    assert subjects(client, inbox, start_date="2026-05-14", end_date="2026-05-14") == \
        ["Invoice question", "Refund for order 1041"]
    assert subjects(client, inbox, start_date="2026-05-15") == []
    assert subjects(client, inbox, end_date="2026-05-13T23:59:59Z") == []
    assert len(subjects(client, inbox, start_date="0001-01-01", end_date="9999-12-31")) == 2


def test_item_carries_folder_match_and_highlights(client: TestClient, inbox: dict[str, Any]) -> None:
    item = search(client, inbox, query="kettle").json()["data"][0]
    thread = client.get(f"/inboxes/{inbox['id']}/threads/{item['id']}").json()
    assert item["folder"] == "inbox"
    assert item["matched_email_id"] == thread["messages"][0]["id"]
    assert item["highlights"] == {"body": ["Could I get a refund for the blue **kettle**?\n"]}
    plain = search(client, inbox).json()["data"][0]
    assert plain["highlights"] == {}


def test_folders_default_to_inbox_and_spam_only_when_named(client: TestClient, inbox: dict[str, Any]) -> None:
    thread_id = search(client, inbox, query="invoice").json()["data"][0]["id"]
    client.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}", json={"folder": "spam"})
    assert subjects(client, inbox) == ["Refund for order 1041"]
    assert subjects(client, inbox, folders="spam") == ["Invoice question"]


@pytest.mark.parametrize(("params", "message"), [
    ({"query": "x" * 257}, "The `query` parameter must be at most 256 characters, but received 257."),
    ({"query": " ".join(["w"] * 33)},
     "The `query` parameter must contain at most 32 words, but received 33."),
    ({"from": ",".join(f"a{n}" for n in range(21))},
     "The `from` parameter must contain at most 20 values, but received 21."),
    ({"start_date": "yesterday"}, "The `start_date` must be a valid ISO 8601 date."),
    ({"start_date": "2026-05-15", "end_date": "2026-05-14"},
     "The `start_date` must be on or before the `end_date`."),
    ({"folders": "drafts"},
     'The `folders` value "drafts" must be one of: inbox, archive, spam, sent, trash.'),
    ({"labels": "billing"}, 'The `labels` value "billing" must be a valid UUID.'),
    ({"labels": ",".join([UNKNOWN] * 51)},
     "The `labels` parameter must contain at most 50 label IDs, but received 51."),
    ({"limit": "0"}, f"The pagination limit must be a number between 1 and 100. {DOCS}"),
    ({"read": "yes"}, "The `read` parameter must be `true` or `false`."),
    ({"has_attachment": "1"}, "The `has_attachment` parameter must be `true` or `false`."),
    ({"after": "2026-05-01"}, "The `after` parameter must be a thread ID. To filter by date, use"
                              " `GET /inboxes/:id/threads/search` with `start_date`."),
    ({"before": "2026-05-01"}, "The `before` parameter must be a thread ID. To filter by date, use"
                               " `GET /inboxes/:id/threads/search` with `end_date`."),
    ({"after": UNKNOWN, "before": UNKNOWN},
     f"You can only pass one of `before` or `after` for pagination. {DOCS}"),
])
def test_documented_422s(client: TestClient, inbox: dict[str, Any], params: dict[str, str],
                         message: str) -> None:
    reply = search(client, inbox, **params)
    assert reply.json() == {"statusCode": 422, "message": message, "name": "validation_error"}


def test_documented_404s(client: TestClient, inbox: dict[str, Any]) -> None:
    gone = client.get(f"/inboxes/{UNKNOWN}/threads/search")
    assert gone.json() == {"statusCode": 404, "message": "Inbox not found.", "name": "not_found"}
    label = search(client, inbox, labels=UNKNOWN)
    assert label.json() == {"statusCode": 404, "message": f'Label "{UNKNOWN}" not found.',
                            "name": "not_found"}
    cursor = search(client, inbox, after=UNKNOWN)
    assert cursor.json() == {"statusCode": 404, "name": "not_found", "message":
                             f"The pagination cursor references an object that does not exist. {DOCS}"}


def test_search_pages_like_the_list(client: TestClient, inbox: dict[str, Any]) -> None:
    first = search(client, inbox, limit=1).json()
    assert first["has_more"] is True
    rest = search(client, inbox, limit=1, after=first["data"][0]["id"]).json()
    assert (rest["has_more"], len(rest["data"])) == (False, 1)
    back = search(client, inbox, limit=1, before=rest["data"][0]["id"]).json()
    assert back["data"] == first["data"]


def test_the_thread_list_shares_the_documented_errors(client: TestClient, inbox: dict[str, Any]) -> None:
    path = f"/inboxes/{inbox['id']}/threads"
    assert error(client.get(path, params={"folder": "drafts"})) == (422, "validation_error")
    assert error(client.get(path, params={"label": "billing"})) == (422, "validation_error")
    assert error(client.get(path, params={"label": UNKNOWN})) == (404, "not_found")
    assert error(client.get(path, params={"limit": 101})) == (422, "validation_error")
    assert error(client.get(path, params={"after": "2026-05-01"})) == (422, "validation_error")
    assert error(client.get(path, params={"after": UNKNOWN})) == (404, "not_found")
    assert error(client.get(path, params={"query": "x" * 257})) == (422, "validation_error")


def test_under_sent_only_the_emails_the_inbox_sent_match(client: TestClient, inbox: dict[str, Any]) -> None:
    thread = search(client, inbox, query="kettle").json()["data"][0]
    path = f"/inboxes/{inbox['id']}/threads/{thread['id']}/emails/{thread['matched_email_id']}/reply"
    sent = client.post(path, json={"text": "Your teapot refund is on its way."}).json()
    assert subjects(client, inbox, folders="sent", query="kettle") == []
    under_sent = search(client, inbox, folders="sent", query="teapot").json()["data"]
    assert [(t["id"], t["matched_email_id"]) for t in under_sent] == [(thread["id"], sent["id"])]
    assert subjects(client, inbox, folders="sent") == ["Refund for order 1041"]
