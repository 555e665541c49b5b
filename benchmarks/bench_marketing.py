"""Real sizes (issue 27): a CSV import and a broadcast to the whole segment, on a database file.

The emulator runs as `resend-emulator` serves (uvicorn, uvloop, `--db FILE`, one pinned core), with
`--clock frozen` as the issue's own measurements ran: deliveries then happen when the clock is moved
after the broadcast (their webhooks and memory are measured then), not during it. Per size:
- import: upload the CSV, then one `POST /_emulator/clock/advance` far enough for every step at the
  documented pace (500 rows a second); upload → `completed`. Ceiling: a plain `executemany` of the same
  contact and membership rows into the same tables of a fresh file, in one transaction.
- broadcast: send to the segment, poll until `sent` (the last chunk stores the last email). Baseline:
  `POST /emails/batch` of the same emails (100 a request, 2 clients) into a fresh emulator.
- during each: `GET /_emulator/health` every 10 ms (p99 and max latency), the server's RSS (growth
  during, and after the deliveries that follow).
- at the target size, correctness after a `kill -9` mid-import and mid-broadcast and a restart.

Sizes: BENCH_MARKETING_SIZES (default `10000,100000,1000000`; tests never run this module).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks import targets, wrk
from emulator.resources.contacts.store import TABLES as CONTACT_TABLES

KEY = "re_bench_marketing"
TARGET = 100_000
PACE = 500  # rows per second of emulator time (emulator/resources/contacts/import_steps.py)
HTML = "<p>Hi {{{FIRST_NAME|there}}}, here is what is new.</p><p>{{{RESEND_UNSUBSCRIBE_URL}}}</p>"


def sizes() -> list[int]:
    return [int(n) for n in os.environ.get("BENCH_MARKETING_SIZES", "10000,100000,1000000").split(",")]


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """The process's resident memory (VmRSS), or one part of it: RssAnon (heap), RssFile (mapped files,
    here SQLite's memory-mapped database pages)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


@contextmanager
def server(db: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = subprocess.Popen(wrk.pinned([sys.executable, "-m", "benchmarks.serve_app", "emulator", str(db),
                                           KEY, "frozen"]), stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"server did not start: {line!r}")
        yield process, f"http://127.0.0.1:{line.split()[1]}"
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=30)


@dataclass
class Watch:
    """Health latencies and RSS samples taken while something runs."""

    pid: int
    latencies: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)

    def p99_ms(self) -> float:
        if len(self.latencies) < 3:
            return 0.0
        return statistics.quantiles(self.latencies, n=100, method="inclusive")[98] * 1000

    def max_ms(self) -> float:
        return max(self.latencies, default=0.0) * 1000


@asynccontextmanager
async def watching(base: str, pid: int) -> AsyncIterator[Watch]:
    watch = Watch(pid)
    stop = asyncio.Event()

    async def poll() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            while not stop.is_set():
                started = time.perf_counter()
                await client.get("/_emulator/health")
                watch.latencies.append(time.perf_counter() - started)
                watch.rss.append(rss_mb(pid))
                await asyncio.sleep(0.01)

    task = asyncio.create_task(poll())
    try:
        yield watch
    finally:
        stop.set()
        await task


def csv_text(count: int) -> str:
    return "email,first_name,last_name\n" + "".join(f"user{n}@example.com,First{n},Last{n}\n"
                                                    for n in range(count))


def ceiling_rows_per_s(count: int, workdir: Path) -> float:
    """The same contact and membership rows, `executemany` into the same tables of a fresh file."""
    path = workdir / f"ceiling-{count}.db"
    now = "2026-05-14T09:00:00.000000Z"
    segment = str(uuid.uuid4())
    contacts = [(str(uuid.uuid4()), "default", f"user{n}@example.com", f"user{n}@example.com", f"First{n}",
                 f"Last{n}", 0, "{}", now, now) for n in range(count)]
    with sqlite3.connect(path, isolation_level=None) as raw:
        raw.execute("PRAGMA journal_mode=WAL")
        raw.execute("PRAGMA synchronous=NORMAL")
        for ddl in CONTACT_TABLES:
            raw.execute(ddl)
        started = time.perf_counter()
        raw.execute("BEGIN")
        raw.executemany("INSERT INTO contacts (id, account, email, email_key, first_name, last_name,"
                        " unsubscribed, properties, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        contacts)
        raw.executemany("INSERT INTO segment_contacts (account, segment_id, contact_id, created_at)"
                        " VALUES (?,?,?,?)", [("default", segment, row[0], now) for row in contacts])
        raw.execute("COMMIT")
        elapsed = time.perf_counter() - started
    path.unlink()
    return count / elapsed


async def import_all(client: httpx.AsyncClient, segment_id: str, count: int) -> str:
    """Upload and advance the clock once, far enough for every step; the import id."""
    files = {"file": ("contacts.csv", csv_text(count).encode(), "text/csv")}
    form = {"segments": f'[{{"id":"{segment_id}"}}]'}
    reply = await client.post("/contacts/imports", files=files, data=form)
    import_id = str(reply.json()["id"])
    await client.post("/_emulator/clock/advance", json={"seconds": count / PACE + 2})
    return import_id


async def broadcast(client: httpx.AsyncClient, segment_id: str) -> str:
    reply = await client.post("/broadcasts", json={
        "segment_id": segment_id, "from": "Acme <news@acme.dev>", "subject": "News for {{{FIRST_NAME}}}",
        "html": HTML, "send": True})
    broadcast_id = str(reply.json()["id"])
    while (await client.get(f"/broadcasts/{broadcast_id}")).json()["status"] != "sent":
        await asyncio.sleep(0.02)
    return broadcast_id


def count(db: Path, sql: str) -> tuple[Any, ...]:
    """The first row of `sql` on the file, read beside the writer; (None,) when there is none yet."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as raw:
        return tuple(raw.execute(sql).fetchone() or (None,))


async def one_size(n: int, workdir: Path) -> dict[str, Any]:
    db = workdir / f"emulator-{n}.db"
    result: dict[str, Any] = {"n": n}
    with server(db) as (process, base):
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {KEY}"},
                                     timeout=600) as client:
            segment_id = (await client.post("/segments", json={"name": "Everyone"})).json()["id"]
            result["rss_start"] = rss_mb(process.pid)
            result["anon_start"] = rss_mb(process.pid, "RssAnon")
            async with watching(base, process.pid) as during_import:
                started = time.perf_counter()
                import_id = await import_all(client, segment_id, n)
                result["import_s"] = time.perf_counter() - started
            got = (await client.get(f"/contacts/imports/{import_id}")).json()
            result["import_ok"] = got["status"] == "completed" and got["counts"]["created"] == n
            async with watching(base, process.pid) as during_broadcast:
                started = time.perf_counter()
                broadcast_id = await broadcast(client, segment_id)
                result["broadcast_s"] = time.perf_counter() - started
            # The deliveries that follow (2 s later on the clock), then memory once all is quiet.
            await client.post("/_emulator/clock/advance", json={"seconds": 5})
            result["rss_after"] = rss_mb(process.pid)
            result["anon_after"] = rss_mb(process.pid, "RssAnon")
            result["file_after"] = rss_mb(process.pid, "RssFile")
    result["emails"] = count(db, f"SELECT COUNT(*), COUNT(DISTINCT to_addrs) FROM emails"
                                 f" WHERE broadcast_id = '{broadcast_id}'")
    result["watch"] = (during_import, during_broadcast)
    db.unlink()
    result["ceiling"] = ceiling_rows_per_s(n, workdir)
    result["batch"] = await batch_rate(n, workdir)
    return result


async def batch_rate(n: int, workdir: Path) -> float:
    """The same emails through POST /emails/batch (100 a request, 2 clients) into a fresh emulator."""
    db = workdir / f"batch-{n}.db"
    with server(db) as (_, base):
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {KEY}"},
                                     timeout=600) as client:
            batches = iter(range(0, n, 100))

            async def sender() -> None:
                for start in batches:
                    body = [{"from": "Acme <news@acme.dev>", "to": [f"user{k}@example.com"],
                             "subject": f"News for First{k}", "html": HTML.replace("{{{FIRST_NAME|there}}}",
                                                                                    f"First{k}")}
                            for k in range(start, min(start + 100, n))]
                    reply = await client.post("/emails/batch", json=body)
                    assert reply.status_code == 200, reply.text

            started = time.perf_counter()
            await asyncio.gather(sender(), sender())
            elapsed = time.perf_counter() - started
    db.unlink()
    return n / elapsed


def wait_for(db: Path, sql: str) -> None:
    while not count(db, sql)[0]:
        time.sleep(0.005)


async def crash_run(n: int, workdir: Path) -> tuple[int, int, int, int]:
    """kill -9 mid-import and mid-broadcast, restart, finish: (contacts, distinct, emails, distinct)."""
    db = workdir / f"crash-{n}.db"
    headers = {"Authorization": f"Bearer {KEY}"}
    with server(db) as (process, base):
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=600) as client:
            segment_id = (await client.post("/segments", json={"name": "Everyone"})).json()["id"]
            task = asyncio.create_task(import_all(client, segment_id, n))
            await asyncio.to_thread(wait_for, db, f"SELECT COUNT(*) >= {n // 2} FROM contacts")
            process.send_signal(signal.SIGKILL)
            await asyncio.gather(task, return_exceptions=True)
    with server(db) as (process, base):
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=600) as client:
            await client.post("/_emulator/clock/advance", json={"seconds": n / PACE + 2})
            reply = await client.post("/broadcasts", json={
                "segment_id": segment_id, "from": "news@acme.dev", "subject": "Hi", "html": HTML,
                "send": True})
            assert reply.status_code == 201, reply.text
            await asyncio.to_thread(wait_for, db, f"SELECT walked >= {n // 2} FROM broadcast_sends")
            process.send_signal(signal.SIGKILL)
    with server(db) as (process, base):
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=600) as client:
            while (await client.get(f"/broadcasts/{reply.json()['id']}")).json()["status"] != "sent":
                await asyncio.sleep(0.05)
    contacts = count(db, "SELECT COUNT(*), COUNT(DISTINCT email_key) FROM contacts")
    emails = count(db, "SELECT COUNT(*), COUNT(DISTINCT to_addrs) FROM emails")
    db.unlink()
    return contacts[0], contacts[1], emails[0], emails[1]


def report(result: dict[str, Any]) -> None:
    n, imp, bc = result["n"], *result["watch"]
    rows_s, emails_s = n / result["import_s"], n / result["broadcast_s"]
    grow = max(imp.rss + bc.rss) - result["rss_start"]
    after = result["rss_after"] - result["rss_start"]
    print(f"{n:>9,} contacts  import {result['import_s']:6.2f} s = {rows_s:8,.0f} rows/s"
          f" = {rows_s / result['ceiling']:.3f}x executemany ({result['ceiling']:,.0f}/s)"
          f"  health p99 {imp.p99_ms():5.1f} ms max {imp.max_ms():5.1f} ms", flush=True)
    print(f"{'':>19}broadcast {result['broadcast_s']:6.2f} s = {emails_s:8,.0f} emails/s"
          f" = {emails_s / result['batch']:.2f}x /emails/batch ({result['batch']:,.0f}/s)"
          f"  health p99 {bc.p99_ms():5.1f} ms max {bc.max_ms():5.1f} ms", flush=True)
    print(f"{'':>19}RSS start {result['rss_start']:.0f} MB, growth during {grow:.0f} MB,"
          f" after {after:+.0f} MB (heap {result['anon_after'] - result['anon_start']:+.0f} MB,"
          f" mapped database pages {result['file_after']:.0f} MB);"
          f" import ok {result['import_ok']}, emails {result['emails']}", flush=True)


def verdicts(results: dict[int, dict[str, Any]]) -> None:
    big = results.get(TARGET)
    if big is None:
        return
    imp, bc = big["watch"]
    label = f"{TARGET // 1000}k"
    targets.record(f"marketing {label}: import upload→completed", f"{big['import_s']:.2f} s", "<= 5 s",
                   big["import_s"] <= 5 and big["import_ok"])
    small = results.get(TARGET // 10)
    if small is not None:
        ratio = (big["import_s"] / TARGET) / (small["import_s"] / small["n"])
        targets.record("marketing: import per-row cost 100k/10k", f"{ratio:.2f}x", "<= 1.3x", ratio <= 1.3)
    targets.record(f"marketing {label}: broadcast send→last stored", f"{big['broadcast_s']:.2f} s", "<= 10 s",
                   big["broadcast_s"] <= 10 and big["emails"] == (TARGET, TARGET))
    for name, watch in (("import", imp), ("broadcast", bc)):
        targets.record(f"marketing {label}: health during {name}",
                       f"p99 {watch.p99_ms():.0f} ms, max {watch.max_ms():.0f} ms",
                       "p99 <= 100, max <= 250 ms",
                       watch.p99_ms() <= 100 and watch.max_ms() <= 250)
    grow = max(imp.rss + bc.rss) - big["rss_start"]
    after = big["rss_after"] - big["rss_start"]
    targets.record(f"marketing {label}: RSS growth during / after", f"{grow:.0f} MB / {after:+.0f} MB",
                   "<= 250 MB / within 50 MB", grow <= 250 and abs(after) <= 50)


def main() -> None:
    # The clients (uploads, health checks, polls) on the other core than the server, as wrk runs.
    pin = hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2
    before = os.sched_getaffinity(0) if pin else set()
    if pin:
        os.sched_setaffinity(0, {int(wrk.LOAD_CORE)})
    try:
        run_sizes()
    finally:
        if pin:
            os.sched_setaffinity(0, before)


def run_sizes() -> None:
    results: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-marketing-") as tmp:
        workdir = Path(tmp)
        for n in sizes():
            results[n] = asyncio.run(one_size(n, workdir))
            report(results[n])
        verdicts(results)
        if TARGET in results:
            crash = asyncio.run(crash_run(TARGET, workdir))
            print(f"kill -9 mid-import and mid-broadcast at {TARGET:,}:"
                  f" contacts {crash[0]:,} ({crash[1]:,} distinct),"
                  f" emails {crash[2]:,} ({crash[3]:,} distinct)", flush=True)
            targets.record(f"marketing {TARGET // 1000}k: one contact and one email each after kill -9",
                           f"{crash[0]:,}/{crash[1]:,} contacts, {crash[2]:,}/{crash[3]:,} emails",
                           f"{TARGET:,} of each, no duplicates", crash == (TARGET,) * 4)


if __name__ == "__main__":
    main()
