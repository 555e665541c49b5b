"""Shared steps of the contacts tests: make contacts, segments, topics and properties over HTTP."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

T0 = "2026-05-14 09:00:00+00"  # the frozen clock of tests/conftest.py, in the contacts' Postgres form
T0_MS = "2026-05-14 09:00:00.000+00"  # the same instant in the millisecond form (memberships, topics)
NOT_FOUND = {"statusCode": 404, "message": "Contact not found", "name": "not_found"}


def created(response: Any) -> str:
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def contact(client: TestClient, email: str, **fields: Any) -> str:
    return created(client.post("/contacts", json={"email": email, **fields}))


def segment(client: TestClient, name: str) -> str:
    return created(client.post("/segments", json={"name": name}))


def topic(client: TestClient, name: str, default: str = "opt_in", **fields: Any) -> str:
    return created(client.post("/topics", json={"name": name, "default_subscription": default, **fields}))


def prop(client: TestClient, key: str, kind: str = "string", **fields: Any) -> str:
    return created(client.post("/contact-properties", json={"key": key, "type": kind, **fields}))


def advance(client: TestClient, seconds: float) -> None:
    assert client.post("/_emulator/clock/advance", json={"seconds": seconds}).status_code == 200


def error(status: int, name: str, message: str) -> dict[str, Any]:
    return {"statusCode": status, "message": message, "name": name}
