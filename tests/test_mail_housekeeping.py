"""Deleting mail and its read state through the control plane (/_emulator/outbox, /_emulator/received):
one email, a query, all; what a delete takes with it and what it keeps; the search language's errors."""

from __future__ import annotations

import base64
from typing import Any

from starlette.testclient import TestClient

from tests.conftest import assert_error_shape

OUTBOX = "/_emulator/outbox"
RECEIVED = "/_emulator/received"
MISSING = "00000000-0000-4000-8000-00000000abcd"
FILE = {"filename": "a.pdf", "content": base64.b64encode(b"%PDF-1.4 hello").decode()}


def send(client: TestClient, **fields: Any) -> str:
    body: dict[str, Any] = {"from": "Acme <hello@acme.dev>", "to": ["delivered@resend.dev"],
                            "subject": "Welcome", "html": "<p>Hello</p>"}
    response = client.post("/emails", json={**body, **fields})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def receive(client: TestClient, subject: str, sender: str = "jane@customer.io") -> str:
    domain = client.get("/_emulator/inbound/address").json()["domain"]
    reply = client.post("/_emulator/inbound", json={"from": sender, "to": f"help@{domain}",
                                                    "subject": subject, "text": "hello"})
    assert reply.status_code == 200, reply.text
    return str(reply.json()["data"][0]["id"])


def ids(client: TestClient, q: str = "") -> list[str]:
    response = client.get(OUTBOX, params={"q": q, "limit": "100"})
    assert response.status_code == 200, response.text
    return [item["id"] for item in response.json()["data"]]


def count(client: TestClient, table: str) -> int:
    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def rows() -> int:
        async with emu.transaction() as tx:
            found = await tx.one(f"SELECT count(*) AS n FROM {table}")
        return int(found["n"]) if found else 0

    return int(client.portal.call(rows))  # type: ignore[attr-defined]


def keeps_everything_but_mail(client: TestClient) -> dict[str, int]:
    return {path: len(client.get(path).json()["data"]) for path in ("/domains", "/webhooks", "/api-keys",
                                                                    "/templates", "/contacts")}


def setup_account(client: TestClient) -> None:
    assert client.post("/domains", json={"name": "acme.dev"}).status_code in (200, 201)
    assert client.post("/webhooks", json={"endpoint": "http://127.0.0.1:9/hook",
                                          "events": ["email.sent"]}).status_code in (200, 201)
    assert client.post("/contacts", json={"email": "ada@x.dev"}).status_code in (200, 201)
    assert client.post("/templates", json={"name": "t", "html": "<p>x</p>"}).status_code in (200, 201)


def test_deleting_one_email_takes_its_rows_and_the_api_then_answers_404(client: TestClient) -> None:
    setup_account(client)
    before = keeps_everything_but_mail(client)
    doomed = send(client, attachments=[FILE])
    kept = send(client, subject="Kept")
    assert count(client, "webhook_messages") == 2 and count(client, "email_attachments") == 1
    response = client.delete(f"{OUTBOX}/{doomed}")
    assert response.status_code == 200
    assert response.json() == {"object": "outbox_email", "id": doomed, "deleted": True}
    assert ids(client) == [kept]
    for path in (f"/emails/{doomed}", f"{OUTBOX}/{doomed}", f"/emails/{doomed}/attachments"):
        gone = client.get(path)
        assert (gone.status_code, gone.json()["name"]) == (404, "not_found"), path
        assert_error_shape(gone)
    assert count(client, "email_attachments") == 0
    assert count(client, "webhook_messages") == 1 and count(client, "events") >= 1
    assert keeps_everything_but_mail(client) == before


def test_deleting_an_unknown_email_is_a_resend_shaped_404(client: TestClient) -> None:
    for path in (f"{OUTBOX}/{MISSING}", f"{RECEIVED}/{MISSING}"):
        response = client.delete(path)
        assert (response.status_code, response.json()) == (
            404, {"statusCode": 404, "name": "not_found", "message": "Email not found"})
        assert client.post(f"{path}/read").status_code == 404


def test_deleting_a_scheduled_email_drops_its_pending_send(client: TestClient) -> None:
    email_id = send(client, scheduled_at="in 1 hour")
    assert count(client, "jobs") == 1
    assert client.delete(f"{OUTBOX}/{email_id}").status_code == 200
    assert count(client, "jobs") == 0
    assert client.post("/_emulator/clock/advance", json={"hours": 2}).status_code == 200
    assert count(client, "events") == 0 and count(client, "emails") == 0


def test_delete_by_query_deletes_exactly_the_matches_and_counts_them(client: TestClient) -> None:
    invoices = [send(client, subject=f"Invoice {n}") for n in range(3)]
    other = send(client, subject="Newsletter")
    response = client.delete(OUTBOX, params={"q": "subject:invoice"})
    assert response.status_code == 200 and response.json() == {"object": "list", "deleted": 3}
    assert ids(client) == [other]
    assert all(client.get(f"{OUTBOX}/{i}").status_code == 404 for i in invoices)


def test_delete_by_id_list_and_delete_all(client: TestClient) -> None:
    first, second, third = (send(client, subject=f"Mail {n}") for n in range(3))
    picked = client.delete(OUTBOX, params=[("id", first), ("id", third)])
    assert picked.json()["deleted"] == 2 and ids(client) == [second]
    receive(client, "Inbound stays")
    assert client.delete(OUTBOX).json()["deleted"] == 1
    assert ids(client) == [] and count(client, "received_emails") == 1


def test_delete_all_works_through_many_chunks(client: TestClient) -> None:
    from emulator.control import deletion

    sent = [send(client, subject=f"Bulk {n}") for n in range(7)]
    original, deletion.CHUNK = deletion.CHUNK, 2
    try:
        assert client.delete(OUTBOX).json()["deleted"] == len(sent)
    finally:
        deletion.CHUNK = original
    assert ids(client) == []


def test_a_bad_query_is_refused_before_anything_is_deleted(client: TestClient) -> None:
    send(client)
    for q, message in [("foo:bar", "Unknown operator `foo:`"), ('subject:"open', "quote is not closed"),
                       ("OR invoice", "`OR` needs a term"), ("larger:huge", "`larger:` takes a size")]:
        response = client.delete(OUTBOX, params={"q": q})
        assert response.status_code == 422 and message in response.json()["message"], q
        assert_error_shape(response)
    assert len(ids(client)) == 1


def test_read_state_single_bulk_and_searchable(client: TestClient) -> None:
    first, second, third = (send(client, subject=f"Mail {n}") for n in range(3))
    assert ids(client, "is:unread") == [third, second, first] and ids(client, "is:read") == []
    response = client.post(f"{OUTBOX}/{second}/read")
    assert response.json() == {"object": "outbox_email", "id": second, "read": True}
    assert ids(client, "is:read") == [second] and ids(client, "-is:read") == [third, first]
    bulk = client.post(f"{OUTBOX}/read", params={"q": "is:unread"})
    assert bulk.json() == {"object": "list", "updated": 2, "read": True}
    assert ids(client, "is:unread") == []
    assert client.post(f"{OUTBOX}/unread", params=[("id", first)]).json()["updated"] == 1
    assert ids(client, "is:unread") == [first]
    assert client.post(f"{OUTBOX}/{first}/unread").json()["read"] is False


def test_received_mail_deletes_reads_and_searches_with_the_same_language(client: TestClient) -> None:
    jane = receive(client, "Order question", "jane@customer.io")
    bob = receive(client, "Refund please", "bob@shop.io")
    listed = client.get("/emails/receiving").json()["data"]
    assert {item["id"] for item in listed} == {jane, bob}
    assert client.post(f"{RECEIVED}/{jane}/read").json() == {"object": "received_email", "id": jane,
                                                             "read": True}
    wrong = client.delete(RECEIVED, params={"q": "status:bounced"})
    assert wrong.status_code == 422 and "sent mail only" in wrong.json()["message"]
    assert client.delete(RECEIVED, params={"q": "is:read"}).json()["deleted"] == 1
    gone = client.get(f"/emails/receiving/{jane}")
    assert (gone.status_code, gone.json()["name"]) == (404, "not_found")
    assert client.delete(RECEIVED, params={"q": "from:bob OR subject:nothing"}).json()["deleted"] == 1
    assert client.get("/emails/receiving").json()["data"] == []


def test_reset_is_still_the_whole_emulator(client: TestClient) -> None:
    setup_account(client)
    send(client)
    assert client.post("/_emulator/reset").status_code == 200
    assert ids(client) == [] and client.get("/domains").json()["data"] == []
