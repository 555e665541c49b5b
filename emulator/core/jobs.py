"""Work that falls due on the clock: scheduled sends, delivery status changes, webhook retries.

A job is a row (kind, due time, payload). The runner wakes when a job is added, when the clock moves,
or when the next due time is reached on a running clock; it runs due jobs outside any transaction
(handlers open their own), so slow work such as an HTTP delivery never blocks API requests.
`flush()` runs everything due now, and whatever that makes due, then returns: tests never sleep.
`run_until(target)` moves the clock there through every due time on the way, so work that reschedules
itself (a delivery outcome's follow-up, a retry) runs as often as it would have on a running clock.

Chunked jobs (an import, a broadcast's fan-out) do work that grows with the data: each call of their
step function does one bounded chunk in a long transaction of its own (db.py: slices with breaths
between, a COMMIT off the loop) and says what is left (`MORE`, a later due time, or `DONE`). The step
moves the resource's own cursor in the same transaction as the rows it writes, and the job row is
deleted or rescheduled with the last chunk: after a crash the job restarts (`start()`) from the last
committed cursor. Between chunks other requests run. A step that catches up (an import, 500 rows due a
second) does all that is due when it runs, each part stamped with its own due time.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime, timedelta
from typing import Any, Protocol

from emulator.core.clock import from_db, to_db
from emulator.core.db import Database, Host, Tx
from emulator.core.jsontext import compact, loads
from emulator.core.lanes import Gathered, Lane, Lanes

log = logging.getLogger("emulator.jobs")

TABLES = [
    """CREATE TABLE IF NOT EXISTS jobs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        account TEXT NOT NULL,
        kind TEXT NOT NULL,
        due_at TEXT NOT NULL,
        running INTEGER NOT NULL DEFAULT 0,
        payload TEXT NOT NULL,
        lane TEXT
    )""",
    # Only the jobs waiting to be taken: a claimed job (started at its commit, a delivery above all) touches
    # no index when added or deleted (issue 28: a burst of webhook events wrote and deleted two index
    # entries per delivery). `jobs_due` is its predecessor, which covered all.
    "CREATE INDEX IF NOT EXISTS jobs_waiting ON jobs (due_at) WHERE running = 0",
]

Job = dict[str, Any]
# A handler that returns HANDED_OFF has passed its job on (webhook deliveries: to the ledger that records
# their outcome, resources/webhooks/ledger.py), and whoever took it deletes the job's row in the
# transaction that completes it: the runner leaves the row claimed, so a crash before that re-runs it.
HANDED_OFF = "handed off"
# Handlers receive the running Emulator (typed where they are written, above this layer).
Handler = Callable[[Any, Job], Awaitable[str | None]]
TxHandler = Callable[["Tx", Job], Awaitable[None]]
# What a chunk step says is left: another chunk at once, nothing, or the next chunk at a later time.
MORE = "more"
DONE = None
Step = Callable[["Tx", Job], Awaitable[datetime | str | None]]
Recovery = Callable[["Tx"], Awaitable[None]]  # see `JobRunner.recovers`
MAX_PARALLEL = 32  # twice lanes.py LANE_PARALLEL: two hung endpoints never hold every slot
BATCH = 200
# Seconds between passes over a steady stream of due jobs. A pass costs a transaction and three queries
# however few jobs it takes, and holds the database for all of them (at most PASS_SECONDS of work).
# Issue 18 (8 connections) chose 0.01 s: p99 4.3 ms in memory against 10.6 ms at 0.05 s. Issue 28: 0.05 s
# saves a stream of sends ~25 µs of CPU each (their outcomes' share of a pass), p99 stays far under 50 ms.
COALESCE = 0.05
# In-transaction work one pass may do before it leaves the rest to the next (wall clock, like a chunk):
# 200 delivery outcomes of a broadcast took up to 240 ms in one pass on a busy machine (issue 27).
PASS_SECONDS = 0.02
# Jobs run (a finished chunked job counts as this many) before the runner, once out of due work, gives back
# the memory SQLite filled meanwhile (`Database.release_memory`; issue 27: +151 MB of page cache and
# +287 MB of mapped file stayed after a 100 000-email broadcast and its deliveries).
TIDY_AFTER = 5000
# Stops of one clock move at most (`run_until`): a day of sends, each delivered 2 s later, has more due times.
MAX_STOPS = 2000


async def schedule(tx: Tx, kind: str, due_at: datetime, payload: dict[str, Any], at_once: bool = False,
                   memo: dict[str, Any] | None = None) -> None:
    """Add a job in the caller's transaction; the runner hears of it after commit.

    `at_once`: a job due now whose lane has room (lanes.py `has_room`) is added claimed and started
    right after commit, with `memo` (facts the caller has at hand, kept in memory only) in the job the
    handler gets; no pass of the runner reads it back first. A burst of events to one webhook
    endpoint cost a pass per event before (issue 28). Otherwise the job waits for a pass as usual.
    A kind with a recovery (`JobRunner.recovers`) then gets no row (`seq` None): see `recovers`.
    """
    runner: JobRunner = tx.emu.jobs
    lane = runner.lanes.key(kind, payload)
    row = {"account": tx.account, "kind": kind, "due_at": to_db(due_at), "payload": payload, "lane": lane}
    if at_once and lane is not None and due_at <= tx.now and runner.lanes.has_room(lane):
        seq = None if kind in runner.recoveries else await tx.insert_now(
            "jobs", {**row, "payload": compact(payload), "running": 1})
        job = {**row, "seq": seq, "running": 1, **(memo or {})}
        runner.lanes.seen.add(lane)
        tx.after_commit(lambda: runner.start_claimed(job))
        return
    row["payload"] = compact(payload)
    await tx.insert("jobs", row)
    if lane is None:
        tx.after_commit(lambda: runner.wake_for(due_at), once=("wake", due_at))
        return
    runner.lanes.wait(lane)
    # A busy lane is refilled by a pass once half its backlog is through: no pass for this job now.
    tx.after_commit(lambda: None if runner.lanes.busy(lane) else runner.wake_for(due_at))


class RunnerHost(Host, Protocol):
    """What the runner needs of the Emulator that owns it."""

    db: Database

    def transaction(self, account: str | None = None,
                    long: bool = False) -> AbstractAsyncContextManager[Tx]: ...


class JobRunner:
    """Two kinds of handler: `tx_handler` jobs (database work only) run together inside the runner's
    own transaction, one savepoint each, so a burst of due jobs costs one commit; `handler` jobs (network
    work such as webhook deliveries) run as tasks outside any transaction and open their own."""

    def __init__(self, emu: RunnerHost) -> None:
        self.emu = emu
        self.handlers: dict[str, Handler] = {}
        self.tx_handlers: dict[str, TxHandler] = {}
        self.steps: dict[str, Step] = {}
        self.catching_up: set[str] = set()
        self.recoveries: dict[str, Recovery] = {}
        self._advancing = asyncio.Lock()
        self.lanes = Lanes()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()
        self._gathered = Gathered(self._spawn)  # jobs started at their commit, waiting for company
        self._slots = asyncio.Semaphore(MAX_PARALLEL)
        self._pass_lock = asyncio.Lock()
        # Whether the runner waits between passes, and until when (None: until woken): lets `wake_for`
        # skip a wake (a whole pass) when the runner will look by then anyway.
        self._sleeping = False
        self._sleep_until: datetime | None = None
        self._paused = self._stopping = False
        self._worked = 0  # jobs taken since memory was last given back (see `_tidy`)
        # Work handed off by handlers (`follow`), which `flush` waits for as for running jobs; and the
        # state it belongs to: a reset or a restore starts a new generation, and work handed off in an
        # older one writes nothing into the new state.
        self._following: dict[asyncio.Future[Any], Callable[[], None]] = {}
        self.generation = 0

    def handler(self, kind: str, fn: Handler, lane: Lane | None = None) -> None:
        """`fn` runs outside any transaction; with `lane`, at most LANE_PARALLEL jobs of a lane at once."""
        self.handlers[kind] = fn
        if lane is not None:
            self.lanes.kinds[kind] = lane

    def tx_handler(self, kind: str, fn: TxHandler) -> None:
        self.tx_handlers[kind] = fn

    def chunked(self, kind: str, step: Step, catches_up: bool = False) -> None:
        """`step` runs one bounded chunk per call, each in its own long transaction (see the module
        docstring). A step that `catches_up` does, when it runs, all its work due by then, however many
        of its due times that spans: a clock move does not stop at each of them (see `run_until`)."""
        self.steps[kind] = step
        if catches_up:
            self.catching_up.add(kind)

    def recovers(self, kind: str, recovery: Recovery) -> None:
        """Jobs of `kind` started at once keep no row (see `schedule`): at every start and after every
        pause, before any pass, `recovery(tx)` adds a row back for each whose work is still due."""
        self.recoveries[kind] = recovery

    def wake(self) -> None:
        self._wake.set()

    def wake_for(self, due_at: datetime) -> None:
        """Wake the runner for a job due at `due_at`, unless it will look by then anyway."""
        if not self._sleeping:
            # A pass is under way or about to start. Callers run after their commit released the
            # database lock, and a pass reads the jobs inside its own transaction, so it sees this one.
            return
        if self.emu.clock.mode == "frozen":
            if due_at > self.emu.clock.now():
                return  # only a clock change can make it due, and that wakes the runner
        elif self._sleep_until is not None and due_at >= self._sleep_until:
            return
        self._wake.set()

    async def start(self) -> None:
        await self._prepare()
        self._task = asyncio.create_task(self._loop())

    async def _prepare(self) -> None:
        """Recover (claimed jobs run again, rowless ones come back), migrate lanes, learn which wait."""
        async with self.emu.transaction() as tx:
            await self.lanes.prepare(tx)
            tx.queue("UPDATE jobs SET running = 0 WHERE running = 1")
            for recovery in self.recoveries.values():
                await recovery(tx)
            await self.lanes.learn(tx)

    async def stop(self) -> None:
        self._stopping = True
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        await self.clear()

    async def _loop(self) -> None:
        while True:
            self._wake.clear()
            self._sleep_until = None
            try:
                done, next_due = await self._pass()
            except Exception:  # never let the runner die; try again on the next wake
                log.exception("job pass failed")
                done, next_due = 0, None
            if done >= BATCH:
                continue
            if next_due is None or next_due > 1:
                await self._tidy()
            if next_due is not None:
                # A running clock's jobs are taken in passes at most COALESCE apart, so a steady
                # stream (each send's delivery 2 s later) costs one transaction per pass, not per job.
                next_due = max(next_due, COALESCE)
                self._sleep_until = self.emu.clock.now() + timedelta(seconds=next_due)
            self._sleeping = True
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=next_due)
            finally:
                self._sleeping = False

    async def _pass(self) -> tuple[int, float | None]:
        """Run due in-transaction jobs, start the others; return (taken, seconds to next). BATCH: more due."""
        async with self._pass_lock:
            async with self.emu.transaction() as tx:
                rows = await tx.all(
                    "SELECT * FROM jobs WHERE lane IS NULL AND running = 0 AND due_at <= ?"
                    " ORDER BY due_at, seq LIMIT ?", (tx.now_db, BATCH))
                unlaned = len(rows)
                rows = sorted([*rows, *await self.lanes.due_rows(tx)],
                              key=lambda row: (row["due_at"], row["seq"]))
                taken = await self._take_for_a_while(tx, rows)
                self._worked += len(taken)
                claimed = [row for row in taken if row["claim"]]
                done = [(row["seq"],) for row in taken if not row["claim"]]
                await tx.many("DELETE FROM jobs WHERE seq = ?", done)
                await tx.many("UPDATE jobs SET running = 1 WHERE seq = ?", [(r["seq"],) for r in claimed])
                # A full batch, or one cut short: more is due now (the loop goes on after a yield).
                more = unlaned >= BATCH or len(taken) < len(rows)
                self.lanes.taken(len(taken) == len(rows))
                next_due = 0.0 if more else await self._next_due(tx)
            for job in claimed:
                self._start(job)
            return (BATCH if more else len(taken)), next_due

    def _start(self, job: Job) -> None:
        self.lanes.claimed(job)
        self._spawn(job)

    def _spawn(self, job: Job) -> None:
        task = asyncio.create_task(self._run(job))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    def follow(self, work: asyncio.Future[Any], hurry: Callable[[], None]) -> None:
        """Have `flush` wait for `work` (a task finishing what handlers handed off) as for running jobs;
        `hurry()` asks it to finish without waiting for more company (a caller waits)."""
        if work not in self._following:
            self._following[work] = hurry
            work.add_done_callback(lambda _: self._following.pop(work, None))

    def start_claimed(self, job: Job) -> None:
        """Start a job added claimed (`schedule(at_once=True)`), after its commit. While the runner is
        paused or stopped it stays claimed (or rowless), and `_prepare` gives it back to the passes.
        While other jobs run, it waits a moment for company (lanes.py START_WAIT)."""
        if self._task is None or self._paused:
            return
        self.lanes.claimed(job)
        if self._running or self._gathered:
            self._gathered.add(job)
        else:
            self._spawn(job)

    async def _take_for_a_while(self, tx: Tx, rows: list[Job]) -> list[Job]:
        """Take `rows` in order (`claim` set on those to start as tasks) until PASS_SECONDS of in-transaction
        work; the rest wait for the next pass, so the loop never holds the database for long."""
        started = time.perf_counter()
        for index, row in enumerate(rows):
            if time.perf_counter() - started > PASS_SECONDS:
                return rows[:index]
            row["claim"] = await self._take(tx, row)
        return rows

    async def _take(self, tx: Tx, row: Job) -> bool:
        """Run `row` now if it is an in-transaction job; otherwise return True (to be claimed)."""
        row["payload"] = loads(row["payload"])
        in_tx = self.tx_handlers.get(row["kind"])
        if in_tx is None:
            return True
        failed = await tx.apart(lambda: in_tx(tx.as_account(row["account"]), row))
        if failed is not None:  # undone alone: one broken job must not undo the others in the batch
            log.error("job %s failed", row["kind"], exc_info=failed)
        return False

    async def _next_due(self, tx: Tx) -> float | None:
        if self.emu.clock.mode == "frozen":
            return None  # only a clock change or a new job can make anything due
        row = await tx.one("SELECT MIN(due_at) AS due FROM jobs WHERE running = 0")
        if not row or row["due"] is None:
            return None
        return max(0.0, (from_db(row["due"]) - tx.now).total_seconds()) + 0.001

    async def run_due(self) -> int:
        """Run or start every job due now; return how many were taken."""
        taken, _ = await self._pass()
        return taken

    async def _run(self, job: Job) -> None:
        loop = asyncio.get_running_loop()
        queued_at = loop.time()
        async with self.lanes.slot(job), self._slots:
            job["queued_for"] = loop.time() - queued_at  # seconds spent waiting for a lane and a slot
            step = self.steps.get(job["kind"])
            if step is not None:
                await self._run_chunks(job, step)
                return
            handler = self.handlers.get(job["kind"])
            left = None
            try:
                if handler is None:
                    log.warning("no handler for job kind %s", job["kind"])
                else:
                    left = await handler(self.emu, job)
            except Exception:  # a broken job must never stop the runner
                log.exception("job %s failed", job["kind"])
            except asyncio.CancelledError:  # by a stop: its row stays claimed, the next start runs it again
                left = HANDED_OFF if self._stopping else None  # (issue 38: a retry under way was lost)
                raise
            finally:
                # Rides with the next commit instead of costing one of its own. A crash before that
                # leaves the row claimed; start() re-runs it, and handlers treat a repeat as a no-op
                # (a delivered message is not sent again).
                if left != HANDED_OFF and job["seq"] is not None:
                    self.emu.db.defer("DELETE FROM jobs WHERE seq = ?", (job["seq"],))
                if self.lanes.finished(job):
                    self.wake()  # half its backlog is through: the next pass refills it

    async def _run_chunks(self, job: Job, step: Step) -> None:
        """Chunk after chunk until the step is done or wants a later time; the job row goes with the last."""
        while True:
            try:
                async with self.emu.transaction(job["account"], long=True) as tx:
                    left = await step(tx, job)
                    if left == MORE:
                        continue
                    if isinstance(left, datetime):
                        tx.queue("UPDATE jobs SET due_at = ?, running = 0 WHERE seq = ?",
                                 (to_db(left), job["seq"]))
                        tx.after_commit(functools.partial(self.wake_for, left))
                    else:
                        tx.queue("DELETE FROM jobs WHERE seq = ?", (job["seq"],))
                break
            except Exception:  # the chunk rolled back; its job stays claimed and resumes at the next start
                log.exception("job %s failed", job["kind"])
                return
        if left is DONE:
            self._worked += TIDY_AFTER
            await self._tidy()

    async def flush(self, rounds: int = 100_000) -> int:
        """Run everything due now, including what those jobs make due, and wait for it all; return how
        many jobs were taken. A lane gives LANE_BACKLOG jobs a round, so 100 000 deliveries to one
        endpoint take ~3 000 rounds; `rounds` only stops a job that keeps rescheduling itself for now."""
        total = 0
        for _ in range(rounds):
            self._gathered.release()  # no waiting for company: they start now, and are waited for below
            taken = await self.run_due()
            total += taken
            busy = bool(self._running or self._following)
            while self._running or self._following:
                if self._running:
                    await asyncio.gather(*list(self._running), return_exceptions=True)
                    continue
                for hurry in list(self._following.values()):
                    hurry()
                await asyncio.gather(*list(self._following), return_exceptions=True)
            if not busy and not taken and not self._gathered:
                break
        return total

    async def run_until(self, target: datetime) -> None:
        """Move the clock to `target`, stopping at each due time on the way to run what falls due
        there (in due order, each job seeing its own time as now); then run what is due at `target`.
        At most MAX_STOPS stops: with more distinct due times than that (a day of sends on a running
        clock, each delivered 2 s after its own send), nearby ones share a stop."""
        clock = self.emu.clock
        async with self._advancing:
            shortest = (target - clock.now()) / MAX_STOPS
            while True:
                taken = await self.flush()
                due = await self._earliest_due()
                if due is None or due > target or (due <= clock.now() and not taken):
                    break
                if due > clock.now():
                    clock.set(min(max(due, clock.now() + shortest), target))
            clock.set(target)
            await self.flush()
        await self._tidy()

    async def _tidy(self) -> None:
        """Give back SQLite's memory once enough work has run since it last did (TIDY_AFTER)."""
        if self._worked >= TIDY_AFTER:
            self._worked = 0
            await self.emu.db.release_memory()

    async def _earliest_due(self) -> datetime | None:
        """The next stop of a clock move: the earliest due time of a job that does not catch up."""
        skipped = sorted(self.catching_up)
        marks = ", ".join("?" for _ in skipped)
        async with self.emu.transaction() as tx:
            row = await tx.one("SELECT MIN(due_at) AS due FROM jobs"
                               f" WHERE running = 0 AND kind NOT IN ({marks})", skipped)
        return from_db(row["due"]) if row and row["due"] else None

    @contextlib.asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """No job starts inside the block, and none is running: for replacing the whole state."""
        async with self._pass_lock:
            self._paused = True
            self.generation += 1
            try:
                await self.clear()
                yield
                await self._prepare()  # the tables were replaced: their lanes (and columns) are new
            finally:
                self._paused = False

    async def clear(self) -> None:
        self._gathered.drop()  # claimed or rowless: `_prepare` gives them back
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
