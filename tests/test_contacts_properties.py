"""Contact properties over HTTP (seed §2.4, contacts.md §8): shape, key rules, typed fallbacks."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from tests.contacts_helpers import advance, contact, error, prop
from tests.openapi_oracle import check

PROPERTY_NOT_FOUND = error(404, "not_found", "Contact property not found")


def test_create_and_get_whole_bodies_in_the_contact_timestamp_form(client: TestClient) -> None:
    advance(client, 0.678)
    response = client.post("/contact-properties", json={
        "key": "company_name", "type": "string", "fallback_value": "Acme Corp"})
    property_id = response.json()["id"]
    assert (response.status_code, response.json()) == (201, {"object": "contact_property", "id": property_id})
    assert client.get(f"/contact-properties/{property_id}").json() == {
        "object": "contact_property", "id": property_id, "key": "company_name", "type": "string",
        "fallback_value": "Acme Corp", "created_at": "2026-05-14 09:00:00.678+00"}


def test_number_property_without_fallback(client: TestClient) -> None:
    property_id = prop(client, "seats", "number")
    got = client.get(f"/contact-properties/{property_id}").json()
    assert (got["type"], got["fallback_value"]) == ("number", None)


@pytest.mark.parametrize(("body", "expected"), [
    ({"type": "string"}, error(422, "missing_required_field", "Missing `key` field.")),
    ({"key": "plan"}, error(422, "missing_required_field", "Missing `type` field.")),
    ({"key": "has space", "type": "string"}, error(
        422, "validation_error",
        "The `key` field must be at most 50 characters and contain only letters, numbers and underscores.")),
    ({"key": "k" * 51, "type": "string"}, error(
        422, "validation_error",
        "The `key` field must be at most 50 characters and contain only letters, numbers and underscores.")),
    ({"key": "email", "type": "string"}, error(422, "validation_error", "The key `email` is reserved.")),
    ({"key": "plan", "type": "boolean"},
     error(422, "validation_error", "Invalid `type` field. Must be one of: `string`, `number`.")),
    ({"key": "plan", "type": "number", "fallback_value": "ten"}, error(
        422, "validation_error",
        "The `fallback_value` field must be a `number` to match the property type.")),
    ({"key": "plan", "type": "string", "fallback_value": 3}, error(
        422, "validation_error",
        "The `fallback_value` field must be a `string` to match the property type.")),
])
def test_invalid_properties_are_refused(client: TestClient, body: dict[str, object],
                                        expected: dict[str, object]) -> None:
    response = client.post("/contact-properties", json=body)
    assert (response.status_code, response.json()) == (expected["statusCode"], expected)


def test_keys_are_unique(client: TestClient) -> None:
    prop(client, "plan")
    response = client.post("/contact-properties", json={"key": "plan", "type": "number"})
    assert response.json() == error(422, "validation_error",
                                    "A contact property with the key `plan` already exists.")


def test_update_changes_only_the_fallback(client: TestClient) -> None:
    property_id = prop(client, "seats", "number", fallback_value=1)
    response = client.patch(f"/contact-properties/{property_id}", json={"fallback_value": 5})
    assert response.json() == {"object": "contact_property", "id": property_id}
    assert client.get(f"/contact-properties/{property_id}").json()["fallback_value"] == 5
    response = client.patch(f"/contact-properties/{property_id}", json={"fallback_value": "five"})
    assert response.status_code == 422
    response = client.patch(f"/contact-properties/{property_id}", json={"type": "string"})
    assert response.json() == error(422, "validation_error",
                                    "The `type` of a contact property cannot be changed.")
    cleared = client.patch(f"/contact-properties/{property_id}", json={"fallback_value": None})
    assert cleared.status_code == 200
    assert client.get(f"/contact-properties/{property_id}").json()["fallback_value"] is None


def test_delete_in_recorded_key_order_and_values_leave_the_contacts(client: TestClient) -> None:
    property_id = prop(client, "plan")
    prop(client, "seats", "number")
    contact_id = contact(client, "lin@example.org", properties={"plan": "pro", "seats": 2})
    response = client.delete(f"/contact-properties/{property_id}")
    assert list(response.json().items()) == [("object", "contact_property"), ("deleted", True),
                                             ("id", property_id)]
    assert client.get(f"/contacts/{contact_id}").json()["properties"] == {
        "seats": {"value": 2, "type": "number"}}
    for method in ("GET", "PATCH", "DELETE"):
        response = client.request(method, f"/contact-properties/{property_id}", json={})
        assert (response.status_code, response.json()) == (404, PROPERTY_NOT_FOUND)


def test_list_newest_first_without_object(client: TestClient) -> None:
    first = prop(client, "plan", fallback_value="free")
    advance(client, 1)
    second = prop(client, "seats", "number")
    listed = client.get("/contact-properties").json()
    assert listed == {"object": "list", "has_more": False, "data": [
        {"id": second, "key": "seats", "type": "number", "fallback_value": None,
         "created_at": "2026-05-14 09:00:01+00"},
        {"id": first, "key": "plan", "type": "string", "fallback_value": "free",
         "created_at": "2026-05-14 09:00:00+00"}]}
    assert client.get("/contact-properties?limit=1").json()["has_more"] is True


def test_responses_validate_against_the_openapi(client: TestClient) -> None:
    created = client.post("/contact-properties", json={"key": "plan", "type": "string",
                                                       "fallback_value": "free"}).json()
    check("CreateContactPropertyResponseSuccess", created)
    check("GetContactPropertyResponseSuccess", client.get(f"/contact-properties/{created['id']}").json())
    check("ListContactPropertiesResponseSuccess", client.get("/contact-properties").json())
    check("UpdateContactPropertyResponseSuccess",
          client.patch(f"/contact-properties/{created['id']}", json={"fallback_value": "x"}).json())
    removed = client.delete(f"/contact-properties/{created['id']}")
    check("RemoveContactPropertyResponseSuccess", removed.json())
