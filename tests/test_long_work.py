"""Long work on a database file (issue 27): chunked jobs commit few large transactions, and once done the
emulator gives back what they filled: SQLite's memory and the write-ahead log's file."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from emulator.core import db as db_module
from emulator.core.db import Database
from tests.conftest import api_client, make_settings
from tests.contacts_helpers import advance, segment


def _import(client: TestClient, count: int, segment_id: str) -> None:
    rows = "".join(f"p{n}@example.com,P{n}\n" for n in range(count))
    response = client.post("/contacts/imports", files={"file": ("c.csv", f"email,first_name\n{rows}")},
                           data={"segments": f'[{{"id":"{segment_id}"}}]'})
    assert response.status_code == 201, response.text
    advance(client, count / 500 + 2)


def _wal(path: Path) -> int:
    log = path.with_name(path.name + "-wal")
    return log.stat().st_size if log.exists() else 0


def test_a_finished_broadcast_gives_back_memory_and_the_log_file(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    released: list[Database] = []
    real = Database.release_memory

    async def counted(self: Database) -> None:
        released.append(self)
        await real(self)

    monkeypatch.setattr(Database, "release_memory", counted)
    path = tmp_path / "state.db"
    with api_client(make_settings(db=str(path))) as client:
        everyone = segment(client, "Everyone")
        _import(client, 2000, everyone)
        assert len(released) == 1  # the finished import
        reply = client.post("/broadcasts", json={"segment_id": everyone, "from": "news@acme.dev",
                                                 "subject": "Hi {{{FIRST_NAME}}}", "html": "<p>Hi</p>",
                                                 "send": True})
        assert client.post("/_emulator/flush").status_code == 200
        assert client.get(f"/broadcasts/{reply.json()['id']}").json()["status"] == "sent"
        assert len(released) == 2  # and the finished broadcast
        # The log is cut back on the checkpoint thread: wait for it (bounded), not for a time.
        deadline = time.monotonic() + 30
        while _wal(path) > 0:
            assert time.monotonic() < deadline, _wal(path)
            time.sleep(0.01)
        assert client.get("/emails", params={"limit": 1}).json()["data"][0]["subject"] == "Hi P1999"


def test_an_import_catching_up_commits_a_few_large_transactions(monkeypatch: pytest.MonkeyPatch) -> None:
    commits: list[int] = []
    real = db_module.Tx.commit

    async def counted(self: db_module.Tx) -> None:
        if self._state.long:
            commits.append(1)
        await real(self)

    monkeypatch.setattr(db_module.Tx, "commit", counted)
    with api_client(make_settings()) as client:
        _import(client, 5000, segment(client, "Everyone"))  # ten parts, all due at once
        assert client.get("/contacts", params={"limit": 1}).json()["data"][0]["email"] == "p4999@example.com"
    assert 1 <= len(commits) < 10


def test_the_broadcast_delivery_index_exists_before_the_ui_first_loads(tmp_path: Path) -> None:
    # The web UI loads on its first request; the index behind its delivery figures must not wait for it.
    path = tmp_path / "state.db"
    with api_client(make_settings(db=str(path))):
        pass
    with sqlite3.connect(path) as raw:
        names = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"emails_by_broadcast", "broadcast_recipients_by_token", "jobs_waiting_by_lane"} <= names
    assert not {"broadcast_recipients_by_email", "jobs_lane", "jobs_by_lane", "jobs_due"} & names
