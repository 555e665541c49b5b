"""Bounded memory (issue 11): --max-emails and --max-age prune the oldest mail with its rows, and a
graceful shutdown writes the request-log rows still waiting for a commit."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from emulator.cli import build_parser, parse_settings
from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.emails_helpers import email
from tests.ui_helpers import running_server

ATTACHMENT = {"filename": "a.txt", "content": "aGVsbG8="}


def _eventually(check: Callable[[], bool], limit: float = 15.0) -> None:
    """The prune runs in the background (every 0.5 s, and at once when the clock moves)."""
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, "the prune did not happen"
        time.sleep(0.05)


def _rows(server: EmulatorServer, where: str, params: tuple[Any, ...] = ()) -> int:
    """How many rows `FROM {where}` names, read from the server's own database."""
    async def count() -> int:
        async with server.emu.transaction() as tx:
            row = await tx.one(f"SELECT COUNT(*) AS n FROM {where}", params)
        return int(row["n"]) if row else 0

    return server.call(count())


def _ids(api: httpx.Client) -> list[str]:
    return [row["id"] for row in api.get("/emails").json()["data"]]


def test_max_emails_keeps_the_newest_and_takes_the_rows_of_the_others() -> None:
    with running_server(max_emails=3) as server, httpx.Client(base_url=server.url, headers=AUTH) as api:
        assert api.post("/webhooks", json={"endpoint": "http://127.0.0.1:9/h", "events": ["email.sent"]})\
            .status_code == 201
        scheduled = api.post("/emails", json=email(scheduled_at="in 1 hour")).json()["id"]
        sent = [api.post("/emails", json=email(attachments=[ATTACHMENT])).json()["id"] for _ in range(6)]
        _eventually(lambda: len(_ids(api)) == 4)
        assert _ids(api) == [*reversed(sent[3:]), scheduled]  # newest first; the scheduled one stays
        for gone in sent[:3]:
            assert api.get(f"/emails/{gone}").status_code == 404
            assert _rows(server, "email_attachments WHERE email_id = ?", (gone,)) == 0
            assert _rows(server, "events WHERE subject_id = ?", (gone,)) == 0
        assert _rows(server, "email_attachments") == 3
        events = "SELECT id FROM events WHERE subject_id IN (SELECT id FROM emails)"
        assert _rows(server, f"webhook_messages WHERE event_id NOT IN ({events})") == 0
        kept = api.get(f"/emails/{sent[-1]}/attachments")
        assert kept.status_code == 200 and len(kept.json()["data"]) == 1
        for _ in range(40):
            api.get("/domains")
        _eventually(lambda: _rows(server, "request_logs") == 30)  # 10 per kept email
        assert api.get("/logs").json()["data"][0]["endpoint"] == "/domains"


def test_max_age_prunes_mail_and_request_logs_when_the_clock_moves() -> None:
    with running_server(max_age=3600.0) as server, httpx.Client(base_url=server.url, headers=AUTH) as api:
        old = api.post("/emails", json=email()).json()["id"]
        assert api.post("/_emulator/clock/advance", json={"hours": 2}).status_code == 200
        new = api.post("/emails", json=email()).json()["id"]
        _eventually(lambda: _ids(api) == [new])
        assert api.get(f"/emails/{old}").status_code == 404
        logged = api.get("/logs").json()["data"]
        assert logged and all(row["created_at"] >= "2026-05-14 10:00" for row in logged), logged


def test_without_limits_nothing_is_pruned() -> None:
    with running_server() as server, httpx.Client(base_url=server.url, headers=AUTH) as api:
        sent = [api.post("/emails", json=email()).json()["id"] for _ in range(3)]
        assert api.post("/_emulator/clock/advance", json={"days": 400}).status_code == 200
        time.sleep(0.6)  # one prune period: nothing may happen, so there is nothing to wait for
        assert sorted(_ids(api)) == sorted(sent)


def test_retention_flags_are_documented_and_parsed() -> None:
    help_text = " ".join(build_parser().format_help().split())
    assert "[env RESEND_EMULATOR_MAX_EMAILS]" in help_text and "[env RESEND_EMULATOR_MAX_AGE]" in help_text
    settings = parse_settings(["--max-emails", "500", "--max-age", "24h"])
    assert (settings.max_emails, settings.max_age) == (500, 86400.0)
    assert parse_settings(["--max-age", "90"]).max_age == 90.0
    for bad in ("soon", "-5m", "nan"):
        with pytest.raises(SystemExit):
            parse_settings(["--max-age", bad])


def test_sigterm_writes_the_last_request_log_rows(tmp_path: Path) -> None:
    database = tmp_path / "state.db"
    process = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", "--quiet",
                                "--db", str(database), "--api-key", "re_test_123"],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[-1]
        with httpx.Client(base_url=url, headers=AUTH) as api:
            assert api.post("/domains", json={"name": "last.dev"}).status_code == 201
            assert api.get("/domains").status_code == 200  # the last request: nothing commits after it
    finally:
        process.send_signal(signal.SIGTERM)
        # uvicorn shuts down gracefully, then re-raises the signal it caught: exit status -15.
        assert process.wait(timeout=20) == -signal.SIGTERM
    with sqlite3.connect(database) as conn:
        rows = conn.execute("SELECT method, endpoint, response_status FROM request_logs ORDER BY seq")\
            .fetchall()
    assert rows == [("POST", "/domains", 201), ("GET", "/domains", 200)]
