"""`--log-format json` (issue 38 item 6): a `resend-emulator` process whose every stdout line is one JSON
object: the start (URLs and ports, keys redacted), each request (route template, never a key), the stop.
The text format (banner, `-v` lines) is pinned by tests/test_cli.py."""

from __future__ import annotations

import json
import os
import smtplib
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import httpx

KEY = "re_team_staging_secret_7Hq2"
SEND = {"from": "Acme <hello@acme.dev>", "to": ["ada@example.org"], "subject": "Hi", "text": "Hello"}
REQUEST_FIELDS = {"time", "event", "method", "path", "status", "duration_ms", "account"}


@contextmanager
def emulator(*args: str) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    """A `--log-format json` emulator on free ports; yields the process and its parsed start line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "emulator", "--port", "0", "--smtp-port", "0", "--smtps-port", "0",
         "--smtp-auth-plaintext", "--log-format", "json", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process, json.loads(process.stdout.readline())
    finally:
        if process.poll() is None:
            process.terminate()
            process.communicate(timeout=30)


def stop(process: subprocess.Popen[str]) -> list[dict[str, Any]]:
    process.terminate()
    rest, _ = process.communicate(timeout=30)
    return [json.loads(line) for line in rest.splitlines()]


def traffic(start: dict[str, Any], key: str) -> str:
    """A send over the API and over SMTP, a read by id, an unknown path and a refused key."""
    url, auth = start["url"], {"Authorization": f"Bearer {key}"}
    email_id = httpx.post(f"{url}/emails", json=SEND, headers=auth).json()["id"]
    assert httpx.get(f"{url}/emails/{email_id}", headers=auth).status_code == 200
    assert httpx.get(f"{url}/no/such/{email_id}", headers=auth).status_code == 404
    assert httpx.get(f"{url}/domains", headers={"Authorization": "Bearer re_wrong"}).status_code == 403
    host, port = start["smtp"]["smtp"].rsplit(":", 1)
    with smtplib.SMTP(host, int(port), timeout=30) as client:
        client.login("resend", key)
        client.sendmail("hello@acme.dev", ["bo@example.org"], b"Subject: Hi\r\n\r\nHello\r\n")
    return str(email_id)


def test_every_line_is_json_with_templates_and_no_key() -> None:
    with emulator("--api-key", KEY) as (process, start):
        email_id = traffic(start, KEY)
        lines = stop(process)
    every = [start, *lines]
    assert start["event"] == "start" and start["url"].startswith("http://127.0.0.1:")
    assert start["api_keys"] == ["re_…7Hq2"] and set(start["smtp"]) == {"smtp", "smtps"}
    requests = [line for line in lines if line["event"] == "request"]
    assert [(r["method"], r["path"], r["status"]) for r in requests] == [
        ("POST", "/emails", 200), ("GET", "/emails/{email_id}", 200), ("GET", "unmatched", 404),
        ("GET", "/domains", 403)]
    for request in requests:
        assert set(request) == REQUEST_FIELDS
        assert isinstance(request["duration_ms"], float | int) and request["duration_ms"] >= 0
        assert datetime.fromisoformat(request["time"].replace("Z", "+00:00")).utcoffset() is not None
    # No route, no authentication: an unknown path and a refused key have no account.
    assert [r["account"] for r in requests] == ["default", "default", None, None]
    [refused] = [line for line in lines if line["event"] == "key_refused"]
    assert refused["message"].startswith("refused API key re_…ng")
    assert lines[-1]["event"] == "stop" and lines[-1]["signals"] == ["SIGTERM"]
    text = "\n".join(json.dumps(line, ensure_ascii=False) for line in every)
    assert KEY not in text and KEY.removeprefix("re_") not in text and email_id not in text


def test_isolated_accounts_are_named_by_their_derived_id_never_the_key() -> None:
    with emulator("--isolate-keys", "--no-smtp") as (process, start):
        url = start["url"]
        response = httpx.post(f"{url}/emails", json=SEND, headers={"Authorization": f"Bearer {KEY}"})
        assert response.status_code == 200
        [request] = [line for line in stop(process) if line["event"] == "request"]
    assert request["account"] and KEY.removeprefix("re_") not in request["account"]


def test_quiet_json_writes_the_start_and_stop_but_no_request_lines() -> None:
    with emulator("--quiet", "--no-smtp") as (process, start):
        assert httpx.get(f"{start['url']}/_emulator/health").status_code == 200
        lines = stop(process)
    assert start["event"] == "start" and [line["event"] for line in lines] == ["stop"]


def test_a_start_that_fails_is_a_json_error_line_too() -> None:
    with emulator("--no-smtp") as (_, first):
        taken = first["url"].rsplit(":", 1)[1]
        failed = subprocess.run([sys.executable, "-m", "emulator", "--port", taken, "--no-smtp",
                                 "--log-format", "json"], capture_output=True, text=True, timeout=60)
    [line] = [json.loads(text) for text in failed.stdout.splitlines()]
    assert line["event"] == "error" and taken in line["message"]
    assert line["exit_code"] == failed.returncode == 1
    assert failed.stderr.startswith("resend-emulator: ")


def test_the_format_can_come_from_the_environment_and_a_wrong_one_is_refused() -> None:
    env = {**os.environ, "RESEND_EMULATOR_LOG_FORMAT": "json"}
    process = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp"],
                               stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        assert json.loads(process.stdout.readline())["event"] == "start"
    finally:
        process.terminate()
        process.communicate(timeout=30)
    wrong = subprocess.run([sys.executable, "-m", "emulator", "--port", "0"], capture_output=True, text=True,
                           env={**os.environ, "RESEND_EMULATOR_LOG_FORMAT": "xml"}, timeout=60)
    assert wrong.returncode == 2 and "RESEND_EMULATOR_LOG_FORMAT must be text or json" in wrong.stderr
