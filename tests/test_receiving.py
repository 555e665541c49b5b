"""Receiving endpoints, fed through the `/_emulator/inbound` control routes (reference/receiving.md)."""

from __future__ import annotations

import base64
from email.message import EmailMessage
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.smtp_helpers import PDF, PNG

INBOUND = "inbound.acme.dev"


@pytest.fixture
def inbox(client: TestClient) -> TestClient:
    created = client.post("/domains", json={"name": INBOUND,
                                            "capabilities": {"sending": "disabled", "receiving": "enabled"}})
    assert created.status_code == 201, created.text
    return client


def _events(client: TestClient) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    client.app.state.emu.events.listen(seen.append)  # type: ignore[attr-defined]
    return seen


def _raw_message() -> bytes:
    message = EmailMessage()
    message["From"] = "Jane Doe <jane@customer.io>"
    message["To"] = f"support@{INBOUND}"
    message["Cc"] = "boss@customer.io"
    message["Subject"] = "Question about my order"
    message["Message-ID"] = "<CAF7x9q@mail.customer.io>"
    message["X-Mailer"] = "CustomerMail 3.2"
    message.set_content("Hi, where is order 1042?")
    message.add_alternative('<p>Hi, where is order 1042?</p><img src="cid:pic">', subtype="html")
    message.get_payload()[1].add_related(PNG, maintype="image", subtype="png", cid="<pic>")
    message.add_attachment(PDF, maintype="application", subtype="pdf", filename="receipt.pdf")
    return message.as_bytes()


def _inject_raw(client: TestClient, raw: bytes, **query: str) -> str:
    reply = client.post("/_emulator/inbound", content=raw, params=query,
                        headers={"content-type": "message/rfc822"})
    assert reply.status_code == 200, reply.text
    return str(reply.json()["data"][0]["id"])


def test_raw_mail_becomes_a_received_email_with_its_event(inbox: TestClient) -> None:
    events = _events(inbox)
    email_id = _inject_raw(inbox, _raw_message())
    listed = inbox.get("/emails/receiving").json()
    assert listed["object"] == "list" and listed["has_more"] is False
    item = listed["data"][0]
    assert item["id"] == email_id
    assert item["created_at"] == "2026-05-14T09:00:00.000Z"
    assert (item["from"], item["to"], item["cc"], item["bcc"]) == (
        "Jane Doe <jane@customer.io>", [f"support@{INBOUND}"], ["boss@customer.io"], [])
    assert item["message_id"] == "<CAF7x9q@mail.customer.io>"
    assert "received_for" not in item
    assert inbox.get(f"/emails/receiving/{email_id}").json()["received_for"] == [f"support@{INBOUND}"]
    assert [(a["filename"], a["content_disposition"], a["size"]) for a in item["attachments"]] == [
        (None, "inline", len(PNG)), ("receipt.pdf", "attachment", len(PDF))]
    [event] = [e for e in events if e["type"] == "email.received"]
    assert event["data"]["email_id"] == email_id
    assert event["data"]["subject"] == "Question about my order"
    assert {"size", "content"}.isdisjoint(event["data"]["attachments"][0])


def test_get_returns_content_headers_and_a_working_raw_link(inbox: TestClient) -> None:
    raw = _raw_message()
    email_id = _inject_raw(inbox, raw)
    email = inbox.get(f"/emails/receiving/{email_id}", params={"html_format": "cid"}).json()
    assert email["object"] == "email"
    assert email["text"] == "Hi, where is order 1042?\n"
    assert email["html"].startswith('<p>Hi, where is order 1042?</p><img src="cid:pic">')
    assert email["html_format"] == "cid"
    assert email["headers"]["x-mailer"] == "CustomerMail 3.2"
    assert email["authentication"] == {"spf": "pass", "dkim": "pass", "dmarc": "pass"}
    assert email["raw"]["expires_at"] == "2026-05-14T10:00:00.000Z"
    download = inbox.get(email["raw"]["download_url"], headers={"authorization": ""})
    assert download.status_code == 200
    assert download.headers["content-type"] == "message/rfc822"
    assert download.content == raw


def test_html_defaults_to_inline_data_uris(inbox: TestClient) -> None:
    email_id = _inject_raw(inbox, _raw_message())
    email = inbox.get(f"/emails/receiving/{email_id}").json()
    assert email["html_format"] == "data_uri"
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in email["html"]


def test_attachment_download_returns_the_original_bytes(inbox: TestClient) -> None:
    email_id = _inject_raw(inbox, _raw_message())
    listed = inbox.get(f"/emails/receiving/{email_id}/attachments").json()
    assert listed["has_more"] is False
    pdf = next(item for item in listed["data"] if item["filename"] == "receipt.pdf")
    one = inbox.get(f"/emails/receiving/{email_id}/attachments/{pdf['id']}").json()
    assert one["object"] == "attachment" and one["size"] == len(PDF)
    assert one["content_type"] == "application/pdf" and one["expires_at"] == "2026-05-14T10:00:00.000Z"
    download = inbox.get(one["download_url"], headers={"authorization": ""})
    assert download.status_code == 200 and download.content == PDF
    assert download.headers["content-type"] == "application/pdf"


def test_download_links_expire_after_an_hour(inbox: TestClient) -> None:
    email_id = _inject_raw(inbox, _raw_message())
    url = inbox.get(f"/emails/receiving/{email_id}").json()["raw"]["download_url"]
    assert inbox.post("/_emulator/clock/advance", json={"seconds": 3601}).status_code == 200
    expired = inbox.get(url)
    assert expired.status_code == 403 and expired.json()["name"] == "validation_error"
    fresh = inbox.get(f"/emails/receiving/{email_id}").json()["raw"]["download_url"]
    assert inbox.get(fresh).status_code == 200


def test_tampered_signature_is_refused(inbox: TestClient) -> None:
    email_id = _inject_raw(inbox, _raw_message())
    url = inbox.get(f"/emails/receiving/{email_id}").json()["raw"]["download_url"]
    assert inbox.get(url[:-4] + "0000").status_code == 403


def test_json_injection_builds_the_message(inbox: TestClient) -> None:
    reply = inbox.post("/_emulator/inbound", json={
        "from": "Jane <jane@customer.io>", "to": f"help@{INBOUND}", "subject": "Hello",
        "text": "plain", "html": "<b>bold</b>", "headers": {"X-Ticket": "7"},
        "attachments": [{"filename": "a.txt", "content": base64.b64encode(b"hello!").decode()}],
        "authentication": {"dmarc": "fail"},
    })
    assert reply.status_code == 200, reply.text
    email = inbox.get(f"/emails/receiving/{reply.json()['data'][0]['id']}").json()
    assert (email["subject"], email["text"], email["html"]) == ("Hello", "plain\n", "<b>bold</b>\n")
    assert email["headers"]["x-ticket"] == "7"
    assert email["authentication"]["dmarc"] == "fail"
    assert [(a["filename"], a["content_type"], a["size"]) for a in email["attachments"]] == [
        ("a.txt", "text/plain", 6)]


def test_managed_resend_app_address_receives(client: TestClient) -> None:
    domain = client.get("/_emulator/inbound/address").json()["domain"]
    assert domain.endswith(".resend.app")
    reply = client.post("/_emulator/inbound", json={"from": "a@b.io", "to": f"anything@{domain}",
                                                    "subject": "s", "text": "t"})
    assert reply.status_code == 200, reply.text
    assert len(client.get("/emails/receiving").json()["data"]) == 1


def test_mail_to_no_receiving_address_is_refused(client: TestClient) -> None:
    client.post("/domains", json={"name": "send-only.dev"})
    reply = client.post("/_emulator/inbound", json={"from": "a@b.io", "to": "x@send-only.dev",
                                                    "subject": "s", "text": "t"})
    assert reply.status_code == 422 and "receiving address" in reply.json()["message"]
    assert client.get("/emails/receiving").json()["data"] == []


def test_api_send_to_a_receiving_address_arrives(inbox: TestClient) -> None:
    sent = inbox.post("/emails", json={"from": "Shop <shop@acme.dev>", "to": ["x@example.org"],
                                       "bcc": [f"archive@{INBOUND}"], "subject": "Copy", "text": "hi"})
    assert sent.status_code == 200, sent.text
    [item] = inbox.get("/emails/receiving").json()["data"]
    assert inbox.get(f"/emails/receiving/{item['id']}").json()["received_for"] == [f"archive@{INBOUND}"]
    assert item["bcc"] == [] and item["to"] == ["x@example.org"]
    message_id = inbox.get(f"/emails/{sent.json()['id']}").json()["message_id"]
    assert item["message_id"] == message_id


def test_pagination_and_errors(inbox: TestClient) -> None:
    first = _inject_raw(inbox, _raw_message())
    second = _inject_raw(inbox, _raw_message())
    page = inbox.get("/emails/receiving", params={"limit": 1}).json()
    assert [e["id"] for e in page["data"]] == [second] and page["has_more"] is True
    after = inbox.get("/emails/receiving", params={"limit": 1, "after": second}).json()
    assert [e["id"] for e in after["data"]] == [first] and after["has_more"] is False
    assert inbox.get("/emails/receiving", params={"after": "nope"}).status_code == 422
    missing = inbox.get("/emails/receiving/00000000-0000-4000-8000-000000000000")
    assert (missing.status_code, missing.json()["message"]) == (404, "Email not found")
    bad = inbox.get("/emails/receiving/not-a-uuid")
    assert (bad.status_code, bad.json()["name"]) == (422, "invalid_parameter")
    fmt = inbox.get(f"/emails/receiving/{first}", params={"html_format": "png"})
    assert fmt.status_code == 422


def test_malformed_json_injection_is_a_resend_error(client: TestClient) -> None:
    reply = client.post("/_emulator/inbound", content=b"{nope", headers={"content-type": "application/json"})
    assert reply.status_code == 400 and reply.json()["name"] == "validation_error"
    empty = client.post("/_emulator/inbound", content=b"", headers={"content-type": "message/rfc822"})
    assert empty.status_code == 422
