"""CSV contact imports (contacts.md §9): counts per row, progress on the emulator clock, conflicts."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.contacts_helpers import T0_MS, advance, contact, error, prop, segment, topic
from tests.openapi_oracle import check


def upload(client: TestClient, csv_text: str, **form: Any) -> Any:
    data = {key: value if isinstance(value, str) else json.dumps(value) for key, value in form.items()}
    return client.post("/contacts/imports", files={"file": ("contacts.csv", csv_text.encode(), "text/csv")},
                       data=data)


def started(client: TestClient, csv_text: str, **form: Any) -> str:
    response = upload(client, csv_text, **form)
    assert response.status_code == 201, response.text
    assert response.json() == {"object": "contact_import", "id": response.json()["id"]}
    return str(response.json()["id"])


def tick(client: TestClient, seconds: float = 1) -> None:
    advance(client, seconds)
    assert client.post("/_emulator/flush").status_code == 200


def counts(total: int, created: int = 0, updated: int = 0, skipped: int = 0,
           failed: int = 0) -> dict[str, int]:
    return {"total": total, "created": created, "updated": updated, "skipped": skipped, "failed": failed}


def test_a_thousand_rows_with_ten_bad_ones_progress_on_the_clock(client: TestClient) -> None:
    prop(client, "seats", "number")
    rows = [f"user{n}@example.com,User {n},{n}" for n in range(990)]
    bad = [f"not-an-email-{n},Bad,1" for n in range(5)] + [f"bad{n}@example.com,Bad,lots" for n in range(5)]
    rows[100:100] = bad  # bad rows sit among the good ones
    import_id = started(client, "Email,Name,Seats\n" + "\n".join(rows) + "\n", column_map={
        "email": "Email", "first_name": "Name",
        "properties": {"seats": {"column": "Seats", "type": "number"}}})
    path = f"/contacts/imports/{import_id}"
    assert client.get(path).json() == {
        "object": "contact_import", "id": import_id, "status": "queued", "created_at": T0_MS,
        "completed_at": None, "counts": counts(1000)}
    tick(client)
    halfway = client.get(path).json()
    assert (halfway["status"], halfway["counts"]) == ("in_progress", counts(1000, created=490, failed=10))
    tick(client)
    assert client.get(path).json() == {
        "object": "contact_import", "id": import_id, "status": "completed", "created_at": T0_MS,
        "completed_at": "2026-05-14 09:00:02.000+00", "counts": counts(1000, created=990, failed=10)}
    assert len(client.get("/contacts").json()["data"]) == 990
    got = client.get("/contacts/user7%40example.com").json()
    assert (got["first_name"], got["properties"]) == ("User 7", {"seats": {"value": 7, "type": "number"}})


def test_without_the_clock_moving_nothing_is_imported(client: TestClient) -> None:
    import_id = started(client, "email\na@example.com\n")
    assert client.post("/_emulator/flush").status_code == 200
    assert client.get(f"/contacts/imports/{import_id}").json()["status"] == "queued"
    assert client.get("/contacts").json()["data"] == []


def test_columns_named_like_the_fields_need_no_map_and_quoted_cells_work(client: TestClient) -> None:
    csv_text = ('email,first_name,last_name,unsubscribed\n'
                'a@example.com,"Ada, Countess","Love\nlace",true\n'
                '\n'
                'b@example.com,Bob,,no\n')
    import_id = started(client, csv_text)
    tick(client)
    assert client.get(f"/contacts/imports/{import_id}").json()["counts"] == counts(2, created=2)
    ada = client.get("/contacts/a%40example.com").json()
    assert (ada["first_name"], ada["last_name"], ada["unsubscribed"]) == ("Ada, Countess", "Love\nlace", True)
    bob = client.get("/contacts/b%40example.com").json()
    assert (bob["last_name"], bob["unsubscribed"]) == (None, False)


def test_conflicts_are_skipped_by_default_or_upserted(client: TestClient) -> None:
    contact(client, "a@example.com", first_name="Old")
    csv_text = "email,first_name\na@example.com,New\nb@example.com,Bee\nB@example.com,Again\n"
    skip_id = started(client, csv_text)
    tick(client)
    assert client.get(f"/contacts/imports/{skip_id}").json()["counts"] == counts(3, created=1, skipped=2)
    assert client.get("/contacts/a%40example.com").json()["first_name"] == "Old"
    upsert_id = started(client, csv_text, on_conflict="upsert")
    tick(client)
    assert client.get(f"/contacts/imports/{upsert_id}").json()["counts"] == counts(3, updated=3)
    assert client.get("/contacts/a%40example.com").json()["first_name"] == "New"
    assert client.get("/contacts/b%40example.com").json()["first_name"] == "Again"


def test_imported_contacts_join_segments_and_topics_without_created_events(client: TestClient) -> None:
    hook = client.post("/webhooks", json={"endpoint": "http://127.0.0.1:9/hooks",
                                          "events": ["contact.created"]}).json()
    beta, news = segment(client, "Beta"), topic(client, "News")
    started(client, "email\na@example.com\n", segments=[{"id": beta}],
            topics=[{"id": news, "subscription": "opt_out"}])
    tick(client)
    assert [c["email"] for c in client.get(f"/segments/{beta}/contacts").json()["data"]] == ["a@example.com"]
    assert client.get("/contacts/a%40example.com/topics").json()["data"][0]["subscription"] == "opt_out"
    assert client.get(f"/webhooks/{hook['id']}/events").json()["data"] == []


@pytest.mark.parametrize(("form", "csv_text", "expected"), [
    ({}, "", error(422, "validation_error", "The CSV file is empty or has no header row.")),
    ({"column_map": {"first_name": "name"}}, "email,name\n",
     error(422, "validation_error", "The `column_map` must map `email` to a column of the CSV file.")),
    ({"column_map": {"email": "Mail"}}, "email\n",
     error(422, "validation_error", "The column `Mail` mapped to `email` is not in the CSV header.")),
    ({"column_map": "{not json"}, "email\n",
     error(422, "validation_error", "The `column_map` field must be valid JSON.")),
    ({"column_map": {"email": "email", "properties": {"ghost": {"column": "email"}}}}, "email\n",
     error(422, "validation_error",
           "The property `ghost` does not exist. Create it with POST /contact-properties first.")),
    ({"on_conflict": "merge"}, "email\n",
     error(422, "validation_error", "Invalid `on_conflict` field. Must be one of: `upsert`, `skip`.")),
    ({"segments": [{"id": "nope"}]}, "email\n", error(404, "not_found", "Segment not found")),
    ({"topics": [{"id": "nope", "subscription": "opt_in"}]}, "email\n",
     error(404, "not_found", "Topic not found")),
])
def test_invalid_imports_are_refused_whole(client: TestClient, form: dict[str, Any], csv_text: str,
                                           expected: dict[str, Any]) -> None:
    response = upload(client, csv_text, **form)
    assert (response.status_code, response.json()) == (expected["statusCode"], expected)
    assert client.get("/contacts/imports").json()["data"] == []


def test_property_type_must_match_and_file_is_required(client: TestClient) -> None:
    prop(client, "plan")
    response = upload(client, "email,plan\n", column_map={
        "email": "email", "properties": {"plan": {"column": "plan", "type": "number"}}})
    assert response.json() == error(422, "validation_error",
                                    "The property `plan` is a `string`, not a `number`.")
    response = client.post("/contacts/imports", files={"other": ("x.csv", b"email\n", "text/csv")})
    assert response.json() == error(422, "missing_required_field", "Missing `file` field.")


def test_get_and_list_imports(client: TestClient) -> None:
    first = started(client, "email\na@example.com\n")
    tick(client)
    second = started(client, "email\nb@example.com\n")
    listed = client.get("/contacts/imports").json()
    assert [item["id"] for item in listed["data"]] == [second, first]
    assert listed["data"][1]["counts"] == counts(1, created=1)
    completed = client.get("/contacts/imports?status=completed").json()
    assert [item["id"] for item in completed["data"]] == [first]
    assert client.get("/contacts/imports?status=done").json()["name"] == "validation_error"
    response = client.get("/contacts/imports/not-a-uuid")
    assert response.json() == error(422, "invalid_parameter", "The `id` must be a valid UUID.")
    response = client.get("/contacts/imports/00000000-0000-0000-0000-000000000000")
    assert response.json() == error(404, "not_found", "Contact import not found")


def test_responses_validate_against_the_openapi(client: TestClient) -> None:
    response = upload(client, "email\na@example.com\n")
    check("CreateContactImportResponseSuccess", response.json())
    tick(client)
    check("GetContactImportResponseSuccess", client.get(f"/contacts/imports/{response.json()['id']}").json())
    check("ListContactImportsResponseSuccess", client.get("/contacts/imports").json())


def test_unreadable_csv_is_refused_and_comma_only_lines_are_not_rows(client: TestClient) -> None:
    response = upload(client, "email,notes\na@example.com,\"" + "x" * 200_000 + "\"\n")
    assert response.json() == error(422, "validation_error",
                                    "The CSV file could not be read: field larger than field limit (131072).")
    import_id = started(client, "email,first_name\n,\na@example.com,A\n , \n")
    tick(client)
    assert client.get(f"/contacts/imports/{import_id}").json()["counts"] == counts(1, created=1)


@pytest.mark.parametrize("path", ["/emails", "/emails/batch", "/contacts", "/segments"])
def test_multipart_is_only_for_imports_elsewhere_a_400(client: TestClient, path: str) -> None:
    response = client.post(path, files={"file": ("a.csv", b"email\n", "text/csv")},
                           headers={"Idempotency-Key": "k-1"})
    assert (response.status_code, response.json()["name"]) == (400, "validation_error")


def test_a_broken_multipart_body_is_a_400(client: TestClient) -> None:
    response = client.post("/contacts/imports", content=b"garbage",
                           headers={"content-type": "multipart/form-data; boundary=zzz"})
    assert response.json() == error(400, "validation_error",
                                    "The request body is not valid multipart/form-data.")


@pytest.mark.parametrize("newline", [b"\r\n", b"\n"])
def test_multipart_as_clients_write_it_is_read(client: TestClient, newline: bytes) -> None:
    # A quoted boundary, a preamble, a base64 part, a field without a closing delimiter after it.
    csv_b64 = base64.b64encode("email,first_name\nzoe@example.com,Zoë\n".encode()).decode()
    body = newline.join([
        b"preamble to ignore", b'--"b:1"', b'Content-Disposition: form-data; name="file"; filename="c.csv"',
        b"Content-Type: text/csv", b"Content-Transfer-Encoding: base64", b"", csv_b64.encode(), b'--"b:1"',
        b'Content-Disposition: form-data; name="on_conflict"', b"", b"upsert", b""])
    body = body.replace(b'--"b:1"', b"--b:1")
    response = client.post("/contacts/imports", content=body,
                           headers={"content-type": 'multipart/form-data; boundary="b:1"'})
    assert response.status_code == 201, response.text
    tick(client)
    assert client.get("/contacts/zoe%40example.com").json()["first_name"] == "Zoë"


def test_a_segment_deleted_during_the_import_is_not_joined(client: TestClient) -> None:
    hook = client.post("/webhooks", json={"endpoint": "http://127.0.0.1:9/hooks",
                                          "events": ["contact.updated"]}).json()
    beta, news = segment(client, "Beta"), segment(client, "News")
    started(client, "email\na@example.com\n", segments=[{"id": beta}, {"id": news}])
    client.delete(f"/segments/{beta}")
    tick(client)
    client.patch("/contacts/a%40example.com", json={"first_name": "A"})
    event_id = client.get(f"/webhooks/{hook['id']}/events").json()["data"][0]["id"]
    payload = client.get(f"/webhooks/{hook['id']}/events/{event_id}").json()["payload"]
    assert payload["data"]["segment_ids"] == [news]


def test_one_advance_runs_every_step_at_the_documented_pace(client: TestClient) -> None:
    segment_id = segment(client, "Everyone")
    rows = "".join(f"user{n}@example.com,User {n}\n" for n in range(2200))
    import_id = started(client, "email,first_name\n" + rows, segments=[{"id": segment_id}])
    advance(client, 60)  # five steps of 500 rows, one a second after the first at upload + 1 s
    assert client.get(f"/contacts/imports/{import_id}").json() == {
        "object": "contact_import", "id": import_id, "status": "completed", "created_at": T0_MS,
        "completed_at": "2026-05-14 09:00:05.000+00", "counts": counts(2200, created=2200)}
    members = client.get(f"/segments/{segment_id}/contacts", params={"limit": 1}).json()
    assert members["data"][0]["email"] == "user2199@example.com"
    # One advance catches up every part, each stamped with the second it fell due.
    stamps = {n: client.get(f"/contacts/user{n}%40example.com").json()["created_at"]
              for n in (0, 499, 500, 2199)}
    assert stamps == {0: "2026-05-14 09:00:01+00", 499: "2026-05-14 09:00:01+00",
                      500: "2026-05-14 09:00:02+00", 2199: "2026-05-14 09:00:05+00"}
    emails = [item["email"] for item in client.get("/contacts").json()["data"]]
    assert sorted(emails) == sorted(f"user{n}@example.com" for n in range(2200))


def test_rows_spanning_the_stored_parts_are_read_whole_once(client: TestClient) -> None:
    # Multi-line quoted cells and multi-byte characters, across several stored parts (64 KiB each) and
    # more than one read window (256 KiB).
    names = [f"Zoë «{n}»\nline two, still quoted" for n in range(6000)]
    rows = "".join(f'"{name}",p{n}@example.com\r\n' for n, name in enumerate(names))
    import_id = started(client, "Name,Email\r\n" + rows, column_map={"email": "Email", "first_name": "Name"})
    assert len(rows.encode()) > 4 * 64 * 1024
    advance(client, 13)
    body = client.get(f"/contacts/imports/{import_id}").json()
    assert (body["status"], body["counts"]) == ("completed", counts(6000, created=6000))
    for n in (0, 1311, 2047, 3999, 5999):
        assert client.get(f"/contacts/p{n}%40example.com").json()["first_name"] == names[n]
