"""The UI's POST actions over httpx: only the UI's own pages can make them, they answer a 303 to the page
to show next (never off the UI), and a wrong request gets a page that says why."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

UI = "/_emulator/ui"
SAME_SITE = {"Sec-Fetch-Site": "same-origin", "Content-Type": "application/x-www-form-urlencoded"}
# What a browser sends when the user opens a page of the UI from the UI.
NAVIGATION = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
CROSS_SITE = {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site",
              "Content-Type": "application/x-www-form-urlencoded"}


def send(client: TestClient, subject: str = "Hello", **fields: Any) -> str:
    body = {"from": "a@acme.dev", "to": ["delivered@resend.dev"], "subject": subject, "text": "x", **fields}
    response = client.post("/emails", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def post(client: TestClient, path: str, form: str = "", headers: dict[str, str] = SAME_SITE) -> Any:
    return client.post(f"{UI}{path}", content=form, headers=headers, follow_redirects=False)


def unread(client: TestClient) -> list[str]:
    return [item["id"] for item in client.get("/_emulator/outbox", params={"q": "is:unread"}).json()["data"]]


def test_a_cross_site_form_cannot_delete_or_mark(client: TestClient) -> None:
    email_id = send(client)
    for path, form in [(f"/messages/{email_id}/delete", ""), ("/bulk/outbox", "scope=all&action=delete"),
                       (f"/messages/{email_id}/read", "")]:
        assert post(client, path, form, CROSS_SITE).status_code == 403, path
    assert client.get(f"/emails/{email_id}").status_code == 200 and unread(client) == [email_id]


def test_delete_answers_with_the_list_and_a_notice(client: TestClient) -> None:
    email_id = send(client)
    response = post(client, f"/messages/{email_id}/delete", f"back={UI}/%3Fq%3Dhello")
    assert (response.status_code, response.headers["location"]) == (303, f"{UI}/?q=hello&deleted=1")
    assert client.get(f"/emails/{email_id}").status_code == 404
    assert "Deleted 1 email." in client.get(response.headers["location"]).text
    assert post(client, f"/messages/{email_id}/delete").status_code == 404


def test_back_never_leaves_the_ui(client: TestClient) -> None:
    email_id = send(client)
    for back in ("https://evil.example/", "//evil.example/", "/emails"):
        response = post(client, f"/messages/{email_id}/read", f"back={back}")
        assert response.headers["location"] == f"{UI}/", back


def test_opening_a_message_reads_it_and_unread_goes_back_to_the_list(client: TestClient) -> None:
    email_id = send(client)
    assert client.get(f"{UI}/messages/{email_id}", headers=NAVIGATION).status_code == 200
    assert unread(client) == []
    response = post(client, f"/messages/{email_id}/unread")
    assert (response.status_code, response.headers["location"]) == (303, f"{UI}/")
    assert unread(client) == [email_id]


def test_bulk_actions_by_selection_and_by_search(client: TestClient) -> None:
    first, second, third = send(client, "Invoice 1"), send(client, "Invoice 2"), send(client, "Other")
    marked = post(client, "/bulk/outbox", f"scope=selected&action=read&id={first}&id={third}")
    assert marked.headers["location"] == f"{UI}/?marked=2" and unread(client) == [second]
    deleted = post(client, "/bulk/outbox", "scope=search&action=delete&q=subject%3Ainvoice")
    assert deleted.headers["location"] == f"{UI}/?deleted=2"
    assert [item["id"] for item in client.get("/_emulator/outbox").json()["data"]] == [third]


def test_wrong_bulk_requests_say_why(client: TestClient) -> None:
    send(client)
    assert post(client, "/bulk/outbox", "scope=all&action=explode").status_code == 422
    wrong = post(client, "/bulk/outbox", "scope=search&action=delete&q=foo%3Abar")
    assert wrong.status_code == 422 and "Unknown operator `foo:`" in wrong.text
    assert len(client.get("/_emulator/outbox").json()["data"]) == 1


def test_send_now_is_for_scheduled_mail_only(client: TestClient) -> None:
    later = send(client, scheduled_at="in 1 hour")
    response = post(client, f"/messages/{later}/send-now", "confirmed=yes")
    assert (response.status_code, response.headers["location"]) == (303, f"{UI}/messages/{later}")
    assert client.get(f"/emails/{later}").json()["last_event"] == "sent"
    again = post(client, f"/messages/{later}/send-now")
    assert again.status_code == 422 and "Only scheduled emails" in again.text


def test_received_mail_is_deleted_from_its_own_list(client: TestClient) -> None:
    domain = client.get("/_emulator/inbound/address").json()["domain"]
    reply = client.post("/_emulator/inbound", json={"from": "a@b.io", "to": f"x@{domain}", "subject": "s",
                                                    "text": "t"})
    email_id = reply.json()["data"][0]["id"]
    response = post(client, f"/received/{email_id}/delete")
    assert response.headers["location"] == f"{UI}/received?deleted=1"
    assert client.get(f"/emails/receiving/{email_id}").status_code == 404
