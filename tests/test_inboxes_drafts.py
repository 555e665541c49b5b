"""Drafts: the draft row (seed §2.9, §3), list paging and order (seed §4.3), create/update/delete/send
and their errors (reference/inboxes.md §3.10)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.inboxes_helpers import ADDRESS, conversation, create_inbox, error, only_thread, receiving_domain

NOW = "2026-05-14T09:00:00.000Z"
UNKNOWN = "7f9c1d2e-4a6b-4c3d-8e15-9b0a7c6d5e34"
STANDALONE = {"to": "ada@example.org", "subject": "Refund for order 1041", "html": "<p>Refund issued.</p>",
              "text": "Refund issued."}


@pytest.fixture
def inbox(client: TestClient) -> dict[str, Any]:
    receiving_domain(client)
    return create_inbox(client)


def drafts_path(inbox: dict[str, Any]) -> str:
    return f"/inboxes/{inbox['id']}/drafts"


def create(client: TestClient, inbox: dict[str, Any], **body: Any) -> dict[str, Any]:
    created = client.post(drafts_path(inbox), json=body or STANDALONE)
    assert created.status_code == 201, created.text
    return dict(created.json())


def test_single_draft_and_list_item_shapes(client: TestClient, inbox: dict[str, Any]) -> None:
    draft = create(client, inbox)
    single = {"object": "inbox_draft", "id": draft["id"], "type": "standalone", "to": ["ada@example.org"],
              "cc": [], "bcc": [], "subject": "Refund for order 1041", "html": "<p>Refund issued.</p>",
              "text": "Refund issued.", "thread_id": None, "reply_to_email_id": None, "email_id": None,
              "created_at": NOW, "updated_at": NOW, "attachments": []}
    assert draft == single
    assert client.get(f"{drafts_path(inbox)}/{draft['id']}").json() == single
    assert client.get(drafts_path(inbox)).json() == {"object": "list", "has_more": False, "data": [{
        "id": draft["id"], "type": "standalone", "to": ["ada@example.org"], "cc": [], "bcc": [],
        "subject": "Refund for order 1041", "snippet": "Refund issued.", "thread_id": None,
        "reply_to_email_id": None, "updated_at": NOW, "attachments": []}]}


def test_forty_five_drafts_page_twenty_twenty_five_and_back(client: TestClient,
                                                             inbox: dict[str, Any]) -> None:
    made = [create(client, inbox, subject=f"Draft {n}")["id"] for n in range(45)]
    newest_first = list(reversed(made))
    pages, cursor = [], None
    for _ in range(3):
        params: dict[str, Any] = {"limit": 20, **({"after": cursor} if cursor else {})}
        page = client.get(drafts_path(inbox), params=params).json()
        pages.append(page)
        cursor = page["data"][-1]["id"]
    assert [len(p["data"]) for p in pages] == [20, 20, 5]
    assert [p["has_more"] for p in pages] == [True, True, False]
    assert [d["id"] for p in pages for d in p["data"]] == newest_first
    back = client.get(drafts_path(inbox), params={"limit": 20, "before": pages[2]["data"][0]["id"]}).json()
    assert ([d["id"] for d in back["data"]], back["has_more"]) == (newest_first[20:40], True)
    first = client.get(drafts_path(inbox), params={"limit": 20, "before": back["data"][0]["id"]}).json()
    assert ([d["id"] for d in first["data"]], first["has_more"]) == (newest_first[:20], False)
    assert len(client.get(drafts_path(inbox)).json()["data"]) == 20  # limit defaults to 20


def test_list_is_most_recently_updated_first(client: TestClient, inbox: dict[str, Any]) -> None:
    older, newer = create(client, inbox, subject="old"), create(client, inbox, subject="new")
    client.patch(f"{drafts_path(inbox)}/{older['id']}", json={"text": "edited"})
    assert [d["id"] for d in client.get(drafts_path(inbox)).json()["data"]] == [older["id"], newer["id"]]


def test_sent_draft_leaves_the_list_and_gets_its_email_id(client: TestClient, inbox: dict[str, Any]) -> None:
    draft, other = create(client, inbox), create(client, inbox, subject="keep")
    sent = client.post(f"{drafts_path(inbox)}/{draft['id']}/send")
    assert sent.status_code == 200, sent.text
    result = sent.json()
    assert result == {"object": "inbox_draft", "id": draft["id"], "thread_id": result["thread_id"],
                      "email_id": result["email_id"]}
    assert [d["id"] for d in client.get(drafts_path(inbox)).json()["data"]] == [other["id"]]
    after = client.get(f"{drafts_path(inbox)}/{draft['id']}").json()
    assert after["email_id"] == result["email_id"]
    assert client.get(f"/emails/{result['email_id']}").json()["to"] == ["ada@example.org"]
    thread = only_thread(client, inbox["id"], "sent")
    assert (thread["id"], thread["message_count"]) == (result["thread_id"], 1)
    assert client.get(f"/inboxes/{inbox['id']}").json()["drafts"] == 1


def test_sending_twice_is_a_409_and_a_sent_draft_is_frozen(client: TestClient, inbox: dict[str, Any]) -> None:
    draft = create(client, inbox)
    path = f"{drafts_path(inbox)}/{draft['id']}"
    client.post(f"{path}/send")
    assert error(client.post(f"{path}/send")) == (409, "conflict")
    assert error(client.patch(path, json={"text": "x"})) == (409, "conflict")
    assert error(client.delete(path)) == (409, "conflict")
    assert len(client.get("/_emulator/outbox").json()["data"]) == 1


def test_send_needs_a_recipient_subject_and_body(client: TestClient, inbox: dict[str, Any]) -> None:
    for body in ({"subject": "No one"}, {"to": "ada@example.org", "text": "no subject"},
                 {"to": "ada@example.org", "subject": "no body"}):
        draft = create(client, inbox, **body)
        assert error(client.post(f"{drafts_path(inbox)}/{draft['id']}/send")) == (422, "validation_error")
    assert client.get("/_emulator/outbox").json()["data"] == []


def test_reply_draft_is_unique_per_email_and_sends_into_its_thread(client: TestClient,
                                                                    inbox: dict[str, Any]) -> None:
    email_id = conversation(client, 1)[0]
    thread_id = only_thread(client, inbox["id"])["id"]
    reply = {"thread_id": thread_id, "reply_to_email_id": email_id, "text": "On it."}
    created = client.post(drafts_path(inbox), json=reply)
    assert created.status_code == 201
    draft = created.json()
    assert (draft["type"], draft["to"], draft["thread_id"], draft["reply_to_email_id"]) == \
        ("reply", None, thread_id, email_id)
    again = client.post(drafts_path(inbox), json={**reply, "text": "ignored"})
    assert (again.status_code, again.json()) == (200, draft)
    assert only_thread(client, inbox["id"])["has_draft"] is True
    client.patch(f"{drafts_path(inbox)}/{draft['id']}",
                 json={"to": "ada@example.org", "subject": "Re: Refund"})
    sent = client.post(f"{drafts_path(inbox)}/{draft['id']}/send").json()
    assert sent["thread_id"] == thread_id
    thread = client.get(f"/inboxes/{inbox['id']}/threads/{thread_id}").json()
    assert [m["id"] for m in thread["messages"]] == [email_id, sent["email_id"]]
    assert only_thread(client, inbox["id"])["has_draft"] is False
    eml = client.get(f"/_emulator/outbox/{sent['email_id']}.eml").text
    assert "In-Reply-To: <msg1@example.org>" in eml


def test_update_keeps_omitted_fields_and_null_clears(client: TestClient, inbox: dict[str, Any]) -> None:
    draft = create(client, inbox, to="ada@example.org", cc=["b@example.org"], subject="Hi", text="Body")
    path = f"{drafts_path(inbox)}/{draft['id']}"
    updated = client.patch(path, json={"cc": None, "text": None, "html": "<p>Body</p>"})
    assert updated.status_code == 200
    now = client.get(path).json()
    assert (now["to"], now["cc"], now["subject"], now["text"], now["html"]) == \
        (["ada@example.org"], [], "Hi", None, "<p>Body</p>")
    assert error(client.patch(path, json={})) == (422, "validation_error")
    cleared = {"to": None, "subject": None, "html": None}
    assert error(client.patch(path, json=cleared)) == (422, "validation_error")
    assert client.get(path).json() == now


def test_delete_discards_the_draft(client: TestClient, inbox: dict[str, Any]) -> None:
    draft = create(client, inbox)
    path = f"{drafts_path(inbox)}/{draft['id']}"
    assert client.delete(path).json() == {"object": "inbox_draft", "id": draft["id"], "deleted": True}
    assert error(client.get(path)) == (404, "not_found")
    assert client.get(f"/inboxes/{inbox['id']}").json()["drafts"] == 0


@pytest.mark.parametrize(("body", "status", "name"), [
    ({}, 422, "validation_error"),
    ({"subject": "   "}, 422, "validation_error"),
    ({"subject": "x" * 2001}, 422, "validation_error"),
    ({"to": [f"r{n}@example.org" for n in range(51)]}, 422, "validation_error"),
    ({"to": "not an address"}, 422, "validation_error"),
    ({"thread_id": UNKNOWN, "subject": "x"}, 422, "validation_error"),
    ({"thread_id": UNKNOWN, "reply_to_email_id": UNKNOWN, "subject": "x"}, 404, "not_found"),
])
def test_create_errors_write_nothing(client: TestClient, inbox: dict[str, Any], body: dict[str, Any],
                                     status: int, name: str) -> None:
    assert error(client.post(drafts_path(inbox), json=body)) == (status, name)
    assert client.get(drafts_path(inbox)).json()["data"] == []


def test_list_and_get_errors(client: TestClient, inbox: dict[str, Any]) -> None:
    assert error(client.get(drafts_path(inbox), params={"limit": 0})) == (422, "validation_error")
    assert error(client.get(drafts_path(inbox), params={"after": UNKNOWN})) == (404, "not_found")
    assert error(client.get(f"{drafts_path(inbox)}/{UNKNOWN}")) == (404, "not_found")
    assert error(client.get(f"/inboxes/{UNKNOWN}/drafts")) == (404, "not_found")
    assert client.get(f"/inboxes/{ADDRESS}/drafts").status_code == 200


def test_draft_files_are_listed_replaced_and_sent(client: TestClient, inbox: dict[str, Any]) -> None:
    draft = create(client, inbox, to="ada@example.org", subject="Invoice", text="Attached.",
                   attachments=[{"filename": "invoice.pdf", "content": "JVBERi0xLjQ=",
                                 "content_type": "application/pdf"}])
    [file] = draft["attachments"]
    assert file == {"id": file["id"], "filename": "invoice.pdf", "content_type": "application/pdf", "size": 8}
    assert client.get(drafts_path(inbox)).json()["data"][0]["attachments"] == [file]
    path = f"{drafts_path(inbox)}/{draft['id']}"
    replaced = client.patch(path, json={"attachments": [{"filename": "a.txt", "content": "YQ=="}]}).json()
    assert [(f["filename"], f["size"]) for f in replaced["attachments"]] == [("a.txt", 1)]
    sent = client.post(f"{path}/send").json()
    files = client.get(f"/emails/{sent['email_id']}/attachments").json()["data"]
    assert [(f["filename"], f["size"]) for f in files] == [("a.txt", 1)]
    bad = client.post(drafts_path(inbox), json={"attachments": [{"filename": "x.exe", "content": "YQ=="}]})
    assert error(bad) == (422, "invalid_attachment")
