"""Segments, audiences (the same record) and contact ↔ segment membership over HTTP (contacts.md §3-§5)."""

from __future__ import annotations

from starlette.testclient import TestClient

from tests.contacts_helpers import NOT_FOUND, T0, T0_MS, advance, contact, error, segment
from tests.openapi_oracle import check

MISSING_NAME = error(422, "missing_required_field", "Missing `name` field.")
AUDIENCE_NOT_FOUND = error(404, "not_found", "Audience not found")
GHOST = "00000000-0000-0000-0000-000000000000"


def test_create_and_get_whole_bodies(client: TestClient) -> None:
    advance(client, 0.256406)
    response = client.post("/segments", json={"name": "Beta testers"})
    segment_id = response.json()["id"]
    assert (response.status_code, response.json()) == (
        201, {"object": "segment", "id": segment_id, "name": "Beta testers"})
    assert client.get(f"/segments/{segment_id}").json() == {
        "object": "segment", "id": segment_id, "name": "Beta testers",
        "created_at": "2026-05-14 09:00:00.256406+00"}


def test_missing_name_and_unknown_ids_as_recorded(client: TestClient) -> None:
    for path in ("/segments", "/audiences"):
        response = client.post(path, json={})
        assert (response.status_code, response.json()) == (422, MISSING_NAME)
    response = client.get(f"/segments/{GHOST}")
    assert (response.status_code, response.json()) == (404, AUDIENCE_NOT_FOUND)
    response = client.delete(f"/segments/{GHOST}")
    assert (response.status_code, response.json()) == (
        200, {"object": "segment", "id": GHOST, "deleted": True})


def test_empty_name_is_refused(client: TestClient) -> None:
    response = client.post("/segments", json={"name": "  "})
    assert response.json() == error(422, "validation_error", "The `name` field must not be empty.")


def test_list_all_without_limit_newest_first_and_paged_with_it(client: TestClient) -> None:
    ids = []
    for index in range(23):
        ids.append(segment(client, f"S{index}"))
        advance(client, 1)
    listed = client.get("/segments").json()
    assert (listed["has_more"], [item["id"] for item in listed["data"]]) == (False, ids[::-1])
    assert listed["data"][-1] == {"id": ids[0], "name": "S0", "created_at": T0}
    page = client.get("/segments?limit=20").json()
    assert (page["has_more"], len(page["data"])) == (True, 20)


def test_update_renames(client: TestClient) -> None:
    segment_id = segment(client, "Beta")
    response = client.patch(f"/segments/{segment_id}", json={"name": "Gamma"})
    assert response.json() == {"object": "segment", "id": segment_id}
    assert client.get(f"/segments/{segment_id}").json()["name"] == "Gamma"
    assert client.patch(f"/segments/{GHOST}", json={"name": "x"}).json() == AUDIENCE_NOT_FOUND


def test_delete_keeps_the_contacts_and_drops_the_memberships(client: TestClient) -> None:
    segment_id = segment(client, "Beta")
    contact_id = contact(client, "lin@example.org", segments=[{"id": segment_id}])
    response = client.delete(f"/segments/{segment_id}")
    assert response.json() == {"object": "segment", "id": segment_id, "deleted": True}
    assert client.get(f"/contacts/{contact_id}").status_code == 200
    assert client.get(f"/contacts/{contact_id}/segments").json()["data"] == []


def test_segment_contacts_list(client: TestClient) -> None:
    segment_id = segment(client, "Beta")
    first = contact(client, "a@example.org", segments=[{"id": segment_id}])
    advance(client, 1)
    second = contact(client, "b@example.org", segments=[{"id": segment_id}])
    contact(client, "c@example.org")
    listed = client.get(f"/segments/{segment_id}/contacts").json()
    assert [item["id"] for item in listed["data"]] == [second, first]
    assert listed["data"][1] == {"id": first, "created_at": T0, "email": "a@example.org",
                                 "unsubscribed": False, "first_name": None, "last_name": None}
    assert client.get(f"/segments/{GHOST}/contacts").json() == AUDIENCE_NOT_FOUND


# ---- audiences (deprecated) -------------------------------------------------------------------

def test_audiences_are_segments_under_another_name(client: TestClient) -> None:
    response = client.post("/audiences", json={"name": "Registered Users"})
    audience_id = response.json()["id"]
    assert (response.status_code, response.json()) == (
        201, {"object": "audience", "id": audience_id, "name": "Registered Users"})
    assert client.get(f"/audiences/{audience_id}").json() == {
        "object": "audience", "id": audience_id, "name": "Registered Users", "created_at": T0}
    assert client.get(f"/segments/{audience_id}").json()["object"] == "segment"
    assert client.get("/audiences").json() == {
        "object": "list", "has_more": False,
        "data": [{"id": audience_id, "name": "Registered Users", "created_at": T0}]}
    assert client.delete(f"/audiences/{audience_id}").json() == {
        "object": "audience", "id": audience_id, "deleted": True}
    assert client.get(f"/audiences/{audience_id}").json() == AUDIENCE_NOT_FOUND


# ---- membership ----------------------------------------------------------------------------------

def test_add_list_remove_by_email_with_plus_and_at(client: TestClient) -> None:
    segment_id = segment(client, "Registered Users")
    contact_id = contact(client, "lin+beta@example.org")
    path = "/contacts/lin%2Bbeta%40example.org/segments"
    response = client.post(f"{path}/{segment_id}")
    assert (response.status_code, response.json()) == (200, {
        "object": "contact_segment", "id": segment_id, "contact_id": contact_id, "segment_id": segment_id})
    assert client.post(f"{path}/{segment_id}").status_code == 200  # idempotent
    advance(client, 0.977)
    assert client.get(path).json() == {"object": "list", "has_more": False, "data": [
        {"id": segment_id, "name": "Registered Users", "created_at": T0_MS}]}
    response = client.delete(f"{path}/{segment_id}")
    assert response.json() == {"object": "contact_segment", "id": contact_id, "contact_id": contact_id,
                               "segment_id": segment_id, "deleted": True}
    assert client.get(path).json()["data"] == []


def test_membership_created_at_is_when_the_contact_joined_in_milliseconds(client: TestClient) -> None:
    segment_id = segment(client, "Beta")
    contact_id = contact(client, "lin@example.org")
    advance(client, 1.9775)
    client.post(f"/contacts/{contact_id}/segments/{segment_id}")
    assert client.get(f"/contacts/{contact_id}/segments").json()["data"][0]["created_at"] == (
        "2026-05-14 09:00:01.977+00")


def test_membership_of_unknown_contact_or_segment(client: TestClient) -> None:
    segment_id = segment(client, "Beta")
    contact_id = contact(client, "lin@example.org")
    for method in ("post", "delete"):
        response = client.request(method.upper(), f"/contacts/nobody%40example.org/segments/{segment_id}")
        assert (response.status_code, response.json()) == (404, NOT_FOUND)
        response = client.request(method.upper(), f"/contacts/{contact_id}/segments/{GHOST}")
        assert (response.status_code, response.json()) == (404, AUDIENCE_NOT_FOUND)
    assert client.get("/contacts/nobody%40example.org/segments").json() == NOT_FOUND


def test_contact_segments_paginate(client: TestClient) -> None:
    contact_id = contact(client, "lin@example.org")
    ids = []
    for index in range(3):
        ids.append(segment(client, f"S{index}"))
        client.post(f"/contacts/{contact_id}/segments/{ids[-1]}")
        advance(client, 1)
    page = client.get(f"/contacts/{contact_id}/segments?limit=2").json()
    assert ([item["id"] for item in page["data"]], page["has_more"]) == ([ids[2], ids[1]], True)
    rest = client.get(f"/contacts/{contact_id}/segments?limit=2&after={ids[1]}").json()
    assert ([item["id"] for item in rest["data"]], rest["has_more"]) == ([ids[0]], False)


def test_responses_validate_against_the_openapi(client: TestClient) -> None:
    created = client.post("/segments", json={"name": "Beta"}).json()
    check("CreateSegmentResponseSuccess", created)
    check("GetSegmentResponseSuccess", client.get(f"/segments/{created['id']}").json())
    check("ListSegmentsResponseSuccess", client.get("/segments").json())
    contact_id = contact(client, "lin@example.org")
    check("AddContactToSegmentResponseSuccess",
          client.post(f"/contacts/{contact_id}/segments/{created['id']}").json())
    check("ListContactSegmentsResponseSuccess", client.get(f"/contacts/{contact_id}/segments").json())
    check("RemoveContactFromSegmentResponseSuccess",
          client.delete(f"/contacts/{contact_id}/segments/{created['id']}").json())
    check("RemoveSegmentResponseSuccess", client.delete(f"/segments/{created['id']}").json())
    audience = client.post("/audiences", json={"name": "A"}).json()
    check("CreateAudienceResponseSuccess", audience)
    check("GetAudienceResponseSuccess", client.get(f"/audiences/{audience['id']}").json())
    check("ListAudiencesResponseSuccess", client.get("/audiences").json())
    check("RemoveAudienceResponseSuccess", client.delete(f"/audiences/{audience['id']}").json())


# ---- metrics -------------------------------------------------------------------------------------

def test_metrics_totals_count_each_contact_once(client: TestClient) -> None:
    beta = segment(client, "Beta")
    advance(client, 1)
    news = segment(client, "News")
    advance(client, 1)
    segment(client, "Empty")
    contact(client, "a@example.org", segments=[{"id": beta}, {"id": news}])
    contact(client, "b@example.org", unsubscribed=True, segments=[{"id": news}])
    contact(client, "c@example.org")
    assert client.get("/segments/metrics").json() == {
        "object": "metrics", "metrics": ["all_contacts", "subscribers", "unsubscribers"],
        "dimensions": [],
        "totals": {"all_contacts": 3, "subscribers": 2, "unsubscribers": 1}}
    got = client.get(f"/segments/metrics?dimensions=segment&filter[segment_id]={beta},{news}"
                     "&metrics=all_contacts&metrics=unsubscribers").json()
    assert got == {
        "object": "metrics", "metrics": ["all_contacts", "unsubscribers"],
        "dimensions": ["segment"],
        "totals": {"all_contacts": 2, "unsubscribers": 1},
        "data": [{"id": news, "name": "News", "all_contacts": 2, "unsubscribers": 1},
                 {"id": beta, "name": "Beta", "all_contacts": 1, "unsubscribers": 0}]}


def test_metrics_rows_sort_by_date_or_by_a_metric(client: TestClient) -> None:
    beta = segment(client, "Beta")
    advance(client, 1)
    news = segment(client, "News")
    advance(client, 1)
    segment(client, "Empty")
    contact(client, "a@example.org", segments=[{"id": beta}, {"id": news}])
    contact(client, "b@example.org", segments=[{"id": beta}])

    def names(query: str) -> list[tuple[str, int]]:
        data = client.get(f"/segments/metrics?dimensions=segment&metrics=subscribers{query}").json()["data"]
        return [(row["name"], row["subscribers"]) for row in data]

    assert names("") == [("Empty", 0), ("News", 1), ("Beta", 2)]
    assert names("&sort_order=asc") == [("Beta", 2), ("News", 1), ("Empty", 0)]
    assert names("&sort_by=subscribers") == [("Beta", 2), ("News", 1), ("Empty", 0)]
    assert names("&sort_by=all_contacts&sort_order=asc") == [("Empty", 0), ("News", 1), ("Beta", 2)]


def test_metrics_refuse_unknown_names_and_segments(client: TestClient) -> None:
    response = client.get("/segments/metrics?metrics=opens")
    assert response.json() == error(
        422, "validation_error",
        "Invalid `metrics` parameter. Must be one of: `all_contacts`, `subscribers`, `unsubscribers`.")
    response = client.get("/segments/metrics?dimensions=topic")
    assert response.json() == error(422, "validation_error",
                                    "Invalid `dimensions` parameter. Must be one of: `segment`.")
    assert client.get(f"/segments/metrics?filter[segment_id]={GHOST}").json() == AUDIENCE_NOT_FOUND
    response = client.get("/segments/metrics?sort_by=name")
    assert response.json() == error(
        422, "validation_error",
        "Invalid `sort_by` parameter."
        " Must be one of: `date`, `all_contacts`, `subscribers`, `unsubscribers`.")


def test_removing_a_membership_that_does_not_exist_is_a_200(client: TestClient) -> None:
    segment_id = segment(client, "Beta")
    contact_id = contact(client, "lin@example.org")
    response = client.delete(f"/contacts/{contact_id}/segments/{segment_id}")
    assert (response.status_code, response.json()) == (200, {
        "object": "contact_segment", "id": contact_id, "contact_id": contact_id, "segment_id": segment_id,
        "deleted": True})
