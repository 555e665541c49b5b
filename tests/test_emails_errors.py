"""One test per documented error case of emails.md: status and `name` (and the message where documented)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.app import create_app
from emulator.resources.emails import fields as email_fields
from tests.conftest import AUTH, make_settings
from tests.emails_helpers import email, send, verified_domain

ADDRESS_RULE = ("The email address needs to follow the `email@example.com` or `Name <email@example.com>`"
                " format.")


def expect(response: Any, status: int, name: str, message: str | None = None) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert list(body) == ["statusCode", "message", "name"]
    assert (body["statusCode"], body["name"]) == (status, name)
    if message is not None:
        assert body["message"] == message


SEND_CASES: list[tuple[str, dict[str, Any], int, str, str | None]] = [
    ("missing from", email(**{"from": None}), 422, "missing_required_field", "Missing `from` field."),
    ("missing to", email(to=None), 422, "missing_required_field", "Missing `to` field."),
    ("empty to", email(to=[]), 422, "missing_required_field", "Missing `to` field."),
    ("missing subject", email(subject=None), 422, "missing_required_field", "Missing `subject` field."),
    ("bad from", email(**{"from": "not an address"}), 422, "validation_error",
     f"Invalid `from` field. {ADDRESS_RULE}"),
    ("bad to", email(to=["ok@example.org", "nope"]), 422, "validation_error",
     f"Invalid `to` field. {ADDRESS_RULE}"),
    ("bad cc", email(cc="x@"), 422, "validation_error", f"Invalid `cc` field. {ADDRESS_RULE}"),
    ("bad bcc", email(bcc=["<x@y.co"]), 422, "validation_error", f"Invalid `bcc` field. {ADDRESS_RULE}"),
    ("bad reply_to", email(reply_to="a b@c.co"), 422, "validation_error", None),
    ("to not string", email(to=42), 422, "validation_error", None),
    ("51 to", email(to=[f"u{i}@example.org" for i in range(51)]), 422, "validation_error", None),
    ("51 cc", email(cc=[f"u{i}@example.org" for i in range(51)]), 422, "validation_error", None),
    ("51 bcc", email(bcc=[f"u{i}@example.org" for i in range(51)]), 422, "validation_error", None),
    ("subject not string", email(subject=5), 422, "validation_error", None),
    ("no content", email(html=None), 422, "validation_error", None),
    ("html not string", email(html=["x"]), 422, "validation_error", None),
    ("template with html", email(template={"id": "welcome"}), 422, "validation_error", None),
    ("template with text", email(html=None, text="x", template={"id": "welcome"}), 422, "validation_error",
     None),
    ("headers not object", email(headers=["X-A: 1"]), 422, "validation_error", None),
    ("header value not string", email(headers={"X-A": 1}), 422, "validation_error", None),
    ("header line break", email(headers={"X-A": "1\r\nBcc: x@y.co"}), 422, "validation_error", None),
    ("tag charset", email(tags=[{"name": "bad name", "value": "v"}]), 422, "validation_error", None),
    ("tag value charset", email(tags=[{"name": "n", "value": "é"}]), 422, "validation_error", None),
    ("tag too long", email(tags=[{"name": "n" * 257, "value": "v"}]), 422, "validation_error", None),
    ("76 tags", email(tags=[{"name": f"t{i}", "value": "v"} for i in range(76)]), 422, "validation_error",
     None),
    ("tag without value", email(tags=[{"name": "n"}]), 422, "missing_required_field", None),
    ("scheduled_at unparsable", email(scheduled_at="someday"), 422, "validation_error", None),
    ("scheduled_at past", email(scheduled_at="2026-05-13T09:00:00Z"), 422, "validation_error", None),
    ("scheduled_at beyond 30 days", email(scheduled_at="2026-06-14T09:00:01Z"), 422, "validation_error",
     None),
    ("scheduled_at natural beyond 30 days", email(scheduled_at="in 31 days"), 422, "validation_error", None),
    ("attachment without content or path", email(attachments=[{"filename": "a.pdf"}]), 422,
     "invalid_attachment", "Attachment must have either a `content` or `path`."),
    ("blocked extension", email(attachments=[{"filename": "run.exe", "content": "aGk="}]), 422,
     "invalid_attachment", None),
    ("content_id too long",
     email(attachments=[{"filename": "a.png", "content": "aGk=", "content_id": "c" * 128}]),
     422, "invalid_attachment", None),
    ("content not base64", email(attachments=[{"filename": "a.txt", "content": "***"}]), 422,
     "invalid_attachment", None),
    ("content bytes out of range", email(attachments=[{"filename": "a.txt", "content": [256]}]), 422,
     "invalid_attachment", None),
    ("body not an object", [], 422, "validation_error", None),  # type: ignore[list-item]
]


@pytest.mark.parametrize(("case", "body", "status", "name", "message"), SEND_CASES,
                         ids=[case[0] for case in SEND_CASES])
def test_send_rejects(client: TestClient, case: str, body: Any, status: int, name: str,
                      message: str | None) -> None:
    expect(client.post("/emails", json=body), status, name, message)
    assert client.get("/emails").json()["data"] == []


def test_unknown_template(client: TestClient) -> None:
    expect(client.post("/emails", json=email(html=None, template={"id": "nope"})), 404, "not_found")


def test_too_large(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    # The 40 MB rule, scaled down so the test does not ship 40 MB.
    monkeypatch.setattr(email_fields, "MAX_EMAIL_BYTES", 1000)
    body = email(attachments=[{"filename": "big.bin", "content": list(b"x" * 800)}])
    expect(client.post("/emails", json=body), 422, "validation_error")


def test_malformed_json(client: TestClient) -> None:
    response = client.post("/emails", content=b"{nope", headers={"content-type": "application/json"})
    expect(response, 400, "validation_error")


def test_missing_api_key(client: TestClient) -> None:
    expect(client.post("/emails", json=email(), headers={"Authorization": ""}), 401, "missing_api_key",
           "Missing API key in the authorization header.")


def test_invalid_api_key(client: TestClient) -> None:
    expect(client.post("/emails", json=email(), headers={"Authorization": "Bearer re_nope"}), 403,
           "invalid_api_key")


def test_invalid_idempotency_key(client: TestClient) -> None:
    expect(client.post("/emails", json=email(), headers={"Idempotency-Key": "k" * 257}), 400,
           "invalid_idempotency_key")


def test_idempotency_conflict(client: TestClient) -> None:
    client.post("/emails", json=email(), headers={"Idempotency-Key": "a"})
    expect(client.post("/emails", json=email(subject="x"), headers={"Idempotency-Key": "a"}), 409,
           "invalid_idempotent_request")


def test_rate_limit() -> None:
    with TestClient(create_app(make_settings(rate_limit=1)), headers=AUTH) as limited:
        assert limited.post("/emails", json=email()).status_code == 200
        # The window is one wall-clock second: on a loaded machine it may turn between two requests.
        responses = [limited.post("/emails", json=email()) for _ in range(3)]
        refused = [r for r in responses if r.status_code == 429]
        assert refused, [r.status_code for r in responses]
        expect(refused[0], 429, "rate_limit_exceeded")


# ---- sender-domain rules -----------------------------------------------------------------------

@pytest.fixture
def strict() -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(strict_domains=True)), headers=AUTH) as test_client:
        yield test_client


def test_strict_unverified_domain(strict: TestClient) -> None:
    expect(strict.post("/emails", json=email()), 403, "validation_error",
           "The `mail.acme.dev` domain is not verified. Please, add and verify your domain.")


def test_strict_exact_domain_match(strict: TestClient) -> None:
    verified_domain(strict, "mail.acme.dev")
    assert strict.post("/emails", json=email()).status_code == 200
    expect(strict.post("/emails", json=email(**{"from": "a@acme.dev"})), 403, "validation_error")


def test_strict_resend_dev_to_foreign_recipient(strict: TestClient) -> None:
    body = email(**{"from": "onboarding@resend.dev"}, to="someone@gmail.com")
    expect(strict.post("/emails", json=body), 403, "validation_error")
    ok = email(**{"from": "onboarding@resend.dev"}, to="bounced+x@resend.dev")
    assert strict.post("/emails", json=ok).status_code == 200


def test_strict_reserved_recipient_domain(strict: TestClient) -> None:
    verified_domain(strict, "mail.acme.dev")
    expect(strict.post("/emails", json=email(to="user@example.com")), 422, "validation_error")


def test_default_accepts_any_sender_domain(client: TestClient) -> None:
    body = email(**{"from": "x@unverified.test"}, to="u@example.com")
    assert client.post("/emails", json=body).status_code == 200


def test_domain_restricted_key(client: TestClient) -> None:
    domain = client.post("/domains", json={"name": "mail.acme.dev"}).json()["id"]
    key = client.post("/api-keys", json={"name": "k", "permission": "sending_access",
                                         "domain_id": domain}).json()
    headers = {"Authorization": f"Bearer {key['token']}"}
    assert client.post("/emails", json=email(), headers=headers).status_code == 200
    expect(client.post("/emails", json=email(**{"from": "x@other.dev"}), headers=headers), 403,
           "validation_error",
           "This API key is restricted to send emails from the `mail.acme.dev` domain only.")
    expect(client.get("/emails", headers=headers), 401, "restricted_api_key")
    assert client.post("/emails/batch", json=[email()], headers=headers).status_code == 200


# ---- batch -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "headers"), [
    ([], {}),
    ([email()] * 101, {}),
    ({"emails": [email()]}, {}),
    ([email(attachments=[{"filename": "a.txt", "content": "aGk="}])], {}),
    ([email()], {"x-batch-validation": "lenient"}),
], ids=["empty", "101", "not array", "attachments", "bad mode"])
def test_batch_rejects(client: TestClient, body: Any, headers: dict[str, str]) -> None:
    expect(client.post("/emails/batch", json=body, headers=headers), 422, "validation_error")


def test_batch_strict_reports_first_failure(client: TestClient) -> None:
    body = [email(), email(to="nope"), email(subject=None)]
    expect(client.post("/emails/batch", json=body), 422, "validation_error",
           f"Invalid `to` field. {ADDRESS_RULE}")
    assert client.get("/emails").json()["data"] == []


# ---- reading and changing ----------------------------------------------------------------------

UNKNOWN = "00000000-0000-4000-8000-000000000000"


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/emails/{id}"), ("PATCH", "/emails/{id}"), ("POST", "/emails/{id}/cancel"),
    ("POST", "/emails/{id}/share"), ("GET", "/emails/{id}/attachments"),
    ("GET", "/emails/{id}/attachments/" + UNKNOWN),
])
def test_unknown_email(client: TestClient, method: str, path: str) -> None:
    body = {"scheduled_at": "in 1 hour"} if method == "PATCH" else {}
    expect(client.request(method, path.format(id=UNKNOWN), json=body), 404, "not_found", "Email not found")


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/emails/abc"), ("PATCH", "/emails/abc"), ("POST", "/emails/abc/cancel"),
    ("POST", "/emails/abc/share"), ("GET", "/emails/abc/attachments"),
])
def test_non_uuid_email_id(client: TestClient, method: str, path: str) -> None:
    expect(client.request(method, path, json={"scheduled_at": "in 1 hour"}), 422, "invalid_parameter",
           "The `id` must be a valid UUID.")


def test_unknown_attachment(client: TestClient) -> None:
    email_id = send(client)
    expect(client.get(f"/emails/{email_id}/attachments/{UNKNOWN}"), 404, "not_found", "Attachment not found")
    expect(client.get(f"/emails/{email_id}/attachments/xyz"), 422, "invalid_parameter")


@pytest.mark.parametrize("query", [{"limit": "0"}, {"limit": "101"}, {"limit": "x"},
                                   {"after": UNKNOWN, "before": UNKNOWN}, {"after": "not-an-id"}])
def test_list_pagination_errors(client: TestClient, query: dict[str, str]) -> None:
    send(client)
    expect(client.get("/emails", params=query), 422, "validation_error")


@pytest.mark.parametrize("query", [{"limit": "0"}, {"after": "nope"}, {"after": UNKNOWN, "before": UNKNOWN}])
def test_attachment_list_pagination_errors(client: TestClient, query: dict[str, str]) -> None:
    email_id = send(client)
    expect(client.get(f"/emails/{email_id}/attachments", params=query), 422, "validation_error")


def test_reschedule_sent_email(client: TestClient) -> None:
    response = client.patch(f"/emails/{send(client)}", json={"scheduled_at": "in 1 hour"})
    expect(response, 422, "validation_error")


def test_reschedule_canceled_email(client: TestClient) -> None:
    email_id = send(client, scheduled_at="in 1 hour")
    assert client.post(f"/emails/{email_id}/cancel").status_code == 200
    expect(client.patch(f"/emails/{email_id}", json={"scheduled_at": "in 2 hours"}), 422, "validation_error",
           "This email has been canceled and cannot be rescheduled.")


def test_reschedule_without_time(client: TestClient) -> None:
    email_id = send(client, scheduled_at="in 1 hour")
    expect(client.patch(f"/emails/{email_id}", json={"id": email_id}), 422, "missing_required_field")


def test_reschedule_bad_time(client: TestClient) -> None:
    email_id = send(client, scheduled_at="in 1 hour")
    expect(client.patch(f"/emails/{email_id}", json={"scheduled_at": "in 40 days"}), 422, "validation_error")


def test_cancel_not_scheduled(client: TestClient) -> None:
    expect(client.post(f"/emails/{send(client)}/cancel"), 422, "validation_error")


def test_cancel_twice(client: TestClient) -> None:
    email_id = send(client, scheduled_at="in 1 hour")
    client.post(f"/emails/{email_id}/cancel")
    expect(client.post(f"/emails/{email_id}/cancel"), 422, "validation_error")


@pytest.mark.parametrize("expires_in", ["49h", "3 days", "soon", 10, "0m"])
def test_share_bad_expiry(client: TestClient, expires_in: Any) -> None:
    response = client.post(f"/emails/{send(client)}/share", json={"expires_in": expires_in})
    expect(response, 422, "validation_error")


@pytest.mark.parametrize("query", [
    {"metrics": "sent,nope"}, {"dimensions": "country"}, {"granularity": "yearly"},
    {"dimensions": "email,broadcast"}, {"dimensions": "email", "broadcast_id": UNKNOWN},
    {"start_date": "2026-05-14", "end_date": "2026-05-01"}, {"start_date": "yesterday"},
    {"timezone": "Mars/Olympus"}, {"email_id": "nope"},
    {"start_date": "2020-01-01", "granularity": "hourly"},
])
def test_metrics_rejects(client: TestClient, query: dict[str, str]) -> None:
    expect(client.get("/emails/metrics", params=query), 422, "validation_error")
