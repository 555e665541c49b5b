"""POST /emails and its aliases: every field of emails.md §1, read back through GET/list/attachments."""

from __future__ import annotations

import base64
import email as stdlib_email
from email import policy
from typing import Any

from starlette.testclient import TestClient

from tests.emails_helpers import PNG, SENDER, Recorder, email, send

FIRST_ID = "9a84b94b-9411-4aaa-8ee5-92d72a81082f"  # seed 0, first id drawn


def test_send_then_get_whole_body(client: TestClient) -> None:
    response = client.post("/emails", json=email(reply_to="support@acme.dev",
                                                 tags=[{"name": "category", "value": "receipt"}]))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.json() == {"id": FIRST_ID}
    assert client.get(f"/emails/{FIRST_ID}").json() == {
        "object": "email",
        "id": FIRST_ID,
        "message_id": f"<{FIRST_ID}@mail.acme.dev>",
        "to": ["delivered@resend.dev"],
        "from": "Acme <hello@mail.acme.dev>",
        "created_at": "2026-05-14 09:00:00+00",
        "subject": "Your receipt",
        "html": "<p>Thanks for your order #1042.</p>",
        "text": "Thanks for your order #1042.",
        "bcc": None,
        "cc": None,
        "reply_to": ["support@acme.dev"],
        "last_event": "sent",
        "scheduled_at": None,
        "tags": [{"name": "category", "value": "receipt"}],
    }


def test_list_whole_body_newest_first(client: TestClient) -> None:
    first = send(client)
    second = send(client, to="a@example.org", cc=["b@example.org"], bcc="c@example.org", topic_id="t1")
    body = client.get("/emails").json()
    assert body["object"] == "list" and body["has_more"] is False
    assert [item["id"] for item in body["data"]] == [second, first]
    assert body["data"][0] == {
        "id": second, "message_id": f"<{second}@mail.acme.dev>", "to": ["a@example.org"],
        "from": SENDER, "created_at": "2026-05-14 09:00:00+00", "subject": "Your receipt",
        "bcc": ["c@example.org"], "cc": ["b@example.org"], "reply_to": None, "last_event": "sent",
        "scheduled_at": None, "topic_id": "t1",
    }


def test_list_is_always_paginated(client: TestClient) -> None:
    ids = [send(client) for _ in range(25)]
    page = client.get("/emails").json()
    assert len(page["data"]) == 20 and page["has_more"] is True
    rest = client.get("/emails", params={"after": page["data"][-1]["id"]}).json()
    assert [e["id"] for e in page["data"] + rest["data"]] == ids[::-1]
    assert rest["has_more"] is False
    back = client.get("/emails", params={"before": rest["data"][0]["id"], "limit": 2}).json()
    assert [e["id"] for e in back["data"]] == ids[::-1][18:20]


def test_aliases_send_like_emails(client: TestClient) -> None:
    for path in ("/email", "/emails/sending", "/email/sending"):
        response = client.post(path, json=email(subject=path))
        assert response.status_code == 200, path
        assert client.get(f"/emails/{response.json()['id']}").json()["subject"] == path


def test_display_name_and_string_recipients(client: TestClient) -> None:
    email_id = send(client, **{"from": '"Acme, Inc." <hello@mail.acme.dev>'},
                    to="Jane Doe <jane@example.org>",
                    cc="x@example.org", bcc=["y@example.org", "z@example.org"], reply_to=["r@example.org"])
    got = client.get(f"/emails/{email_id}").json()
    assert got["from"] == '"Acme, Inc." <hello@mail.acme.dev>'
    assert got["to"] == ["Jane Doe <jane@example.org>"]
    assert (got["cc"], got["bcc"], got["reply_to"]) == (["x@example.org"], ["y@example.org", "z@example.org"],
                                                        ["r@example.org"])


def test_fifty_recipients_accepted(client: TestClient) -> None:
    to = [f"user{i}@example.org" for i in range(50)]
    assert client.get(f"/emails/{send(client, to=to)}").json()["to"] == to


def test_text_generated_from_html(client: TestClient) -> None:
    email_id = send(client, html="<h1>Hello</h1><p>See <a href='https://acme.dev'>our site</a>.</p>")
    assert client.get(f"/emails/{email_id}").json()["text"] == "Hello\n\nSee our site (https://acme.dev)."


def test_empty_text_opts_out_of_generation(client: TestClient) -> None:
    email_id = send(client, text="")
    assert client.get(f"/emails/{email_id}").json()["text"] is None
    raw = eml(client, email_id)
    assert [part.get_content_type() for part in raw.walk()] == ["text/html"]


def test_text_only_email(client: TestClient) -> None:
    got = client.get(f"/emails/{send(client, html=None, text='Plain body')}").json()
    assert (got["html"], got["text"]) == (None, "Plain body")


def eml(client: TestClient, email_id: str) -> Any:
    """The stored message, rendered on first use, parsed back with the stdlib."""
    from emulator.resources.emails.service import email_eml, get_email_row

    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def load() -> bytes:
        async with emu.transaction("default") as tx:
            return await email_eml(tx, await get_email_row(tx, email_id))

    raw = client.portal.call(load)  # type: ignore[union-attr]
    return stdlib_email.message_from_bytes(raw, policy=policy.default)


def test_custom_headers_reach_message(client: TestClient) -> None:
    email_id = send(client, headers={"X-Entity-Ref-ID": "123", "List-Unsubscribe": "<https://acme.dev/u>"})
    message = eml(client, email_id)
    assert message["X-Entity-Ref-ID"] == "123"
    assert message["List-Unsubscribe"] == "<https://acme.dev/u>"
    assert message["Message-ID"] == f"<{email_id}@mail.acme.dev>"


def test_eml_rendered_once_and_kept(client: TestClient) -> None:
    email_id = send(client)
    first = eml(client, email_id)
    assert first.as_bytes() == eml(client, email_id).as_bytes()
    assert first["Date"] == "Thu, 14 May 2026 09:00:00 +0000"


def test_attachments_three_encodings_path_and_inline(client: TestClient) -> None:
    data = b"%PDF-1.4 receipt"
    email_id = send(client, html='<p>Logo <img src="cid:logo"></p>', attachments=[
        {"filename": "receipt.pdf", "content": base64.b64encode(data).decode()},
        {"filename": "notes.txt", "content": list(b"int array")},
        {"filename": "buffer.bin", "content": {"type": "Buffer", "data": list(b"node buffer")}},
        {"path": "https://cdn.acme.dev/files/terms.html"},
        {"filename": "logo.png", "content": base64.b64encode(PNG).decode(), "content_id": "logo"},
        {"filename": "alt.png", "content": list(PNG), "inline_content_id": "alt",
         "content_type": "image/x-custom"},
    ])
    listed = client.get(f"/emails/{email_id}/attachments").json()
    assert listed["object"] == "list" and listed["has_more"] is False
    rows = {item["filename"]: item for item in listed["data"]}
    assert {name: (r["size"], r["content_type"], r["content_disposition"]) for name, r in rows.items()} == {
        "receipt.pdf": (len(data), "application/pdf", "attachment"),
        "notes.txt": (9, "text/plain", "attachment"),
        "buffer.bin": (11, "application/octet-stream", "attachment"),
        "terms.html": (0, "text/html", "attachment"),
        "logo.png": (len(PNG), "image/png", "inline"),
        "alt.png": (len(PNG), "image/x-custom", "inline"),
    }
    assert rows["logo.png"]["content_id"] == "logo" and rows["receipt.pdf"]["content_id"] is None
    one = client.get(f"/emails/{email_id}/attachments/{rows['receipt.pdf']['id']}").json()
    assert one == {"object": "attachment", **rows["receipt.pdf"]}
    assert one["expires_at"] == "2026-05-14T10:00:00.000Z"
    download = client.get(one["download_url"].replace("http://testserver", ""))
    assert download.status_code == 200 and download.content == data
    assert download.headers["content-type"] == "application/pdf"
    local_url = one["download_url"].replace("http://testserver", "")
    tampered = client.get(local_url.replace("signature=", "signature=x"))
    assert tampered.status_code == 404


def test_attachment_list_paginates_with_limit(client: TestClient) -> None:
    email_id = send(client, attachments=[{"filename": f"f{i}.txt", "content": "aGk="} for i in range(3)])
    page = client.get(f"/emails/{email_id}/attachments", params={"limit": 2}).json()
    assert len(page["data"]) == 2 and page["has_more"] is True
    rest = client.get(f"/emails/{email_id}/attachments", params={"after": page["data"][-1]["id"]}).json()
    assert [a["filename"] for a in page["data"] + rest["data"]] == ["f2.txt", "f1.txt", "f0.txt"]


def test_eml_has_parts_of_html_text_attachments_inline(client: TestClient) -> None:
    email_id = send(client, html='<p>Hi <img src="cid:logo"></p>', text="Hi", attachments=[
        {"filename": "a.pdf", "content": base64.b64encode(b"A").decode()},
        {"filename": "b.txt", "content": base64.b64encode(b"B").decode()},
        {"filename": "logo.png", "content": base64.b64encode(PNG).decode(), "content_id": "logo"},
    ])
    message = eml(client, email_id)
    assert message.get_body(("plain",)).get_content().strip() == "Hi"
    assert "cid:logo" in message.get_body(("html",)).get_content()
    files = {part.get_filename(): part.get_content() for part in message.iter_attachments()}
    assert files == {"a.pdf": b"A", "b.txt": "B"}
    inline = [p for p in message.walk() if p["Content-ID"] == "<logo>"]
    assert inline and inline[0].get_payload(decode=True) == PNG


def test_tags_limits_accepted_at_the_edge(client: TestClient) -> None:
    tags = [{"name": f"t{i}", "value": "v"} for i in range(75)]
    assert client.post("/emails", json=email(tags=tags)).status_code == 200
    long_tag = [{"name": "n" * 256, "value": "A-z_0-9"}]
    assert client.post("/emails", json=email(tags=long_tag)).status_code == 200


def test_sent_event_payload(client: TestClient) -> None:
    recorder = Recorder(client)
    email_id = send(client, tags=[{"name": "category", "value": "receipt"}], headers={"X-Ref": "1"})
    assert recorder.data(email_id, "email.sent") == {
        "email_id": email_id, "created_at": "2026-05-14T09:00:00.000Z", "from": SENDER,
        "to": ["delivered@resend.dev"], "subject": "Your receipt",
        "message_id": f"<{email_id}@mail.acme.dev>",
        "tags": {"category": "receipt"}, "headers": [{"name": "X-Ref", "value": "1"}],
    }


def test_idempotency_key_replays_send(client: TestClient) -> None:
    headers = {"Idempotency-Key": "order-1042"}
    first = client.post("/emails", json=email(), headers=headers)
    again = client.post("/emails", json=email(), headers=headers)
    assert first.json() == again.json()
    assert len(client.get("/emails").json()["data"]) == 1
    changed = client.post("/emails", json=email(subject="other"), headers=headers)
    assert (changed.status_code, changed.json()["name"]) == (409, "invalid_idempotent_request")


def test_topic_id_stored(client: TestClient) -> None:
    email_id = send(client, topic_id="b6d24b8e-af0b-4c3c-be0c-359bbd97381e")
    assert client.get(f"/emails/{email_id}").json()["topic_id"] == "b6d24b8e-af0b-4c3c-be0c-359bbd97381e"


def test_share_link_serves_email(client: TestClient) -> None:
    email_id = send(client)
    shared = client.post(f"/emails/{email_id}/share", json={"expires_in": "1h 30m"}).json()
    assert shared["object"] == "email" and shared["id"] == email_id
    assert shared["url"].startswith("http://testserver/_emulator/shared?token=")
    page = client.get(shared["url"].replace("http://testserver", ""))
    assert page.status_code == 200 and "order #1042" in page.text
    assert page.headers["content-security-policy"] == "sandbox"
    client.post("/_emulator/clock/advance", json={"seconds": 2 * 3600})
    assert client.get(shared["url"].replace("http://testserver", "")).status_code == 404


def test_share_default_without_body(client: TestClient) -> None:
    email_id = send(client)
    assert client.post(f"/emails/{email_id}/share").json()["id"] == email_id


def _published_template(client: TestClient) -> str:
    from tests.templates_helpers import order_template

    created = client.post("/templates", json=order_template())
    assert created.status_code == 201, created.text
    template_id = str(created.json()["id"])
    assert client.post(f"/templates/{template_id}/publish").status_code == 200
    return template_id


def test_template_send_uses_defaults_and_variables(client: TestClient) -> None:
    template_id = _published_template(client)
    recorder = Recorder(client)
    body = {"to": "delivered@resend.dev",
            "template": {"id": "order-confirmation", "variables": {"PRICE": 42}}}
    response = client.post("/emails", json=body)
    assert response.status_code == 200, response.text
    got = client.get(f"/emails/{response.json()['id']}").json()
    assert (got["from"], got["subject"]) == ("Acme Store <store@mail.acme.dev>", "Thanks for your order!")
    assert got["html"] == "<p>Name: item</p><p>Total: 42</p>"
    assert got["text"] == "Name: item\nTotal: 42"
    assert recorder.data(got["id"], "email.sent")["template_id"] == template_id


def test_template_send_lets_from_and_subject_override(client: TestClient) -> None:
    _published_template(client)
    body = {"from": SENDER, "subject": "Custom", "to": "delivered@resend.dev",
            "template": {"id": "order-confirmation", "variables": {"PRODUCT": "Mug"}}}
    got = client.get(f"/emails/{client.post('/emails', json=body).json()['id']}").json()
    assert (got["from"], got["subject"]) == (SENDER, "Custom")
    assert got["html"].startswith("<p>Name: Mug</p>")


def test_unpublished_template_refused(client: TestClient) -> None:
    from tests.templates_helpers import order_template

    client.post("/templates", json=order_template())
    response = client.post("/emails", json={"to": "a@example.org", "template": {"id": "order-confirmation"}})
    assert (response.status_code, response.json()["name"]) == (422, "validation_error")


def test_share_received_email(client: TestClient) -> None:
    created = client.post("/domains", json={"name": "in.acme.dev", "capabilities": {"receiving": "enabled"}})
    assert created.status_code == 201, created.text
    send(client, to="support@in.acme.dev", html="<p>Inbound hello</p>")
    received = client.get("/emails/receiving").json()["data"]
    assert len(received) == 1
    shared = client.post(f"/emails/{received[0]['id']}/share").json()
    assert shared["id"] == received[0]["id"]
    page = client.get(shared["url"].replace("http://testserver", ""))
    assert page.status_code == 200 and "Inbound hello" in page.text
