"""The Suppressions API over HTTP (reference/suppressions.md; seed §2.6, §4.2, §8 for batch add)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.emails_helpers import Recorder, advance, last_event, send
from tests.openapi_oracle import check

T0_MS = "2026-05-14 09:00:00.000+00"


def add(client: TestClient, email: str) -> str:
    response = client.post("/suppressions", json={"email": email})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def error(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["name"]


def test_add_get_by_id_and_email_remove(client: TestClient) -> None:
    recorder = Recorder(client)
    created = client.post("/suppressions", json={"email": "Ada+news@Lovelace.dev"})
    assert created.status_code == 201
    suppression_id = created.json()["id"]
    assert created.json() == {"object": "suppression", "id": suppression_id}
    whole = {"object": "suppression", "id": suppression_id, "email": "ada+news@lovelace.dev",
             "origin": "manual", "source_id": None, "created_at": T0_MS}
    assert client.get(f"/suppressions/{suppression_id}").json() == whole
    assert client.get("/suppressions/ada%2Bnews%40lovelace.dev").json() == whole
    removed = client.delete("/suppressions/ada%2Bnews%40lovelace.dev")
    assert removed.json() == {"object": "suppression", "id": suppression_id, "deleted": True}
    assert error(client.get(f"/suppressions/{suppression_id}")) == (404, "not_found")
    assert [event["email"] for event in recorder.of_type("suppression.added")] == ["ada+news@lovelace.dev"]
    assert recorder.of_type("suppression.removed") == [{key: value for key, value in whole.items()
                                                        if key != "object"}]


def test_adding_an_address_twice_answers_the_same_entry(client: TestClient) -> None:
    assert add(client, "ada@lovelace.dev") == add(client, "ADA@lovelace.dev")
    assert len(client.get("/suppressions").json()["data"]) == 1


def test_batch_add_of_100_returns_one_entry_per_address_in_order(client: TestClient) -> None:
    emails = [f"user{n}@example.org" for n in range(100)]
    response = client.post("/suppressions/batch/add", json={"emails": emails})
    assert response.status_code == 200
    data = response.json()["data"]
    assert response.json() == {"data": [{"object": "suppression", "id": entry["id"]} for entry in data]}
    assert len(data) == 100 and len({entry["id"] for entry in data}) == 100
    assert [client.get(f"/suppressions/{entry['id']}").json()["email"] for entry in data] == emails


def test_batch_add_of_101_is_the_documented_422_and_writes_nothing(client: TestClient) -> None:
    response = client.post("/suppressions/batch/add",
                           json={"emails": [f"u{n}@example.org" for n in range(101)]})
    assert (response.status_code, response.json()) == (422, {
        "statusCode": 422, "message": "The `emails` field must contain between 1 and 100 items.",
        "name": "validation_error"})
    assert client.get("/suppressions").json()["data"] == []


@pytest.mark.parametrize(("body", "expected"), [
    ({}, (422, "missing_required_field")),
    ({"emails": []}, (422, "validation_error")),
    ({"emails": [f"u{n}@example.org" for n in range(101)]}, (422, "validation_error")),
    ({"emails": "ada@lovelace.dev"}, (422, "validation_error")),
    ({"emails": ["ada@lovelace.dev", "not-an-address"]}, (422, "validation_error")),
    ({"emails": [42]}, (422, "validation_error")),
])
def test_batch_add_refusals_write_nothing(client: TestClient, body: dict[str, Any],
                                          expected: tuple[int, str]) -> None:
    assert error(client.post("/suppressions/batch/add", json=body)) == expected
    assert client.get("/suppressions").json()["data"] == []


def test_batch_remove_by_emails_or_ids(client: TestClient) -> None:
    ids = [add(client, f"u{n}@example.org") for n in range(4)]
    by_email = client.post("/suppressions/batch/remove", json={"emails": ["u0@example.org", "nobody@x.org"]})
    assert by_email.json() == {"data": [{"object": "suppression", "id": ids[0], "deleted": True}]}
    by_id = client.post("/suppressions/batch/remove", json={"ids": [ids[1], ids[2], ids[1]]})
    assert by_id.json() == {"data": [{"object": "suppression", "id": ids[1], "deleted": True},
                                     {"object": "suppression", "id": ids[2], "deleted": True}]}
    assert [entry["id"] for entry in client.get("/suppressions").json()["data"]] == [ids[3]]


@pytest.mark.parametrize(("body", "expected"), [
    ({"emails": ["a@b.org"], "ids": ["x"]}, (422, "validation_error")),
    ({}, (422, "missing_required_field")),
    ({"ids": []}, (422, "validation_error")),
    ({"ids": [None]}, (422, "validation_error")),
])
def test_batch_remove_refusals(client: TestClient, body: dict[str, Any], expected: tuple[int, str]) -> None:
    add(client, "a@b.org")
    assert error(client.post("/suppressions/batch/remove", json=body)) == expected
    assert len(client.get("/suppressions").json()["data"]) == 1


@pytest.mark.parametrize(("body", "expected"), [
    ({}, (422, "missing_required_field")),
    ({"email": "nope"}, (422, "validation_error")),
    ({"email": ["a@b.org"]}, (422, "validation_error")),
])
def test_add_refusals(client: TestClient, body: dict[str, Any], expected: tuple[int, str]) -> None:
    assert error(client.post("/suppressions", json=body)) == expected


def test_unknown_ids_are_404(client: TestClient) -> None:
    assert error(client.get("/suppressions/3f1c2b8e-0000-4000-8000-000000000000")) == (404, "not_found")
    assert error(client.delete("/suppressions/nobody%40example.org")) == (404, "not_found")


def test_list_newest_first_with_origin_filter_and_pages(client: TestClient) -> None:
    ids = [add(client, f"u{n}@example.org") for n in range(3)]
    listed = client.get("/suppressions").json()
    assert [entry["id"] for entry in listed["data"]] == ids[::-1]
    first = client.get("/suppressions?limit=2").json()
    assert (len(first["data"]), first["has_more"]) == (2, True)
    rest = client.get(f"/suppressions?limit=2&after={first['data'][-1]['id']}").json()
    assert ([entry["id"] for entry in rest["data"]], rest["has_more"]) == ([ids[0]], False)
    assert client.get("/suppressions?origin=bounce").json()["data"] == []
    assert error(client.get("/suppressions?origin=spam")) == (422, "validation_error")
    assert error(client.get("/suppressions?limit=0")) == (422, "validation_error")
    assert error(client.get("/suppressions?after=x&before=y")) == (422, "validation_error")
    assert error(client.get("/suppressions?after=unknown")) == (422, "validation_error")


def test_bounces_and_complaints_are_visible_with_their_origin(client: TestClient) -> None:
    complained = send(client, to="complained@resend.dev")
    bounced = send(client, to="bounced@resend.dev")
    advance(client, 10)
    listed = client.get("/suppressions").json()["data"]
    assert sorted((entry["email"], entry["origin"], entry["source_id"]) for entry in listed) == [
        ("bounced@resend.dev", "bounce", bounced), ("complained@resend.dev", "complaint", complained)]
    only = client.get("/suppressions?origin=complaint").json()["data"]
    assert [entry["email"] for entry in only] == ["complained@resend.dev"]


def test_a_manually_suppressed_address_is_not_delivered_until_removed(client: TestClient) -> None:
    recorder = Recorder(client)
    add(client, "ada@lovelace.dev")
    first = send(client, to="ada@lovelace.dev")
    advance(client, 5)
    assert last_event(client, first) == "suppressed"
    assert recorder.types(first) == ["email.sent", "email.suppressed"]
    suppressed = recorder.data(first, "email.suppressed")
    assert suppressed["to"] == ["ada@lovelace.dev"]
    # The enum has no reason for a manual entry; the emulator reports it as a previous bounce (outcomes.py).
    assert (suppressed["suppressed"]["type"], suppressed["suppressed"]["reason"]) == (
        "OnAccountSuppressionList", "previous_bounce")
    client.delete("/suppressions/ada%40lovelace.dev")
    second = send(client, to="ada@lovelace.dev")
    advance(client, 5)
    assert last_event(client, second) == "delivered"


def test_bodies_validate_against_the_openapi_schemas(client: TestClient) -> None:
    """`source_id` is only checked non-null: the document marks it `nullable` (3.0 style) in a 3.1 file."""
    check("CreateSuppressionResponseSuccess", client.post("/suppressions", json={"email": "a@b.org"}).json())
    check("BatchAddSuppressionsResponseSuccess",
          client.post("/suppressions/batch/add", json={"emails": ["c@d.org"]}).json())
    bounced = send(client, to="bounced@resend.dev")
    advance(client, 5)
    entry = client.get("/suppressions/bounced%40resend.dev").json()
    assert entry["source_id"] == bounced
    check("GetSuppressionResponseSuccess", entry)
    check("ListSuppressionsResponseSuccess", client.get("/suppressions?origin=bounce").json())
    check("RemoveSuppressionResponseSuccess", client.delete("/suppressions/a%40b.org").json())
    check("BatchRemoveSuppressionsResponseSuccess",
          client.post("/suppressions/batch/remove", json={"emails": ["c@d.org"]}).json())
