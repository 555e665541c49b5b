"""Broadcast CRUD and every documented refusal (reference/broadcasts.md §2, §3): status, name, no change."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.contacts_helpers import created, segment, topic
from tests.openapi_oracle import check

UNKNOWN = "3f1c2b8e-0000-4000-8000-000000000000"


def body(segment_id: str, **fields: Any) -> dict[str, Any]:
    return {"segment_id": segment_id, "from": "Acme <news@acme.dev>", "subject": "News", "html": "<p>Hi</p>",
            **fields}


def refusal(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["name"]


def test_create_get_update_list_delete(client: TestClient) -> None:
    segment_id, topic_id = segment(client, "All"), topic(client, "News")
    response = client.post("/broadcasts", json=body(segment_id, name="March", reply_to="help@acme.dev",
                                                    preview_text="Three new features", text="Hi"))
    broadcast_id = created(response)
    assert response.json() == {"object": "broadcast", "id": broadcast_id}
    assert client.get(f"/broadcasts/{broadcast_id}").json() == {
        "object": "broadcast", "id": broadcast_id, "name": "March", "segment_id": segment_id,
        "audience_id": segment_id, "from": "Acme <news@acme.dev>", "subject": "News",
        "reply_to": ["help@acme.dev"], "preview_text": "Three new features", "status": "draft",
        "created_at": "2026-05-14 09:00:00.000+00", "scheduled_at": None, "sent_at": None, "text": "Hi",
        "html": "<p>Hi</p>", "topic_id": None}
    updated = client.patch(f"/broadcasts/{broadcast_id}", json={"subject": "Newer", "topic_id": topic_id})
    assert updated.json() == {"object": "broadcast", "id": broadcast_id}
    listed = client.get("/broadcasts").json()
    assert listed == {"object": "list", "has_more": False, "data": [{
        "id": broadcast_id, "name": "March", "audience_id": segment_id, "segment_id": segment_id,
        "status": "draft", "created_at": "2026-05-14 09:00:00.000+00", "scheduled_at": None, "sent_at": None,
        "topic_id": topic_id}]}
    assert client.delete(f"/broadcasts/{broadcast_id}").json() == {
        "object": "broadcast", "id": broadcast_id, "deleted": True}
    assert refusal(client.get(f"/broadcasts/{broadcast_id}")) == (404, "not_found")


def test_audience_id_is_the_deprecated_segment_id(client: TestClient) -> None:
    segment_id = segment(client, "All")
    payload = body(segment_id)
    payload["audience_id"] = payload.pop("segment_id")
    broadcast_id = created(client.post("/broadcasts", json=payload))
    assert client.get(f"/broadcasts/{broadcast_id}").json()["segment_id"] == segment_id


@pytest.mark.parametrize(("drop", "name"), [("segment_id", "missing_required_field"),
                                            ("from", "missing_required_field"),
                                            ("subject", "missing_required_field")])
def test_create_requires_segment_from_subject(client: TestClient, drop: str, name: str) -> None:
    payload = body(segment(client, "All"))
    del payload[drop]
    response = client.post("/broadcasts", json=payload)
    assert refusal(response) == (422, name)
    assert response.json()["message"] == f"Missing `{drop}` field."
    assert client.get("/broadcasts").json()["data"] == []


@pytest.mark.parametrize(("fields", "expected"), [
    ({"scheduled_at": "in 1 hour"}, (422, "validation_error")),  # only with send: true
    ({"send": "yes"}, (422, "validation_error")),
    ({"from": "not an address"}, (422, "validation_error")),
    ({"segment_id": UNKNOWN}, (404, "not_found")),
    ({"topic_id": UNKNOWN}, (404, "not_found")),
    ({"reply_to": 42}, (422, "validation_error")),
    ({"send": True, "scheduled_at": "whenever"}, (422, "validation_error")),
    ({"send": True, "scheduled_at": "2020-01-01T00:00:00Z"}, (422, "validation_error")),
    ({"send": True, "html": None}, (422, "validation_error")),  # nothing to send: not even a draft stays
])
def test_create_refusals_write_nothing(client: TestClient, fields: dict[str, Any],
                                       expected: tuple[int, str]) -> None:
    assert refusal(client.post("/broadcasts", json={**body(segment(client, "All")), **fields})) == expected
    assert client.get("/broadcasts").json()["data"] == []


def test_status_rules(client: TestClient) -> None:
    segment_id = segment(client, "All")
    draft = created(client.post("/broadcasts", json=body(segment_id)))
    assert refusal(client.post(f"/broadcasts/{draft}/cancel")) == (422, "validation_error")
    sent = created(client.post("/broadcasts", json=body(segment_id, send=True)))
    assert client.post("/_emulator/flush").status_code == 200
    assert client.get(f"/broadcasts/{sent}").json()["status"] == "sent"
    assert refusal(client.patch(f"/broadcasts/{sent}", json={"subject": "x"})) == (422, "validation_error")
    assert refusal(client.delete(f"/broadcasts/{sent}")) == (422, "validation_error")
    assert refusal(client.post(f"/broadcasts/{sent}/send")) == (422, "validation_error")
    assert refusal(client.post(f"/broadcasts/{sent}/cancel")) == (422, "validation_error")
    scheduled = created(client.post("/broadcasts", json=body(segment_id, send=True, scheduled_at="in 1 day")))
    assert client.get(f"/broadcasts/{scheduled}").json()["status"] == "scheduled"
    assert client.delete(f"/broadcasts/{scheduled}").json()["deleted"] is True
    empty = created(client.post("/broadcasts", json={**body(segment_id), "html": None}))
    assert refusal(client.post(f"/broadcasts/{empty}/send")) == (422, "validation_error")
    assert client.get(f"/broadcasts/{empty}").json()["status"] == "draft"


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/broadcasts/{id}"), ("PATCH", "/broadcasts/{id}"), ("DELETE", "/broadcasts/{id}"),
    ("POST", "/broadcasts/{id}/send"), ("POST", "/broadcasts/{id}/cancel"),
    ("POST", "/broadcasts/{id}/duplicate"), ("GET", "/broadcasts/{id}/recipients?type=sent"),
    ("GET", "/broadcasts/{id}/clicked-links"),
])
def test_unknown_broadcast_is_404(client: TestClient, method: str, path: str) -> None:
    response = client.request(method, path.format(id=UNKNOWN), json={} if method != "GET" else None)
    assert refusal(response) == (404, "not_found")
    assert response.json()["message"] == "Broadcast not found"


@pytest.mark.parametrize(("query", "expected"), [
    ("", (422, "missing_required_parameter")),
    ("?type=read", (422, "validation_error")),
    ("?type=sent&bounce_type=permanent", (422, "validation_error")),
    ("?type=bounced&bounce_type=soft", (422, "validation_error")),
    ("?type=sent&after=bm9wZQ", (422, "validation_error")),
    ("?type=sent&limit=101", (422, "validation_error")),
])
def test_recipients_query_refusals(client: TestClient, query: str, expected: tuple[int, str]) -> None:
    broadcast_id = created(client.post("/broadcasts", json=body(segment(client, "All"))))
    assert refusal(client.get(f"/broadcasts/{broadcast_id}/recipients{query}")) == expected


def test_list_pagination_rules(client: TestClient) -> None:
    segment_id = segment(client, "All")
    ids = [created(client.post("/broadcasts", json=body(segment_id))) for _ in range(3)]
    page = client.get("/broadcasts?limit=2").json()
    assert ([item["id"] for item in page["data"]], page["has_more"]) == (ids[:0:-1], True)
    assert refusal(client.get("/broadcasts?limit=0")) == (422, "validation_error")
    assert refusal(client.get(f"/broadcasts?after={ids[0]}&before={ids[1]}")) == (422, "validation_error")


def test_bodies_validate_against_the_openapi_schemas(client: TestClient) -> None:
    """Nullable fields (reply_to, scheduled_at, ...) carry values here: the document marks them in the
    3.0 style that a 3.1 validator does not read."""
    segment_id = segment(client, "All")
    response = client.post("/broadcasts", json=body(segment_id, reply_to="a@b.org", name="N", text="t",
                                                    preview_text="p", topic_id=topic(client, "T")))
    broadcast_id = created(response)
    check("CreateBroadcastResponseSuccess", response.json())
    check("UpdateBroadcastResponseSuccess", client.patch(f"/broadcasts/{broadcast_id}", json={}).json())
    check("SendBroadcastResponseSuccess",
          client.post(f"/broadcasts/{broadcast_id}/send", json={"scheduled_at": "in 1 hour"}).json())
    assert client.post("/_emulator/clock/advance", json={"seconds": 3600}).status_code == 200
    check("GetBroadcastResponseSuccess", client.get(f"/broadcasts/{broadcast_id}").json())
    other = created(client.post("/broadcasts", json=body(segment_id, send=True, scheduled_at="in 1 hour")))
    check("CancelBroadcastResponseSuccess", client.post(f"/broadcasts/{other}/cancel").json())
    check("RemoveBroadcastResponseSuccess", client.delete(f"/broadcasts/{other}").json())
    recipients = client.get(f"/broadcasts/{broadcast_id}/recipients?type=sent").json()
    check("ListBroadcastRecipientsResponseSuccess", recipients)
    links = client.get(f"/broadcasts/{broadcast_id}/clicked-links").json()
    check("ListBroadcastClickedLinksResponseSuccess", links)


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/broadcasts/not-a-uuid/cancel"), ("GET", "/broadcasts/not-a-uuid/recipients?type=sent"),
    ("GET", "/broadcasts/not-a-uuid/clicked-links"),
])
def test_a_malformed_id_on_a_uuid_path_is_invalid_parameter(client: TestClient, method: str,
                                                             path: str) -> None:
    """The OpenAPI types these ids `format: uuid` (00-general §7); the other broadcast paths answer 404."""
    response = client.request(method, path)
    assert (response.status_code, response.json()) == (422, {
        "statusCode": 422, "message": "The `id` must be a valid UUID.", "name": "invalid_parameter"})
    assert refusal(client.get("/broadcasts/not-a-uuid")) == (404, "not_found")


def test_list_without_limit_returns_every_broadcast(client: TestClient) -> None:
    """Seed §4.5 rule 3: past the default page size of 20, still one page."""
    segment_id = segment(client, "All")
    ids = [created(client.post("/broadcasts", json=body(segment_id))) for _ in range(23)]
    listed = client.get("/broadcasts").json()
    assert (listed["has_more"], [item["id"] for item in listed["data"]]) == (False, ids[::-1])
    page = client.get("/broadcasts?limit=20").json()
    assert (page["has_more"], len(page["data"])) == (True, 20)
