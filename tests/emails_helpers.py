"""Shared pieces of the email tests: sample bodies, an event recorder, clock and domain shortcuts."""

from __future__ import annotations

import base64
from typing import Any

from starlette.testclient import TestClient

SENDER = "Acme <hello@mail.acme.dev>"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def email(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"from": SENDER, "to": ["delivered@resend.dev"], "subject": "Your receipt",
                            "html": "<p>Thanks for your order #1042.</p>"}
    body.update(overrides)
    return {key: value for key, value in body.items() if value is not None}


def send(client: TestClient, **overrides: Any) -> str:
    response = client.post("/emails", json=email(**overrides))
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def last_event(client: TestClient, email_id: str) -> str:
    return str(client.get(f"/emails/{email_id}").json()["last_event"])


def advance(client: TestClient, seconds: float) -> None:
    """Move the frozen clock; the control plane runs what fell due before it answers."""
    assert client.post("/_emulator/clock/advance", json={"seconds": seconds}).status_code == 200


class Recorder:
    """Every catalogue event the emulator publishes after commit, in order (change notices, which
    carry no id and reach no webhook, are left out)."""

    def __init__(self, client: TestClient) -> None:
        self.events: list[dict[str, Any]] = []
        client.app.state.emu.events.listen(self._record)  # type: ignore[attr-defined]

    def _record(self, event: dict[str, Any]) -> None:
        if event["id"] is not None:
            self.events.append(event)

    def types(self, email_id: str) -> list[str]:
        return [e["type"] for e in self.events if e["subject_id"] == email_id]

    def data(self, email_id: str, event_type: str) -> dict[str, Any]:
        found = [e["data"] for e in self.events if e["subject_id"] == email_id and e["type"] == event_type]
        assert len(found) == 1, (event_type, found)
        return found[0]

    def of_type(self, event_type: str) -> list[dict[str, Any]]:
        return [e["data"] for e in self.events if e["type"] == event_type]


def verified_domain(client: TestClient, name: str = "mail.acme.dev") -> str:
    created = client.post("/domains", json={"name": name})
    assert created.status_code == 201, created.text
    domain_id = str(created.json()["id"])
    assert client.post(f"/domains/{domain_id}/verify").status_code == 200
    assert client.post("/_emulator/flush").status_code == 200
    assert client.get(f"/domains/{domain_id}").json()["status"] == "verified"
    return domain_id
