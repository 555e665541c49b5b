"""A `kill -9` mid-import and mid-broadcast loses and repeats nothing: after a restart on the same
database file every contact exists once and every recipient has exactly one email (issue 27)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.conftest import AUTH, KEY

# Enough that a broadcast to them takes several chunks (each ~0.5 s of work) on the fastest machine.
CONTACTS = 12_000


@contextmanager
def emulator(db: Path) -> Iterator[tuple[subprocess.Popen[str], httpx.Client]]:
    """A real emulator process on `db` (frozen clock); killed at the end if the test left it running."""
    process = subprocess.Popen(
        [sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", "--db", str(db), "--api-key", KEY,
         "--clock", "frozen", "--clock-start", "2026-05-14T09:00:00Z"], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    try:
        first = process.stdout.readline()
        assert first.startswith("resend-emulator listening on "), first
        with httpx.Client(base_url=first.split()[-1], headers=AUTH, timeout=60) as client:
            yield process, client
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)


def kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


def read(db: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as raw:
        return raw.execute(sql).fetchall()


def wait_for(db: Path, sql: str) -> None:
    """Poll the file (read-only, beside the writer) until `sql` yields a row: the other process's progress
    has no event this test could wait on."""
    deadline = time.monotonic() + 60
    while not read(db, sql):
        assert time.monotonic() < deadline, sql
        time.sleep(0.002)


def advance(client: httpx.Client, seconds: float) -> None:
    assert client.post("/_emulator/clock/advance", json={"seconds": seconds}).status_code == 200


def test_kill_9_mid_import_and_mid_broadcast_then_restart_sends_one_email_each(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    rows = "".join(f"c{n}@example.com,C{n}\n" for n in range(CONTACTS))
    with emulator(db) as (process, client):
        segment_id = client.post("/segments", json={"name": "All"}).json()["id"]
        response = client.post("/contacts/imports", files={"file": ("c.csv", f"email,first_name\n{rows}")},
                               data={"segments": json.dumps([{"id": segment_id}])})
        import_id = response.json()["id"]
        advance(client, 3)  # the first three parts of 500 rows, of 24
        kill(process)
    assert read(db, "SELECT status FROM contact_imports") == [("in_progress",)]

    with emulator(db) as (process, client):
        advance(client, 30)
        got = client.get(f"/contacts/imports/{import_id}").json()
        assert (got["status"], got["counts"]["created"]) == ("completed", CONTACTS)
        broadcast = client.post("/broadcasts", json={
            "segment_id": segment_id, "from": "news@example.com", "subject": "Hi {{{FIRST_NAME}}}",
            "html": "<p>Hi {{{FIRST_NAME}}}</p>", "send": True}).json()
        wait_for(db, "SELECT 1 FROM broadcast_sends WHERE walked > 0")  # the fan-out is under way
        kill(process)
    assert read(db, "SELECT status FROM broadcasts") == [("queued",)]
    assert read(db, "SELECT walked < audience FROM broadcast_sends") == [(1,)]

    with emulator(db) as (process, client):
        assert client.post("/_emulator/flush").status_code == 200  # it resumed on its own; wait for it
        assert client.get(f"/broadcasts/{broadcast['id']}").json()["status"] == "sent"
    assert read(db, "SELECT COUNT(*), COUNT(DISTINCT email_key) FROM contacts") == [(CONTACTS, CONTACTS)]
    assert read(db, "SELECT COUNT(*), COUNT(DISTINCT to_addrs) FROM emails") == [(CONTACTS, CONTACTS)]
    assert read(db, "SELECT COUNT(*), COUNT(DISTINCT contact_id) FROM broadcast_recipients") == [
        (CONTACTS, CONTACTS)]
    assert read(db, "SELECT COUNT(*) FROM jobs WHERE kind IN ('broadcast.send', 'contacts.import')") == [(0,)]
