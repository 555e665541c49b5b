"""POST /emails against its ceiling, list-page cost at 1 000 vs 1 000 000 emails, MIME render time.

1. Throughput and latency of POST /emails at 1, 8 and 64 connections, and in the same run the same
   load against the ceiling (benchmarks/serve_app.py `ceiling`: a minimal Starlette endpoint writing
   one row to SQLite through aiosqlite, WAL, synchronous=NORMAL, one commit per request). Both run on
   uvicorn with uvloop + httptools in their own process pinned to core 0; the load is `wrk` on core 1
   (benchmarks/wrk.py). Targets (issue 18): at 8 connections >= 0.50 of the ceiling in memory, >= 0.40
   with --db FILE, p99 < 50 ms, no errors; at 1 connection p50 <= 0.5 ms.
2. One page of 20 emails (GET /emails, a page from the middle, the outbox list) with 1 000 and with
   1 000 000 stored emails: the query alone in this process, and over HTTP. Keyset pagination makes both
   sizes cost the same.
3. Rendering one small email to RFC 5322 (emulator/mime/message.py), in this process.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks import targets, wrk
from emulator.core.clock import to_db
from emulator.core.db import Database, Tx

API_KEY = "re_bench_emails_key"
AUTH = f"Authorization: Bearer {API_KEY}"
SEND_BODY = json.dumps({
    "from": "Acme <hello@acme.dev>", "to": ["delivered@resend.dev"], "subject": "Your receipt",
    "html": "<p>Thanks for your order <strong>#1042</strong>. <a href='https://acme.dev/o/1042'>View</a></p>",
    "tags": [{"name": "category", "value": "receipt"}],
})
LEVELS = (1, 8, 64)
SECONDS = 3.0
ROUNDS = 5
LARGE = 1_000_000  # stored emails for the list-page figure
LIST_SECONDS = 1.5


@contextmanager
def server(*args: str) -> Iterator[int]:
    process = subprocess.Popen(wrk.pinned([sys.executable, "-m", "benchmarks.serve_app", *args]),
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"server did not start: {line!r}")
        yield int(line.split()[1])
    finally:
        process.terminate()
        process.wait(timeout=10)


def load(port: int, concurrency: int, seconds: float, method: str = "POST", path: str = "/emails",
         body: str = SEND_BODY) -> dict[str, float]:
    return wrk.load(port, concurrency, seconds, method, path, body, {"Authorization": f"Bearer {API_KEY}"})


def row(label: str, result: dict[str, float]) -> str:
    errors = f"  errors {int(result['errors'])}" if result["errors"] else ""
    return (f"  {label:<28} {result['rps']:8.0f} req/s   p50 {result['p50_ms']:6.2f} ms"
            f"   p99 {result['p99_ms']:6.2f} ms{errors}")


def spread(values: list[float], fmt: str) -> str:
    return f"{format(statistics.median(values), fmt)} ({format(min(values), fmt)}–{format(max(values), fmt)})"


def bench_send(workdir: str) -> None:
    """Ceiling, emulator (memory, as `resend-emulator` runs by default) and emulator `--db FILE`,
    alternating in every round, each server pinned to core 0 and `wrk` to core 1. Medians of ROUNDS
    rounds with min–max."""
    print(f"POST /emails vs the ceiling (wrk on core 1, servers on core 0, {ROUNDS} rounds alternating)")
    runs: dict[tuple[str, int], list[dict[str, float]]] = {}
    for round_ in range(ROUNDS):
        # Fresh files every round, as the in-memory server starts empty: a file reused across rounds
        # grows by each round's ~40 000 sends, and later rounds would measure a bigger database.
        servers = {
            "ceiling": ["ceiling", os.path.join(workdir, f"ceiling-{round_}.db")],
            "memory": ["emulator", ":memory:", API_KEY],
            "file": ["emulator", os.path.join(workdir, f"emulator-{round_}.db"), API_KEY],
        }
        for label, args in servers.items():
            with server(*args) as port:
                load(port, 8, 1)  # warm-up
                for level in LEVELS:
                    runs.setdefault((label, level), []).append(load(port, level, SECONDS))
    for level in LEVELS:
        print(f" {level} connection(s)")
        for label in ("ceiling", "memory", "file"):
            print(row(label, {k: statistics.median(r[k] for r in runs[label, level])
                              for k in ("rps", "p50_ms", "p99_ms", "errors")}))
    ceiling = [r["rps"] for r in runs["ceiling", 8]]
    for label, floor in (("memory", 0.50), ("file", 0.40)):
        ratios = [r["rps"] / c for r, c in zip(runs[label, 8], ceiling, strict=True)]
        p99 = [r["p99_ms"] for r in runs[label, 8]]
        errors = sum(r["errors"] for r in runs[label, 8])
        targets.record(f"POST /emails c=8 ({label})", f"{spread(ratios, '.2f')} of ceiling",
                       f">= {floor:.2f}", statistics.median(ratios) >= floor)
        targets.record(f"POST /emails c=8 ({label}) p99", f"{spread(p99, '.1f')} ms, {errors:.0f} errors",
                       "< 50 ms, 0 errors", statistics.median(p99) < 50 and errors == 0)
    p50 = [r["p50_ms"] for r in runs["memory", 1]]
    targets.record("POST /emails c=1 p50", f"{spread(p50, '.3f')} ms", "<= 0.5 ms",
                   statistics.median(p50) <= 0.5)


def email_rows(count: int) -> Iterator[tuple[Any, ...]]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for n in range(count):
        email_id = f"{n:08x}-0000-4000-8000-{n:012x}"
        yield (email_id, "default", None, "api", "Acme <hello@acme.dev>", f'["user{n}@example.dev"]',
               None, None, None, f"Message {n}", "<p>Hello</p>", "Hello", None, None, None,
               "delivered", None, None, None, f"<{email_id}@acme.dev>", None,
               to_db(start + timedelta(milliseconds=n)))


def stored_emails(path: str, count: int) -> None:
    """A database file holding `count` emails, written straight to SQLite (setup, not measured)."""
    from emulator.app import all_ddl

    async def create_schema() -> None:
        database = Database(path)
        await database.open(all_ddl())
        await database.close()

    asyncio.run(create_schema())
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA synchronous=OFF")  # setup only
        conn.executemany(
            "INSERT INTO emails (id, account, key_id, source, from_addr, to_addrs, cc, bcc, reply_to,"
            " subject, html, text, headers, tags, scheduled_at, last_event, template_id, topic_id,"
            " broadcast_id, message_id, eml, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            email_rows(count))


async def service_page_ms(path: str, mid_id: str) -> dict[str, float]:
    """Median time of the page queries themselves, in this process (no HTTP, no other process)."""
    from emulator.app import create_app
    from emulator.control.outbox import LIST_COLUMNS
    from emulator.core.config import Settings
    from emulator.core.pages import Page, fetch_page
    from emulator.resources.emails.service import list_emails

    app = create_app(Settings(db=path, api_keys=[API_KEY], smtp=False, quiet=True))
    emu = app.state.emu
    def first(tx: Tx) -> Awaitable[Any]:
        return list_emails(tx, {"limit": "20"})

    def middle(tx: Tx) -> Awaitable[Any]:
        return list_emails(tx, {"limit": "20", "after": mid_id})

    def outbox(tx: Tx) -> Awaitable[Any]:
        return fetch_page(tx, "emails", Page(20), "1 = 1", [], columns=LIST_COLUMNS)

    queries: dict[str, Callable[[Tx], Awaitable[Any]]] = {
        "GET /emails?limit=20": first, "GET /emails mid-list": middle, "outbox list": outbox,
    }
    medians: dict[str, float] = {}
    async with app.router.lifespan_context(app):
        for name, query in queries.items():
            samples = []
            for _ in range(300):
                started = time.perf_counter()
                async with emu.transaction("default") as tx:
                    await query(tx)
                samples.append(time.perf_counter() - started)
            medians[name] = statistics.median(samples) * 1000
    return medians


def bench_list(workdir: str) -> None:
    print("\nOne page of 20 emails, by number of stored emails (median; HTTP: p50 at concurrency 1)")
    pages = {"GET /emails?limit=20": "/emails?limit=20",
             "GET /emails mid-list": "/emails?limit=20&after={mid}",
             "outbox list": "/_emulator/outbox?limit=20"}
    http: dict[str, dict[int, float]] = {name: {} for name in pages}
    service: dict[str, dict[int, float]] = {name: {} for name in pages}
    for count in (1_000, LARGE):
        path = os.path.join(workdir, f"list-{count}.db")
        started = time.perf_counter()
        stored_emails(path, count)
        setup = time.perf_counter() - started
        mid = count // 2
        mid_id = f"{mid:08x}-0000-4000-8000-{mid:012x}"
        for name, value in asyncio.run(service_page_ms(path, mid_id)).items():
            service[name][count] = value
        with server("emulator", path, API_KEY) as port:
            for name, template in pages.items():
                result = load(port, 1, LIST_SECONDS, method="GET", path=template.format(mid=mid_id), body="")
                if result["errors"]:
                    raise RuntimeError(f"{name} failed: {result}")
                http[name][count] = result["p50_ms"]
        print(f"  ({count} emails written in {setup:.1f} s)")
    for label, table in (("query", service), ("HTTP ", http)):
        for name, by_count in table.items():
            small, large = by_count[1_000], by_count[LARGE]
            print(f"  {label} {name:<22} 1 000: {small:6.3f} ms   {LARGE:,}: {large:6.3f} ms"
                  f"   ratio {large / small:.2f}")
            if label == "HTTP ":
                targets.record(f"list page ({name}), 1 k vs 1 M", f"{large / small:.2f}x", "<= 1.5x",
                               large / small <= 1.5)


def bench_render() -> None:
    from emulator.mime.message import OutgoingMessage, render_message

    message = OutgoingMessage(
        email_id="7c3f2a10-5b8e-4d21-9f6a-0e4b1c2d3e4f", from_="Acme <hello@acme.dev>",
        to=["delivered@resend.dev"], subject="Your receipt", date=datetime(2026, 5, 14, tzinfo=UTC),
        html=json.loads(SEND_BODY)["html"],
    )
    count = 2000
    started = time.perf_counter()
    for _ in range(count):
        render_message(message)
    each = (time.perf_counter() - started) / count
    print(f"\nMIME render of a small HTML email (text part generated): {each * 1e6:.0f} µs")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-emails-") as workdir:
        bench_send(workdir)
        bench_list(workdir)
    bench_render()


if __name__ == "__main__":
    main()
