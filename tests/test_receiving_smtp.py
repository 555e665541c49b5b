"""SMTP mail to a receiving address shows up through the Receiving endpoints and fires `email.received`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from svix.webhooks import Webhook

from tests.smtp_helpers import PDF, PNG, LiveEmulator, email_id_of, rich_message, transmit

INBOUND = "inbound.acme.dev"


class Receiver:
    """A real local HTTP endpoint that records webhook deliveries."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handle(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                outer.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handle)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def live() -> Iterator[LiveEmulator]:
    # A real clock: webhook verifiers check the signature's timestamp against the wall clock.
    with LiveEmulator(clock="real", clock_start=None) as server:
        yield server


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    endpoint = Receiver()
    yield endpoint
    endpoint.close()


def test_smtp_mail_to_a_receiving_address_arrives(live: LiveEmulator, receiver: Receiver) -> None:
    live.reset()
    created = live.http.post("/domains", json={"name": INBOUND, "capabilities": {"receiving": "enabled"}})
    assert created.status_code == 201, created.text
    hook = live.http.post("/webhooks", json={"endpoint": receiver.url, "events": ["email.received"]})
    assert hook.status_code in (200, 201), hook.text
    secret = hook.json()["signing_secret"]

    with live.starttls() as client:
        code, reply = transmit(client, rich_message(to=f"Support <support@{INBOUND}>"), "hello@acme.dev",
                               [f"support@{INBOUND}"])
    assert code == 250, reply
    sent = live.http.get(f"/emails/{email_id_of(reply)}").json()

    [item] = live.http.get("/emails/receiving").json()["data"]
    assert item["to"] == [f"Support <support@{INBOUND}>"] and item["subject"] == "Your receipt"
    assert item["message_id"] == sent["message_id"]
    attachments = live.http.get(f"/emails/receiving/{item['id']}/attachments").json()["data"]
    downloads = {a["filename"]: live.http.get(a["download_url"]).content for a in attachments}
    assert downloads == {"receipt.pdf": PDF, "logo.png": PNG}

    assert live.http.post("/_emulator/flush").status_code == 200
    received = [(headers, raw) for headers, raw in receiver.requests
                if json.loads(raw)["type"] == "email.received"]
    assert len(received) == 1
    headers, raw = received[0]
    Webhook(secret).verify(raw, headers)  # raises unless the signature is valid
    payload = json.loads(raw)
    assert payload["data"]["email_id"] == item["id"]
    assert payload["data"]["to"] == [f"Support <support@{INBOUND}>"]
    assert sorted(a["filename"] for a in payload["data"]["attachments"]) == ["logo.png", "receipt.pdf"]
