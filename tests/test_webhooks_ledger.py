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
            await tx.insert("webhook_attempts", {
                "id": attempt_id(emu.ids.seed, "msg_b", 1), "account": "default", "webhook_id": "other",
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
