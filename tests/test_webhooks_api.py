"""The webhooks API: create, list, get, update, delete, rotate; shapes and errors (webhooks.md §3)."""

from __future__ import annotations

import base64
import re

from starlette.testclient import TestClient

from emulator.resources.webhooks.catalogue import EVENT_TYPES
from tests.webhooks_helpers import create_hook

URL = "http://127.0.0.1:9/hooks"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_create_returns_id_and_whsec_secret(client: TestClient) -> None:
    body = create_hook(client, URL, ["email.sent", "email.bounced"])
    assert list(body) == ["object", "id", "signing_secret"]
    assert body["object"] == "webhook" and UUID.match(body["id"])
    assert body["signing_secret"].startswith("whsec_")
    assert len(base64.b64decode(body["signing_secret"].removeprefix("whsec_"))) == 24


def test_same_seed_gives_same_ids_and_secrets(client: TestClient) -> None:
    first = create_hook(client, URL, ["email.sent"])
    client.post("/_emulator/reset")
    assert create_hook(client, URL, ["email.sent"]) == first


def test_get_returns_the_full_webhook(client: TestClient) -> None:
    created = create_hook(client, URL, ["email.sent", "email.bounced"])
    body = client.get(f"/webhooks/{created['id']}").json()
    assert body == {
        "object": "webhook", "id": created["id"], "created_at": "2026-05-14 09:00:00.000+00",
        "status": "enabled", "endpoint": URL, "events": ["email.sent", "email.bounced"],
        "signing_secret": created["signing_secret"],
    }


def test_every_catalogue_event_type_is_accepted(client: TestClient) -> None:
    created = create_hook(client, URL, list(EVENT_TYPES))
    assert client.get(f"/webhooks/{created['id']}").json()["events"] == list(EVENT_TYPES)
    assert {"email.received", "suppression.added", "inbox.draft.deleted", "contact.topics.updated"} <= set(
        EVENT_TYPES)


def test_create_requires_endpoint_then_events(client: TestClient) -> None:
    response = client.post("/webhooks", json={"events": ["email.sent"]})
    assert response.status_code == 422
    assert response.json() == {"statusCode": 422, "message": "Missing `endpoint` field.",
                               "name": "missing_required_field"}
    response = client.post("/webhooks", json={"endpoint": URL})
    assert response.json()["message"] == "Missing `events` field."


def test_create_rejects_unknown_event_and_bad_url(client: TestClient) -> None:
    response = client.post("/webhooks", json={"endpoint": URL, "events": ["email.exploded"]})
    assert response.status_code == 422 and response.json()["name"] == "validation_error"
    assert "email.exploded" in response.json()["message"]
    for endpoint in ("not a url", "ftp://example.com/x", 42):
        response = client.post("/webhooks", json={"endpoint": endpoint, "events": ["email.sent"]})
        assert response.status_code == 422 and response.json()["name"] == "validation_error"
    response = client.post("/webhooks", json={"endpoint": URL, "events": []})
    assert response.status_code == 422


def test_list_newest_first_with_pagination(client: TestClient) -> None:
    ids = [create_hook(client, f"{URL}/{n}", ["email.sent"])["id"] for n in range(3)]
    body = client.get("/webhooks").json()
    assert body["object"] == "list" and body["has_more"] is False
    assert [item["id"] for item in body["data"]] == ids[::-1]
    assert list(body["data"][0]) == ["id", "created_at", "status", "endpoint", "events"]
    page = client.get("/webhooks", params={"limit": 1, "after": ids[2]}).json()
    assert [item["id"] for item in page["data"]] == [ids[1]] and page["has_more"] is True
    assert client.get("/webhooks", params={"limit": 101}).status_code == 422
    both = client.get("/webhooks", params={"after": ids[0], "before": ids[1]})
    assert both.status_code == 422 and both.json()["name"] == "validation_error"


def test_update_endpoint_events_and_status(client: TestClient) -> None:
    hook_id = create_hook(client, URL, ["email.sent"])["id"]
    response = client.patch(f"/webhooks/{hook_id}", json={
        "webhook_id": hook_id, "endpoint": "https://example.net/in", "events": ["domain.created"],
        "status": "disabled"})
    assert response.status_code == 200 and response.json() == {"object": "webhook", "id": hook_id}
    body = client.get(f"/webhooks/{hook_id}").json()
    assert (body["endpoint"], body["events"], body["status"]) == (
        "https://example.net/in", ["domain.created"], "disabled")
    bad = client.patch(f"/webhooks/{hook_id}", json={"status": "paused"})
    assert bad.status_code == 422 and bad.json()["name"] == "validation_error"
    assert client.get(f"/webhooks/{hook_id}").json()["status"] == "disabled"


def test_delete_then_not_found(client: TestClient) -> None:
    hook_id = create_hook(client, URL, ["email.sent"])["id"]
    assert client.delete(f"/webhooks/{hook_id}").json() == {"object": "webhook", "id": hook_id,
                                                              "deleted": True}
    response = client.get(f"/webhooks/{hook_id}")
    assert response.status_code == 404
    assert response.json() == {"statusCode": 404, "message": "Webhook not found", "name": "not_found"}
    assert client.delete(f"/webhooks/{hook_id}").status_code == 404


def test_non_uuid_webhook_id_is_invalid_parameter(client: TestClient) -> None:
    response = client.get("/webhooks/not-a-uuid")
    assert response.status_code == 422 and response.json()["name"] == "invalid_parameter"


def test_rotate_returns_new_secret_and_get_shows_it(client: TestClient) -> None:
    created = create_hook(client, URL, ["email.sent"])
    response = client.post(f"/webhooks/{created['id']}/signing-secret/rotate")
    assert response.status_code == 200
    body = response.json()
    assert list(body) == ["object", "id", "signing_secret"] and body["id"] == created["id"]
    assert body["signing_secret"].startswith("whsec_")
    assert body["signing_secret"] != created["signing_secret"]
    assert client.get(f"/webhooks/{created['id']}").json()["signing_secret"] == body["signing_secret"]


def test_events_and_attempts_of_unknown_ids_are_404(client: TestClient) -> None:
    hook_id = create_hook(client, URL, ["email.sent"])["id"]
    assert client.get(f"/webhooks/{hook_id}/events").json() == {"object": "list", "has_more": False,
                                                                 "data": []}
    for path in (f"/webhooks/{hook_id}/events/msg_nope", f"/webhooks/{hook_id}/events/msg_nope/attempts"):
        response = client.get(path)
        assert response.status_code == 404 and response.json()["message"] == "Webhook event not found"
    assert client.post(f"/webhooks/{hook_id}/events/msg_nope/replay").status_code == 404


def test_events_list_rejects_before(client: TestClient) -> None:
    hook_id = create_hook(client, URL, ["email.sent"])["id"]
    response = client.get(f"/webhooks/{hook_id}/events", params={"before": "msg_x"})
    assert response.status_code == 422 and response.json()["name"] == "validation_error"
    assert client.get(f"/webhooks/{hook_id}/events", params={"limit": 0}).status_code == 422


def test_sending_access_key_cannot_manage_webhooks(client: TestClient) -> None:
    key = client.post("/api-keys", json={"name": "send", "permission": "sending_access"}).json()["token"]
    response = client.get("/webhooks", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 401 and response.json()["name"] == "restricted_api_key"
