"""A day of load, compressed (issue 38): steady mixed traffic against one `resend-emulator` process as a team
host runs it (`--db` file, `--max-emails`, `--max-age`), sampled for memory, latency, database size and
errors.

The traffic, every second: API sends, an SMTP submission, a UI page, a message page and a search, with a
webhook subscribed at a slow receiver (RECEIVER_DELAY per call, every tenth call answered 500, so retries
build up). The load is steady, not saturating: a Python client is enough at these rates (wrk is for
throughput), and it runs in this process while the emulator and the receiver have their own.

`run(seconds)` returns a Soak with the samples and every request's latency; `verdicts()` applies the
issue's rules: memory flat after warm-up (≤ +10 MB over the last half), p99 stable (last third ≤ 1.5 × the
first), the stored mail and the database bounded by retention, and no error.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import smtplib
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from benchmarks.child_app import served

KEY = "re_emulator_default_key"
RECEIVER_DELAY = 0.2
RECEIVER_FAIL_EVERY = 10
SAMPLE_EVERY = 5.0
# Per second.
API_SENDS = 10
SMTP_SENDS = 1
UI_PAGES = 1
MESSAGE_PAGES = 0.5
SEARCHES = 0.5


@dataclass
class Sample:
    at: float
    rss_mb: float
    anon_mb: float  # the heap alone (RSS also counts the database's mapped pages)
    db_mb: float
    stored: int
    received_by_hook: int


@dataclass
class Soak:
    seconds: float
    max_emails: int
    samples: list[Sample] = field(default_factory=list)
    # (seconds since start, kind, latency in seconds)
    latencies: list[tuple[float, str, float]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def p99(self, start: float, end: float, kind: str | None = None) -> float:
        values = sorted(latency for at, name, latency in self.latencies
                        if start <= at < end and (kind is None or name == kind))
        return values[min(len(values) - 1, int(len(values) * 0.99))] if values else 0.0

    def memory_growth_mb(self) -> float:
        """RSS growth over the last half: the largest sample after the midpoint minus the one at it."""
        half = [s for s in self.samples if s.at >= self.seconds / 2]
        return max(s.rss_mb for s in half) - half[0].rss_mb if half else 0.0

    def p99_ratio(self) -> float:
        third = self.seconds / 3
        first = self.p99(0, third)
        return self.p99(2 * third, self.seconds + 60) / first if first else 0.0

    def most_stored(self) -> int:
        return max((s.stored for s in self.samples), default=0)

    def db_growth(self) -> float:
        """The database's size at the end over its size at the midpoint (bounded: about 1)."""
        half = [s for s in self.samples if s.at >= self.seconds / 2]
        return half[-1].db_mb / half[0].db_mb if half and half[0].db_mb else 0.0

    def stored_bound(self) -> int:
        # A prune runs every half second: between two, up to a second's sends may be waiting for it.
        return self.max_emails + 2 * (API_SENDS + SMTP_SENDS) + 10

    def summary(self) -> str:
        kinds = sorted({name for _, name, _ in self.latencies})
        third = self.seconds / 3
        lines = [f"{len(self.latencies)} requests in {self.seconds:.0f} s, {len(self.errors)} errors"]
        for kind in kinds:
            lines.append(f"  {kind:<8} p99 first third {self.p99(0, third, kind) * 1000:7.1f} ms,"
                         f" last third {self.p99(2 * third, self.seconds + 60, kind) * 1000:7.1f} ms")
        first, last = self.samples[0], self.samples[-1]
        lines.append(f"  RSS {first.rss_mb:.1f} → {last.rss_mb:.1f} MB (heap {last.anon_mb:.1f} MB;"
                     f" growth over the last half {self.memory_growth_mb():+.1f} MB)")
        lines.append(f"  database {first.db_mb:.1f} → {last.db_mb:.1f} MB; stored at most"
                     f" {self.most_stored()} (retention {self.max_emails});"
                     f" webhook calls received {last.received_by_hook}")
        return "\n".join(lines + [f"  error: {error}" for error in self.errors[:10]])


# ---- the slow receiver (its own process, as a user's app would be) ----------------------------------

def _slow_receiver_app() -> web.Application:
    calls = 0

    async def hook(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        await request.read()
        await asyncio.sleep(RECEIVER_DELAY)
        return web.Response(status=500 if calls % RECEIVER_FAIL_EVERY == 0 else 200)

    async def count(request: web.Request) -> web.Response:
        return web.json_response({"calls": calls})

    app = web.Application()
    app.router.add_post("/hook", hook)
    app.router.add_get("/count", count)
    return app


# ---- the emulator, as a team host starts it -----------------------------------------------------------

@dataclass
class Host:
    process: subprocess.Popen[str]
    url: str
    smtp_port: int
    db: Path


@contextmanager
def emulator(directory: Path, max_emails: int, max_age: str,
             extra: list[str] | None = None) -> Iterator[Host]:
    db = directory / "soak.db"
    command = [sys.executable, "-m", "emulator", "--port", "0", "--smtp-port", "0", "--smtps-port", "0",
               "--db", str(db), "--max-emails", str(max_emails), "--max-age", max_age, *(extra or [])]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=directory)
    try:
        assert process.stdout is not None
        banner = [process.stdout.readline() for _ in range(3)]
        url = re.search(r"listening on (\S+)", banner[0])
        smtp = re.search(r"smtp on \S+:(\d+)", "".join(banner))
        if url is None or smtp is None:
            raise RuntimeError(f"unexpected banner: {banner}")
        yield Host(process, url[1], int(smtp[1]), db)
    finally:
        process.terminate()
        process.wait(30)


def memory_mb(pid: int, field: str = "VmRSS") -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(rf"{field}:\s+(\d+) kB", status)
    return int(found[1]) / 1024 if found else 0.0


def db_mb(db: Path) -> float:
    files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    return sum(path.stat().st_size for path in files if path.exists()) / 1024 / 1024


def stored_emails(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as connection:
        return int(connection.execute("SELECT count(*) FROM emails").fetchone()[0])


# ---- the traffic -----------------------------------------------------------------------------------

class Load:
    def __init__(self, host: Host, receiver: str, soak: Soak) -> None:
        self.host, self.receiver, self.soak = host, receiver, soak
        self.started = time.monotonic()
        self.sent_ids: list[str] = []
        self.count = 0
        self.progress = False

    def record(self, kind: str, began: float) -> None:
        now = time.monotonic()
        self.soak.latencies.append((began - self.started, kind, now - began))

    async def steady(self, per_second: float, action: Any) -> None:
        """Call `action` per_second times a second until the soak ends, never two at once."""
        interval, tick = 1 / per_second, time.monotonic()
        end = self.started + self.soak.seconds
        while tick < end:
            try:
                await action()
            except Exception as error:  # an error is a finding, recorded; the soak goes on
                self.soak.errors.append(f"{action.__name__}: {type(error).__name__}: {error}"[:300])
            tick = max(tick + interval, time.monotonic() - interval)
            await asyncio.sleep(max(0.0, tick - time.monotonic()))

    async def get(self, session: aiohttp.ClientSession, kind: str, path: str) -> bytes:
        began = time.monotonic()
        async with session.get(self.host.url + path) as reply:
            body = await reply.read()
            self.record(kind, began)
            if reply.status != 200:
                raise RuntimeError(f"GET {path} → {reply.status} {body[:200]!r}")
            return body

    async def run(self) -> None:
        headers = {"Authorization": f"Bearer {KEY}"}
        async with aiohttp.ClientSession(headers=headers) as session:
            await self.subscribe(session)

            async def api_send() -> None:
                self.count += 1
                body = {"from": "Soak <soak@example.com>", "to": [f"user{self.count % 500}@example.com"],
                        "subject": f"Soak {self.count} welcome", "html": f"<p>Hello {self.count}</p>",
                        "tags": [{"name": "kind", "value": "soak"}]}
                began = time.monotonic()
                async with session.post(self.host.url + "/emails", json=body) as reply:
                    answer = await reply.read()
                    self.record("api", began)
                    if reply.status != 200:
                        raise RuntimeError(f"POST /emails → {reply.status} {answer[:200]!r}")
                    self.sent_ids = [*self.sent_ids, json.loads(answer)["id"]][-50:]

            async def smtp_send() -> None:
                began = time.monotonic()
                await asyncio.to_thread(self.smtp_once)
                self.record("smtp", began)

            async def ui_page() -> None:
                await self.get(session, "ui", "/_emulator/ui/")

            async def message_page() -> None:
                # The newest, as QA open what just arrived (an older one may be pruned by then: a 404).
                if self.sent_ids:
                    await self.get(session, "message", f"/_emulator/ui/messages/{self.sent_ids[-1]}")

            async def search() -> None:
                await self.get(session, "search", f"/_emulator/outbox?q=Soak+{self.count // 2}&limit=20")

            await asyncio.gather(self.steady(API_SENDS, api_send), self.steady(SMTP_SENDS, smtp_send),
                                 self.steady(UI_PAGES, ui_page), self.steady(MESSAGE_PAGES, message_page),
                                 self.steady(SEARCHES, search), self.sample_until_end(session))

    async def subscribe(self, session: aiohttp.ClientSession) -> None:
        body = {"endpoint": f"{self.receiver}/hook", "events": ["email.sent", "email.delivered"]}
        async with session.post(self.host.url + "/webhooks", json=body) as reply:
            if reply.status != 201:
                raise RuntimeError(f"POST /webhooks → {reply.status} {await reply.text()}")

    def smtp_once(self) -> None:
        message = EmailMessage()
        message["From"], message["To"] = "soak@example.com", "smtp-user@example.com"
        message["Subject"] = f"Soak SMTP {self.count}"
        message.set_content("Hello over SMTP")
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        with smtplib.SMTP("127.0.0.1", self.host.smtp_port, timeout=30) as smtp:
            smtp.starttls(context=context)
            smtp.login("resend", KEY)
            smtp.send_message(message)

    async def sample_until_end(self, session: aiohttp.ClientSession) -> None:
        end = self.started + self.soak.seconds
        while True:
            async with aiohttp.ClientSession() as plain, plain.get(f"{self.receiver}/count") as reply:
                calls = (await reply.json())["calls"]
            pid = self.host.process.pid
            sample = Sample(time.monotonic() - self.started, memory_mb(pid), memory_mb(pid, "RssAnon"),
                            db_mb(self.host.db), stored_emails(self.host.db), calls)
            self.soak.samples.append(sample)
            if self.progress:
                print(json.dumps(vars(sample)), file=sys.stderr, flush=True)
            if time.monotonic() >= end:
                return
            await asyncio.sleep(min(SAMPLE_EVERY, max(0.0, end - time.monotonic())))


def run(seconds: float, max_emails: int = 3000, max_age: str = "10m", extra: list[str] | None = None,
        progress: bool = False) -> Soak:
    soak = Soak(seconds, max_emails)
    with tempfile.TemporaryDirectory(prefix="soak-") as directory, served(_slow_receiver_app) as receiver, \
            emulator(Path(directory), max_emails, max_age, extra) as host:
        load = Load(host, receiver, soak)
        load.progress = progress
        asyncio.run(load.run())
        if host.process.poll() is not None:
            soak.errors.append(f"the emulator exited with {host.process.returncode}")
    return soak


if __name__ == "__main__":  # python -m benchmarks.soak SECONDS: one soak, its figures as JSON lines too
    result = run(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0, progress=True)
    print(result.summary(), flush=True)
    print(json.dumps({"samples": [vars(s) for s in result.samples], "errors": result.errors,
                      "p99_ratio": result.p99_ratio(), "memory_growth_mb": result.memory_growth_mb(),
                      "pid": os.getpid()}))
