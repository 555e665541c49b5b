"""A delivery started as its event commits keeps no job row (core/jobs.py `schedule(at_once=True)`,
issue 28): its pending message is the record that it is due. One cut short, by a pause of the runner or
a `kill -9`, gets its row back and is sent again, with the same `svix-id`, and recorded once."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from starlette.testclient import TestClient

from emulator.core.jobs import schedule
from emulator.resources.webhooks.delivery import requeue_unsent
from tests.test_crash_resume import emulator, kill, read
from tests.webhooks_helpers import Receiver, create_hook


def _run(client: TestClient, coroutine: Any) -> Any:
    return client.portal.call(lambda: coroutine)  # type: ignore[union-attr]


async def _rows(emu: Any, sql: str) -> list[dict[str, Any]]:
    async with emu.transaction() as tx:
        return await tx.all(sql)


async def _pause(emu: Any) -> None:
    async with emu.jobs.paused():
        pass


def _stalled_delivery(receiver: Receiver, start: Any) -> None:
    """Have `start()` emit one event whose delivery reaches the receiver and hangs there."""
    receiver.stall.set()
    start()
    assert receiver.arrived.wait(10), "the delivery never arrived"


def _unstall(receiver: Receiver) -> None:
    receiver.release.set()
    receiver.stall.clear()


def test_a_delivery_cut_short_by_a_pause_gets_its_job_row_back_and_is_sent_once_more(
        client: TestClient, receiver: Receiver) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]
    hook = create_hook(client, receiver.url, ["domain.created"])
    _stalled_delivery(receiver, lambda: client.post("/domains", json={"name": "example.com"}))
    [message] = _run(client, _rows(emu, "SELECT id, status, created_at FROM webhook_messages"))
    assert message["status"] == "pending"
    assert _run(client, _rows(emu, "SELECT seq FROM jobs")) == []  # in flight, with no row

    _run(client, _pause(emu))  # cancels the delivery under way, as a reset or a restore does
    [job] = _run(client, _rows(emu, "SELECT kind, due_at, payload FROM jobs"))
    assert job["kind"] == "webhook.deliver" and job["due_at"] == message["created_at"]
    assert message["id"] in job["payload"]

    _unstall(receiver)
    assert client.post("/_emulator/webhooks/flush").status_code == 200
    assert {got.headers["svix-id"] for got in receiver.received} == {message["id"]}
    [event] = client.get(f"/webhooks/{hook['id']}/events").json()["data"]
    assert event["status"] == "success"
    attempts = client.get(f"/webhooks/{hook['id']}/events/{message['id']}/attempts").json()["data"]
    assert [attempt["http_status_code"] for attempt in attempts] == [200]  # the cut one left no record
    assert _run(client, _rows(emu, "SELECT seq FROM jobs")) == []


def test_kill_9_mid_delivery_then_restart_sends_it_again(tmp_path: Any, receiver: Receiver) -> None:
    db = tmp_path / "emulator.db"
    with emulator(db) as (process, api):
        hook = api.post("/webhooks", json={"endpoint": receiver.url, "events": ["domain.created"]}).json()
        _stalled_delivery(receiver, lambda: api.post("/domains", json={"name": "example.com"}))
        assert read(db, "SELECT status FROM webhook_messages") == [("pending",)]
        assert read(db, "SELECT COUNT(*) FROM jobs") == [(0,)]
        kill(process)
    [(message_id,)] = read(db, "SELECT id FROM webhook_messages")
    _unstall(receiver)
    with emulator(db) as (_, api):
        assert api.post("/_emulator/webhooks/flush").status_code == 200
        [event] = api.get(f"/webhooks/{hook['id']}/events").json()["data"]
        attempts = api.get(f"/webhooks/{hook['id']}/events/{message_id}/attempts").json()["data"]
    assert event["status"] == "success"
    assert [attempt["http_status_code"] for attempt in attempts] == [200]
    assert {got.headers["svix-id"] for got in receiver.received} == {message_id}
    assert read(db, "SELECT COUNT(*) FROM jobs") == [(0,)]


def test_only_unsent_messages_without_a_queued_delivery_get_a_row(client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def scenario() -> list[str]:
        async with emu.transaction("default") as tx:
            messages = (("msg_lost", "pending", 0), ("msg_queued", "pending", 0),
                        ("msg_retrying", "attempting", 1), ("msg_done", "success", 1))
            for message_id, status, attempts in messages:
                await tx.insert("webhook_messages", {
                    "id": message_id, "account": "default", "webhook_id": "hook", "event_id": "event",
                    "type": "domain.created", "payload": "{}", "status": status, "attempts": attempts,
                    "next_attempt_at": tx.now_db, "created_at": tx.now_db})
            queued = (("msg_queued", "auto"), ("msg_retrying", "auto"), ("msg_lost", "replay"))
            for message_id, mode in queued:
                await schedule(tx, "webhook.deliver", tx.now + timedelta(hours=1),
                               {"message_id": message_id, "mode": mode, "webhook_id": "hook"})
        async with emu.transaction() as tx:
            before = await tx.one("SELECT MAX(seq) AS seq FROM jobs")
            await requeue_unsent(tx)
            rows = await tx.all("SELECT payload FROM jobs WHERE seq > ?", (before["seq"],))
        return [json.loads(row["payload"])["message_id"] for row in rows]

    # A replay is not the automatic delivery: the lost one gets its row beside it.
    assert _run(client, scenario()) == ["msg_lost"]
