"""Webhook API responses and delivered payloads validate against Resend's OpenAPI document (a test oracle)."""

from __future__ import annotations

from starlette.testclient import TestClient

from emulator.app import all_ops
from tests.openapi_oracle import check, spec_operations
from tests.webhooks_helpers import Receiver, advance, create_hook


def test_every_webhooks_operation_of_the_spec_is_routed() -> None:
    routed = {op.operation_id: (op.method, op.path) for op in all_ops()}
    spec = {op_id: route for op_id, route in spec_operations().items() if op_id.startswith("webhooks/")}
    assert spec and all(routed.get(op_id) == route for op_id, route in spec.items())


def test_api_responses_validate(client: TestClient) -> None:
    created = create_hook(client, "https://example.com/hooks", ["email.sent"])
    check("CreateWebhookResponse", created)
    check("GetWebhookResponse", client.get(f"/webhooks/{created['id']}").json())
    check("ListWebhooksResponse", client.get("/webhooks").json())
    updated = client.patch(f"/webhooks/{created['id']}", json={"status": "disabled"})
    check("UpdateWebhookResponse", updated.json())
    check("DeleteWebhookResponse", client.delete(f"/webhooks/{created['id']}").json())


def test_delivered_payloads_validate(client: TestClient, receiver: Receiver) -> None:
    create_hook(client, receiver.url, ["email.sent", "email.delivered", "email.bounced", "domain.created",
                                       "domain.updated", "domain.deleted"])
    for to in ("delivered@resend.dev", "bounced@resend.dev"):
        assert client.post("/emails", json={"from": "onboarding@resend.dev", "to": [to], "subject": "Hi",
                                            "text": "Hello"}).status_code == 200
    domain = client.post("/domains", json={"name": "example.com"}).json()
    client.post(f"/domains/{domain['id']}/verify")
    client.delete(f"/domains/{domain['id']}")
    client.post("/_emulator/webhooks/flush")
    advance(client, seconds=10)
    names = {"email.sent": "EmailSentEvent", "email.delivered": "EmailDeliveredEvent",
             "email.bounced": "EmailBouncedEvent", "domain.created": "DomainCreatedEvent",
             "domain.updated": "DomainUpdatedEvent", "domain.deleted": "DomainDeletedEvent"}
    assert set(receiver.types()) == set(names)
    for got in receiver.received:
        check(names[got.json["type"]], got.json)
