"""Every engagement and outcome event, as delivered to a real local receiver, validates against its webhook
schema in Resend's OpenAPI document (a test oracle); so does the metrics answer counting them."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from starlette.testclient import TestClient

from tests.emails_helpers import advance, send
from tests.openapi_oracle import check
from tests.webhooks_helpers import Receiver, create_hook

SCHEMAS = {
    "email.sent": "EmailSentEvent", "email.delivered": "EmailDeliveredEvent",
    "email.delivery_delayed": "EmailDeliveryDelayedEvent", "email.complained": "EmailComplainedEvent",
    "email.bounced": "EmailBouncedEvent", "email.opened": "EmailOpenedEvent",
    "email.clicked": "EmailClickedEvent", "email.failed": "EmailFailedEvent",
    "email.suppressed": "EmailSuppressedEvent",
}
HTML = '<p>Hi</p><a href="https://acme.dev/pricing">Pricing</a>'



def follow(client: TestClient, html: str, pattern: str) -> None:
    found = re.search(pattern, html)
    assert found is not None, html
    assert client.get(urlsplit(found.group(1)).path, follow_redirects=False).status_code in (200, 302)


def test_engagement_and_outcome_payloads_validate(client: TestClient, receiver: Receiver) -> None:
    create_hook(client, receiver.url, list(SCHEMAS))
    client.post("/domains", json={"name": "mail.acme.dev", "open_tracking": True, "click_tracking": True})
    for address, outcome in [("late@example.org", "delivery_delayed"), ("gone@example.org", "failed"),
                             ("full@example.org", "bounced"), ("angry@example.org", "complained")]:
        client.post("/_emulator/outcomes", json={"to": address, "outcome": outcome, "minutes": 1})
    tracked = send(client, to="lin@example.org", html=HTML)
    for address in ("late@example.org", "gone@example.org", "full@example.org", "angry@example.org"):
        send(client, to=address)
    html = client.get(f"/emails/{tracked}").json()["html"]
    follow(client, html, r'href="([^"]+/_emulator/t/click/[^"]+)"')
    follow(client, html, r'src="([^"]+/_emulator/t/open/[^"]+)"')
    advance(client, 120)
    send(client, to="full@example.org")  # now on the suppression list
    advance(client, 10)
    assert client.post("/_emulator/webhooks/flush").status_code == 200
    assert sorted(set(receiver.types())) == sorted(SCHEMAS)
    for delivery in receiver.received:
        check(SCHEMAS[delivery.json["type"]], delivery.json)
    assert client.get(f"/emails/{tracked}").json()["last_event"] == "opened"
    metrics = client.get("/emails/metrics").json()
    check("GetEmailsMetricsResponse", metrics)
    assert {key: metrics["totals"][key] for key in ("opened", "clicked", "delivery_delayed", "failed")} == {
        "opened": 1, "clicked": 1, "delivery_delayed": 1, "failed": 1}
