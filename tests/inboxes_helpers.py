"""Shared setup for the inbox tests: a receiving domain, an inbox on it, and inbound mail injected
through the `/_emulator/inbound` control route as a raw RFC 5322 message (as a mail client writes it)."""

from __future__ import annotations

from email.message import EmailMessage
from typing import Any

from starlette.testclient import TestClient

DOMAIN = "support.acme.dev"
ADDRESS = f"help@{DOMAIN}"
CUSTOMER = "Ada Lovelace <ada@example.org>"


def receiving_domain(client: TestClient, name: str = DOMAIN) -> str:
    created = client.post("/domains", json={"name": name, "capabilities": {"receiving": "enabled"}})
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def create_inbox(client: TestClient, address: str = ADDRESS, **fields: Any) -> dict[str, Any]:
    created = client.post("/inboxes", json={"email_address": address, **fields})
    assert created.status_code == 201, created.text
    return dict(created.json())


def raw_mail(subject: str, text: str, message_id: str, *, to: str = ADDRESS, sender: str = CUSTOMER,
             in_reply_to: str | None = None, references: str | None = None, html: str | None = None,
             reply_to: str | None = None, attachment: tuple[str, bytes] | None = None) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = message_id
    if reply_to:
        message["Reply-To"] = reply_to
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
    if references:
        message["References"] = references
    message.set_content(text)
    if html:
        message.add_alternative(html, subtype="html")
    if attachment:
        message.add_attachment(attachment[1], maintype="application", subtype="pdf", filename=attachment[0])
    return message.as_bytes()


def inject(client: TestClient, raw: bytes) -> str:
    reply = client.post("/_emulator/inbound", content=raw, headers={"content-type": "message/rfc822"})
    assert reply.status_code == 200, reply.text
    return str(reply.json()["data"][0]["id"])


def conversation(client: TestClient, count: int = 3) -> list[str]:
    """`count` customer messages, each answering the previous one; returns their received ids."""
    ids: list[str] = []
    previous: list[str] = []
    for n in range(1, count + 1):
        message_id = f"<msg{n}@example.org>"
        raw = raw_mail("Refund for order 1041" if n == 1 else "Re: Refund for order 1041", f"Message {n}",
                       message_id, in_reply_to=previous[-1] if previous else None,
                       references=" ".join(previous) or None)
        ids.append(inject(client, raw))
        previous.append(message_id)
    return ids


def only_thread(client: TestClient, inbox_id: str, folder: str = "inbox") -> dict[str, Any]:
    listed = client.get(f"/inboxes/{inbox_id}/threads", params={"folder": folder}).json()
    assert len(listed["data"]) == 1, listed
    return dict(listed["data"][0])


def error(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["name"]
