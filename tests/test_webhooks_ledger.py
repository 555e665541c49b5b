"""The deliveries' shared transactions (resources/webhooks/ledger.py): records made together, and a
broken one failing alone."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.resources.webhooks.catalogue import attempt_id
from emulator.resources.webhooks.ledger import Outcome, Plan, ledger


def _run(client: TestClient, coroutine: Any) -> Any:
    return client.portal.call(lambda: coroutine)  # type: ignore[union-attr]


async def _messages(emu: Any, ids: list[str]) -> None:
    async with emu.transaction("default") as tx:
        for message_id in ids:
            await tx.insert("webhook_messages", {
                "id": message_id, "account": "default", "webhook_id": "hook", "event_id": "event",
                "type": "domain.created", "payload": "{}", "status": "pending", "attempts": 0,
                "next_attempt_at": tx.now_db, "created_at": tx.now_db,
            })


def _plan(emu: Any, message_id: str) -> Plan:
    return Plan("default", message_id, "hook", "http://127.0.0.1:9/hooks", b"{}", {}, "auto", emu.clock.now())


async def _stored(emu: Any) -> tuple[list[tuple[str, int]], dict[str, tuple[str, int]]]:
    async with emu.transaction() as tx:
        attempts = await tx.all("SELECT message_id, http_status_code FROM webhook_attempts ORDER BY seq")
        messages = await tx.all("SELECT id, status, tries FROM webhook_messages")
    return ([(row["message_id"], row["http_status_code"]) for row in attempts],
            {row["id"]: (row["status"], row["tries"]) for row in messages})


def test_records_that_end_together_share_a_transaction_and_a_broken_one_fails_alone(
        client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]
    commits: list[int] = []

    async def scenario() -> list[Any]:
        await _messages(emu, ["msg_a", "msg_b", "msg_c"])
        # msg_b's first attempt id is taken already: recording it breaks the UNIQUE constraint.
        async with emu.transaction("default") as tx:
            seq = (await tx.one("SELECT seq FROM webhook_messages WHERE id = 'msg_b'"))["seq"]
            await tx.insert("webhook_attempts", {
                "id": attempt_id(emu.ids.seed, seq, "msg_b", 1), "account": "default", "webhook_id": "other",
                "message_id": "other", "http_status_code": 200, "response": "", "sent_at": tx.now_db})
        shared = ledger(emu)
        raw = emu.db.conn._conn
        raw.set_trace_callback(lambda sql: commits.append(1) if sql == "COMMIT" else None)
        try:
            return await asyncio.gather(*(shared.record(_plan(emu, m), Outcome(200, "ok"))
                                          for m in ("msg_a", "msg_b", "msg_c")), return_exceptions=True)
        finally:
            raw.set_trace_callback(None)

    results = _run(client, scenario())
    assert results[0] is None and results[2] is None
    assert "UNIQUE constraint failed" in str(results[1])
    attempts, messages = _run(client, _stored(emu))
    assert attempts[1:] == [("msg_a", 200), ("msg_c", 200)]
    assert messages == {"msg_a": ("success", 1), "msg_b": ("pending", 0), "msg_c": ("success", 1)}
    # The batch of three rolled back; then each alone: two commits (msg_b's rolled back too).
    assert len(commits) == 2


def test_a_second_attempt_at_one_message_in_the_same_batch_builds_on_the_first(client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def scenario() -> None:
        await _messages(emu, ["msg_a"])
        shared = ledger(emu)
        replay = Plan("default", "msg_a", "hook", "http://127.0.0.1:9/hooks", b"{}", {}, "replay",
                      emu.clock.now())
        await asyncio.gather(shared.record(_plan(emu, "msg_a"), Outcome(500, "no")),
                             shared.record(replay, Outcome(200, "ok")))

    _run(client, scenario())
    attempts, messages = _run(client, _stored(emu))
    assert attempts == [("msg_a", 500), ("msg_a", 200)]
    assert messages == {"msg_a": ("attempting", 2)}  # one automatic attempt, a retry scheduled


@pytest.mark.parametrize("rotated", [False, True])
def test_a_delivery_started_at_its_event_signs_with_the_current_secret(client: TestClient,
                                                                       rotated: bool) -> None:
    from emulator.resources.webhooks.ledger import _fresh

    emu = client.app.state.emu  # type: ignore[attr-defined]
    hook = client.post("/webhooks", json={"endpoint": "http://127.0.0.1:9/hooks",
                                          "events": ["domain.created"]}).json()
    client.post("/domains", json={"name": "example.com"})  # fills the cache of enabled webhooks
    secret = hook["signing_secret"]
    if rotated:
        secret = client.post(f"/webhooks/{hook['id']}/signing-secret/rotate").json()["signing_secret"]
    job = {"account": "default", "payload": {"message_id": "msg_x", "webhook_id": hook["id"]},
           "body": '{"type":"domain.created"}'}
    plan = _fresh(emu, job)
    if rotated:
        assert plan is None  # the rotation dropped the cache: the database decides
        client.post("/domains", json={"name": "example.org"})  # an event fills it again
        plan = _fresh(emu, job)
    assert plan is not None
    signatures = plan.headers["svix-signature"].split(" ")
    assert len(signatures) == (2 if rotated else 1)
    from emulator.resources.webhooks.signing import sign

    assert signatures[0] == sign(secret, "msg_x", int(plan.headers["svix-timestamp"]), plan.body)


async def _claimed_job(emu: Any, message_id: str) -> dict[str, Any]:
    async with emu.transaction("default") as tx:
        seq = await tx.insert_now("jobs", {"account": "default", "kind": "webhook.deliver",
                                           "due_at": tx.now_db, "payload": "{}",
                                           "lane": "webhook.deliver:hook", "running": 1})
    return {"seq": seq, "account": "default", "payload": {"message_id": message_id}}


async def _jobs(emu: Any) -> list[int]:
    async with emu.transaction() as tx:
        return [row["seq"] for row in await tx.all("SELECT seq FROM jobs ORDER BY seq")]


def test_a_handed_off_outcome_is_recorded_with_its_job_row_deleted_by_the_next_flush(
        client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def scenario() -> tuple[list[int], list[int]]:
        await _messages(emu, ["msg_a", "msg_b"])
        jobs = [await _claimed_job(emu, message_id) for message_id in ("msg_a", "msg_b")]
        shared = ledger(emu)
        shared.hand_off(_plan(emu, "msg_a"), Outcome(200, "ok"), jobs[0])
        shared.hand_off(_plan(emu, "msg_b"), Outcome(503, "busy"), jobs[1])
        before = await _jobs(emu)  # nothing recorded yet: a crash now re-runs both jobs
        await emu.jobs.flush()
        return before, await _jobs(emu)

    before, after = _run(client, scenario())
    assert len(before) == 2
    attempts, messages = _run(client, _stored(emu))
    assert attempts == [("msg_a", 200), ("msg_b", 503)]
    assert messages == {"msg_a": ("success", 1), "msg_b": ("attempting", 1)}
    assert len(after) == 1 and after[0] not in before  # the two rows went; msg_b's retry is a new job


def test_an_outcome_handed_off_before_a_reset_writes_nothing_into_the_new_state(client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def scenario() -> None:
        await _messages(emu, ["msg_a"])
        job = await _claimed_job(emu, "msg_a")
        ledger(emu).hand_off(_plan(emu, "msg_a"), Outcome(200, "ok"), job)
        await emu.reset()
        await _messages(emu, ["msg_a"])  # the same message id in the new state
        await emu.jobs.flush()

    _run(client, scenario())
    attempts, messages = _run(client, _stored(emu))
    assert attempts == []
    assert messages == {"msg_a": ("pending", 0)}
