"""Numbers a person can type into a URL (issue 36, finding 6): Unicode digits (`²`, `٣`, `０`), 23 digits,
signs and fractions. The API refuses them with a 422 and a sentence; the UI's own cursors and notices
read them as absent and show the page as it would be without them. Nothing changes either way."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.contacts_helpers import contact, prop, segment
from tests.test_broadcasts_send import broadcast, flush
from tests.test_contacts_imports import started, tick

UI = "/_emulator/ui"
# Each is a "number" str.isdigit() accepts or int() reads, and none is a whole number in range.
GARBAGE = ["²", "٣", "０", "9" * 23, "-1", "1.5", " ", "1e3"]


def send(client: TestClient, subject: str) -> str:
    body = {"from": "a@acme.dev", "to": ["delivered@resend.dev"], "subject": subject, "text": "x"}
    response = client.post("/emails", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def outbox_ids(client: TestClient) -> list[str]:
    return [item["id"] for item in client.get("/_emulator/outbox").json()["data"]]


def shown(client: TestClient, path: str, **params: str) -> str:
    response = client.get(path, params=params)
    assert response.status_code == 200, (path, params, response.text[:300])
    return response.text


@pytest.mark.parametrize("value", GARBAGE)
@pytest.mark.parametrize("name", ["older_than", "newer_than"])
def test_the_outbox_ignores_a_cursor_that_is_not_its_own(client: TestClient, name: str, value: str) -> None:
    send(client, "First news")
    send(client, "Second news")
    before = outbox_ids(client)
    for path in (f"{UI}/", f"{UI}/received", f"{UI}/rows/outbox", f"{UI}/rows/received"):
        text = shown(client, path, **{name: value})
        if path == f"{UI}/":
            assert "First news" in text and "Second news" in text
    assert outbox_ids(client) == before


@pytest.mark.parametrize("value", GARBAGE)
@pytest.mark.parametrize("name", ["deleted", "marked"])
def test_a_notice_with_a_count_no_page_made_is_left_out(client: TestClient, name: str, value: str) -> None:
    send(client, "Still here")
    before = outbox_ids(client)
    text = shown(client, f"{UI}/", **{name: value})
    assert "Still here" in text and "Deleted " not in text and "Marked " not in text
    assert outbox_ids(client) == before
    assert "Deleted 3 emails." in shown(client, f"{UI}/", deleted="3")  # the page's own notice still shows


@pytest.mark.parametrize("value", GARBAGE)
def test_the_contacts_page_ignores_a_cursor_that_is_not_its_own(client: TestClient, value: str) -> None:
    contact(client, "ada@example.org", first_name="Ada")
    listed = client.get("/contacts").json()
    text = shown(client, f"{UI}/contacts", before=value)
    assert "ada@example.org" in text
    assert client.get("/contacts").json() == listed


def sent_broadcast(client: TestClient) -> str:
    segment_id = segment(client, "All")
    for name in ("ada", "bob"):
        contact_id = contact(client, f"{name}@example.org")
        assert client.post(f"/contacts/{contact_id}/segments/{segment_id}").status_code == 200
    broadcast_id = broadcast(client, segment_id, send=True)
    flush(client)
    return broadcast_id


@pytest.mark.parametrize("value", GARBAGE)
def test_a_broadcast_page_ignores_a_cursor_that_is_not_its_own(client: TestClient, value: str) -> None:
    broadcast_id = sent_broadcast(client)
    before = client.get(f"/broadcasts/{broadcast_id}").json()
    text = shown(client, f"{UI}/broadcasts/{broadcast_id}", after=value)
    assert "ada@example.org" in text and "bob@example.org" in text
    assert client.get(f"/broadcasts/{broadcast_id}").json() == before


def offset_cursor(number: str) -> str:
    return base64.b64encode(f"offset:{number}".encode()).decode().rstrip("=")


@pytest.mark.parametrize("value", GARBAGE)
@pytest.mark.parametrize("side", ["after", "before"])
def test_the_recipients_list_refuses_a_cursor_with_a_number_it_never_made(client: TestClient, side: str,
                                                                          value: str) -> None:
    broadcast_id = sent_broadcast(client)
    path = f"/broadcasts/{broadcast_id}/recipients"
    listed: Any = client.get(path, params={"type": "sent"}).json()
    response = client.get(path, params={"type": "sent", "limit": "1", side: offset_cursor(value)})
    assert response.status_code == 422, response.text
    assert response.json() == {
        "statusCode": 422, "name": "validation_error",
        "message": "The pagination cursor references an object that does not exist."
                   " See https://resend.com/docs/pagination for more information."}
    assert client.get(path, params={"type": "sent"}).json() == listed
    after = client.get(path, params={"type": "sent", "limit": "1", side: offset_cursor("0")})
    assert after.status_code == 200  # the list's own cursors still page


# Beyond finding 6: what the numbers fuzz (tests/test_fuzz_numbers.py) and a review of every reader found.

def refusal(response: Any) -> str:
    assert response.status_code == 422, response.text
    body = response.json()
    assert (body["statusCode"], body["name"]) == (422, "validation_error"), body
    assert body["message"].endswith("."), body  # a sentence
    return str(body["message"])


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "٢٠٢٦-٠٥-١٤"])
def test_a_scheduled_send_past_either_end_of_the_calendar_is_refused(client: TestClient, value: str) -> None:
    body = {"from": "a@acme.dev", "to": ["delivered@resend.dev"], "subject": "s", "text": "t",
            "scheduled_at": value}
    assert refusal(client.post("/emails", json=body)).startswith("Invalid `scheduled_at` field.")
    assert outbox_ids(client) == []


@pytest.mark.parametrize(("name", "value"), [
    ("end_date", "9999-12-31"), ("end_date", "0001-01-01T00:00:00+01:00"),
    ("start_date", "9999-12-31T23:00:00-05:00"), ("start_date", "٢٠٢٦-٠٥-١٤")])
def test_metrics_refuse_a_date_past_either_end_of_the_calendar(client: TestClient, name: str,
                                                               value: str) -> None:
    send(client, "Counted")
    before = client.get("/emails/metrics").json()
    assert f"`{name}`" in refusal(client.get("/emails/metrics", params={name: value}))
    assert client.get("/emails/metrics").json() == before


@pytest.mark.parametrize("value", ["٣", "1_0", "1e1", "inf", "nan", "-1", "301", "9" * 23])
def test_waiting_for_an_email_takes_plain_seconds_only(client: TestClient, value: str) -> None:
    message = refusal(client.get("/_emulator/outbox/wait", params={"timeout": value, "to": "x@acme.dev"}))
    assert message.startswith("`timeout` must be a number from 0 to 300")
    assert outbox_ids(client) == []


@pytest.mark.parametrize("value", ["٣h", "２ hours", "1٫5h"])
def test_a_share_link_lifetime_in_unicode_digits_is_refused(client: TestClient, value: str) -> None:
    email_id = send(client, "Shared")
    response = client.post(f"/emails/{email_id}/share", json={"expires_in": value})
    assert refusal(response).startswith("Invalid `expires_in` field.")
    assert client.post(f"/emails/{email_id}/share", json={"expires_in": "3h"}).status_code == 200


def test_an_account_name_no_cookie_can_hold_shows_the_page_and_is_not_remembered(client: TestClient) -> None:
    send(client, "Default account mail")
    response = client.get(f"{UI}/", params={"account": "٠"})
    assert response.status_code == 200 and "emulator_ui_account" not in response.headers.get("set-cookie", "")
    assert "Default account mail" in shown(client, f"{UI}/")


@pytest.mark.parametrize(("kind", "value"), [("number", "٣"), ("number", "1_0"), ("number", "inf"),
                                             ("number", "nan"), ("date", "0001-01-01T00:00:00+01:00"),
                                             ("date", "٢٠٢٦-٠٥-١٤")])
def test_an_event_payload_takes_ascii_numbers_and_real_dates(client: TestClient, kind: str,
                                                              value: str) -> None:
    assert client.post("/events", json={"name": "paid", "schema": {"field": kind}}).status_code == 201
    body = {"event": "paid", "email": "a@b.org", "payload": {"field": value}}
    assert refusal(client.post("/events/send", json=body)).startswith("Invalid `payload.field`")
    assert client.get("/contacts").json()["data"] == []
    good = "2026-05-14T09:00:00Z" if kind == "date" else "-2.5"
    assert client.post("/events/send", json={**body, "payload": {"field": good}}).status_code == 202


def test_a_csv_number_in_unicode_digits_fails_its_row_only(client: TestClient) -> None:
    prop(client, "seats", "number")
    rows = ["a@example.com,3", "b@example.com,٣", "c@example.com,1_0", "d@example.com,inf",
            "e@example.com,1e3"]
    seats = {"seats": {"column": "seats", "type": "number"}}
    import_id = started(client, "email,seats\n" + "\n".join(rows) + "\n",
                        column_map={"email": "email", "properties": seats})
    tick(client)
    counts = client.get(f"/contacts/imports/{import_id}").json()["counts"]
    assert (counts["created"], counts["failed"]) == (2, 3)
    values = {item["email"]: client.get(f"/contacts/{item['id']}").json()["properties"]["seats"]["value"]
              for item in client.get("/contacts").json()["data"]}
    assert values == {"a@example.com": 3, "e@example.com": 1000}


def test_metrics_refuse_a_first_day_that_starts_before_the_year_1_in_utc(client: TestClient) -> None:
    params = {"start_date": "0001-01-01", "timezone": "Asia/Tokyo"}  # UTC+9:19 then: the day began in year 0
    assert "outside the years 1 to 9999" in refusal(client.get("/emails/metrics", params=params))
    first_days = {"start_date": "0001-01-01", "end_date": "0001-01-05"}
    assert client.get("/emails/metrics", params=first_days).status_code == 200
