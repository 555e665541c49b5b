"""Threads: inbound mail joins them, get (seed §2.8), list, update, delete, labels on a thread,
thread emails, reply and forward (reference/inboxes.md §3.5, §3.7–3.9)."""

from __future__ import annotations

import email
from email import policy
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.inboxes_helpers import (
    ADDRESS,
    conversation,
    create_inbox,
    error,
    inject,
    only_thread,
    raw_mail,
    receiving_domain,
)

NOW = "2026-05-14T09:00:00.000Z"
UNKNOWN = "7f9c1d2e-4a6b-4c3d-8e15-9b0a7c6d5e34"


@pytest.fixture
def inbox(client: TestClient) -> dict[str, Any]:
    receiving_domain(client)
    return create_inbox(client)


def _thread(client: TestClient, inbox: dict[str, Any], thread_id: str) -> dict[str, Any]:
    reply = client.get(f"/inboxes/{inbox['id']}/threads/{thread_id}")
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def test_get_thread_is_the_seed_shape_with_the_whole_history(client: TestClient,
                                                             inbox: dict[str, Any]) -> None:
    raw = raw_mail("Refund for order 1041", "Could I get a refund?", "<1041@example.org>",
                   html="<p>Could I get a refund?</p>", reply_to="replies@example.org",
                   attachment=("receipt.pdf", b"%PDF-1.4 receipt"))
    email_id = inject(client, raw)
    thread_id = only_thread(client, inbox["id"])["id"]
    attachment = client.get(f"/emails/receiving/{email_id}/attachments").json()["data"][0]
    assert _thread(client, inbox, thread_id) == {
        "object": "inbox_thread", "id": thread_id, "subject": "Refund for order 1041", "folder": "inbox",
        "labels": [], "read": False,
        "messages": [{
            "id": email_id, "direction": "inbound", "from": "Ada Lovelace <ada@example.org>", "to": [ADDRESS],
            "cc": [], "bcc": [], "reply_to": ["replies@example.org"], "subject": "Refund for order 1041",
            "message_id": "<1041@example.org>", "html": "<p>Could I get a refund?</p>\n",
            "text": "Could I get a refund?\n",
            "attachments": [{"id": attachment["id"], "filename": "receipt.pdf", "size": 16}],
            "read": False, "received_at": NOW}],
    }


def test_three_inbound_messages_and_an_api_reply_form_one_thread(client: TestClient,
                                                                 inbox: dict[str, Any]) -> None:
    ids = conversation(client, 3)
    thread_id = only_thread(client, inbox["id"])["id"]
    reply = client.post(f"/inboxes/{inbox['id']}/threads/{thread_id}/emails/{ids[-1]}/reply",
                        json={"html": "<p>Refund issued.</p>", "text": "Refund issued."})
    assert reply.status_code == 200, reply.text
    sent = reply.json()
    assert sent == {"id": sent["id"], "email_id": sent["id"], "direction": "outbound", "from": ADDRESS,
                    "to": ["Ada Lovelace <ada@example.org>"], "cc": [], "bcc": [], "reply_to": [],
                    "subject": "Re: Refund for order 1041", "message_id": None,
                    "html": "<p>Refund issued.</p>", "text": "Refund issued.",
                    "attachments": [], "read": True, "received_at": NOW}
    messages = _thread(client, inbox, thread_id)["messages"]
    assert [m["id"] for m in messages] == [*ids, sent["id"]]
    assert [m["text"] for m in messages[:3]] == ["Message 1\n", "Message 2\n", "Message 3\n"]
    assert [m["direction"] for m in messages] == ["inbound"] * 3 + ["outbound"]
    outbox = client.get("/_emulator/outbox").json()["data"]
    assert [(e["id"], e["source"], e["subject"]) for e in outbox] == [(sent["id"], "inbox", sent["subject"])]
    eml = email.message_from_bytes(client.get(f"/_emulator/outbox/{sent['id']}.eml").content,
                                   policy=policy.default)
    assert eml["In-Reply-To"] == "<msg3@example.org>"
    assert eml["References"] == "<msg1@example.org> <msg2@example.org> <msg3@example.org>"


def test_customer_answer_to_our_reply_joins_the_thread(client: TestClient, inbox: dict[str, Any]) -> None:
    first = conversation(client, 1)[0]
    thread_id = only_thread(client, inbox["id"])["id"]
    sent = client.post(f"/inboxes/{inbox['id']}/threads/{thread_id}/emails/{first}/reply",
                       json={"text": "Which order?"}).json()
    assert client.get(f"/emails/{sent['id']}").json()["id"] == sent["id"]
    our_id = f"<{sent['id']}@support.acme.dev>"
    inject(client, raw_mail("Re: Refund", "Order 1041", "<m2@example.org>", in_reply_to=our_id))
    assert [m["direction"] for m in _thread(client, inbox, thread_id)["messages"]] == \
        ["inbound", "outbound", "inbound"]


def test_read_flips_to_false_when_new_mail_arrives(client: TestClient, inbox: dict[str, Any]) -> None:
    conversation(client, 1)
    thread_id = only_thread(client, inbox["id"])["id"]
    marked = client.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}", json={"read": True}).json()
    assert marked == {"object": "inbox_thread", "id": thread_id, "subject": "Refund for order 1041",
                      "folder": "inbox", "labels": [], "read": True}
    inject(client, raw_mail("Re: Refund", "again", "<m2@example.org>", in_reply_to="<msg1@example.org>"))
    thread = _thread(client, inbox, thread_id)
    assert thread["read"] is False
    assert [m["read"] for m in thread["messages"]] == [True, False]


def test_unrelated_mail_with_the_same_subject_starts_its_own_thread(client: TestClient,
                                                                     inbox: dict[str, Any]) -> None:
    inject(client, raw_mail("Hello", "one", "<a@example.org>"))
    inject(client, raw_mail("Hello", "two", "<b@example.org>"))
    assert len(client.get(f"/inboxes/{inbox['id']}/threads").json()["data"]) == 2


def test_a_thread_cannot_be_moved_into_sent(client: TestClient, inbox: dict[str, Any]) -> None:
    conversation(client, 1)
    thread_id = only_thread(client, inbox["id"])["id"]
    moved = client.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}", json={"folder": "sent"})
    assert error(moved) == (422, "validation_error")
    assert _thread(client, inbox, thread_id)["folder"] == "inbox"


def test_folder_moves_and_list_by_folder(client: TestClient, inbox: dict[str, Any]) -> None:
    conversation(client, 1)
    thread_id = only_thread(client, inbox["id"])["id"]
    for folder in ("archive", "spam", "inbox"):
        moved = client.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}", json={"folder": folder}).json()
        assert moved["folder"] == folder
        assert only_thread(client, inbox["id"], folder)["id"] == thread_id
    assert client.get(f"/inboxes/{inbox['id']}/threads", params={"folder": "archive"}).json()["data"] == []


def test_delete_moves_to_trash_and_a_second_delete_says_false(client: TestClient,
                                                               inbox: dict[str, Any]) -> None:
    conversation(client, 1)
    thread_id = only_thread(client, inbox["id"])["id"]
    path = f"/inboxes/{inbox['id']}/threads/{thread_id}"
    assert client.delete(path).json() == {"object": "inbox_thread", "id": thread_id, "deleted": True}
    assert client.delete(path).json() == {"object": "inbox_thread", "id": thread_id, "deleted": False}
    assert only_thread(client, inbox["id"], "trash")["id"] == thread_id
    assert client.patch(path, json={"folder": "inbox"}).json()["folder"] == "inbox"


def test_new_mail_brings_an_archived_thread_back_to_the_inbox(client: TestClient,
                                                              inbox: dict[str, Any]) -> None:
    conversation(client, 1)
    thread_id = only_thread(client, inbox["id"])["id"]
    client.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}", json={"folder": "archive"})
    inject(client, raw_mail("Re: Refund", "again", "<m2@example.org>", in_reply_to="<msg1@example.org>"))
    assert _thread(client, inbox, thread_id)["folder"] == "inbox"


def test_list_is_most_recently_active_first_and_pages(client: TestClient, inbox: dict[str, Any]) -> None:
    inject(client, raw_mail("First", "1", "<a@example.org>"))
    inject(client, raw_mail("Second", "2", "<b@example.org>"))
    inject(client, raw_mail("Re: First", "3", "<c@example.org>", in_reply_to="<a@example.org>"))
    listed = client.get(f"/inboxes/{inbox['id']}/threads").json()
    assert [t["subject"] for t in listed["data"]] == ["First", "Second"]
    assert listed["data"][0]["message_count"] == listed["data"][0]["email_count"] == 2
    first = client.get(f"/inboxes/{inbox['id']}/threads", params={"limit": 1}).json()
    assert first["has_more"] is True
    second = client.get(f"/inboxes/{inbox['id']}/threads",
                        params={"limit": 1, "after": first["data"][0]["id"]}).json()
    assert ([t["subject"] for t in second["data"]], second["has_more"]) == (["Second"], False)
    back = client.get(f"/inboxes/{inbox['id']}/threads",
                      params={"limit": 1, "before": second["data"][0]["id"]}).json()
    assert [t["subject"] for t in back["data"]] == ["First"]


def test_list_filters_by_query_label_and_read(client: TestClient, inbox: dict[str, Any]) -> None:
    inject(client, raw_mail("Refund please", "1", "<a@example.org>"))
    inject(client, raw_mail("Invoice", "2", "<b@example.org>"))
    threads = {t["subject"]: t["id"] for t in client.get(f"/inboxes/{inbox['id']}/threads").json()["data"]}
    label = client.post(f"/inboxes/{inbox['id']}/labels", json={"name": "Billing", "color": "crimson"}).json()
    client.patch(f"/inboxes/{inbox['id']}/threads/{threads['Invoice']}",
                 json={"label_id": label["id"], "read": True})

    def subjects(**params: Any) -> list[str]:
        listed = client.get(f"/inboxes/{inbox['id']}/threads", params=params).json()
        return [t["subject"] for t in listed["data"]]
    assert subjects(query="REFUND") == ["Refund please"]
    assert subjects(query="billing") == ["Invoice"]
    assert subjects(labels=label["id"]) == ["Invoice"]
    assert subjects(read="false") == ["Refund please"]
    assert subjects(read="true") == ["Invoice"]


def test_thread_labels_add_set_and_remove(client: TestClient, inbox: dict[str, Any]) -> None:
    conversation(client, 1)
    thread_id = only_thread(client, inbox["id"])["id"]
    urgent = client.post(f"/inboxes/{inbox['id']}/labels", json={"name": "Urgent", "color": "crimson"}).json()
    vip = client.post(f"/inboxes/{inbox['id']}/labels", json={"name": "VIP"}).json()
    path = f"/inboxes/{inbox['id']}/threads/{thread_id}/labels"
    added = client.post(path, json={"labels": [urgent["id"], vip["id"]]}).json()
    assert added == {"object": "list", "data": [{"id": urgent["id"], "name": "Urgent", "color": "crimson"},
                                                {"id": vip["id"], "name": "VIP", "color": "mauve"}]}
    assert client.put(path, json={"labels": [vip["id"]]}).json()["data"] == [
        {"id": vip["id"], "name": "VIP", "color": "mauve"}]
    assert client.delete(f"{path}/{vip['id']}").json() == {"object": "list", "data": []}
    assert error(client.post(path, json={"labels": [UNKNOWN]})) == (404, "not_found")
    assert error(client.post(path, json={"labels": []})) == (422, "validation_error")


def test_thread_emails_list_oldest_first_and_get_one(client: TestClient, inbox: dict[str, Any]) -> None:
    ids = conversation(client, 3)
    thread_id = only_thread(client, inbox["id"])["id"]
    base = f"/inboxes/{inbox['id']}/threads/{thread_id}/emails"
    page = client.get(base, params={"limit": 2}).json()
    assert ([m["id"] for m in page["data"]], page["has_more"]) == (ids[:2], True)
    newer = client.get(base, params={"limit": 2, "after": ids[1]}).json()
    assert ([m["id"] for m in newer["data"]], newer["has_more"]) == ([ids[2]], False)
    older = client.get(base, params={"limit": 2, "before": ids[2]}).json()
    assert [m["id"] for m in older["data"]] == ids[:2]
    one = client.get(f"{base}/{ids[0]}").json()
    assert "object" not in one and one["id"] == ids[0] and one["text"] == "Message 1\n"
    assert error(client.get(f"{base}/{UNKNOWN}")) == (404, "not_found")
    assert error(client.get(base, params={"limit": 101})) == (422, "validation_error")
    assert error(client.get(base, params={"after": ids[0], "before": ids[1]})) == (422, "validation_error")
    assert error(client.get(base, params={"after": UNKNOWN})) == (404, "not_found")


def test_forward_quotes_the_original_under_the_banner(client: TestClient, inbox: dict[str, Any]) -> None:
    first = conversation(client, 1)[0]
    thread_id = only_thread(client, inbox["id"])["id"]
    sent = client.post(f"/inboxes/{inbox['id']}/threads/{thread_id}/emails/{first}/forward",
                       json={"to": "billing@example.net", "text": "Please handle."})
    assert sent.status_code == 200, sent.text
    body = sent.json()
    assert (body["to"], body["subject"], body["direction"]) == (["billing@example.net"],
                                                                "Fwd: Refund for order 1041", "outbound")
    assert body["text"].startswith("Please handle.\n\n---------- Forwarded message ---------\n"
                                   "From: Ada Lovelace <ada@example.org>\n")
    assert "Message 1" in body["text"]
    assert client.get(f"/emails/{body['email_id']}").status_code == 200


def test_reply_all_copies_cc_and_skips_the_inbox(client: TestClient, inbox: dict[str, Any]) -> None:
    raw = raw_mail("Hi", "hello", "<cc@example.org>", to=f"{ADDRESS}, Colleague <col@example.org>")
    raw = raw.replace(b"Subject: Hi", b"Cc: boss@example.org, " + ADDRESS.encode() + b"\nSubject: Hi")
    email_id = inject(client, raw)
    thread_id = only_thread(client, inbox["id"])["id"]
    sent = client.post(f"/inboxes/{inbox['id']}/threads/{thread_id}/emails/{email_id}/reply",
                       json={"text": "ok", "reply_all": True, "subject": "Custom"}).json()
    assert (sent["to"], sent["subject"]) == (["Ada Lovelace <ada@example.org>"], "Custom")
    assert sent["cc"] == ["Colleague <col@example.org>", "boss@example.org"]
    plain = client.post(f"/inboxes/{inbox['id']}/threads/{thread_id}/emails/{email_id}/reply",
                        json={"text": "ok"}).json()
    assert plain["cc"] == []


@pytest.mark.parametrize(("action", "body"), [
    ("reply", {}),
    ("reply", {"text": "   "}),
    ("reply", {"text": "x", "headers": {"in-reply-to": "<x@y>"}}),
    ("reply", {"text": "x", "subject": "a\nb"}),
    ("reply", {"text": "x", "subject": "s" * 2001}),
    ("forward", {"to": [f"t{n}@example.org" for n in range(30)],
                 "cc": [f"c{n}@example.org" for n in range(21)]}),
    ("reply", {"text": "x", "cc": [f"c{n}@example.org" for n in range(50)]}),
    ("forward", {"text": "x"}),
    ("forward", {"to": "not an address"}),
])
def test_reply_and_forward_errors_send_nothing(client: TestClient, inbox: dict[str, Any], action: str,
                                               body: dict[str, Any]) -> None:
    first = conversation(client, 1)[0]
    thread_id = only_thread(client, inbox["id"])["id"]
    reply = client.post(f"/inboxes/{inbox['id']}/threads/{thread_id}/emails/{first}/{action}", json=body)
    assert reply.status_code == 422 and reply.json()["name"] in ("validation_error", "missing_required_field")
    assert client.get("/_emulator/outbox").json()["data"] == []
    assert len(_thread(client, inbox, thread_id)["messages"]) == 1


def test_unknown_thread_and_email_are_404(client: TestClient, inbox: dict[str, Any]) -> None:
    first = conversation(client, 1)[0]
    thread_id = only_thread(client, inbox["id"])["id"]
    assert error(client.get(f"/inboxes/{inbox['id']}/threads/{UNKNOWN}")) == (404, "not_found")
    assert error(client.post(f"/inboxes/{inbox['id']}/threads/{thread_id}/emails/{UNKNOWN}/reply",
                             json={"text": "x"})) == (404, "not_found")
    assert error(client.post(f"/inboxes/{inbox['id']}/threads/{UNKNOWN}/emails/{first}/reply",
                             json={"text": "x"})) == (404, "not_found")
    empty = client.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}", json={})
    assert error(empty) == (422, "validation_error")
    assert error(client.patch(f"/inboxes/{inbox['id']}/threads/{thread_id}",
                              json={"label_id": UNKNOWN})) == (404, "not_found")


def test_mail_to_an_address_without_an_inbox_makes_no_thread(client: TestClient,
                                                             inbox: dict[str, Any]) -> None:
    inject(client, raw_mail("Hi", "x", "<z@example.org>", to="other@support.acme.dev"))
    assert client.get(f"/inboxes/{inbox['id']}/threads").json()["data"] == []


def test_trash_is_deleted_after_thirty_days_unless_restored(client: TestClient,
                                                            inbox: dict[str, Any]) -> None:
    inject(client, raw_mail("Keep", "1", "<keep@example.org>"))
    inject(client, raw_mail("Drop", "2", "<drop@example.org>"))
    threads = {t["subject"]: t["id"] for t in client.get(f"/inboxes/{inbox['id']}/threads").json()["data"]}
    for thread_id in threads.values():
        client.delete(f"/inboxes/{inbox['id']}/threads/{thread_id}")
    client.patch(f"/inboxes/{inbox['id']}/threads/{threads['Keep']}", json={"folder": "archive"})
    advance = client.post("/_emulator/clock/advance", json={"days": 29})
    assert advance.status_code == 200, advance.text
    assert client.post("/_emulator/flush").status_code == 200
    assert only_thread(client, inbox["id"], "trash")["id"] == threads["Drop"]
    client.post("/_emulator/clock/advance", json={"days": 1, "seconds": 1})
    client.post("/_emulator/flush")
    assert error(client.get(f"/inboxes/{inbox['id']}/threads/{threads['Drop']}")) == (404, "not_found")
    assert only_thread(client, inbox["id"], "archive")["id"] == threads["Keep"]


def test_an_answered_thread_is_listed_under_sent_too(client: TestClient, inbox: dict[str, Any]) -> None:
    first = conversation(client, 1)[0]
    thread_id = only_thread(client, inbox["id"])["id"]
    assert client.get(f"/inboxes/{inbox['id']}/threads", params={"folder": "sent"}).json()["data"] == []
    client.post(f"/inboxes/{inbox['id']}/threads/{thread_id}/emails/{first}/reply", json={"text": "ok"})
    assert only_thread(client, inbox["id"], "sent")["folder"] == "inbox"
    assert only_thread(client, inbox["id"], "inbox")["id"] == thread_id


def test_a_reply_to_a_sent_conversation_moves_it_to_the_inbox(client: TestClient,
                                                              inbox: dict[str, Any]) -> None:
    draft = client.post(f"/inboxes/{inbox['id']}/drafts",
                        json={"to": "ada@example.org", "subject": "Offer", "text": "Hello"}).json()
    sent = client.post(f"/inboxes/{inbox['id']}/drafts/{draft['id']}/send").json()
    assert _thread(client, inbox, sent["thread_id"])["folder"] == "sent"
    assert client.get(f"/inboxes/{inbox['id']}/threads").json()["data"] == []
    ours = f"<{sent['email_id']}@support.acme.dev>"
    inject(client, raw_mail("Re: Offer", "Yes please", "<yes@example.org>", in_reply_to=ours))
    thread = _thread(client, inbox, sent["thread_id"])
    directions = [m["direction"] for m in thread["messages"]]
    assert (thread["folder"], directions) == ("inbox", ["outbound", "inbound"])


def test_reply_with_an_idempotency_key_sends_once(client: TestClient, inbox: dict[str, Any]) -> None:
    first = conversation(client, 1)[0]
    thread_id = only_thread(client, inbox["id"])["id"]
    path = f"/inboxes/{inbox['id']}/threads/{thread_id}/emails/{first}/reply"
    one = client.post(path, json={"text": "ok"}, headers={"Idempotency-Key": "reply-1"})
    two = client.post(path, json={"text": "ok"}, headers={"Idempotency-Key": "reply-1"})
    assert one.json() == two.json()
    assert len(client.get("/_emulator/outbox").json()["data"]) == 1
    assert len(_thread(client, inbox, thread_id)["messages"]) == 2


def test_files_travel_with_replies_and_forwards(client: TestClient, inbox: dict[str, Any]) -> None:
    raw = raw_mail("Receipt", "see file", "<r@example.org>", attachment=("receipt.pdf", b"%PDF-1.4 r"))
    email_id = inject(client, raw)
    thread_id = only_thread(client, inbox["id"])["id"]
    base = f"/inboxes/{inbox['id']}/threads/{thread_id}/emails/{email_id}"
    note = {"filename": "note.txt", "content": "aGVsbG8="}
    reply = client.post(f"{base}/reply", json={"text": "thanks", "attachments": [note]}).json()
    assert [(a["filename"], a["size"]) for a in reply["attachments"]] == [("note.txt", 5)]
    forward = client.post(f"{base}/forward", json={"to": "billing@example.net", "attachments": [note]}).json()
    sent_files = client.get(f"/emails/{forward['email_id']}/attachments").json()["data"]
    assert sorted((f["filename"], f["size"]) for f in sent_files) == [("note.txt", 5), ("receipt.pdf", 10)]
