"""Webhook delivery: sign, POST, record the attempt, schedule the retry. Reference: webhooks.md §4, §7.

Each delivery is a job (a row, so it survives a restart with a file database). A job runs in three
steps: read the message and sign it, POST it with no transaction open, hand the outcome to the ledger,
which records the attempt and the next step and deletes the job's row; the reads and the records of the
deliveries under way share transactions (ledger.py). A timeout
or a refused connection is an attempt like any other (status 0 and the reason), so nothing can crash
the runner or stall the queue.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from emulator.core.clock import from_db
from emulator.core.jobs import HANDED_OFF, schedule
from emulator.core.net import own_ports
from emulator.resources.webhooks.catalogue import DELIVER_JOB
from emulator.resources.webhooks.client import Client, ConnectError, SelfCallError
from emulator.resources.webhooks.faults import Fault, book
from emulator.resources.webhooks.ledger import INTERRUPTED, Outcome, Plan, ledger
from emulator.resources.webhooks.ledger import stop as stop_ledger

if TYPE_CHECKING:
    from emulator.core.db import Tx
    from emulator.core.emulator import Emulator
    from emulator.core.jobs import Job

# Recorded response bodies are capped: a receiver answering megabytes must not bloat the database.
RESPONSE_LIMIT = 64 * 1024
INTERRUPTED_TEXT = ("Interrupted: the emulator stopped before the endpoint answered; sent again when it"
                    " starts")


# ---- the job -----------------------------------------------------------------------------------

async def deliver(emu: Emulator, job: Job) -> str | None:
    shared = ledger(emu)
    plan = await shared.plan(job)
    if plan is None:
        return None
    # Time spent queued behind the endpoint's other deliveries counts against this attempt's budget:
    # a hanging endpoint times its queue out in one timeout (a flush waits that long, not one per
    # delivery), and its messages retry on schedule like any timeout.
    started = asyncio.get_running_loop().time()
    waited = _waited(emu, plan, float(job.get("queued_for", 0.0)), started)
    try:
        outcome = await _attempt(emu, plan, waited)
    except asyncio.CancelledError:
        if emu.stopping:  # recorded, so the delivery's history shows why the endpoint may see it twice
            shared.hand_off(plan, Outcome(0, INTERRUPTED_TEXT, INTERRUPTED), job)
        raise
    _remember_hang(emu, plan, outcome, started, waited)
    shared.hand_off(plan, outcome, job)
    return HANDED_OFF


def _hangs(emu: Emulator) -> dict[str, float]:
    """Endpoint (webhook id) → loop time at which its last attempt began that hung until its timeout."""
    return emu.state.setdefault("webhook_hangs", {})  # type: ignore[no-any-return]


def _waited(emu: Emulator, plan: Plan, queued: float, now: float) -> float:
    """The attempt's time already spent behind the endpoint: its own time queued as a claimed job, or,
    while the endpoint's last attempt hung, the time since that attempt began. Only some of an endpoint's
    due deliveries are claimed at a time (core/lanes.py LANE_BACKLOG), so the rest of a queue behind a hung
    endpoint times out at once too; an attempt a whole timeout after the hang (a retry) tries again."""
    since = _hangs(emu).get(plan.webhook_id)
    timeout = book(emu).timeout_ms / 1000
    if since is None or now - since >= 2 * timeout:
        return queued
    return max(queued, now - since)


def _remember_hang(emu: Emulator, plan: Plan, outcome: Outcome, started: float, waited: float) -> None:
    """An attempt that really waited out its budget marks the endpoint hung (an injected timeout, which
    answers at once, does not); any HTTP answer clears the mark."""
    if outcome.status:
        _hangs(emu).pop(plan.webhook_id, None)
        return
    budget = book(emu).timeout_ms / 1000 - waited
    spent = asyncio.get_running_loop().time() - started
    if outcome.reason == "timeout" and budget > 0 and spent >= 0.9 * budget:
        _hangs(emu)[plan.webhook_id] = started


async def _attempt(emu: Emulator, plan: Plan, waited: float = 0.0) -> Outcome:
    faults = book(emu)
    timeout = faults.timeout_ms / 1000
    if waited >= timeout:
        return Outcome(0, f"Timed out: no response within {timeout:g} s (queued behind earlier"
                          " deliveries to this endpoint that did not answer)", "timeout")
    fault = faults.decide(plan.webhook_id, plan.url)
    if fault is not None and fault.action != "delay":
        return _injected(fault, timeout)
    if fault is not None:
        delay = fault.delay_ms / 1000
        if delay >= timeout:  # a slow endpoint spends its time budget before it answers
            await asyncio.sleep(timeout)
            return _timed_out(timeout)
        await asyncio.sleep(delay)
        timeout -= delay
    return await post(session(emu), plan, timeout - waited, shown=timeout)


def _injected(fault: Fault, timeout: float) -> Outcome:
    if fault.action == "timeout":
        return Outcome(0, f"Timed out: no response within {timeout:g} s (injected)", "timeout")
    if fault.action == "refuse":
        return Outcome(0, "Connection refused (injected)", "refused")
    return Outcome(fault.status, fault.body, "injected")


def _timed_out(timeout: float) -> Outcome:
    return Outcome(0, f"Timed out: no response within {timeout:g} s", "timeout")


async def post(client: Client, plan: Plan, timeout: float, shown: float | None = None) -> Outcome:
    """One POST within `timeout` s (reported as `shown`: the attempt's whole budget). Failures without
    an HTTP answer are recorded as status 0 with the reason as the response text (the reference
    suggests an empty string; a reason is what a tester needs)."""
    try:
        reply = await client.post(plan.url, plan.headers, plan.body, timeout, RESPONSE_LIMIT)
    except TimeoutError:
        return _timed_out(timeout if shown is None else shown)
    except SelfCallError as exc:
        return Outcome(0, f"Not sent: {exc}", "refused")
    except ConnectError as exc:
        return Outcome(0, f"Connection refused: {exc}", "refused")
    except (ValueError, OSError) as exc:
        return Outcome(0, f"Delivery failed: {type(exc).__name__}: {exc}", "error")
    return Outcome(reply.status, reply.body.decode("utf-8", "replace"))


# ---- lifecycle ---------------------------------------------------------------------------------

def session(emu: Emulator) -> Client:
    """One shared client (keep-alive to each receiver), created at the first delivery."""
    client = emu.state.get("webhook_session")
    if client is None or client.closed:
        client = emu.state["webhook_session"] = Client(lambda: own_ports(emu.state, emu.settings))
    return client  # type: ignore[no-any-return]


def install(emu: Emulator) -> None:
    emu.jobs.handler(DELIVER_JOB, deliver, lane=endpoint_lane)
    emu.jobs.recovers(DELIVER_JOB, requeue_unsent)


# A delivery started as its event committed keeps no job row (core/jobs.py `schedule`): its message,
# pending and never attempted, is the record that it is due (issue 28: a job row written and deleted
# per event of a burst). Such a message with no automatic delivery queued lost its delivery to a stop,
# a crash or a pause.
_UNSENT = (
    "SELECT account, id, webhook_id, next_attempt_at FROM webhook_messages"
    " WHERE status = 'pending' AND attempts = 0 AND next_attempt_at IS NOT NULL"
    " AND id NOT IN (SELECT json_extract(payload, '$.message_id') FROM jobs"
    "  WHERE kind = ? AND json_extract(payload, '$.mode') = 'auto')"
    " ORDER BY seq"
)


async def requeue_unsent(tx: Tx) -> None:
    """Give each delivery lost that way its job row back, due when its message was made."""
    for row in await tx.all(_UNSENT, (DELIVER_JOB,)):
        payload = {"message_id": row["id"], "mode": "auto", "webhook_id": row["webhook_id"]}
        await schedule(tx.as_account(row["account"]), DELIVER_JOB, from_db(row["next_attempt_at"]), payload)


def endpoint_lane(job: Job) -> str:
    """Deliveries to one endpoint share a lane (jobs from before lanes existed: one per message)."""
    payload = job["payload"]
    return str(payload.get("webhook_id") or payload["message_id"])


async def stop(emu: Emulator) -> None:
    await stop_ledger(emu)
    client = emu.state.pop("webhook_session", None)
    if client is not None:
        await client.close()
