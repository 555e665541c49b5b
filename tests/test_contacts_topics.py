"""Topics and a contact's topic subscriptions over HTTP (contacts.md §6, §7)."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from tests.contacts_helpers import NOT_FOUND, T0_MS, advance, contact, error, topic
from tests.openapi_oracle import check

TOPIC_NOT_FOUND = error(404, "not_found", "Topic not found")


def test_create_get_whole_bodies(client: TestClient) -> None:
    response = client.post("/topics", json={"name": "Product Updates", "description": "Release notes",
                                            "default_subscription": "opt_in", "visibility": "public"})
    topic_id = response.json()["id"]
    assert (response.status_code, response.json()) == (201, {"object": "topic", "id": topic_id})
    assert client.get(f"/topics/{topic_id}").json() == {
        "object": "topic", "id": topic_id, "name": "Product Updates", "description": "Release notes",
        "default_subscription": "opt_in", "visibility": "public", "created_at": T0_MS}


def test_defaults_description_null_and_private(client: TestClient) -> None:
    topic_id = topic(client, "News", "opt_out")
    got = client.get(f"/topics/{topic_id}").json()
    assert (got["description"], got["visibility"], got["default_subscription"]) == (
        None, "private", "opt_out")


@pytest.mark.parametrize(("body", "expected"), [
    ({"default_subscription": "opt_in"}, error(422, "missing_required_field", "Missing `name` field.")),
    ({"name": "N"}, error(422, "missing_required_field", "Missing `default_subscription` field.")),
    ({"name": "x" * 51, "default_subscription": "opt_in"},
     error(422, "validation_error", "The `name` field must be at most 50 characters.")),
    ({"name": "N", "description": "d" * 201, "default_subscription": "opt_in"},
     error(422, "validation_error", "The `description` field must be at most 200 characters.")),
    ({"name": "N", "default_subscription": "maybe"},
     error(422, "validation_error",
           "Invalid `default_subscription` field. Must be one of: `opt_in`, `opt_out`.")),
    ({"name": "N", "default_subscription": "opt_in", "visibility": "secret"},
     error(422, "validation_error", "Invalid `visibility` field. Must be one of: `public`, `private`.")),
])
def test_invalid_topics_are_refused(client: TestClient, body: dict[str, object],
                                    expected: dict[str, object]) -> None:
    response = client.post("/topics", json=body)
    assert (response.status_code, response.json()) == (expected["statusCode"], expected)


def test_update_and_the_immutable_default(client: TestClient) -> None:
    topic_id = topic(client, "News")
    response = client.patch(f"/topics/{topic_id}", json={"name": "Newsletter", "visibility": "public"})
    assert response.json() == {"object": "topic", "id": topic_id}
    got = client.get(f"/topics/{topic_id}").json()
    assert (got["name"], got["visibility"]) == ("Newsletter", "public")
    response = client.patch(f"/topics/{topic_id}", json={"default_subscription": "opt_out"})
    assert response.json() == error(422, "validation_error",
                                    "The `default_subscription` of a topic cannot be changed after creation.")


def test_delete_and_unknown_topics(client: TestClient) -> None:
    topic_id = topic(client, "News")
    response = client.delete(f"/topics/{topic_id}")
    assert (response.status_code, response.json()) == (
        200, {"object": "topic", "id": topic_id, "deleted": True})
    for method in ("GET", "PATCH", "DELETE"):
        response = client.request(method, f"/topics/{topic_id}", json={})
        assert (response.status_code, response.json()) == (404, TOPIC_NOT_FOUND)


def test_list_is_always_paginated_but_a_contacts_topics_only_with_limit(client: TestClient) -> None:
    ids = []
    for index in range(22):
        ids.append(topic(client, f"T{index}"))
        advance(client, 1)
    page = client.get("/topics").json()
    assert (len(page["data"]), page["has_more"]) == (20, True)
    assert [item["id"] for item in page["data"]] == ids[::-1][:20]
    rest = client.get(f"/topics?after={ids[2]}").json()
    assert ([item["id"] for item in rest["data"]], rest["has_more"]) == (ids[1::-1], False)
    contact_id = contact(client, "lin@example.org")
    every = client.get(f"/contacts/{contact_id}/topics").json()
    assert (len(every["data"]), every["has_more"]) == (22, False)
    assert client.get(f"/contacts/{contact_id}/topics?limit=20").json()["has_more"] is True


# ---- a contact's subscriptions ------------------------------------------------------------------

def test_contact_topics_apply_defaults_until_the_contact_chooses(client: TestClient) -> None:
    news = topic(client, "News", "opt_in", description="Weekly")
    advance(client, 1)
    promos = topic(client, "Promos", "opt_out")
    contact_id = contact(client, "lin+x@example.org")
    path = "/contacts/lin%2Bx%40example.org/topics"
    assert client.get(path).json() == {"object": "list", "has_more": False, "data": [
        {"id": promos, "name": "Promos", "description": None, "subscription": "opt_out"},
        {"id": news, "name": "News", "description": "Weekly", "subscription": "opt_in"}]}
    body = {"topics": [{"id": news, "subscription": "opt_out"}, {"id": promos, "subscription": "opt_in"}]}
    response = client.patch(path, json=body)
    assert (response.status_code, response.json()) == (200, {
        "object": "contact_topics", "id": contact_id, "contact_id": contact_id, "topics": body["topics"]})
    assert [item["subscription"] for item in client.get(path).json()["data"]] == ["opt_in", "opt_out"]


def test_the_sdks_bare_array_body_is_accepted(client: TestClient) -> None:
    news = topic(client, "News")
    contact_id = contact(client, "lin@example.org")
    response = client.patch(f"/contacts/{contact_id}/topics", json=[{"id": news, "subscription": "opt_out"}])
    assert response.json()["topics"] == [{"id": news, "subscription": "opt_out"}]


def test_contact_topic_errors(client: TestClient) -> None:
    news = topic(client, "News")
    contact_id = contact(client, "lin@example.org")
    path = f"/contacts/{contact_id}/topics"
    assert client.get("/contacts/nobody%40example.org/topics").json() == NOT_FOUND
    assert client.patch(path, json={}).json() == error(
        422, "missing_required_field", "Missing `topics` field.")
    assert client.patch(path, json={"topics": [{"id": "ghost", "subscription": "opt_in"}]}).json() == (
        TOPIC_NOT_FOUND)
    response = client.patch(path, json={"topics": [{"id": news, "subscription": "sometimes"}]})
    assert response.json() == error(422, "validation_error",
                                    "Invalid `subscription` field. Must be one of: `opt_in`, `opt_out`.")


def test_responses_validate_against_the_openapi(client: TestClient) -> None:
    created = client.post("/topics", json={"name": "News", "default_subscription": "opt_in",
                                           "description": "Weekly"}).json()
    check("CreateTopicResponseSuccess", created)
    check("GetTopicResponseSuccess", client.get(f"/topics/{created['id']}").json())
    check("ListTopicsResponseSuccess", client.get("/topics").json())
    check("UpdateTopicResponseSuccess", client.patch(f"/topics/{created['id']}", json={"name": "N"}).json())
    contact_id = contact(client, "lin@example.org")
    check("GetContactTopicsResponseSuccess", client.get(f"/contacts/{contact_id}/topics").json())
    check("UpdateContactTopicsResponseSuccess", client.patch(
        f"/contacts/{contact_id}/topics", json={"topics": [{"id": created["id"], "subscription": "opt_out"}]}
    ).json())
    check("RemoveTopicResponseSuccess", client.delete(f"/topics/{created['id']}").json())
