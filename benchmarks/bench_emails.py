"""POST /emails against its ceiling, list-page cost at 1 000 vs 1 000 000 emails, MIME render time.

1. Throughput and latency of POST /emails at 1, 8 and 64 connections, and in the same run the same
   load against the ceiling (benchmarks/serve_app.py `ceiling`: a minimal Starlette endpoint writing
   one row to SQLite through aiosqlite, WAL, synchronous=NORMAL, one commit per request) and the peer
   (benchmarks/peer.py: `emulate` 0.12.2, Node, in memory). Each runs in its own process pinned to
   core 0; the load is `wrk` on core 1 (benchmarks/wrk.py). Targets (issue 28), at 8 connections: in
   memory >= 1.0x emulate and >= 0.60x the ceiling, with --db FILE >= 0.80x emulate, p99 < 50 ms and
   no errors; at 1 connection p50 <= 1.5x the ceiling's. Issue 40 adds what a test suite feels: at 1
   connection p50 <= 1.25x emulate's, and at 8 connections --db FILE >= 0.90x the rate in memory (both
   servers in the same round, so the ratio is taken between neighbours in time).
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

from benchmarks import peer, targets, wrk
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
def server(*args: str) -> Iterator[wrk.Running]:
    process = subprocess.Popen(wrk.pinned([sys.executable, "-m", "benchmarks.serve_app", *args]),
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"server did not start: {line!r}")
        yield wrk.Running(int(line.split()[1]), process.pid)
    finally:
        process.terminate()
        process.wait(timeout=10)


def load(port: int, concurrency: int, seconds: float, method: str = "POST", path: str = "/emails",
         body: str = SEND_BODY, lua: str = "", pid: int | None = None) -> dict[str, float]:
    headers = {} if lua else {"Authorization": f"Bearer {API_KEY}"}
    return wrk.load(port, concurrency, seconds, method, path, body, headers, lua, pid)


def row(label: str, result: dict[str, float], ratios: str = "") -> str:
    errors = f"  errors {int(result['errors'])}" if result["errors"] else ""
    return (f"  {label:<8} {result['rps']:6.0f} req/s {result['cpu_us']:5.0f} µs CPU/req   p50"
            f" {result['p50_ms']:6.2f} ms   p99 {result['p99_ms']:6.2f} ms{errors}{ratios}")


def spread(values: list[float], fmt: str) -> str:
    return f"{format(statistics.median(values), fmt)} ({format(min(values), fmt)}–{format(max(values), fmt)})"


@contextmanager
def any_server(label: str, workdir: str, round_: int,
               peer_command: list[str] | None) -> Iterator[wrk.Running]:
    # Fresh files every round, as the in-memory servers start empty: a file reused across rounds
    # grows by each round's ~40 000 sends, and later rounds would measure a bigger database.
    if label == "emulate":
        assert peer_command is not None
        with peer.running(peer_command) as running:
            yield running
        return
    args = {"ceiling": ["ceiling", os.path.join(workdir, f"ceiling-{round_}.db")],
            "memory": ["emulator", ":memory:", API_KEY],
            "file": ["emulator", os.path.join(workdir, f"emulator-{round_}.db"), API_KEY]}[label]
    with server(*args) as running:
        yield running


def _peer_command() -> list[str] | None:
    try:
        return peer.ensure_installed()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"  the peer (emulate) is not available, its rows are missing: {exc}")
        return None


def _ratios(runs: dict[tuple[str, int], list[dict[str, float]]], label: str, other: str, level: int,
            key: str = "rps") -> list[float]:
    pairs = zip(runs[label, level], runs[other, level], strict=True)
    return [ours[key] / theirs[key] for ours, theirs in pairs]


def bench_send(workdir: str) -> None:
    """The ceiling, the peer (`emulate`), the emulator in memory (as `resend-emulator` runs by default)
    and with `--db FILE`, alternating in every round, each server pinned to core 0 and `wrk` to core 1.
    Medians of ROUNDS rounds with min–max; every ratio is taken within a round, then the median."""
    peer_command = _peer_command()
    labels = ["ceiling", *(["emulate"] if peer_command else []), "memory", "file"]
    print(f"POST /emails: ceiling, peer, emulator (wrk on core 1, servers on core 0, {ROUNDS} rounds"
          " alternating)")
    runs: dict[tuple[str, int], list[dict[str, float]]] = {}
    for round_ in range(ROUNDS):
        for label in labels:
            rotate = label == "emulate"
            with any_server(label, workdir, round_, peer_command) as (port, pid):
                load(port, 8, 1, lua=peer.rotating_tokens_lua() if rotate else "")  # warm-up
                for level in LEVELS:
                    result = load(port, level, SECONDS, lua=peer.rotating_tokens_lua() if rotate else "",
                                  pid=pid)
                    runs.setdefault((label, level), []).append(result)
    for level in LEVELS:
        print(f" {level} connection(s)")
        for label in labels:
            median = {k: statistics.median(r[k] for r in runs[label, level])
                      for k in ("rps", "cpu_us", "p50_ms", "p99_ms", "errors")}
            versus = [f"{_med(_ratios(runs, label, other, level)):4.2f}x {other}"
                      for other in ("ceiling", "emulate") if other in labels and other != label]
            print(row(label, median, ("   req/s " + ", ".join(versus)) if versus else ""))
    _record_send_targets(runs, labels)


def _med(values: list[float]) -> float:
    return statistics.median(values)


def _record_send_targets(runs: dict[tuple[str, int], list[dict[str, float]]], labels: list[str]) -> None:
    ceiling = _ratios(runs, "memory", "ceiling", 8)
    targets.record("POST /emails c=8 (memory) vs ceiling", f"{spread(ceiling, '.2f')}x", ">= 0.60x",
                   _med(ceiling) >= 0.60)
    # Against `emulate` at c=8 the ratio is printed, not judged (issue 40): a Node server that does a third
    # of the work per request (no key check, no validation, no log) is not what this row is held to.
    if "emulate" in labels:
        emulate = _med([r["rps"] for r in runs["emulate", 8]])
        for label in ("memory", "file"):
            ratios = _ratios(runs, label, "emulate", 8)
            print(f"  c=8 ({label}) vs emulate: {spread(ratios, '.2f')}x of {emulate:.0f}/s (no target)")
    for label in ("memory", "file"):
        p99 = [r["p99_ms"] for r in runs[label, 8]]
        errors = sum(r["errors"] for r in runs[label, 8])
        targets.record(f"POST /emails c=8 ({label}) p99", f"{spread(p99, '.1f')} ms, {errors:.0f} errors",
                       "< 50 ms, 0 errors", _med(p99) < 50 and errors == 0)
    p50 = _ratios(runs, "memory", "ceiling", 1, "p50_ms")
    ours = _med([r["p50_ms"] for r in runs["memory", 1]])
    targets.record("POST /emails c=1 p50 vs ceiling's", f"{spread(p50, '.2f')}x ({ours:.3f} ms)", "<= 1.5x",
                   _med(p50) <= 1.5)
    _record_issue_40_targets(runs, labels)


def _record_issue_40_targets(runs: dict[tuple[str, int], list[dict[str, float]]], labels: list[str]) -> None:
    """A lone client's latency against the peer's, and a database file against memory (issue 40)."""
    if "emulate" in labels:
        p50 = _ratios(runs, "memory", "emulate", 1, "p50_ms")
        ours, theirs = (_med([r["p50_ms"] for r in runs[label, 1]]) for label in ("memory", "emulate"))
        targets.record("POST /emails c=1 p50 vs emulate's",
                       f"{spread(p50, '.2f')}x ({ours:.3f} vs {theirs:.3f} ms)", "<= 1.25x",
                       _med(p50) <= 1.25)
    else:
        targets.record("POST /emails c=1 p50 vs emulate's", "peer not available", "<= 1.25x", False)
    rates = _ratios(runs, "file", "memory", 8)
    # CPU per request moves far less than the rate on a shared machine: shown beside it, as a check.
    cpu = [memory["cpu_us"] / file["cpu_us"]
           for file, memory in zip(runs["file", 8], runs["memory", 8], strict=True)]
    targets.record("POST /emails c=8 (--db FILE) vs memory",
                   f"{spread(rates, '.2f')}x (CPU/req {_med(cpu):.2f}x)", ">= 0.90x", _med(rates) >= 0.90)


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
    from emulator.control.mailindex import index_new_mail
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
        # The rows were written straight to SQLite: the sent-mail index (control/mailindex.py) catches up
        # on them in chunks at start. Done first, so the figures are the queries' own, not their waits.
        async with emu.transaction() as tx:
            await index_new_mail(tx)
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
        with server("emulator", path, API_KEY) as (port, _):
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
