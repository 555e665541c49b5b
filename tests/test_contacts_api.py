"""Contacts over HTTP: whole bodies as recorded from the real service [rec], by id or email, the legacy
audience-scoped paths, and every documented error of contacts.md §1-§2."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from tests.contacts_helpers import NOT_FOUND, T0, advance, contact, error, prop, segment, topic
from tests.openapi_oracle import check

MISSING_EMAIL = error(422, "missing_required_field", "Missing `email` field.")


def test_create_answers_201_with_object_and_id(client: TestClient) -> None:
    response = client.post("/contacts", json={"email": "lin@example.org"})
    assert response.status_code == 201
    assert response.json() == {"object": "contact", "id": response.json()["id"]}
    assert list(response.json()) == ["object", "id"]


def test_get_whole_body_nulls_and_empty_properties(client: TestClient) -> None:
    contact_id = contact(client, "lin@example.org")
    assert client.get(f"/contacts/{contact_id}").json() == {
        "object": "contact", "id": contact_id, "email": "lin@example.org", "first_name": None,
        "last_name": None, "created_at": T0, "unsubscribed": False, "properties": {}}


def test_get_by_id_and_by_email_give_the_same_body_in_recorded_key_order(client: TestClient) -> None:
    prop(client, "plan")
    advance(client, 0.782119)
    contact_id = contact(client, "lin@example.org", first_name="Lin", properties={"plan": "pro"})
    by_id = client.get(f"/contacts/{contact_id}").json()
    assert by_id == client.get("/contacts/lin%40example.org").json()
    assert list(by_id.items()) == [
        ("object", "contact"), ("id", contact_id), ("email", "lin@example.org"), ("first_name", "Lin"),
        ("last_name", None), ("created_at", "2026-05-14 09:00:00.782119+00"), ("unsubscribed", False),
        ("properties", {"plan": {"value": "pro", "type": "string"}})]


def test_timestamps_trim_trailing_zeros_of_the_fraction(client: TestClient) -> None:
    advance(client, 0.84216)
    contact_id = contact(client, "lin@example.org")
    assert client.get(f"/contacts/{contact_id}").json()["created_at"] == "2026-05-14 09:00:00.84216+00"


def test_email_path_with_plus_and_at_url_encoded(client: TestClient) -> None:
    contact_id = contact(client, "lin+news@example.org")
    assert client.get("/contacts/lin%2Bnews%40example.org").json()["id"] == contact_id
    assert client.get("/contacts/LIN%2BNEWS%40Example.org").json()["id"] == contact_id


def test_unknown_contact_is_the_recorded_404(client: TestClient) -> None:
    for path in ("/contacts/00000000-0000-0000-0000-000000000000", "/contacts/nobody%40example.org"):
        response = client.get(path)
        assert (response.status_code, response.json()) == (404, NOT_FOUND)
    response = client.patch("/contacts/nobody%40example.org", json={"first_name": "X"})
    assert (response.status_code, response.json()) == (404, NOT_FOUND)


def test_missing_email_is_the_recorded_422(client: TestClient) -> None:
    for body in ({}, {"first_name": "Lin"}, {"email": None}):
        response = client.post("/contacts", json=body)
        assert (response.status_code, response.json()) == (422, MISSING_EMAIL)


EMAIL_FORMAT = "Invalid `email` field. The email address needs to follow the `email@example.com` format."


@pytest.mark.parametrize(("body", "expected"), [
    ({"email": "not-an-address"}, error(422, "validation_error", EMAIL_FORMAT)),
    ({"email": 42}, error(422, "validation_error", EMAIL_FORMAT)),
    ({"email": "a@b.dev", "first_name": 1},
     error(422, "validation_error", "The `first_name` field must be a `string`.")),
    ({"email": "a@b.dev", "unsubscribed": "yes"},
     error(422, "validation_error", "The `unsubscribed` field must be a `boolean`.")),
    ({"email": "a@b.dev", "properties": []},
     error(422, "validation_error", "The `properties` field must be an `object`.")),
    ({"email": "a@b.dev", "properties": {"ghost": 1}}, error(
        422, "validation_error",
        "The property `ghost` does not exist. Create it with POST /contact-properties first.")),
    ({"email": "a@b.dev", "segments": "x"},
     error(422, "validation_error", "The `segments` field must be an `array`.")),
    ({"email": "a@b.dev", "segments": [{"name": "x"}]},
     error(422, "validation_error", "Each item of `segments` must be an `object` with a string `id`.")),
    ({"email": "a@b.dev", "topics": "x"},
     error(422, "validation_error", "The `topics` field must be an `array`.")),
    ({"email": "a@b.dev", "topics": [{"id": "t"}]},
     error(422, "missing_required_field", "Missing `subscription` field.")),
])
def test_invalid_create_bodies(client: TestClient, body: dict[str, object],
                               expected: dict[str, object]) -> None:
    response = client.post("/contacts", json=body)
    assert (response.status_code, response.json()) == (expected["statusCode"], expected)
    assert client.get("/contacts").json()["data"] == []


def test_pagination_refusals_of_the_contacts_list(client: TestClient) -> None:
    """Seed §4.5 rules 1-3 on this list, whole bodies (the messages come from core/pages.py)."""
    docs = "See https://resend.com/docs/pagination for more information."
    for query, message in [
        ("limit=101", f"The pagination limit must be a number between 1 and 100. {docs}"),
        ("after=a&before=b", f"You can only pass one of `before` or `after` for pagination. {docs}"),
        ("after=00000000-0000-0000-0000-000000000000",
         f"The pagination cursor references an object that does not exist. {docs}"),
    ]:
        response = client.get(f"/contacts?{query}")
        assert (response.status_code, response.json()) == (422, error(422, "validation_error", message))


def test_property_values_must_match_the_property_type(client: TestClient) -> None:
    prop(client, "seats", "number")
    response = client.post("/contacts", json={"email": "a@b.dev", "properties": {"seats": "ten"}})
    assert response.json() == error(422, "validation_error", "The property `seats` must be a `number`.")
    contact_id = contact(client, "a@b.dev", properties={"seats": 10})
    assert client.get(f"/contacts/{contact_id}").json()["properties"] == {
        "seats": {"value": 10, "type": "number"}}


def test_unknown_segment_or_topic_at_create(client: TestClient) -> None:
    response = client.post("/contacts", json={"email": "a@b.dev", "segments": [{"id": "nope"}]})
    assert (response.status_code, response.json()) == (404, error(404, "not_found", "Segment not found"))
    response = client.post("/contacts", json={"email": "a@b.dev",
                                              "topics": [{"id": "nope", "subscription": "opt_in"}]})
    assert (response.status_code, response.json()) == (404, error(404, "not_found", "Topic not found"))


def test_segments_and_topics_given_at_create(client: TestClient) -> None:
    beta, news = segment(client, "Beta"), segment(client, "News")
    releases = topic(client, "Releases")
    contact_id = contact(client, "a@b.dev", segments=[{"id": beta}, news],
                         topics=[{"id": releases, "subscription": "opt_out"}])
    joined = client.get(f"/contacts/{contact_id}/segments").json()["data"]
    assert {item["id"] for item in joined} == {beta, news}
    assert client.get(f"/contacts/{contact_id}/topics").json()["data"][0]["subscription"] == "opt_out"


def test_duplicate_email_keeps_the_contact_and_joins_new_segments(client: TestClient) -> None:
    beta = segment(client, "Beta")
    first = contact(client, "lin@example.org", first_name="Lin")
    again = contact(client, "LIN@example.org", first_name="Other", segments=[{"id": beta}])
    assert again == first
    got = client.get(f"/contacts/{first}").json()
    assert (got["email"], got["first_name"]) == ("lin@example.org", "Lin")
    assert [c["id"] for c in client.get(f"/segments/{beta}/contacts").json()["data"]] == [first]
    assert len(client.get("/contacts").json()["data"]) == 1


def test_update_answers_object_and_id_and_changes_fields(client: TestClient) -> None:
    prop(client, "plan")
    prop(client, "seats", "number")
    contact_id = contact(client, "lin@example.org", properties={"plan": "free", "seats": 1})
    advance(client, 5)
    response = client.patch("/contacts/lin%40example.org", json={
        "first_name": "Lin", "last_name": "Wu", "unsubscribed": True,
        "properties": {"plan": None, "seats": 3}})
    assert (response.status_code, response.json()) == (200, {"object": "contact", "id": contact_id})
    assert client.get(f"/contacts/{contact_id}").json() == {
        "object": "contact", "id": contact_id, "email": "lin@example.org", "first_name": "Lin",
        "last_name": "Wu", "created_at": T0, "unsubscribed": True,
        "properties": {"seats": {"value": 3, "type": "number"}}}


def test_update_can_change_the_email_but_not_to_a_taken_one(client: TestClient) -> None:
    contact_id = contact(client, "lin@example.org")
    contact(client, "taken@example.org")
    response = client.patch(f"/contacts/{contact_id}", json={"email": "taken@example.org"})
    assert response.json() == error(422, "validation_error",
                                    "A contact with the email `taken@example.org` already exists.")
    assert client.patch(f"/contacts/{contact_id}", json={"email": "new@example.org"}).status_code == 200
    assert client.get("/contacts/new%40example.org").json()["id"] == contact_id


def test_update_ignores_the_id_and_email_the_python_sdk_echoes(client: TestClient) -> None:
    contact_id = contact(client, "lin@example.org")
    response = client.patch("/contacts/lin%40example.org", json={
        "id": None, "email": "lin@example.org", "first_name": "Lin"})
    assert response.json() == {"object": "contact", "id": contact_id}


def test_delete_by_email_answers_the_contact_id(client: TestClient) -> None:
    contact_id = contact(client, "lin@example.org")
    response = client.delete("/contacts/lin%40example.org")
    assert (response.status_code, response.json()) == (
        200, {"object": "contact", "contact": contact_id, "deleted": True})
    assert list(response.json()) == ["object", "contact", "deleted"]
    assert client.get(f"/contacts/{contact_id}").status_code == 404


def test_deleting_a_contact_that_never_existed_is_200(client: TestClient) -> None:
    ghost = "00000000-0000-0000-0000-000000000000"
    response = client.delete(f"/contacts/{ghost}")
    assert (response.status_code, response.json()) == (200, {"object": "contact", "contact": ghost,
                                                              "deleted": True})


def test_list_is_newest_first_in_recorded_key_order_and_all_without_limit(client: TestClient) -> None:
    ids = []
    for index in range(25):
        ids.append(contact(client, f"user{index}@example.org"))
        advance(client, 1)
    listed = client.get("/contacts").json()
    assert (listed["object"], listed["has_more"]) == ("list", False)
    assert [item["id"] for item in listed["data"]] == ids[::-1]
    assert listed["data"][-1] == {"id": ids[0], "created_at": T0, "email": "user0@example.org",
                                  "unsubscribed": False, "first_name": None, "last_name": None}
    assert list(listed["data"][0]) == ["id", "created_at", "email", "unsubscribed", "first_name", "last_name"]


def test_list_pages_with_limit_and_cursors(client: TestClient) -> None:
    ids = [contact(client, f"user{index}@example.org") for index in range(5)][::-1]
    first = client.get("/contacts?limit=2").json()
    assert ([item["id"] for item in first["data"]], first["has_more"]) == (ids[:2], True)
    second = client.get(f"/contacts?limit=2&after={ids[1]}").json()
    assert [item["id"] for item in second["data"]] == ids[2:4]
    back = client.get(f"/contacts?limit=2&before={ids[2]}").json()
    assert [item["id"] for item in back["data"]] == ids[:2]
    response = client.get("/contacts?limit=0")
    assert (response.status_code, response.json()["name"]) == (422, "validation_error")


def test_list_filtered_by_segment(client: TestClient) -> None:
    beta = segment(client, "Beta")
    member = contact(client, "in@example.org", segments=[{"id": beta}])
    contact(client, "out@example.org")
    assert [c["id"] for c in client.get(f"/contacts?segment_id={beta}").json()["data"]] == [member]
    response = client.get("/contacts?segment_id=nope")
    assert (response.status_code, response.json()) == (404, error(404, "not_found", "Audience not found"))


# ---- legacy audience-scoped paths [rec] ---------------------------------------------------------

def test_audience_paths_work_on_the_same_rows(client: TestClient) -> None:
    audience = client.post("/audiences", json={"name": "Registered Users"}).json()["id"]
    response = client.post(f"/audiences/{audience}/contacts", json={
        "email": "lin@example.org", "first_name": "Lin", "audience_id": audience})
    assert response.status_code == 201
    contact_id = response.json()["id"]
    assert response.json() == {"object": "contact", "id": contact_id}
    got = client.get(f"/audiences/{audience}/contacts/lin%40example.org").json()
    assert got == client.get(f"/contacts/{contact_id}").json()
    listed = client.get(f"/audiences/{audience}/contacts").json()
    assert listed == {"object": "list", "has_more": False, "data": [
        {"id": contact_id, "created_at": T0, "email": "lin@example.org", "unsubscribed": False,
         "first_name": "Lin", "last_name": None}]}
    assert [c["id"] for c in client.get(f"/segments/{audience}/contacts").json()["data"]] == [contact_id]
    response = client.patch(f"/audiences/{audience}/contacts/{contact_id}", json={"unsubscribed": True})
    assert response.json() == {"object": "contact", "id": contact_id}
    assert client.get(f"/contacts/{contact_id}").json()["unsubscribed"] is True


def test_audience_contact_outside_the_audience_is_not_found(client: TestClient) -> None:
    audience = client.post("/audiences", json={"name": "Registered Users"}).json()["id"]
    contact(client, "lin@example.org")
    response = client.get(f"/audiences/{audience}/contacts/lin%40example.org")
    assert (response.status_code, response.json()) == (404, NOT_FOUND)


def test_audience_delete_echoes_the_identifier_as_given(client: TestClient) -> None:
    audience = client.post("/audiences", json={"name": "A"}).json()["id"]
    client.post(f"/audiences/{audience}/contacts", json={"email": "lin@example.org"})
    response = client.delete(f"/audiences/{audience}/contacts/lin%40example.org")
    assert response.json() == {"object": "contact", "contact": "lin@example.org", "deleted": True}
    ghost = "00000000-0000-0000-0000-000000000000"
    response = client.delete(f"/audiences/{audience}/contacts/{ghost}")
    assert (response.status_code, response.json()) == (200, {"object": "contact", "contact": ghost,
                                                              "deleted": True})


def test_audience_create_missing_email_and_unknown_audience(client: TestClient) -> None:
    audience = client.post("/audiences", json={"name": "A"}).json()["id"]
    response = client.post(f"/audiences/{audience}/contacts", json={})
    assert (response.status_code, response.json()) == (422, MISSING_EMAIL)
    response = client.post("/audiences/nope/contacts", json={"email": "a@b.dev"})
    assert (response.status_code, response.json()) == (404, error(404, "not_found", "Audience not found"))


# ---- isolation and the OpenAPI oracle --------------------------------------------------------------

def test_contacts_of_one_key_are_invisible_to_another() -> None:
    from emulator.app import create_app
    from tests.conftest import make_settings

    with TestClient(create_app(make_settings(isolate_keys=True))) as raw:
        one, two = {"Authorization": "Bearer re_tenant_one"}, {"Authorization": "Bearer re_tenant_two"}
        contact_id = raw.post("/contacts", json={"email": "a@b.dev"}, headers=one).json()["id"]
        assert raw.get(f"/contacts/{contact_id}", headers=two).status_code == 404
        assert raw.get("/contacts", headers=two).json()["data"] == []
        assert raw.post("/contacts", json={"email": "a@b.dev"}, headers=two).json()["id"] != contact_id


def test_responses_validate_against_the_openapi(client: TestClient) -> None:
    prop(client, "plan")
    # Names are given: unset ones are null as recorded [rec], which the OpenAPI's `string` does not allow.
    created = client.post("/contacts", json={"email": "lin@example.org", "first_name": "Lin",
                                             "last_name": "Wu", "properties": {"plan": "pro"}})
    check("CreateContactResponseSuccess", created.json())
    contact_id = created.json()["id"]
    check("GetContactResponseSuccess", client.get(f"/contacts/{contact_id}").json())
    check("ListContactsResponseSuccess", client.get("/contacts").json())
    updated = client.patch(f"/contacts/{contact_id}", json={"first_name": "L"})
    check("UpdateContactResponseSuccess", updated.json())
    # The delete body carries `contact`, not the OpenAPI's `id`: the recordings override it [rec].
    removed = client.delete(f"/contacts/{contact_id}").json()
    assert set(removed) == {"object", "contact", "deleted"}


def test_update_with_null_unsubscribed_leaves_it_and_null_names_clear(client: TestClient) -> None:
    contact_id = contact(client, "lin@example.org", first_name="Lin", unsubscribed=True)
    client.patch(f"/contacts/{contact_id}", json={"unsubscribed": None, "first_name": None})
    got = client.get(f"/contacts/{contact_id}").json()
    assert (got["unsubscribed"], got["first_name"]) == (True, None)
