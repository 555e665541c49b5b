"""Lanes: jobs that share a destination (deliveries to one webhook endpoint) and are fair to each other.

A lane runs at most LANE_PARALLEL of its jobs at once, so a receiver that hangs holds only that many of
the runner's shared slots. It also has at most LANE_BACKLOG jobs claimed (started as tasks) at a time:
its due jobs are taken oldest first by a query of their own (the `lane` column and its index), so
100 000 deliveries waiting for one endpoint are neither all held in memory as tasks nor in the way of
another endpoint's. A job added while its lane has room and nothing of it waits unclaimed may start at
its commit, claimed as it is added (jobs.py `schedule(at_once=True)`): it overtakes nothing, and a
burst that keeps pace needs no pass at all. The job runner (jobs.py) owns one `Lanes`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emulator.core.db import Tx

Job = dict[str, Any]
Lane = Callable[[Job], str]

# Half of the runner's MAX_PARALLEL: with 4, one busy endpoint fell behind a burst of events (issue 18,
# benchmarks/bench_webhooks.py: event→receipt p50 145 ms at 3 000/s; with 8, 1.2 ms at 3 800/s). Issue 28
# made each delivery cheaper, and 8 in flight then fell behind again (p50 ~200 ms: the receiver's round
# trip, not the CPU, bounded the lane); with 16, p50 0.2–0.7 ms at ~3 500/s.
LANE_PARALLEL = 16
LANE_BACKLOG = 4 * LANE_PARALLEL
# Created once the column exists (a file from before lanes gets it in `prepare`). Partial: most jobs
# (every send's delivery outcome) have no lane and need no entry (issue 27: a page write less per email of
# a broadcast), and a claimed job is not waiting (issue 28: a delivery started at its commit is added
# claimed, and deleted so). `jobs_lane` and `jobs_by_lane` are its predecessors, which covered more.
LANE_INDEX = ("CREATE INDEX IF NOT EXISTS jobs_waiting_by_lane ON jobs (lane, due_at)"
              " WHERE lane IS NOT NULL AND running = 0")
_OLD_INDEXES = ("jobs_lane", "jobs_by_lane", "jobs_due")


# A job started at its commit (jobs.py `start_claimed`) while others run waits up to START_WAIT seconds for
# company, or until START_BATCH have gathered, and they start together. A burst of webhook events otherwise
# interleaves each event's transaction with one delivery's POST and answer, so neither the database's work
# nor the network's stays in the CPU's caches (issue 28, 2 000 events to one endpoint, alternating runs:
# CPU per delivered event ~196 → ~165 µs). With nothing running a job starts at once: a lone event's
# delivery waits for nothing. The wait adds ~2 ms to a delivery's latency under a burst.
START_WAIT = 0.002
START_BATCH = LANE_BACKLOG  # as many as one lane may have claimed


class Gathered:
    """Jobs waiting for company before they start (see START_WAIT); `start` starts one."""

    def __init__(self, start: Callable[[Job], None]) -> None:
        self._start = start
        self._jobs: list[Job] = []
        self._timer: asyncio.TimerHandle | None = None

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def add(self, job: Job) -> None:
        if not self._jobs:
            self._timer = asyncio.get_running_loop().call_later(START_WAIT, self.release)
        self._jobs.append(job)
        if len(self._jobs) >= START_BATCH:
            self.release()

    def release(self) -> None:
        """Start every waiting job now, in the order they came."""
        jobs = self.drop()
        for job in jobs:
            self._start(job)

    def drop(self) -> list[Job]:
        """Forget the waiting jobs (returned): they start no more."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        jobs, self._jobs = self._jobs, []
        return jobs


class Lanes:
    def __init__(self) -> None:
        self.kinds: dict[str, Lane] = {}  # job kind → its lane function
        self.seen: set[str] = set()  # lanes that may have jobs waiting
        self.waiting: set[str] = set()  # lanes that may have jobs not yet claimed (see `has_room`)
        self._drained: set[str] = set()  # lanes whose every unclaimed job the pass under way takes
        self._claimed: dict[str, int] = {}  # lane → jobs claimed and not finished
        self._slots: dict[str, tuple[asyncio.Semaphore, int]] = {}  # lane → (slots, jobs using it)

    def key(self, kind: str, payload: dict[str, Any]) -> str | None:
        """The stored lane of a job of `kind` (None: a job without a lane)."""
        lane = self.kinds.get(kind)
        return None if lane is None else f"{kind}:{lane({'kind': kind, 'payload': payload})}"

    async def prepare(self, tx: Tx) -> None:
        """Give a table from before lanes its column, and any file its current indexes."""
        columns = {row["name"] for row in await tx.all("PRAGMA table_info(jobs)")}
        if "lane" not in columns:
            await tx.run("ALTER TABLE jobs ADD COLUMN lane TEXT")
        for name in _OLD_INDEXES:
            await tx.run(f"DROP INDEX IF EXISTS {name}")
        await tx.run(LANE_INDEX)

    async def learn(self, tx: Tx) -> None:
        """Start over from the table, where no job is claimed (jobs.py `_prepare`): the lanes with jobs."""
        rows = await tx.all("SELECT DISTINCT lane FROM jobs WHERE lane IS NOT NULL AND running = 0")
        self.seen = {row["lane"] for row in rows}
        self.waiting = set(self.seen)
        self._claimed.clear()

    def wait(self, lane: str) -> None:
        """A job of `lane` was added unclaimed."""
        self.seen.add(lane)
        self.waiting.add(lane)
        self._drained.discard(lane)

    def has_room(self, lane: str) -> bool:
        """Whether a job of `lane` added now may start at once, claimed as it is added (jobs.py
        `schedule(at_once=True)`): no job of the lane waits unclaimed, so none is overtaken (a lane's
        jobs are taken oldest first), and its backlog has room."""
        return lane not in self.waiting and self._claimed.get(lane, 0) < LANE_BACKLOG

    def busy(self, lane: str) -> bool:
        """Whether more than half of the lane's backlog is claimed: a job added to it now waits for the
        pass that refills it once half is through (`finished`), so waking the runner for it would be a
        pass for nothing (issue 28: a burst of events to one endpoint woke a pass per event)."""
        return self._claimed.get(lane, 0) > LANE_BACKLOG // 2

    def taken(self, all_rows: bool) -> None:
        """The pass took its rows (all of them, or was cut short): the lanes it drained wait no more."""
        if all_rows:
            self.waiting -= self._drained
        self._drained = set()

    async def due_rows(self, tx: Tx) -> list[Job]:
        """Each lane's oldest due jobs, as many as its backlog has room for; a lane left with no job
        waiting and none claimed is forgotten."""
        rows: list[Job] = []
        for lane in list(self.seen):
            room = LANE_BACKLOG - self._claimed.get(lane, 0)
            if room <= 0:
                continue
            found = await tx.all("SELECT * FROM jobs WHERE lane = ? AND running = 0 AND due_at <= ?"
                                 " ORDER BY due_at, seq LIMIT ?", (lane, tx.now_db, room))
            if len(found) < room and lane in self.waiting and not await tx.one(
                    "SELECT 1 FROM jobs WHERE lane = ? AND running = 0 AND due_at > ? LIMIT 1",
                    (lane, tx.now_db)):
                self._drained.add(lane)
            if not found and not self._claimed.get(lane) and not await tx.one(
                    "SELECT 1 FROM jobs WHERE lane = ? AND running = 0 LIMIT 1", (lane,)):
                self.seen.discard(lane)
            rows += found
        return rows

    def claimed(self, job: Job) -> None:
        lane = job.get("lane")
        if lane is not None:
            self._claimed[lane] = self._claimed.get(lane, 0) + 1

    def finished(self, job: Job) -> bool:
        """Count a claimed job out; True when its lane's backlog has half emptied and jobs may wait to
        refill it (a lane whose jobs all started at once has none: no pass for it, issue 28)."""
        lane = job.get("lane")
        if lane is None or lane not in self._claimed:
            return False
        left = self._claimed[lane] = self._claimed[lane] - 1
        if left <= 0:
            del self._claimed[lane]
        return (left == LANE_BACKLOG // 2 or left <= 0) and lane in self.waiting

    def slot(self, job: Job) -> _Slot:
        """The job's place among its lane's LANE_PARALLEL (none for a job without a lane), as an async
        context manager."""
        lane_of = self.kinds.get(job["kind"])
        return _Slot(self._slots, None if lane_of is None else lane_of(job))


class _Slot:
    """`async with lanes.slot(job)`: a class, not a generator-based context manager, which cost a few
    microseconds more for every job (issue 28)."""

    __slots__ = ("key", "semaphore", "slots")

    def __init__(self, slots: dict[str, tuple[asyncio.Semaphore, int]], key: str | None) -> None:
        self.slots, self.key = slots, key
        self.semaphore: asyncio.Semaphore | None = None

    async def __aenter__(self) -> None:
        key = self.key
        if key is None:
            return
        semaphore, users = self.slots.get(key) or (asyncio.Semaphore(LANE_PARALLEL), 0)
        self.slots[key] = (semaphore, users + 1)
        try:
            await semaphore.acquire()
        except BaseException:
            self._leave(key)
            raise
        self.semaphore = semaphore

    async def __aexit__(self, *exc: object) -> None:
        if self.key is None or self.semaphore is None:
            return
        self.semaphore.release()
        self._leave(self.key)

    def _leave(self, key: str) -> None:
        semaphore, users = self.slots[key]
        if users == 1:
            del self.slots[key]  # idle lanes cost nothing
        else:
            self.slots[key] = (semaphore, users - 1)
