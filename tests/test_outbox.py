"""The outbox control routes (/_emulator/outbox): list/search, one email, .eml, attachments, wait."""

from __future__ import annotations

import base64
import email
import sqlite3
import threading
import time
from collections.abc import Iterator
from email import policy
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from emulator.control.search import parse_search
from emulator.core.accounts import isolated_account_id
from emulator.core.clock import iso_z
from emulator.core.events import EventBus
from emulator.resources.emails.outcomes import DELIVERY_DELAY
from tests.conftest import FROZEN_AT, api_client, assert_error_shape, make_settings

OUTBOX = "/_emulator/outbox"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)


def send(client: TestClient, key: str | None = None, **fields: Any) -> str:
    body: dict[str, Any] = {"from": "Acme <hello@acme.dev>", "to": ["delivered@resend.dev"],
                            "subject": "Welcome", "html": "<p>Hello</p>"}
    body.update(fields)
    auth = {"Authorization": f"Bearer {key}"} if key else None
    response = client.post("/emails", json=body, headers=auth)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def listed(client: TestClient, **params: str) -> list[str]:
    response = client.get(OUTBOX, params=params)
    assert response.status_code == 200, response.text
    return [item["id"] for item in response.json()["data"]]


def advance(client: TestClient, seconds: int) -> None:
    assert client.post("/_emulator/clock/advance", json={"seconds": seconds}).status_code == 200


def outbox_error(response: httpx.Response, status: int, name: str) -> None:
    assert (response.status_code, response.json()["name"]) == (status, name)
    assert_error_shape(response)


def test_list_is_newest_first_with_cursor_paging(client: TestClient) -> None:
    ids = [send(client, subject=f"Mail {n}") for n in range(5)]
    first = client.get(OUTBOX, params={"limit": "2"}).json()
    assert [item["id"] for item in first["data"]] == ids[:-3:-1]
    assert first["has_more"] is True
    rest = client.get(OUTBOX, params={"limit": "10", "after": ids[3]}).json()
    assert [item["id"] for item in rest["data"]] == [ids[2], ids[1], ids[0]]
    assert rest["has_more"] is False
    back = client.get(OUTBOX, params={"limit": "1", "before": ids[0]}).json()
    assert [item["id"] for item in back["data"]] == [ids[1]]


def test_list_item_shape(client: TestClient) -> None:
    email_id = send(client, to="Ada <ada@x.dev>", cc=["c@x.dev"], tags=[{"name": "kind", "value": "welcome"}])
    (item,) = client.get(OUTBOX).json()["data"]
    assert item == {
        "object": "outbox_email", "id": email_id, "account": "default", "account_label": "default",
        "source": "api",
        "message_id": f"<{email_id}@acme.dev>", "from": "Acme <hello@acme.dev>",
        "to": ["Ada <ada@x.dev>"], "cc": ["c@x.dev"], "bcc": [], "reply_to": [], "subject": "Welcome",
        "last_event": "sent", "tags": [{"name": "kind", "value": "welcome"}], "template_id": None,
        "topic_id": None, "broadcast_id": None, "created_at": "2026-05-14T09:00:00.000Z",
        "scheduled_at": None, "url": f"{OUTBOX}/{email_id}", "eml_url": f"{OUTBOX}/{email_id}.eml",
    }


def test_filter_by_recipient(client: TestClient) -> None:
    ada = send(client, to=["Ada <ada@x.dev>"])
    bob = send(client, to=["bob@y.dev"], bcc=["audit_1@x.dev"])
    mada = send(client, to=["mada@x.dev"])
    assert listed(client, to="ada@x.dev") == [ada]
    assert listed(client, to="ADA@X.DEV") == [ada]
    assert listed(client, to="audit_1@x.dev") == [bob]
    assert listed(client, to="auditx1@x.dev") == []  # `_` is not a wildcard
    assert listed(client, to="@x.dev") == [mada, bob, ada]
    assert listed(client, to="y.dev") == [bob]


def test_filter_by_sender_subject_tag_and_source(client: TestClient) -> None:
    receipt = send(client, subject="Your receipt #1", tags=[{"name": "kind", "value": "receipt"}])
    promo = send(client, **{"from": "news@promo.dev"}, subject="Sale 50%",
                 tags=[{"name": "kind", "value": "promo"}, {"name": "batch", "value": "b1"}])
    assert listed(client, **{"from": "promo.dev"}) == [promo]
    assert listed(client, subject="RECEIPT") == [receipt]
    assert listed(client, subject="50%") == [promo]
    assert listed(client, tag="kind") == [promo, receipt]
    assert listed(client, tag="kind:receipt") == [receipt]
    assert listed(client, tag="batch:b2") == []
    assert listed(client, tag="kind:promo", subject="Sale") == [promo]
    assert listed(client, source="api") == [promo, receipt]
    assert listed(client, source="smtp") == []


def test_filter_by_status_follows_delivery(client: TestClient) -> None:
    delivered = send(client, to=["delivered@resend.dev"])
    bounced = send(client, to=["bounced@resend.dev"])
    assert listed(client, status="sent") == [bounced, delivered]
    advance(client, 5)
    assert listed(client, status="delivered") == [delivered]
    assert listed(client, status="bounced") == [bounced]


def test_bad_filters_are_validation_errors(client: TestClient) -> None:
    outbox_error(client.get(OUTBOX, params={"status": "lost"}), 422, "validation_error")
    outbox_error(client.get(OUTBOX, params={"limit": "0"}), 422, "validation_error")
    outbox_error(client.get(OUTBOX, params={"api_key": "re_unknown"}), 422, "validation_error")
    outbox_error(client.get(f"{OUTBOX}/wait", params={"timeout": "soon"}), 422, "validation_error")
    outbox_error(client.get(f"{OUTBOX}/wait", params={"timeout": "301"}), 422, "validation_error")


@pytest.fixture
def isolated() -> Iterator[TestClient]:
    with api_client(make_settings(isolate_keys=True)) as test_client:
        yield test_client


def test_accounts_are_all_shown_unless_filtered(isolated: TestClient) -> None:
    mine = send(isolated)
    theirs = send(isolated, key="re_suite_two")
    assert listed(isolated) == [theirs, mine]
    assert listed(isolated, api_key="re_test_123") == [mine]
    assert listed(isolated, api_key="re_suite_two") == [theirs]
    assert listed(isolated, account=isolated_account_id(0, "re_suite_two")) == [theirs]
    assert listed(isolated, api_key="re_not_used_yet") == []
    outbox_error(isolated.get(f"{OUTBOX}/{mine}", params={"api_key": "re_suite_two"}), 404, "not_found")


def test_get_one_has_bodies_headers_attachments_and_events(client: TestClient) -> None:
    email_id = send(client, html='<p>Hi <img src="cid:logo"></p>', headers={"X-Ref": "r-1"},
                    attachments=[{"filename": "logo.png", "content": base64.b64encode(PNG).decode(),
                                  "content_id": "logo"}])
    advance(client, int(DELIVERY_DELAY.total_seconds()))
    detail = client.get(f"{OUTBOX}/{email_id}").json()
    assert detail["html"] == '<p>Hi <img src="cid:logo"></p>'
    assert detail["text"] == "Hi"
    assert detail["headers"] == {"X-Ref": "r-1"}
    message_headers = {h["name"]: h["value"] for h in detail["message_headers"]}
    assert message_headers["Message-ID"] == f"<{email_id}@acme.dev>"
    assert message_headers["X-Ref"] == "r-1"
    (attachment,) = detail["attachments"]
    assert attachment == {
        "id": attachment["id"], "filename": "logo.png", "content_type": "image/png",
        "content_disposition": "inline", "content_id": "logo", "size": len(PNG),
        "download_url": f"{OUTBOX}/{email_id}/attachments/{attachment['id']}",
    }
    assert [(e["type"], e["created_at"]) for e in detail["events"]] == [
        ("email.sent", "2026-05-14T09:00:00.000Z"), ("email.delivered", iso_z(FROZEN_AT + DELIVERY_DELAY)),
    ]
    assert detail["events"][0]["data"]["email_id"] == email_id
    assert detail["last_event"] == "delivered"


def test_eml_download_is_the_rendered_message(client: TestClient) -> None:
    email_id = send(client, subject="Grüße", text="Hello", cc=["c@x.dev"], bcc=["hidden@x.dev"])
    response = client.get(f"{OUTBOX}/{email_id}.eml")
    assert response.status_code == 200
    assert response.headers["content-type"] == "message/rfc822"
    assert response.headers["content-disposition"] == (
        f"attachment; filename=\"{email_id}.eml\"; filename*=UTF-8''{email_id}.eml")
    assert response.headers["content-security-policy"].endswith("sandbox")
    parsed = email.message_from_bytes(response.content, policy=policy.default)
    assert parsed["Subject"] == "Grüße"
    assert parsed["Message-ID"] == client.get(f"/emails/{email_id}").json()["message_id"]
    assert parsed["Cc"] == "c@x.dev"
    assert "Bcc" not in parsed
    assert parsed["Date"] == "Thu, 14 May 2026 09:00:00 +0000"
    assert response.content == client.get(f"{OUTBOX}/{email_id}.eml").content


def test_attachment_download(client: TestClient) -> None:
    email_id = send(client, attachments=[{"filename": "Résumé.pdf", "content": list(b"%PDF-1.4")}])
    (attachment,) = client.get(f"{OUTBOX}/{email_id}").json()["attachments"]
    response = client.get(attachment["download_url"])
    assert response.content == b"%PDF-1.4"
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-disposition"] == (
        "attachment; filename=\"R_sum_.pdf\"; filename*=UTF-8''R%C3%A9sum%C3%A9.pdf")
    assert response.headers["x-content-type-options"] == "nosniff"
    outbox_error(client.get(f"{OUTBOX}/{email_id}/attachments/nope"), 404, "not_found")


def test_unknown_email_is_not_found(client: TestClient) -> None:
    outbox_error(client.get(f"{OUTBOX}/00000000-0000-4000-8000-000000000000"), 404, "not_found")
    outbox_error(client.get(f"{OUTBOX}/nope.eml"), 404, "not_found")


# ---- wait --------------------------------------------------------------------------------------

class WaitCall:
    """GET /wait on a thread; `listening` is set once the waiter has subscribed to the event bus."""

    def __init__(self, client: TestClient, bus: EventBus, params: dict[str, str]) -> None:
        self.listening = threading.Event()
        self.response: httpx.Response | None = None
        self.finished_at = 0.0
        original = bus.listen

        def listen(listener: Any) -> None:
            original(listener)
            self.listening.set()

        bus.listen = listen  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self._run, args=(client, params))
        self.thread.start()

    def _run(self, client: TestClient, params: dict[str, str]) -> None:
        self.response = client.get(f"{OUTBOX}/wait", params=params)
        self.finished_at = time.perf_counter()

    def result(self) -> httpx.Response:
        self.thread.join(timeout=10)
        assert self.response is not None
        return self.response


def bus_of(client: TestClient) -> EventBus:
    return client.app.state.emu.events  # type: ignore[attr-defined,no-any-return]


def test_wait_returns_within_milliseconds_of_a_matching_send(client: TestClient) -> None:
    send(client, to=["other@x.dev"])
    call = WaitCall(client, bus_of(client), {"to": "ada@x.dev", "timeout": "5"})
    assert call.listening.wait(timeout=5)
    sent_at = time.perf_counter()
    email_id = send(client, to=["ada@x.dev"], subject="Your code")
    response = call.result()
    assert response.status_code == 200
    assert response.json()["id"] == email_id
    assert response.json()["subject"] == "Your code"
    # The send itself included; no poll interval to wait out (generous for a loaded 2-core machine).
    assert call.finished_at - sent_at < 1.0


def test_wait_returns_at_once_when_a_match_exists(client: TestClient) -> None:
    send(client, to=["ada@x.dev"], subject="Old")
    newest = send(client, to=["ada@x.dev"], subject="New")
    started = time.perf_counter()
    response = client.get(f"{OUTBOX}/wait", params={"to": "ada@x.dev", "timeout": "30"})
    assert response.json()["id"] == newest
    assert time.perf_counter() - started < 5  # not the 30 s timeout


def test_wait_for_a_status_wakes_on_the_delivery_event(client: TestClient) -> None:
    email_id = send(client, to=["delivered@resend.dev"])
    call = WaitCall(client, bus_of(client), {"status": "delivered", "timeout": "5"})
    assert call.listening.wait(timeout=5)
    advance(client, 5)
    response = call.result()
    assert (response.status_code, response.json()["id"]) == (200, email_id)
    assert response.json()["events"][-1]["type"] == "email.delivered"


def test_wait_times_out_cleanly(client: TestClient) -> None:
    send(client, to=["ada@x.dev"])
    listeners = len(bus_of(client).listeners)
    started = time.perf_counter()
    response = client.get(f"{OUTBOX}/wait", params={"to": "bob@x.dev", "timeout": "0.2"})
    elapsed = time.perf_counter() - started
    outbox_error(response, 408, "wait_timeout")
    assert response.json()["message"] == "No email matching the filter arrived within 0.2 s."
    assert 0.2 <= elapsed < 2
    assert len(bus_of(client).listeners) == listeners  # the waiter unsubscribed


def test_wait_ignores_other_accounts(isolated: TestClient) -> None:
    call = WaitCall(isolated, bus_of(isolated), {"api_key": "re_test_123", "timeout": "0.3"})
    assert call.listening.wait(timeout=5)
    send(isolated, key="re_suite_two")
    outbox_error(call.result(), 408, "wait_timeout")


# ---- search (q=, the query language of emulator/control/search.py, over the FTS5 index) ---------------

LOGO = {"filename": "invoice.pdf", "content": base64.b64encode(b"%PDF-1.4").decode()}


def searched(client: TestClient, q: str) -> list[str]:
    return listed(client, q=q, limit="100")


def test_from_and_has_attachment_find_exactly_the_matching_emails(client: TestClient) -> None:
    plain = send(client, **{"from": "billing@acme.dev"}, attachments=[LOGO], subject="Invoice 1")
    named = send(client, **{"from": "Acme Billing <billing@acme.dev>"}, attachments=[LOGO],
                 subject="Invoice 2")
    send(client, **{"from": "billing@acme.dev"}, subject="No attachment")
    send(client, **{"from": "support@acme.dev"}, attachments=[LOGO], subject="Other sender")
    send(client, **{"from": "support@acme.dev"}, to=["billing@acme.dev"], attachments=[LOGO], subject="To it")
    assert searched(client, "from:billing@acme.dev has:attachment") == [named, plain]
    longer = send(client, **{"from": "notbilling@acme.dev"}, attachments=[LOGO], subject="Longer local part")
    assert searched(client, "from:billing@acme.dev has:attachment") == [longer, named, plain]  # a substring
    page = client.get("/_emulator/ui/", params={"q": "from:billing@acme.dev has:attachment"})
    assert page.status_code == 200 and page.text.count('class="row') == 3


def test_each_search_key_narrows_the_list(client: TestClient) -> None:
    shipped = send(client, subject="Your order shipped", to=["Ada Lovelace <ada@lovelace.dev>"],
                   text="Track parcel XK-1042 at https://acme.dev/track.",
                   tags=[{"name": "plan", "value": "pro"}])
    advance(client, 86_400)
    bounced = send(client, subject="Order received", to=["bounced@resend.dev"], cc=["grace@hopper.dev"])
    advance(client, 10)
    assert searched(client, 'subject:"order shipped"') == [shipped]
    assert searched(client, "subject:order") == [bounced, shipped]
    assert searched(client, "to:grace@hopper.dev") == [bounced]          # Cc counts as a recipient
    assert searched(client, "to:lovelace") == [shipped]                  # display names and domains too
    assert searched(client, "tag:plan") == searched(client, "tag:plan:pro") == [shipped]
    assert searched(client, "tag:plan:free") == []
    assert searched(client, "status:bounced") == searched(client, "is:bounced") == [bounced]
    assert searched(client, "is:tagged") == [shipped] and searched(client, "is:untagged") == [bounced]
    assert searched(client, "xk-1042") == [shipped]                      # free text reaches the body
    assert searched(client, "after:2026-05-15") == [bounced]             # FROZEN_AT is 2026-05-14 09:00
    assert searched(client, "before:2026-05-15") == [shipped]
    assert searched(client, "before:2026-05-15T09:00:00Z after:2026-05-14T09:00:00Z") == [shipped]
    assert searched(client, "order @") == [bounced, shipped]              # lone punctuation: substring
    assert searched(client, "https://acme.dev/track") == [shipped]        # a pasted link is free text


def test_bad_search_terms_are_validation_errors(client: TestClient) -> None:
    for q, message in [("status:lost", "`status:` must be one of"), ("is:lost", "`is:` must be one of"),
                       ("has:wings", "`has:` supports"),
                       ("before:someday", "`before:` takes a date")]:
        response = client.get(OUTBOX, params={"q": q})
        assert response.status_code == 422 and message in response.json()["message"], q
        page = client.get("/_emulator/ui/", params={"q": q})  # the UI says it where the rows would be
        assert page.status_code == 200 and 'id="search-error"' in page.text and message in page.text, q


def test_search_uses_the_full_text_index_and_follows_reset_and_snapshots(client: TestClient,
                                                                         tmp_path: Any) -> None:
    first = send(client, subject="Quarterly report")
    emu = client.app.state.emu  # type: ignore[attr-defined]
    sql, params = parse_search("quarterly").where()

    async def plan() -> list[Any]:
        query = f"EXPLAIN QUERY PLAN SELECT seq FROM emails WHERE {sql}"
        return await emu.db.call(lambda raw: raw.execute(query, params).fetchall())  # type: ignore[no-any-return]

    assert "VIRTUAL TABLE INDEX" in str(client.portal.call(plan))  # type: ignore[attr-defined]
    path = str(tmp_path / "state.db")
    assert client.post("/_emulator/snapshot/save", json={"path": path}).status_code == 200
    assert client.post("/_emulator/reset").status_code == 200
    assert searched(client, "quarterly") == []
    second = send(client, subject="Quarterly numbers")
    assert searched(client, "quarterly") == [second]
    assert client.post("/_emulator/snapshot/restore", json={"path": path}).status_code == 200
    assert searched(client, "quarterly") == [first]


def test_a_snapshot_from_before_the_index_is_searchable_after_restore(client: TestClient,
                                                                      tmp_path: Any) -> None:
    old = send(client, subject="Made before search existed")
    path = tmp_path / "old.db"
    assert client.post("/_emulator/snapshot/save", json={"path": str(path)}).status_code == 200
    with sqlite3.connect(path) as raw:  # what an older build's snapshot looks like
        raw.executescript("DROP TRIGGER emails_text_forget; DROP TABLE emails_text_gone;"
                          " DROP TABLE emails_text;"
                          " CREATE VIRTUAL TABLE emails_fts USING fts5(sender, recipients, subject, body);"
                          " CREATE TRIGGER emails_fts_delete AFTER DELETE ON emails BEGIN"
                          " DELETE FROM emails_fts WHERE rowid = old.seq; END;")
    assert client.post("/_emulator/reset").status_code == 200
    assert client.post("/_emulator/snapshot/restore", json={"path": str(path)}).status_code == 200
    assert searched(client, "subject:existed") == [old]
    newer = send(client, subject="Made after the restore")
    assert searched(client, "subject:made") == [newer, old]


TRICKY_HEADERS = [
    b"From: =?utf-8?q?J=C3=B6rg?= <j@x.de>\r\nTo: \"Doe, John\" <j@x.com>, a@b.c\r\n"
    b"Subject: long\r\n folded\r\n\r\nb",
    b"From someone Mon Jan 1\r\nSubject:nospace\r\nX-Dup: 1\r\nX-Dup: 2\r\n"
    b"Bad line\r\nX: y\r\n\r\nbody",
    b"Subject: caf\xe9 \xff\r\nTo: undisclosed-recipients:;\r\nCc: a@b.c (comment)\r\nReply-To: <>\r\n\r\n",
    b"Content-Type: text/plain; charset=\"utf-8\"\r\n"
    b"Content-Disposition: attachment; filename*=UTF-8''%C3%A4\r\n"
    b"Date: not a date\r\nMessage-ID: no brackets\r\nSubject: =?utf-8?b?w6TDtg==?=\r\n\r\n--body\r\n\r\n",
    b"X: 1\nY: 2\n\nbody", b"No-Blank-Line: at all", b"",
]


@pytest.mark.parametrize("raw", TRICKY_HEADERS)
def test_message_headers_are_what_email_policy_default_gives(raw: bytes) -> None:
    from email import policy
    from email.parser import BytesHeaderParser

    from emulator.control.outbox import message_headers

    parsed = BytesHeaderParser(policy=policy.default).parsebytes(raw)
    assert message_headers(raw) == [{"name": name, "value": str(value)} for name, value in parsed.items()]
