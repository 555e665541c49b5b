"""POST /emails against its ceiling, list-page cost at 1 000 vs 100 000 emails, MIME render time.

1. Throughput and latency of POST /emails at concurrency 1, 8 and 64, and in the same run the same
   load against the ceiling (benchmarks/serve_app.py `ceiling`: a minimal Starlette endpoint writing
   one row to SQLite through aiosqlite, WAL, synchronous=NORMAL, one commit per request). Both run on
   uvicorn with uvloop + httptools in their own process, both on a database file; the load comes from
   a third process (benchmarks/http_load.py). Budget (issue 3): at concurrency 8 the emulator reaches
   at least 50 % of the ceiling with p99 under 50 ms.
2. One page of 20 emails (GET /emails, a page from the middle, the outbox list) with 1 000 and with
   100 000 stored emails: the query alone in this process, and over HTTP. Keyset pagination makes both
   sizes cost the same.
3. Rendering one small email to RFC 5322 (emulator/mime.py), in this process.
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
LIST_SECONDS = 1.5
BUDGET_RATIO, BUDGET_P99_MS = 0.5, 50.0


@contextmanager
def server(*args: str) -> Iterator[int]:
    process = subprocess.Popen([sys.executable, "-m", "benchmarks.serve_app", *args],
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
    command = [sys.executable, "-m", "benchmarks.http_load", "--port", str(port), "--method", method,
               "--path", path, "--header", AUTH, "--concurrency", str(concurrency),
               "--seconds", str(seconds), "--warmup", "0.5"]
    if body:
        command += ["--body", body]
    output = subprocess.run(command, capture_output=True, text=True, check=True, timeout=60).stdout
    return json.loads(output.strip().splitlines()[-1])  # type: ignore[no-any-return]


def row(label: str, result: dict[str, float]) -> str:
    errors = f"  errors {int(result['errors'])}" if result["errors"] else ""
    return (f"  {label:<28} {result['rps']:8.0f} req/s   p50 {result['p50_ms']:6.2f} ms"
            f"   p99 {result['p99_ms']:6.2f} ms{errors}")


def bench_send(workdir: str) -> None:
    """The ceiling keeps its row in a WAL file. The emulator runs twice: as `resend-emulator` runs by
    default (state in memory) — the budget applies to this one — and with `--db FILE`, whose commits
    write a dozen WAL pages per send (email, event, job and log rows and their indexes) against the
    ceiling's one or two."""
    print("POST /emails vs the ceiling (uvicorn + uvloop + httptools, load from its own process)")
    servers = {
        "ceiling (SQLite file, WAL)": ["ceiling", os.path.join(workdir, "ceiling.db")],
        "emulator (default: memory)": ["emulator", ":memory:", API_KEY],
        "emulator --db FILE": ["emulator", os.path.join(workdir, "emulator.db"), API_KEY],
    }
    results: dict[str, dict[int, dict[str, float]]] = {}
    for label, args in servers.items():
        with server(*args) as port:
            results[label] = {level: load(port, level, SECONDS) for level in LEVELS}
    for level in LEVELS:
        print(f" concurrency {level}")
        for label in servers:
            print(row(label, results[label][level]))
    ceiling, default, on_file = (results[label][8] for label in servers)
    ratio = default["rps"] / ceiling["rps"]
    ok = ratio >= BUDGET_RATIO and default["p99_ms"] < BUDGET_P99_MS
    print(f" at concurrency 8: emulator/ceiling = {ratio:.0%} (budget >= {BUDGET_RATIO:.0%}),"
          f" p99 {default['p99_ms']:.1f} ms (budget < {BUDGET_P99_MS:.0f} ms)"
          f" -> {'within budget' if ok else 'OVER BUDGET'}")
    print(f" with --db FILE: {on_file['rps'] / ceiling['rps']:.0%} of the ceiling,"
          f" p99 {on_file['p99_ms']:.1f} ms")


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
    for count in (1_000, 100_000):
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
            small, large = by_count[1_000], by_count[100_000]
            print(f"  {label} {name:<22} 1 000: {small:6.3f} ms   100 000: {large:6.3f} ms"
                  f"   ratio {large / small:.2f}")


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
