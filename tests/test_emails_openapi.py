"""Email API responses and event payloads against Resend's OpenAPI document (a test oracle).

Where emails.md deliberately departs from the OpenAPI types (`cc`/`bcc`/`reply_to`/`scheduled_at` are
`null` when never given, as the docs' list example shows), those null fields are set aside before
validation; every other field must match the spec's schema.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.app import all_ops
from tests import openapi_oracle as oracle
from tests.emails_helpers import PNG, Recorder, advance, email, send
from tests.openapi_oracle import spec_operations

NULL_BY_REFERENCE = {"cc", "bcc", "reply_to", "scheduled_at"}


def without_reference_nulls(body: Any) -> Any:
    if isinstance(body, dict):
        return {k: without_reference_nulls(v) for k, v in body.items()
                if not (k in NULL_BY_REFERENCE and v is None)}
    if isinstance(body, list):
        return [without_reference_nulls(v) for v in body]
    return body


def check(schema_name: str, body: Any) -> None:
    oracle.check(schema_name, without_reference_nulls(body))


def test_every_sending_operation_of_the_spec_is_routed() -> None:
    routed = {(op.method, op.path): op.operation_id for op in all_ops()}
    spec = {op_id: route for op_id, route in spec_operations().items()
            if op_id.startswith("emails/") and "receiving" not in op_id}
    assert len(spec) == 10
    assert all(routed.get(route) == op_id for op_id, route in spec.items())


def test_responses_validate(client: TestClient) -> None:
    logo = {"filename": "logo.png", "content": base64.b64encode(PNG).decode(), "content_id": "logo"}
    sent = client.post("/emails", json=email(cc="a@example.org", tags=[{"name": "a", "value": "b"}],
                                             attachments=[logo]))
    check("SendEmailResponse", sent.json())
    email_id = sent.json()["id"]
    check("Email", client.get(f"/emails/{email_id}").json())
    check("ListEmailsResponse", client.get("/emails").json())
    files = client.get(f"/emails/{email_id}/attachments").json()
    check("ListAttachmentsResponse", files)
    one = client.get(f"/emails/{email_id}/attachments/{files['data'][0]['id']}")
    check("RetrievedAttachment", one.json())
    check("ShareEmailResponse", client.post(f"/emails/{email_id}/share", json={}).json())
    check("CreateBatchEmailsResponse", client.post("/emails/batch", json=[email()]).json())
    scheduled = send(client, scheduled_at="in 1 hour")
    check("Email", client.patch(f"/emails/{scheduled}", json={"scheduled_at": "in 2 hours"}).json())
    check("Email", client.post(f"/emails/{scheduled}/cancel").json())
    metrics = client.get("/emails/metrics", params={"dimensions": "period,domain"})
    check("GetEmailsMetricsResponse", metrics.json())


@pytest.mark.parametrize(("to", "event", "schema"), [
    ("delivered@resend.dev", "email.sent", "OutboundEmailEventData"),
    ("delivered@resend.dev", "email.delivered", "OutboundEmailEventData"),
    ("complained@resend.dev", "email.complained", "OutboundEmailEventData"),
    ("bounced@resend.dev", "email.bounced", "EmailBouncedEventData"),
    ("suppressed@resend.dev", "email.suppressed", "EmailSuppressedEventData"),
])
def test_event_payloads_validate(client: TestClient, to: str, event: str, schema: str) -> None:
    recorder = Recorder(client)
    email_id = send(client, to=to, tags=[{"name": "k", "value": "v"}], headers={"X-Ref": "1"})
    advance(client, 10)
    check(schema, recorder.data(email_id, event))


def test_scheduled_and_failed_payloads_validate(client: TestClient) -> None:
    recorder = Recorder(client)
    key = client.post("/api-keys", json={"name": "temp"}).json()
    email_id = client.post("/emails", json=email(scheduled_at="in 1 hour"),
                           headers={"Authorization": f"Bearer {key['token']}"}).json()["id"]
    check("OutboundEmailEventData", recorder.data(email_id, "email.scheduled"))
    client.delete(f"/api-keys/{key['id']}")
    advance(client, 3600)
    check("EmailFailedEventData", recorder.data(email_id, "email.failed"))
