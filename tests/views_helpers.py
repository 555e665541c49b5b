"""Every view a stored value can reach, read back: the API, the outbox JSON and `.eml`, the QA checks,
the signed download links and the UI pages (issue 25: what a user stores must never break a later view)."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

PAGES = ["/emails", "/emails/receiving", "/logs", "/webhooks", "/domains", "/api-keys", "/contacts",
         "/segments", "/topics", "/contact-properties", "/templates", "/broadcasts", "/inboxes",
         "/_emulator/outbox", "/_emulator/ui/", "/_emulator/ui/received", "/_emulator/ui/rows/outbox",
         "/_emulator/ui/rows/received", "/_emulator/ui/logs", "/_emulator/ui/webhooks", "/_emulator/ui/oauth",
         "/_emulator/ui/automations", "/_emulator/ui/inboxes"]


def _ok(client: TestClient, url: str) -> Any:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code, response.text[:300])
    return response


def _sent_views(client: TestClient, email_id: str) -> None:
    _ok(client, f"/emails/{email_id}")
    for url in (f"/_emulator/outbox/{email_id}.eml", f"/_emulator/outbox/{email_id}/qa",
                f"/_emulator/ui/messages/{email_id}", f"/_emulator/ui/messages/{email_id}/frame",
                f"/_emulator/ui/messages/{email_id}/raw.eml"):
        _ok(client, url)
    for attachment in _ok(client, f"/_emulator/outbox/{email_id}").json()["attachments"]:
        _ok(client, f"/_emulator/outbox/{email_id}/attachments/{attachment['id']}")
        _ok(client, f"/_emulator/ui/messages/{email_id}/attachments/{attachment['id']}")
    for attachment in _ok(client, f"/emails/{email_id}/attachments").json()["data"]:
        _ok(client, attachment["download_url"])


def _received_views(client: TestClient, email_id: str) -> None:
    detail = _ok(client, f"/emails/receiving/{email_id}").json()
    _ok(client, detail["raw"]["download_url"])
    for url in (f"/_emulator/ui/received/{email_id}", f"/_emulator/ui/received/{email_id}/frame",
                f"/_emulator/ui/received/{email_id}/raw.eml"):
        _ok(client, url)
    for attachment in _ok(client, f"/emails/receiving/{email_id}/attachments").json()["data"]:
        _ok(client, attachment["download_url"])
        _ok(client, f"/_emulator/ui/received/{email_id}/attachments/{attachment['id']}")


def assert_every_view_answers(client: TestClient) -> None:
    """200 from every list and page, and from every view of every stored email and log entry."""
    for url in PAGES:
        _ok(client, url)
    for email in _ok(client, "/emails?limit=100").json()["data"]:
        _sent_views(client, email["id"])
    for email in _ok(client, "/emails/receiving").json()["data"]:
        _received_views(client, email["id"])
    for entry in _ok(client, "/logs?limit=100").json()["data"]:
        _ok(client, f"/logs/{entry['id']}")
