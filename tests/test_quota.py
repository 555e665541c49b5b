"""Email quotas: `x-resend-daily-quota` / `x-resend-monthly-quota` on every successful answer, counted per
account on the emulator clock (each recipient of a sent email, each received email), and the opt-in
`--daily-quota` / `--monthly-quota` refusals (429 `daily_quota_exceeded` / `monthly_quota_exceeded`)."""

from __future__ import annotations

import os
import smtplib
import subprocess
import sys
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import httpx
import pytest
import resend
from starlette.testclient import TestClient

from emulator.cli import parse_settings
from emulator.testing import EmulatorServer
from tests.conftest import AUTH, KEY, api_client, make_settings
from tests.emails_helpers import advance, email

DAILY_EXCEEDED = {"statusCode": 429, "message": "You have exceeded your daily email sending quota.",
                  "name": "daily_quota_exceeded"}
MONTHLY_EXCEEDED = {"statusCode": 429, "message": "You have exceeded your monthly email sending quota.",
                    "name": "monthly_quota_exceeded"}


def used(response: httpx.Response) -> tuple[int, int]:
    return int(response.headers["x-resend-daily-quota"]), int(response.headers["x-resend-monthly-quota"])


def to(count: int) -> list[str]:
    return [f"r{n}@example.org" for n in range(count)]


@pytest.fixture
def limited() -> Iterator[TestClient]:
    with api_client(make_settings(daily_quota=5, monthly_quota=8)) as client:
        yield client


def test_every_success_carries_the_quota_headers_counting_each_recipient(client: TestClient) -> None:
    assert used(client.get("/domains")) == (0, 0)
    sent = client.post("/emails", json=email(to=to(2), cc=["c@example.org"], bcc=["b@example.org"]))
    assert used(sent) == (4, 4)
    batch = client.post("/emails/batch", json=[email(to=to(1)), email(to=to(3))])
    assert used(batch) == (8, 8)
    assert used(client.get("/api-keys")) == (8, 8)
    refused = client.post("/emails", json=email(to=[]))
    assert refused.status_code == 422 and "x-resend-daily-quota" not in refused.headers
    assert used(client.get("/domains")) == (8, 8)


def test_a_new_utc_day_starts_from_zero_and_a_new_month_too(client: TestClient) -> None:
    client.post("/_emulator/clock/set", json={"at": "2026-05-31T23:59:00Z"})
    assert used(client.post("/emails", json=email(to=to(2)))) == (2, 2)
    advance(client, 60)  # 2026-06-01T00:00:00Z
    assert used(client.get("/domains")) == (0, 0)
    client.post("/emails", json=email(to=to(1)))
    advance(client, 86_400)
    assert used(client.post("/emails", json=email(to=to(1)))) == (1, 2)


def test_a_clock_set_back_reads_the_earlier_day_again(client: TestClient) -> None:
    client.post("/emails", json=email(to=to(3)))
    advance(client, 86_400)
    client.post("/emails", json=email(to=to(1)))
    client.post("/_emulator/clock/set", json={"at": "2026-05-14T12:00:00Z"})
    assert used(client.get("/domains")) == (3, 4)


def test_received_mail_and_broadcasts_count_too(client: TestClient) -> None:
    client.post("/domains", json={"name": "in.acme.dev", "capabilities": {"sending": "disabled",
                                                                          "receiving": "enabled"}})
    client.post("/_emulator/inbound", json={"from": "jane@customer.io", "to": "help@in.acme.dev"})
    assert used(client.get("/domains")) == (1, 1)
    segment = client.post("/segments", json={"name": "All"}).json()["id"]
    for address in ("a@example.org", "b@example.org"):
        client.post("/contacts", json={"email": address, "segments": [{"id": segment}]})
    client.post("/broadcasts", json={"segment_id": segment, "from": "a@acme.dev", "subject": "News",
                                     "text": "hi", "send": True})
    client.post("/_emulator/flush")
    assert used(client.get("/domains")) == (3, 3)


def test_each_account_counts_its_own() -> None:
    with api_client(make_settings(isolate_keys=True)) as client:
        client.post("/emails", json=email(to=to(2)))
        other = client.post("/emails", json=email(to=to(1)), headers={"Authorization": "Bearer re_other"})
        assert used(other) == (1, 1)
        assert used(client.get("/domains")) == (2, 2)


def test_counts_are_read_back_from_a_database_file(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    with api_client(make_settings(db=db)) as first:
        first.post("/emails", json=email(to=to(3)))
    with api_client(make_settings(db=db)) as second:
        assert used(second.get("/domains")) == (3, 3)
        assert second.post("/_emulator/reset").status_code == 200
        assert used(second.get("/domains")) == (0, 0)


def test_past_the_daily_quota_a_send_is_429(limited: TestClient) -> None:
    assert used(limited.post("/emails", json=email(to=to(4)))) == (4, 4)
    refused = limited.post("/emails", json=email(to=to(2)))
    assert (refused.status_code, refused.json()) == (429, DAILY_EXCEEDED)
    assert used(limited.post("/emails", json=email(to=to(1)))) == (5, 5)
    assert limited.post("/emails", json=email(to=to(1))).json() == DAILY_EXCEEDED
    assert len(limited.get("/emails").json()["data"]) == 2
    advance(limited, 86_400)
    assert used(limited.post("/emails", json=email(to=to(3)))) == (3, 8)
    advance(limited, 86_400)
    refused = limited.post("/emails", json=email(to=to(1)))
    assert (refused.status_code, refused.json()) == (429, MONTHLY_EXCEEDED)


def test_a_batch_past_the_quota_is_refused_whole_and_counts_nothing(limited: TestClient) -> None:
    refused = limited.post("/emails/batch", json=[email(to=to(2)), email(to=to(2)), email(to=to(2))])
    assert (refused.status_code, refused.json()) == (429, DAILY_EXCEEDED)
    assert limited.get("/emails").json()["data"] == []
    assert used(limited.get("/domains")) == (0, 0)
    assert used(limited.post("/emails", json=email(to=to(5)))) == (5, 5)


def test_scheduled_sends_count_when_accepted(limited: TestClient) -> None:
    assert used(limited.post("/emails", json=email(to=to(5), scheduled_at="in 1 hour"))) == (5, 5)
    assert limited.post("/emails", json=email(to=to(1))).json() == DAILY_EXCEEDED


@pytest.fixture(scope="module")
def smtp_server() -> Iterator[EmulatorServer]:
    with EmulatorServer(make_settings(port=0, smtp=True, smtp_port=0, smtps_port=0, daily_quota=2)) as server:
        yield server


def _smtp_send(server: EmulatorServer, recipients: list[str]) -> None:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "hello@mail.acme.dev", ", ".join(recipients), "Hi"
    message.set_content("hello")
    with smtplib.SMTP("127.0.0.1", server.smtp_port, timeout=30) as smtp:
        smtp.starttls()
        smtp.login("resend", KEY)
        smtp.send_message(message)


def test_smtp_counts_and_is_refused_for_the_day_with_a_temporary_failure(
        smtp_server: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    smtp_server.reset()
    _smtp_send(smtp_server, ["a@example.org"])
    monkeypatch.setattr(resend, "api_url", smtp_server.url)
    monkeypatch.setattr(resend, "api_key", KEY)
    listed: Any = resend.Domains.list()
    headers = listed["http_headers"]
    assert (headers["x-resend-daily-quota"], headers["x-resend-monthly-quota"]) == ("1", "1")
    with pytest.raises(smtplib.SMTPDataError) as refused:
        _smtp_send(smtp_server, ["b@example.org", "c@example.org"])
    assert refused.value.smtp_code == 451
    assert b"4.7.0 You have exceeded your daily email sending quota." in refused.value.smtp_error
    with pytest.raises(resend.exceptions.ResendError) as raised:
        resend.Emails.send(email(to=to(2)))  # type: ignore[arg-type]
    assert (raised.value.code, raised.value.error_type) == (429, "daily_quota_exceeded")
    with httpx.Client(base_url=smtp_server.url, headers=AUTH) as api:
        assert len(api.get("/emails").json()["data"]) == 1


def test_the_flags_and_their_environment_variables() -> None:
    settings = parse_settings(["--daily-quota", "100", "--monthly-quota", "3000"])
    assert (settings.daily_quota, settings.monthly_quota) == (100, 3000)
    assert (parse_settings([]).daily_quota, parse_settings([]).monthly_quota) == (0, 0)
    os.environ["RESEND_EMULATOR_DAILY_QUOTA"], os.environ["RESEND_EMULATOR_MONTHLY_QUOTA"] = "7", "70"
    try:
        assert (parse_settings([]).daily_quota, parse_settings([]).monthly_quota) == (7, 70)
    finally:
        del os.environ["RESEND_EMULATOR_DAILY_QUOTA"], os.environ["RESEND_EMULATOR_MONTHLY_QUOTA"]
    text = subprocess.run([sys.executable, "-m", "emulator", "--help"], capture_output=True, text=True,
                          timeout=60).stdout
    for flag, env in (("--daily-quota", "DAILY_QUOTA"), ("--monthly-quota", "MONTHLY_QUOTA")):
        assert flag in text and f"RESEND_EMULATOR_{env}" in text
    bad = subprocess.run([sys.executable, "-m", "emulator", "--daily-quota", "-1"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "--daily-quota must be 0" in bad.stderr
