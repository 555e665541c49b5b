"""The job runner: due jobs run on the clock, in-transaction jobs are isolated from each other."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from starlette.testclient import TestClient

from emulator.core.db import Tx
from emulator.core.jobs import schedule
from emulator.core.lanes import START_WAIT


def _run(client: TestClient, coroutine: Any) -> Any:
    return client.portal.call(lambda: coroutine)  # type: ignore[union-attr]


async def _accounts(emu: Any) -> list[str]:
    async with emu.transaction() as tx:
        return [row["id"] for row in await tx.all("SELECT id FROM accounts ORDER BY id")]


async def _write(tx: Tx, job: dict[str, Any]) -> None:
    tx.queue("INSERT INTO accounts (id, created_at) VALUES (?, 'x')", (job["payload"]["name"],))


async def _write_then_fail(tx: Tx, job: dict[str, Any]) -> None:
    await _write(tx, job)
    if job["payload"].get("read_first"):
        await tx.one("SELECT 1")  # sends the queue: undoing needs the savepoint
    raise RuntimeError("broken job")


@pytest.mark.parametrize("read_first", [False, True])
def test_a_failing_job_is_undone_without_undoing_the_others(client: TestClient, read_first: bool) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]
    emu.jobs.tx_handler("test.write", _write)
    emu.jobs.tx_handler("test.fail", _write_then_fail)

    async def scenario() -> list[str]:
        async with emu.transaction("default") as tx:
            await schedule(tx, "test.write", tx.now, {"name": "first"})
            await schedule(tx, "test.fail", tx.now, {"name": "broken", "read_first": read_first})
            await schedule(tx, "test.write", tx.now, {"name": "last"})
        await emu.jobs.flush()
        return await _accounts(emu)

    assert _run(client, scenario()) == ["default", "first", "last"]


def test_jobs_wait_for_the_clock(client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]
    emu.jobs.tx_handler("test.write", _write)

    async def schedule_later() -> None:
        async with emu.transaction("default") as tx:
            await schedule(tx, "test.write", tx.now + timedelta(minutes=5), {"name": "later"})
        await emu.jobs.flush()

    _run(client, schedule_later())
    assert "later" not in _run(client, _accounts(emu))
    client.post("/_emulator/clock/advance", json={"minutes": 5})
    assert "later" in _run(client, _accounts(emu))
    async def remaining() -> int:
        async with emu.transaction() as tx:
            return len(await tx.all("SELECT seq FROM jobs"))
    assert _run(client, remaining()) == 0


def test_a_blocked_lane_holds_a_bounded_backlog_and_never_delays_another(client: TestClient) -> None:
    from emulator.core.lanes import LANE_BACKLOG

    emu = client.app.state.emu  # type: ignore[attr-defined]
    started: dict[str, list[int]] = {"slow": [], "fast": []}

    async def scenario() -> tuple[int, list[int]]:
        gate = asyncio.Event()

        async def deliver(_: Any, job: dict[str, Any]) -> None:
            started[job["payload"]["lane"]].append(job["payload"]["n"])
            if job["payload"]["lane"] == "slow":
                await gate.wait()

        emu.jobs.handler("test.deliver", deliver, lane=lambda job: job["payload"]["lane"])
        async with emu.transaction("default") as tx:
            for n in range(1000):
                await schedule(tx, "test.deliver", tx.now, {"lane": "slow", "n": n})
                if n % 100 == 0:
                    await schedule(tx, "test.deliver", tx.now, {"lane": "fast", "n": n})
        for _ in range(20):  # passes, as the runner makes them while the slow lane hangs
            await emu.jobs.run_due()
            await asyncio.sleep(0)
        claimed = len(started["slow"])
        gate.set()
        await emu.jobs.flush()
        return claimed, started["slow"]

    claimed, slow = _run(client, scenario())
    assert started["fast"] == list(range(0, 1000, 100))  # all of them while the slow lane hung
    assert claimed <= LANE_BACKLOG  # the rest of the slow lane waited as rows, not as tasks
    assert slow == list(range(1000))  # every one, started in the order they were scheduled


def test_one_advance_runs_each_job_at_its_own_due_time_in_due_order(client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]
    ran: list[tuple[str, str]] = []

    async def record(tx: Tx, job: dict[str, Any]) -> None:
        ran.append((job["payload"]["name"], tx.now.strftime("%H:%M:%S")))
        if job["payload"].get("again"):  # reschedules itself a minute after it ran, twice
            await schedule(tx, "test.record", tx.now + timedelta(minutes=1),
                           {"name": job["payload"]["name"], "again": job["payload"]["again"] - 1})

    emu.jobs.tx_handler("test.record", record)

    async def plan() -> None:
        async with emu.transaction("default") as tx:
            await schedule(tx, "test.record", tx.now + timedelta(minutes=30), {"name": "late"})
            await schedule(tx, "test.record", tx.now + timedelta(minutes=10), {"name": "chain", "again": 2})
            await schedule(tx, "test.record", tx.now + timedelta(hours=2), {"name": "beyond"})

    _run(client, plan())
    assert client.post("/_emulator/clock/advance", json={"hours": 1}).status_code == 200
    assert ran == [("chain", "09:10:00"), ("chain", "09:11:00"), ("chain", "09:12:00"), ("late", "09:30:00")]
    assert client.get("/_emulator/clock").json()["now"] == "2026-05-14T10:00:00.000000Z"


def _lane_handler(emu: Any, started: list[tuple[int, Any]], gate: asyncio.Event | None = None) -> None:
    async def deliver(_: Any, job: dict[str, Any]) -> None:
        started.append((job["payload"]["n"], job.get("memo")))
        if gate is not None:
            await gate.wait()

    emu.jobs.handler("test.deliver", deliver, lane=lambda job: "one")


async def _job_rows(emu: Any) -> list[tuple[int, int]]:
    async with emu.transaction() as tx:
        rows = await tx.all("SELECT payload, running FROM jobs ORDER BY seq")
    return [(int(row["payload"].split(":")[1].rstrip("}")), row["running"]) for row in rows]


def test_a_job_added_at_once_starts_after_its_commit_with_its_memo(client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]
    started: list[tuple[int, Any]] = []
    gate = asyncio.Event()
    _lane_handler(emu, started, gate)

    async def scenario() -> tuple[list[tuple[int, int]], list[tuple[int, Any]]]:
        with pytest.raises(RuntimeError):
            async with emu.transaction("default") as tx:
                await schedule(tx, "test.deliver", tx.now, {"n": 0}, at_once=True, memo={"memo": "gone"})
                raise RuntimeError("rolled back")
        async with emu.transaction("default") as tx:
            await schedule(tx, "test.deliver", tx.now, {"n": 1}, at_once=True, memo={"memo": "kept"})
            assert started == []  # not before the commit
        await asyncio.sleep(0)
        # Running without a pass of the runner, its row claimed so no pass takes it again.
        seen = (await _job_rows(emu), list(started))
        gate.set()
        await emu.jobs.flush()
        return seen

    rows, seen = _run(client, scenario())
    assert rows == [(1, 1)] and seen == [(1, "kept")]
    assert started == [(1, "kept")]  # once, and the rolled-back job never
    assert _run(client, _job_rows(emu)) == []


def test_a_job_added_at_once_never_overtakes_the_waiting_jobs_of_its_lane(client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]
    started: list[tuple[int, Any]] = []
    _lane_handler(emu, started)

    async def scenario() -> list[int]:
        async with emu.transaction("default") as tx:
            for n in range(3):
                await schedule(tx, "test.deliver", tx.now, {"n": n})
            await schedule(tx, "test.deliver", tx.now, {"n": 3}, at_once=True)
            claimed = [row["running"] for row in await tx.all("SELECT running FROM jobs ORDER BY seq")]
        await emu.jobs.flush()
        return claimed  # type: ignore[no-any-return]

    assert _run(client, scenario()) == [0, 0, 0, 0]  # it waited behind the others, unclaimed
    assert [n for n, _ in started] == [0, 1, 2, 3]
    # The lane is drained: a job added now is claimed as it is added again.
    _run(client, _add_at_once(emu, 4))
    assert started[-1] == (4, None)


async def _add_at_once(emu: Any, n: int) -> None:
    async with emu.transaction("default") as tx:
        await schedule(tx, "test.deliver", tx.now, {"n": n}, at_once=True)
        assert (await tx.one("SELECT running FROM jobs"))["running"] == 1
    await emu.jobs.flush()


def test_a_job_added_at_once_while_the_runner_is_paused_runs_after(client: TestClient) -> None:
    emu = client.app.state.emu  # type: ignore[attr-defined]
    started: list[tuple[int, Any]] = []
    _lane_handler(emu, started)

    async def scenario() -> list[tuple[int, Any]]:
        async with emu.jobs.paused():
            async with emu.transaction("default") as tx:
                await schedule(tx, "test.deliver", tx.now, {"n": 7}, at_once=True)
            await asyncio.sleep(0)
            during = list(started)
        await emu.jobs.flush()
        return during

    assert _run(client, scenario()) == []
    assert started == [(7, None)]


async def _add(emu: Any, n: int) -> None:
    async with emu.transaction("default") as tx:
        await schedule(tx, "test.deliver", tx.now, {"n": n}, at_once=True)
    await asyncio.sleep(0)


def _gated_lane(client: TestClient) -> tuple[Any, list[tuple[int, Any]], asyncio.Event]:
    """The app's emulator, with `test.deliver` jobs that note their start and then wait for the gate."""
    emu = client.app.state.emu  # type: ignore[attr-defined]
    started: list[tuple[int, Any]] = []
    gate = asyncio.Event()
    _lane_handler(emu, started, gate)
    return emu, started, gate


def test_jobs_added_at_once_while_others_run_wait_for_company_then_start_together(client: TestClient) -> None:
    emu, started, gate = _gated_lane(client)

    async def scenario() -> list[list[int]]:
        await _add(emu, 0)
        alone = [n for n, _ in started]  # nothing else ran: it started at once
        for n in (1, 2, 3):
            await _add(emu, n)
        waiting = [n for n, _ in started]
        await asyncio.sleep(START_WAIT * 5)
        together = [n for n, _ in started]
        gate.set()
        await emu.jobs.flush()
        return [alone, waiting, together]

    assert _run(client, scenario()) == [[0], [0], [0, 1, 2, 3]]
    assert [n for n, _ in started] == [0, 1, 2, 3]


def test_a_flush_starts_the_jobs_waiting_for_company_and_waits_for_them(client: TestClient) -> None:
    emu, started, gate = _gated_lane(client)

    async def scenario() -> list[int]:
        await _add(emu, 0)
        for n in (1, 2):
            await _add(emu, n)
        gate.set()
        await emu.jobs.flush()
        return [n for n, _ in started]

    assert _run(client, scenario()) == [0, 1, 2]
    assert _run(client, _job_rows(emu)) == []


def test_jobs_waiting_for_company_when_the_runner_pauses_run_after_it(client: TestClient) -> None:
    emu, started, gate = _gated_lane(client)

    async def scenario() -> list[int]:
        await _add(emu, 0)
        await _add(emu, 1)
        async with emu.jobs.paused():
            await asyncio.sleep(START_WAIT * 5)
            during = [n for n, _ in started]
        gate.set()
        await emu.jobs.flush()
        return during

    assert _run(client, scenario()) == [0]  # 1 never started: the pause dropped it before its start
    # Its claimed row went back to the passes, and it ran once after the pause.
    assert [n for n, _ in started] == [0, 1]
    assert _run(client, _job_rows(emu)) == []
