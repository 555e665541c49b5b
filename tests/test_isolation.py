"""Isolation by API key (--isolate-keys): every well-formed key is its own account, over HTTP and SMTP."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import httpx
import pytest

from emulator.testing import EmulatorError, EmulatorServer

KEYS = ("re_worker_alpha", "re_worker_bravo")
PER_CHANNEL = 12


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer(isolate_keys=True, clock="frozen") as running:
        yield running


@pytest.fixture
def shared(server: EmulatorServer) -> EmulatorServer:
    server.reset()
    return server


def domain(key: str) -> str:
    return key.rsplit("_", 1)[1] + ".dev"


def api(server: EmulatorServer, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def send_over_http(server: EmulatorServer, key: str) -> list[str]:
    with api(server, key) as client:
        return [client.post("/emails", json={
            "from": f"{key} <robot@{domain(key)}>", "to": [f"http{n}@{domain(key)}"],
            "subject": f"{key} http {n}",
            "html": "<p>x</p>"}).json()["id"] for n in range(PER_CHANNEL)]


def send_over_smtp(server: EmulatorServer, key: str) -> int:
    with server.smtp(api_key=key) as session:
        for n in range(PER_CHANNEL):
            message = EmailMessage()
            message["From"], message["To"] = f"robot@{domain(key)}", f"smtp{n}@{domain(key)}"
            message["Subject"] = f"{key} smtp {n}"
            message.set_content("plain text")
            session.send_message(message)
    return PER_CHANNEL


def everything(server: EmulatorServer, key: str, path: str) -> list[dict[str, Any]]:
    with api(server, key) as client:
        return list(client.get(path, params={"limit": 100}).json()["data"])


def test_two_keys_sending_concurrently_see_only_their_own_emails(shared: EmulatorServer) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        http_ids = {key: pool.submit(send_over_http, shared, key) for key in KEYS}
        smtp_done = [pool.submit(send_over_smtp, shared, key) for key in KEYS]
        assert [job.result() for job in smtp_done] == [PER_CHANNEL, PER_CHANNEL]
        sent = {key: job.result() for key, job in http_ids.items()}
    for key in KEYS:
        emails = everything(shared, key, "/emails")
        assert len(emails) == 2 * PER_CHANNEL
        assert all(email["subject"].startswith(key) for email in emails)
        assert set(sent[key]) <= {email["id"] for email in emails}
        outbox = shared.outbox.list(api_key=key, limit=100)
        assert {email["subject"] for email in outbox} == {email["subject"] for email in emails}


def test_each_key_has_its_own_domains_keys_and_webhooks(shared: EmulatorServer) -> None:
    for key in KEYS:
        with api(shared, key) as client:
            assert client.post("/domains", json={"name": "same-name.dev"}).status_code == 201
            hook = {"endpoint": f"https://{domain(key)}/hooks", "events": ["email.sent"]}
            assert client.post("/webhooks", json=hook).status_code == 201
    for key in KEYS:
        assert [d["name"] for d in everything(shared, key, "/domains")] == ["same-name.dev"]
        assert [w["endpoint"] for w in everything(shared, key, "/webhooks")] == [f"https://{domain(key)}/hooks"]
        assert len(everything(shared, key, "/api-keys")) == 1


def test_an_email_id_of_one_key_is_not_found_with_the_other(shared: EmulatorServer) -> None:
    alpha_id = send_over_http(shared, KEYS[0])[0]
    with api(shared, KEYS[1]) as bravo:
        assert bravo.get(f"/emails/{alpha_id}").json()["name"] == "not_found"
    with api(shared, KEYS[0]) as alpha:
        assert alpha.get(f"/emails/{alpha_id}").json()["id"] == alpha_id


def test_waiting_on_one_key_ignores_the_other_keys_mail(shared: EmulatorServer) -> None:
    send_over_http(shared, KEYS[1])
    with pytest.raises(EmulatorError, match="408"):
        shared.outbox.wait_for(api_key=KEYS[0], timeout=0.2)
    send_over_smtp(shared, KEYS[0])
    found = shared.outbox.wait_for(api_key=KEYS[0], timeout=5)
    assert found["subject"].startswith(KEYS[0])


def test_malformed_keys_still_get_403(shared: EmulatorServer) -> None:
    with api(shared, "not-a-resend-key") as client:
        assert client.get("/emails").status_code == 403


def test_without_isolation_unknown_keys_are_refused() -> None:
    with EmulatorServer(smtp=False) as server, api(server, KEYS[0]) as client:
        assert client.get("/emails").json()["name"] == "invalid_api_key"


def one_send(server: EmulatorServer, key: str, n: int) -> str:
    with api(server, key) as client:
        return str(client.post("/emails", json={
            "from": f"robot@{domain(key)}", "to": [f"x{n}@{domain(key)}"], "subject": "s", "text": "t",
        }).json()["id"])


def test_each_key_has_its_own_id_sequence(shared: EmulatorServer) -> None:
    alone = [one_send(shared, KEYS[0], n) for n in range(3)]
    shared.reset()
    interleaved = []
    for n in range(3):
        one_send(shared, KEYS[1], n)
        interleaved.append(one_send(shared, KEYS[0], n))
    assert interleaved == alone
    shared.reset()
    assert [one_send(shared, KEYS[1], n) for n in range(3)] != alone


def test_snapshots_keep_each_accounts_sequence(shared: EmulatorServer, tmp_path: Path) -> None:
    one_send(shared, KEYS[0], 0)
    shared.snapshot(tmp_path / "state.db")
    following = one_send(shared, KEYS[0], 1)
    one_send(shared, KEYS[0], 2)
    shared.restore(tmp_path / "state.db")
    assert one_send(shared, KEYS[0], 1) == following
