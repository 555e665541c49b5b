"""Webhook delivery on loopback: deliveries per second, and event-to-receipt latency (p50/p99).

The emulator runs in this process on its own loop (real clock, in-memory database) with one webhook
subscribed; events are emitted through the same `emit()` the resource services use, each in its own
transaction. The receiver is an aiohttp server in another process, as a user's app would be. Each
payload carries its sequence number; the receiver stamps its arrival on the system-wide monotonic
clock. Two baselines measured in the same run (a bare aiohttp sender, emitting with no subscriber)
turn the figures into ratios that mean something on a busy machine; the bare sender and the emulator
alternate over ROUNDS rounds, and the target is the median round's ratio (issue 28: >= 0.5x).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from contextlib import AbstractContextManager
from typing import Any

import aiohttp
from aiohttp import web

from benchmarks import targets
from benchmarks.child_app import served
from emulator.app import create_app
from emulator.core.config import DEFAULT_ACCOUNT, Settings
from emulator.core.events import emit
from emulator.resources.webhooks.service import create_webhook

BURST = 2000
PACED = 200
ROUNDS = 3
RAW_WORKERS = 16


class Arrivals:
    """Runs in the receiver process: stamps each delivery's arrival on the system-wide monotonic clock."""

    def __init__(self) -> None:
        self.at: dict[int, float] = {}

    async def handle(self, request: web.Request) -> web.Response:
        self.at[json.loads(await request.read())["data"]["n"]] = time.monotonic()
        return web.Response(text='{"ok":true}', content_type="application/json")

    async def report(self, request: web.Request) -> web.Response:
        return web.json_response({"count": len(self.at), "at": self.at if "full" in request.query else {}})

    async def clear(self, request: web.Request) -> web.Response:
        self.at.clear()
        return web.json_response({})


def _receiver_app() -> web.Application:
    arrivals = Arrivals()
    app = web.Application()
    app.router.add_post("/hooks", arrivals.handle)
    app.router.add_get("/arrivals", arrivals.report)
    app.router.add_post("/clear", arrivals.clear)
    return app


def receiver() -> AbstractContextManager[str]:
    """A receiver in its own process, as a user's app would be: it shares no GIL with the emulator."""
    return served(_receiver_app)


async def _arrivals(session: aiohttp.ClientSession, base: str, count: int) -> dict[int, float]:
    """Poll the receiver until `count` deliveries have arrived (60 s at most)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        async with session.get(f"{base}/arrivals") as reply:
            if (await reply.json())["count"] >= count:
                break
        await asyncio.sleep(0.005)
    async with session.get(f"{base}/arrivals", params={"full": "1"}) as reply:
        return {int(n): at for n, at in (await reply.json())["at"].items()}


async def _emit_one(emu: Any, n: int) -> float:
    async with emu.transaction(DEFAULT_ACCOUNT) as tx:
        await emit(tx, "domain.created", {"n": n}, subject_id=None)
    return time.monotonic()


async def _bare_sender(url: str, count: int) -> tuple[float, float]:
    """The same POSTs from a bare aiohttp client (no storage, no signing): the machine's ceiling now, as
    POSTs per second and this process's CPU seconds per POST."""
    body = json.dumps({"type": "domain.created", "data": {"n": -1}}).encode()
    queue = iter(range(count))
    async with aiohttp.ClientSession() as session:
        async def worker() -> None:
            for _ in queue:
                async with session.post(url, data=body) as reply:
                    await reply.read()

        started, cpu = time.monotonic(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(RAW_WORKERS)))
        cpu = time.process_time() - cpu
    return count / (time.monotonic() - started), cpu / count


async def _emit_only(count: int) -> float:
    """Emitting with no subscriber: the cost of the event transaction alone."""
    app = create_app(Settings(smtp=False, quiet=True))
    async with app.router.lifespan_context(app):
        started = time.monotonic()
        for n in range(count):
            await _emit_one(app.state.emu, n)
        return count / (time.monotonic() - started)


async def _deliveries(base: str, session: aiohttp.ClientSession) -> dict[str, Any]:
    app = create_app(Settings(smtp=False, quiet=True))
    emu = app.state.emu
    async with app.router.lifespan_context(app):
        async with emu.transaction(DEFAULT_ACCOUNT) as tx:
            await create_webhook(tx, {"endpoint": f"{base}/hooks", "events": ["domain.created"]})
        started, cpu = time.monotonic(), time.process_time()
        burst = [await _emit_one(emu, n) for n in range(BURST)]
        burst_at = await _arrivals(session, base, BURST)
        cpu = time.process_time() - cpu  # this process's, polling the receiver included
        paced = []
        for n in range(BURST, BURST + PACED):
            paced.append(await _emit_one(emu, n))
            await emu.jobs.flush()
        paced_at = await _arrivals(session, base, BURST + PACED)
    return {"started": started, "burst": burst, "burst_at": burst_at, "paced": paced, "paced_at": paced_at,
            "cpu": cpu}


async def _run(base: str) -> list[dict[str, Any]]:
    """ROUNDS rounds, each the bare sender then the emulator (a fresh one), so a busy spell of the
    machine weighs on both sides of a round's ratio."""
    async with aiohttp.ClientSession() as session:
        emit_rate = await _emit_only(BURST)
        rounds = []
        for _ in range(ROUNDS):
            await session.post(f"{base}/clear")
            raw_rate, raw_cpu = await _bare_sender(f"{base}/hooks", BURST)
            await session.post(f"{base}/clear")
            rounds.append({**await _deliveries(base, session), "raw_rate": raw_rate, "raw_cpu": raw_cpu,
                           "emit_rate": emit_rate})
        return rounds


def _percentiles(values: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(values, n=100)
    return cuts[49] * 1000, cuts[98] * 1000


def main() -> None:
    with receiver() as base:
        rounds = asyncio.run(_run(base))
    rates = [BURST / (max(done["burst_at"].values()) - done["started"]) for done in rounds]
    ratios = [rate / done["raw_rate"] for rate, done in zip(rates, rounds, strict=True)]
    # The figures of the round with the median ratio.
    middle = sorted(range(len(rounds)), key=lambda index: ratios[index])[len(rounds) // 2]
    result, rate = rounds[middle], rates[middle]
    burst_at, paced_at = result["burst_at"], result["paced_at"]
    b50, b99 = _percentiles([burst_at[n] - sent for n, sent in enumerate(result["burst"])])
    p50, p99 = _percentiles([paced_at[BURST + i] - sent for i, sent in enumerate(result["paced"])])
    raw, emitted = result["raw_rate"], result["emit_rate"]
    print(f"received {len(paced_at)}/{BURST + PACED} signed deliveries (receiver in its own process)")
    print(f"burst of {BURST} events: {rate:,.0f} signed, recorded deliveries/s end to end")
    print(f"  = {rate / raw:.2f}x a bare aiohttp sender now ({raw:,.0f} POSTs/s, {RAW_WORKERS} workers);"
          f" per round {', '.join(f'{ratio:.2f}' for ratio in ratios)}")
    print(f"  = {rate / emitted:.2f}x emitting with no subscriber ({emitted:,.0f} events/s)")
    print(f"  this process's CPU per delivered event {result['cpu'] / BURST * 1e6:,.0f} µs, emit included"
          f" (the bare sender's per POST {result['raw_cpu'] * 1e6:,.0f} µs)")
    print(f"  event→receipt under the burst: p50 {b50:.1f} ms, p99 {b99:.1f} ms")
    print(f"one event at a time ({PACED}): event→receipt p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    spread = f"{ratios[middle]:.2f} ({min(ratios):.2f}–{max(ratios):.2f})x"
    targets.record("webhooks: burst vs a bare aiohttp sender", f"{spread} ({rate:,.0f}/s of {raw:,.0f}/s)",
                   ">= 0.5x", ratios[middle] >= 0.5)
    targets.record("webhooks: event→receipt p50", f"{b50:.1f} ms under the burst", "<= 5 ms", b50 <= 5)


if __name__ == "__main__":
    main()
