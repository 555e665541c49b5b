"""The database side of webhook deliveries, shared by the deliveries under way. Reference: webhooks.md §4, §7.

Before its POST a delivery reads its message and signs it; after, it records the attempt and the next
step (success, a retry on the schedule, failure). One transaction each, those two cost more CPU than
the POST itself in a burst of events (issue 28). So:
- a delivery started as its event committed (catalogue.py `fan_out`) signs from the body it carries
  and the cached webhook, reading nothing;
- the others that start, and the records of those that end, share transactions: one read of all their
  messages, the attempts written together, one COMMIT; records wait a moment for company.
As with the group commit of core/db.py, no delivery goes on before the COMMIT of the transaction that
read its message; a batch that fails is retried item by item, so one broken item fails no other.

A delivery's job hands its outcome off (`hand_off`) rather than waiting for its record: its slot frees as
its POST ends, and the job row is deleted in the transaction that records the attempt, so a crash before
that re-runs the job, which finds its message as it was (a repeat of a recorded success sends nothing).
The runner's `flush` waits for the records (jobs.py `follow`); a reset or a restore drops those of the
state before it (jobs.py `generation`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from emulator.core import metrics
from emulator.core.clock import to_db
from emulator.core.jobs import schedule
from emulator.core.tx import update_sql
from emulator.resources.webhooks.catalogue import DELIVER_JOB, attempt_id, enabled_hook
from emulator.resources.webhooks.faults import book
from emulator.resources.webhooks.signing import build_headers

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx
    from emulator.core.emulator import Emulator
    from emulator.core.jobs import Job

# Delay after each failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h → 8 attempts in all [docs].
RETRY_DELAYS = (5, 300, 1800, 7200, 18000, 36000, 36000)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
# The reason of an attempt cut short by a stop (SIGTERM): recorded, but not one of the MAX_ATTEMPTS, and
# due again at once, so the next start sends it (issue 38: no delivery lost, a duplicate allowed).
INTERRUPTED = "interrupted"
# Records wait up to RECORD_WAIT seconds for company (RECORD_BATCH of them, or a delivery to plan, ends
# the wait): nothing waits for a handed-off record but `flush`, and a burst that keeps pace with its
# events records ~1 attempt per transaction otherwise (issue 28).
RECORD_BATCH = 64
RECORD_WAIT = 0.005
_MESSAGES_AND_HOOKS = (
    "SELECT m.*, w.endpoint, w.status AS hook_status, w.secret, w.previous_secret, w.previous_until"
    " FROM webhook_messages m LEFT JOIN webhooks w ON w.id = m.webhook_id AND w.account = m.account"
    " WHERE m.id IN ({})"
)
_MESSAGES = "SELECT seq, id, account, status, attempts, tries FROM webhook_messages WHERE id IN ({})"
_DELETE_JOB = "DELETE FROM jobs WHERE seq = ?"
_INSERT_ATTEMPT = (
    "INSERT INTO webhook_attempts (id, account, webhook_id, message_id, http_status_code, response,"
    " reason, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


log = logging.getLogger("emulator.webhooks")


# Plain classes, not dataclasses: a dataclass costs ~0.5 ms of every start (issue 28, fixture), and a
# frozen one's fields are set one `object.__setattr__` call each (a Plan and an Outcome per delivery).
class Plan:
    """What one attempt POSTs, signed when it is made."""

    __slots__ = ("account", "body", "headers", "message_id", "mode", "sent_at", "url", "webhook_id")

    def __init__(self, account: str, message_id: str, webhook_id: str, url: str, body: bytes,
                 headers: dict[str, str], mode: str, sent_at: datetime) -> None:
        self.account, self.message_id, self.webhook_id, self.url = account, message_id, webhook_id, url
        self.body, self.headers, self.mode, self.sent_at = body, headers, mode, sent_at


class Outcome:
    """How an attempt ended: the HTTP status (0 without an answer), the response text, and why."""

    __slots__ = ("reason", "response", "status")

    def __init__(self, status: int, response: str, reason: str | None = None) -> None:
        self.status, self.response, self.reason = status, response, reason

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class _Start:
    __slots__ = ("done", "job")

    def __init__(self, job: Job, done: asyncio.Future[Plan | None]) -> None:
        self.job, self.done = job, done


class _End:
    """A record to make: awaited (`done`), or handed off with the job row it ends (`seq`, None for a
    delivery started at once, which has none; in the runner's `generation` of the state)."""

    __slots__ = ("done", "generation", "outcome", "plan", "seq")

    def __init__(self, plan: Plan, outcome: Outcome, done: asyncio.Future[None] | None,
                 seq: int | None = None, generation: int = 0) -> None:
        self.plan, self.outcome, self.done, self.seq, self.generation = plan, outcome, done, seq, generation

    def wanted(self, generation: int) -> bool:
        """Whether to record it still: an awaited one not cancelled meanwhile, a handed-off one not of a
        state that a reset or a restore has replaced since."""
        return self.generation == generation if self.done is None else not self.done.done()


class Ledger:
    """One per emulator (`ledger(emu)`); its batches run one at a time in a task of their own."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self._starts: list[_Start] = []
        self._ends: list[_End] = []
        self.task: asyncio.Task[None] | None = None
        self._company: asyncio.Future[None] | None = None  # set while records wait for company
        self._hurried = False  # someone waits for the records (`hurry`): no waiting for company

    async def plan(self, job: Job) -> Plan | None:
        """What to POST for `job` now, signed now; None when there is nothing to send (the webhook was
        deleted or disabled, or the job is a repeat after a restart)."""
        return _fresh(self.emu, job) or await self._read(job)

    async def _read(self, job: Job) -> Plan | None:
        start = _Start(job, self._future())
        self._starts.append(start)
        self._enough()
        return await start.done

    async def record(self, plan: Plan, outcome: Outcome) -> None:
        """Record the attempt and the message's next state; returns once committed."""
        end = _End(plan, outcome, self._future())
        self._add(end)
        await end.done  # type: ignore[misc]

    def hand_off(self, plan: Plan, outcome: Outcome, job: Job) -> None:
        """Record the attempt and the message's next state, and delete `job`'s row with them, soon."""
        if self.task is None:
            self._start_task()
        self._add(_End(plan, outcome, None, job["seq"], self.emu.jobs.generation))

    def _add(self, end: _End) -> None:
        self._ends.append(end)
        if len(self._ends) >= RECORD_BATCH:
            self._enough()

    def _enough(self) -> None:
        if self._company is not None:
            _settle(self._company, None)

    def hurry(self) -> None:
        """Make the records waiting (and any that come before they are made) without waiting for more."""
        self._hurried = True
        self._enough()

    def _future(self) -> asyncio.Future[Any]:
        if self.task is None:
            self._start_task()
        return asyncio.get_running_loop().create_future()

    def _start_task(self) -> None:
        # Starts on the next loop turn: whatever else asks in this one joins the batch.
        self.task = asyncio.get_running_loop().create_task(self._run())
        self.emu.jobs.follow(self.task, self.hurry)

    async def _run(self) -> None:
        try:
            while self._starts or self._ends:
                if not self._starts and len(self._ends) < RECORD_BATCH and not self._hurried:
                    await self._wait_for_company()
                starts, ends, self._starts, self._ends = self._starts, self._ends, [], []
                try:
                    await self._batch(starts, ends)
                except Exception:
                    items: list[_Start | _End] = [*ends, *starts]
                    for item in items:
                        await self._alone(item)
        finally:
            self.task = None
            self._hurried = False

    async def _wait_for_company(self) -> None:
        loop = asyncio.get_running_loop()
        self._company = loop.create_future()
        timer = loop.call_later(RECORD_WAIT, _settle, self._company, None)
        try:
            await self._company
        finally:
            timer.cancel()
            self._company = None

    async def _batch(self, starts: list[_Start], ends: list[_End]) -> None:
        async with self.emu.transaction() as tx:
            # Checked under the lock: a delivery cancelled by a reset or a restore meanwhile writes
            # nothing into the new state.
            generation = self.emu.jobs.generation
            ends = [end for end in ends if end.wanted(generation)]
            starts = [start for start in starts if not start.done.done()]
            await _write(tx, ends)
            plans = await _read(tx, [start.job for start in starts])
        for end in ends:
            if end.done is not None:
                _settle(end.done, None)
        for start, plan in zip(starts, plans, strict=True):
            _settle(start.done, plan)

    async def _alone(self, item: _Start | _End) -> None:
        try:
            if isinstance(item, _End):
                await self._batch([], [item])
            else:
                await self._batch([item], [])
        except Exception as exc:
            if item.done is None:
                # As a job that fails: logged, and its row goes (with the next commit).
                log.exception("recording webhook attempt at %s failed", item.plan.message_id)
                if item.seq is not None:
                    self.emu.db.defer(_DELETE_JOB, (item.seq,))
            elif not item.done.done():
                item.done.set_exception(exc)


def _fresh(emu: Emulator, job: Job) -> Plan | None:
    """The plan of a delivery started as its event was committed (catalogue.py `fan_out`), from the
    body it carries and the cached webhook: its message is new (pending, never attempted), so there is
    nothing to read. None when the webhook changed since (the database decides)."""
    body: str | None = job.get("body")
    hook = None if body is None else enabled_hook(emu, job["payload"]["webhook_id"])
    if body is None or hook is None or hook["account"] != job["account"]:
        return None
    now, message_id, data = emu.clock.now(), job["payload"]["message_id"], body.encode()
    return Plan(job["account"], message_id, hook["id"], hook["endpoint"], data,
                build_headers(hook, message_id, now, data), "auto", now)


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _marks(count: int) -> str:
    return ", ".join("?" * count)


async def _read(tx: Tx, jobs: Sequence[Job]) -> list[Plan | None]:
    if not jobs:
        return []
    ids = list(dict.fromkeys(job["payload"]["message_id"] for job in jobs))
    rows = {row["id"]: row for row in await tx.all(_MESSAGES_AND_HOOKS.format(_marks(len(ids))), ids)}
    return [await _plan(tx, job, rows.get(job["payload"]["message_id"])) for job in jobs]


async def _plan(tx: Tx, job: Job, row: Row | None) -> Plan | None:
    mode, message_id = job["payload"].get("mode", "auto"), job["payload"]["message_id"]
    if row is None or row["account"] != job["account"]:
        return None  # webhook deleted
    if mode == "auto" and row["status"] in ("success", "failed"):
        return None  # a job repeated after a restart
    if row["hook_status"] != "enabled":
        # A disabled endpoint gets no attempts [docs]; its pending retries end here (replayable later).
        if mode == "auto":
            row["status"] = "failed"
            metrics.count_on_commit(tx, metrics.of(tx.emu).deliveries, ("disabled",))
            await tx.as_account(row["account"]).update(
                "webhook_messages", message_id, {"status": "failed", "next_attempt_at": None})
        return None
    body = row["payload"].encode()
    return Plan(row["account"], message_id, row["webhook_id"], row["endpoint"], body,
                build_headers(row, message_id, tx.now, body), mode, tx.now)


async def _write(tx: Tx, ends: Sequence[_End]) -> None:
    if not ends:
        return
    await tx.many(_DELETE_JOB, [(end.seq,) for end in ends if end.seq is not None])
    ids = list(dict.fromkeys(end.plan.message_id for end in ends))
    messages = {row["id"]: row for row in await tx.all(_MESSAGES.format(_marks(len(ids))), ids)}
    seed, attempts = tx.emu.ids.seed, []
    for end in ends:
        plan, outcome = end.plan, end.outcome
        message = messages.get(plan.message_id)
        if message is None or message["account"] != plan.account:
            continue  # the webhook was deleted while the request was in flight
        tries = message["tries"] + 1  # automatic and replayed attempts alike
        attempts.append((attempt_id(seed, message["seq"], plan.message_id, tries), plan.account,
                         plan.webhook_id, plan.message_id, outcome.status, outcome.response,
                         outcome.reason, to_db(plan.sent_at)))
        changes = {"tries": tries, **await _next_state(tx, message, plan, outcome)}
        metrics.count_on_commit(tx, metrics.of(tx.emu).deliveries, (_outcome_label(outcome, changes),))
        message.update(changes)  # a second attempt at the same message in this batch builds on this one
        tx.queue(update_sql("webhook_messages", tuple(changes)),
                 (*changes.values(), plan.message_id, plan.account))
    await tx.many(_INSERT_ATTEMPT, attempts)


def _outcome_label(outcome: Outcome, changes: dict[str, Any]) -> str:
    """The attempt as `resend_emulator_webhook_deliveries_total` counts it; a failed replay leaves the
    automatic schedule as it was, so no attempt follows from it: `failed`."""
    if outcome.ok:
        return "succeeded"
    return "retrying" if changes.get("status") == "attempting" else "failed"


async def _next_state(tx: Tx, message: Row, plan: Plan, outcome: Outcome) -> dict[str, Any]:
    if plan.mode == "replay":
        # A replay leaves the automatic schedule alone [docs]; it only revives a failed message.
        return {"status": "success"} if outcome.ok and message["status"] == "failed" else {}
    if outcome.reason == INTERRUPTED:
        await schedule(tx.as_account(plan.account), DELIVER_JOB, tx.now,
                       {"message_id": plan.message_id, "mode": "auto", "webhook_id": plan.webhook_id})
        return {"next_attempt_at": to_db(tx.now)}
    attempts = message["attempts"] + 1
    if outcome.ok:
        return {"status": "success", "attempts": attempts, "next_attempt_at": None}
    if attempts >= MAX_ATTEMPTS:
        return {"status": "failed", "attempts": attempts, "next_attempt_at": None}
    delay = RETRY_DELAYS[attempts - 1] * book(tx.emu).retry_scale
    due = tx.now + timedelta(seconds=delay)
    await schedule(tx.as_account(plan.account), DELIVER_JOB, due,
                   {"message_id": plan.message_id, "mode": "auto", "webhook_id": plan.webhook_id})
    return {"status": "attempting", "attempts": attempts, "next_attempt_at": to_db(due)}


def ledger(emu: Emulator) -> Ledger:
    found = emu.state.get("webhook_ledger")
    if found is None:
        found = emu.state["webhook_ledger"] = Ledger(emu)
    return found  # type: ignore[no-any-return]


async def stop(emu: Emulator) -> None:
    """Make the records handed off so far (at once), so a restart re-sends none of their deliveries."""
    found = emu.state.pop("webhook_ledger", None)
    if found is not None and found.task is not None:
        found.hurry()
        await asyncio.gather(found.task, return_exceptions=True)
