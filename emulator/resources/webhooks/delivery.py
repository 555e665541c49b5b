"""Webhook delivery: sign, POST, record the attempt, schedule the retry. Reference: webhooks.md §4, §7.

Each delivery is a job (a row, so it survives a restart with a file database). A job runs in three
steps: read the message and sign it inside a short transaction, POST it with no transaction open,
record the attempt and the next step inside another. A timeout or a refused connection is an attempt
like any other (status 0 and the reason), so nothing can crash the runner or stall the queue.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from emulator.core.clock import from_db, to_db
from emulator.core.jobs import schedule
from emulator.resources.webhooks.catalogue import DELIVER_JOB, attempt_id
from emulator.resources.webhooks.client import Client, ConnectError
from emulator.resources.webhooks.faults import Fault, book

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx
    from emulator.core.emulator import Emulator
    from emulator.core.jobs import Job

# Delay after each failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h → 8 attempts in all [docs].
RETRY_DELAYS = (5, 300, 1800, 7200, 18000, 36000, 36000)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
# Recorded response bodies are capped: a receiver answering megabytes must not bloat the database.
RESPONSE_LIMIT = 64 * 1024
USER_AGENT = "Svix-Webhooks/1.0 (resend-emulator)"


@dataclass(frozen=True)
class Plan:
    account: str
    message_id: str
    webhook_id: str
    url: str
    body: bytes
    headers: dict[str, str]
    mode: str
    sent_at: datetime


@dataclass(frozen=True)
class Outcome:
    status: int
    response: str
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


# ---- signing (Svix / Standard Webhooks) --------------------------------------------------------

def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>` with the key after `whsec_`."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_header(secrets: list[str], message_id: str, timestamp: int, body: bytes) -> str:
    return " ".join(sign(secret, message_id, timestamp, body) for secret in secrets)


def active_secrets(webhook: Row, now: datetime) -> list[str]:
    """The current secret, then the previous one while its 24 h overlap lasts (on the clock)."""
    secrets = [webhook["secret"]]
    until = webhook["previous_until"]
    if webhook["previous_secret"] and until and from_db(until) > now:
        secrets.append(webhook["previous_secret"])
    return secrets


def build_headers(webhook: Row, message_id: str, now: datetime, body: bytes) -> dict[str, str]:
    # Stamped with the time of this attempt, not the event's: verifiers allow ±5 minutes.
    timestamp = int(now.timestamp())
    return {
        "content-type": "application/json", "user-agent": USER_AGENT, "svix-id": message_id,
        "svix-timestamp": str(timestamp),
        "svix-signature": signature_header(active_secrets(webhook, now), message_id, timestamp, body),
    }


# ---- the job -----------------------------------------------------------------------------------

async def deliver(emu: Emulator, job: Job) -> None:
    plan = await _prepare(emu, job)
    if plan is None:
        return
    # Time spent queued behind the endpoint's other deliveries counts against this attempt's budget:
    # a hanging endpoint times its queue out in one timeout (a flush waits that long, not one per
    # delivery), and its messages retry on schedule like any timeout.
    started = asyncio.get_running_loop().time()
    waited = _waited(emu, plan, float(job.get("queued_for", 0.0)), started)
    outcome = await _attempt(emu, plan, waited)
    _remember_hang(emu, plan, outcome, started, waited)
    await _record(emu, plan, outcome)


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

_MESSAGE_AND_HOOK = (
    "SELECT m.*, w.endpoint, w.status AS hook_status, w.secret, w.previous_secret, w.previous_until"
    " FROM webhook_messages m LEFT JOIN webhooks w ON w.id = m.webhook_id AND w.account = m.account"
    " WHERE m.id = ? AND m.account = ?"
)


async def _prepare(emu: Emulator, job: Job) -> Plan | None:
    mode, message_id = job["payload"].get("mode", "auto"), job["payload"]["message_id"]
    async with emu.transaction(job["account"]) as tx:
        row = await tx.one(_MESSAGE_AND_HOOK, (message_id, tx.account))
        if row is None or (mode == "auto" and row["status"] in ("success", "failed")):
            return None  # webhook deleted, or a job repeated after a restart
        if row["hook_status"] != "enabled":
            # A disabled endpoint gets no attempts [docs]; its pending retries end here (replayable later).
            if mode == "auto":
                await tx.update("webhook_messages", message_id, {"status": "failed", "next_attempt_at": None})
            return None
        body = row["payload"].encode()
        return Plan(tx.account, message_id, row["webhook_id"], row["endpoint"], body,
                    build_headers(row, message_id, tx.now, body), mode, tx.now)


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
    except ConnectError as exc:
        return Outcome(0, f"Connection refused: {exc}", "refused")
    except (ValueError, OSError) as exc:
        return Outcome(0, f"Delivery failed: {type(exc).__name__}: {exc}", "error")
    return Outcome(reply.status, reply.body.decode("utf-8", "replace"))


async def _record(emu: Emulator, plan: Plan, outcome: Outcome) -> None:
    async with emu.transaction(plan.account) as tx:
        message = await tx.one("SELECT * FROM webhook_messages WHERE id = ? AND account = ?",
                               (plan.message_id, tx.account))
        if message is None:
            return  # the webhook was deleted while the request was in flight
        tries = message["tries"] + 1  # automatic and replayed attempts alike
        await tx.insert("webhook_attempts", {
            "id": attempt_id(emu.ids.seed, plan.message_id, tries),
            "account": tx.account, "webhook_id": plan.webhook_id, "message_id": plan.message_id,
            "http_status_code": outcome.status, "response": outcome.response, "reason": outcome.reason,
            "sent_at": to_db(plan.sent_at),
        })
        changes = await _next_state(tx, message, plan, outcome)
        await tx.update("webhook_messages", plan.message_id, {"tries": tries, **changes})


async def _next_state(tx: Tx, message: Row, plan: Plan, outcome: Outcome) -> dict[str, Any]:
    if plan.mode == "replay":
        # A replay leaves the automatic schedule alone [docs]; it only revives a failed message.
        return {"status": "success"} if outcome.ok and message["status"] == "failed" else {}
    attempts = message["attempts"] + 1
    if outcome.ok:
        return {"status": "success", "attempts": attempts, "next_attempt_at": None}
    if attempts >= MAX_ATTEMPTS:
        return {"status": "failed", "attempts": attempts, "next_attempt_at": None}
    delay = RETRY_DELAYS[attempts - 1] * book(tx.emu).retry_scale
    due = tx.now + timedelta(seconds=delay)
    await schedule(tx, DELIVER_JOB, due, {"message_id": plan.message_id, "mode": "auto",
                                          "webhook_id": plan.webhook_id})
    return {"status": "attempting", "attempts": attempts, "next_attempt_at": to_db(due)}


# ---- lifecycle ---------------------------------------------------------------------------------

def session(emu: Emulator) -> Client:
    """One shared client (keep-alive to each receiver), created at the first delivery."""
    client = emu.state.get("webhook_session")
    if client is None or client.closed:
        client = emu.state["webhook_session"] = Client()
    return client  # type: ignore[no-any-return]


def install(emu: Emulator) -> None:
    emu.jobs.handler(DELIVER_JOB, deliver, lane=endpoint_lane)


def endpoint_lane(job: Job) -> str:
    """Deliveries to one endpoint share a lane (jobs from before lanes existed: one per message)."""
    payload = job["payload"]
    return str(payload.get("webhook_id") or payload["message_id"])


async def stop(emu: Emulator) -> None:
    client = emu.state.pop("webhook_session", None)
    if client is not None:
        await client.close()
