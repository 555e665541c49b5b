"""The clock is state: with a database file it survives a restart (issue 27, scope 4)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from starlette.testclient import TestClient

from tests.conftest import api_client, make_settings
from tests.contacts_helpers import advance, contact


def _now(client: TestClient) -> str:
    return str(client.get("/_emulator/clock").json()["now"])


def test_a_frozen_clock_resumes_where_it_stood(tmp_path: Path) -> None:
    settings = make_settings(db=str(tmp_path / "state.db"))
    with api_client(settings) as client:
        advance(client, 3600)
        assert _now(client) == "2026-05-14T10:00:00.000000Z"
    with api_client(settings) as client:
        state = client.get("/_emulator/clock").json()
        assert state == {"mode": "frozen", "now": "2026-05-14T10:00:00.000000Z"}
        assert client.post("/_emulator/reset").status_code == 200
        assert _now(client) == "2026-05-14T09:00:00.000000Z"  # reset: the configured clock again


def test_due_work_waits_for_the_restored_clock_and_then_runs(tmp_path: Path) -> None:
    settings = make_settings(db=str(tmp_path / "state.db"))
    body = {"from": "a@example.com", "to": "b@example.com", "subject": "Later", "text": "x",
            "scheduled_at": "2026-05-14T09:30:00Z"}
    with api_client(settings) as client:
        email_id = client.post("/emails", json=body).json()["id"]
        advance(client, 20 * 60)
    with api_client(settings) as client:
        assert client.post("/_emulator/flush").status_code == 200
        assert client.get(f"/emails/{email_id}").json()["last_event"] == "scheduled"
        advance(client, 10 * 60)
        assert client.get(f"/emails/{email_id}").json()["last_event"] == "sent"


def test_the_clock_never_starts_behind_the_newest_stored_row(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with api_client(make_settings(db=str(path))) as client:
        advance(client, 86400 * 365)
        contact(client, "late@example.com")
    for mode in ("frozen", "real"):
        with sqlite3.connect(path) as raw:  # as a file written before the clock was stored
            raw.execute("DELETE FROM meta WHERE key = 'clock'")
        with api_client(make_settings(db=str(path), clock=mode)) as client:
            assert client.get("/_emulator/clock").json()["mode"] == mode
            assert _now(client) >= "2027-05-14T09:00:00.000000Z", mode
            assert client.get("/contacts").json()["data"][0]["email"] == "late@example.com"
