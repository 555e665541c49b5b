"""The Logs API: requests read back newest first, bodies as sent with every secret redacted."""

from __future__ import annotations

from starlette.testclient import TestClient

from tests.conftest import KEY

MAIL = {"from": "Acme <hello@acme.dev>", "to": ["lin@example.org"], "subject": "Hi", "html": "<p>Hi</p>"}


def test_requests_are_listed_newest_first_and_read_back_whole(client: TestClient) -> None:
    sent = client.post("/emails", json=MAIL, headers={"user-agent": "resend-python:2.5.0"})
    client.get("/domains/3f1c2b8e-0000-4000-8000-000000000000")
    listed = client.get("/logs").json()
    assert [(item["method"], item["endpoint"], item["response_status"]) for item in listed["data"]] == [
        ("GET", "/domains/3f1c2b8e-0000-4000-8000-000000000000", 404), ("POST", "/emails", 200)]
    post = listed["data"][1]
    assert post["user_agent"] == "resend-python:2.5.0"
    assert client.get(f"/logs/{post['id']}").json() == {
        "object": "log", **post, "request_body": MAIL, "response_body": {"id": sent.json()["id"]}}
    assert post["created_at"] == "2026-05-14 09:00:00.000+00"


def test_no_secret_reaches_a_stored_body(client: TestClient) -> None:
    created = client.post("/api-keys", json={"name": "ci"}).json()
    hook = client.post("/webhooks", json={"endpoint": "http://127.0.0.1:9/h",
                                          "events": ["email.sent"]}).json()
    client.get(f"/webhooks/{hook['id']}")
    logs = [client.get(f"/logs/{item['id']}").json() for item in client.get("/logs").json()["data"]]
    stored = repr(logs)
    assert created["token"] not in stored and hook["signing_secret"] not in stored and KEY not in stored
    key_log = next(log for log in logs if log["endpoint"] == "/api-keys")
    assert key_log["response_body"] == {**created, "token": "[redacted]"}


def test_logs_belong_to_the_account_that_made_them(client: TestClient) -> None:
    client.post("/emails", json=MAIL)
    other = client.get("/logs", headers={"Authorization": "Bearer re_someone_else"})
    assert other.status_code in (200, 401, 403)
    if other.status_code == 200:
        assert all(item["endpoint"] != "/emails" for item in other.json()["data"])


def test_pagination_and_errors(client: TestClient) -> None:
    for _ in range(3):
        client.get("/domains")
    first = client.get("/logs?limit=2").json()
    assert (len(first["data"]), first["has_more"]) == (2, True)
    assert client.get("/logs?limit=0").json()["name"] == "validation_error"
    assert client.get("/logs/not-a-uuid").json()["name"] == "invalid_parameter"
    missing = client.get("/logs/3f1c2b8e-0000-4000-8000-000000000000")
    assert (missing.status_code, missing.json()["message"]) == (404, "Log not found")
