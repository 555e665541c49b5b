"""The pytest plugin's costs: first-test ready time, per-test reset, snapshot restore of 10 000 emails.

1. Fixture cost: a real one-test pytest run (a whole process) whose test uses `resend_emulator` (in
   each shape: thread, the default, and process), against the same run whose test does not,
   alternating; with the bytecode cache on and with PYTHONDONTWRITEBYTECODE=1. Target (issue 40): at
   most 1.2x in wall time either way. Beside it, the phases of the fixture in a fresh process: import,
   server start (HTTP + SMTP on free ports, baseline), first reset, stop. Then, issue 40: the per-test
   reset as a real run of 200 tests feels it (target 0.5 ms), and `outbox.wait_for` on mail already
   there (target 0.3 ms) and on mail sent while it waits (woken by the commit, not polled).
2. Reset: the plugin restores an in-memory baseline before every test. The baseline here holds data in
   every table of the schema (emails, attachments, events, jobs, domains, claims, keys, templates,
   webhooks, deliveries, logs, received mail, ...: 24 today); each round dirties the state, then resets.
   Compared in the same run, in turn within every round, with the kernel's `DELETE FROM` reset (which
   empties, so no seed survives; it follows a restore, so every table holds the baseline's data again)
   and with the HTTP `POST /_emulator/reset` round trip. Times include the hop onto the server's thread.
   Target (issue 28): the restore at most 1.2x the DELETE-based reset.
3. Snapshot: 10 000 emails saved to a file, then restored into the live server (mean of 5).
"""

from __future__ import annotations

import base64
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import emulator
from benchmarks import targets
from emulator.testing import EmulatorServer
from emulator.testing.receiver import WebhookReceiver

WITH_FIXTURE = """
def test_one(resend_emulator):
    resend_emulator.health()
"""
WITHOUT_FIXTURE = """
def test_one():
    assert True
"""
FIRST_TEST_ROUNDS = 11
STARTUP_PHASES = """
import gc, json, time
started = time.perf_counter()
from emulator.testing.server import EmulatorServer
imported = time.perf_counter()
server = EmulatorServer().start()
ready = time.perf_counter()
server.reset()
reset = time.perf_counter()
server.stop()
stopped = time.perf_counter()
print(json.dumps({"import": imported - started, "start": ready - imported, "first reset": reset - ready,
                  "stop": stopped - reset}))
"""
RESET_ROUNDS = 300
RESET_TESTS = 200
WAIT_ROUNDS = 200
PHASES_CONFTEST = """
import json

def pytest_runtest_logreport(report):
    if report.when in ("setup", "teardown"):
        with open("phases.jsonl", "a") as out:
            out.write(json.dumps([report.nodeid, report.duration]) + "\\n")
"""
MANY_WITH_FIXTURE = f"""
import pytest

@pytest.mark.parametrize("n", range({RESET_TESTS}))
def test_sends(n, resend_emulator):
    resend_emulator.request("POST", "/emails", {{"from": "a@acme.dev", "to": ["b@acme.dev"],
                                                "subject": "s", "text": "t"}})
"""
MANY_WITHOUT_FIXTURE = f"""
import pytest

@pytest.fixture
def plain():
    yield 1

@pytest.mark.parametrize("n", range({RESET_TESTS}))
def test_sends(n, plain):
    pass
"""
SNAPSHOT_EMAILS = 10_000
MAIL = {"from": "Acme <hello@acme.dev>", "to": ["delivered@resend.dev"], "subject": "Bench",
        "html": "<p>Hello</p>"}


def _pytest_seconds(folder: str, env: dict[str, str], *options: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole `pytest` process on `folder`, every installed plugin loaded
    (CPU: the process and its children, the emulator's included)."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, folder],
                   cwd=folder,
                   capture_output=True, check=True, env=env)
    return time.perf_counter() - started, _children_cpu() - cpu_before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _forget_rewritten_bytecode() -> None:
    """Remove the bytecode pytest's assertion rewriting cached for the emulator's own modules: with
    PYTHONDONTWRITEBYTECODE=1 (many CI images, this sandbox) that cache is never written."""
    for cached in Path(emulator.__file__).parent.rglob("__pycache__/*-pytest-*.pyc"):
        cached.unlink(missing_ok=True)


def first_test_runs(no_bytecode_cache: bool) -> dict[str, list[tuple[float, float]]]:
    """A one-test pytest run using `resend_emulator` (each shape) and the same run whose test does not
    use it, alternating, FIRST_TEST_ROUNDS rounds: lists of (wall, CPU) seconds by variant.

    The emulator's plain bytecode is there in both modes, as a wheel install leaves it; what
    PYTHONDONTWRITEBYTECODE=1 takes away is any cache written at test time.
    """
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    if no_bytecode_cache:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    with tempfile.TemporaryDirectory() as with_it, tempfile.TemporaryDirectory() as without_it:
        Path(with_it, "test_one.py").write_text(WITH_FIXTURE)
        Path(without_it, "test_one.py").write_text(WITHOUT_FIXTURE)
        variants = {"process": (with_it, "--resend-emulator-shape=process"),
                    "thread": (with_it, "--resend-emulator-shape=thread"), "bare": (without_it, "-q")}
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for _ in range(FIRST_TEST_ROUNDS):
            for name, (folder, option) in variants.items():
                if no_bytecode_cache:
                    _forget_rewritten_bytecode()
                runs[name].append(_pytest_seconds(folder, env, option))
    return runs


def startup_phases() -> dict[str, float]:
    """Import, start, first reset and stop of an `EmulatorServer` in a fresh process (milliseconds,
    median of 3)."""
    samples = [json.loads(subprocess.run([sys.executable, "-c", STARTUP_PHASES], capture_output=True,
                                         check=True, text=True).stdout) for _ in range(3)]
    return {name: statistics.median(sample[name] for sample in samples) * 1000 for name in samples[0]}


def first_test_figures() -> None:
    # Plain bytecode for every module, as `pip install` of a wheel writes it (and a first run would).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(emulator.__file__).parent)],
                   check=True, env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    print(f"one-test pytest run, with (each shape) vs without `resend_emulator` ({FIRST_TEST_ROUNDS}"
          " rounds alternating; whole process, every installed plugin loaded)")
    for no_cache in (False, True):
        label = "PYTHONDONTWRITEBYTECODE=1" if no_cache else "bytecode cache on"
        first_test_runs(no_cache)  # warm-up (and, with the cache on, writes it)
        runs = first_test_runs(no_cache)
        for shape in ("process", "thread"):
            for kind, index in (("wall", 0), ("CPU", 1)):
                ours, bare = [run[index] for run in runs[shape]], [run[index] for run in runs["bare"]]
                ratios = [one / other for one, other in zip(ours, bare, strict=True)]
                print(f"  {label:<26} {shape:<8} {kind:<4} with {statistics.median(ours) * 1000:5.0f} ms,"
                      f" without {statistics.median(bare) * 1000:5.0f} ms, ratio {spread(ratios)}")
                # The verdict on wall time, what the user waits for (issue 40), in the default shape; the
                # rounds alternate so a busy spell of the shared machine weighs on both sides alike.
                if shape == "thread" and kind == "wall":
                    targets.record(f"pytest one-test run with/without fixture ({label}), wall",
                                   f"{spread(ratios)}x", "<= 1.2x", statistics.median(ratios) <= 1.2)
    phases = startup_phases()
    print("  fresh process: " + ", ".join(f"{name} {ms:.0f} ms" for name, ms in phases.items()))


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def populate(server: EmulatorServer, receiver: WebhookReceiver) -> None:
    """Fill the tables through the real surfaces: API, SMTP, inbound mail, webhooks, scenarios."""
    server.load_scenario("basic")
    server.webhooks.register(receiver.url)
    pdf = base64.b64encode(b"%PDF-1.4 bench").decode()
    for index in range(20):
        server.request("POST", "/emails", {**MAIL, "attachments": [{"filename": "a.pdf", "content": pdf}],
                                           "tags": [{"name": "n", "value": str(index)}]})
    server.request("POST", "/emails/batch", [MAIL, {**MAIL, "to": ["bounced@resend.dev"]}])
    domain = server.request("GET", "/domains")["data"][0]["id"]
    server.request("POST", "/domains/claim", {"name": "claimed.dev"})
    server.request("POST", f"/domains/{domain}/verify")
    inbox = server.request("GET", "/_emulator/inbound/address")["domain"]
    server.request("POST", "/_emulator/inbound", {
        "from": "grace@hopper.dev", "to": [f"support@{inbox}"], "subject": "Help", "text": "Hi",
        "attachments": [{"filename": "b.pdf", "content": pdf}]})
    server.request("POST", "/emails", {**MAIL, "scheduled_at": "in 20 days"})
    with server.smtp() as session:
        session.sendmail("robot@acme.dev", ["delivered@resend.dev"], b"Subject: smtp\r\n\r\nbody\r\n")
    server._transport.call("POST", "/emails", json=MAIL, auth=True, headers={"Idempotency-Key": "bench-1"})
    server.clock.advance(seconds=10)
    server.webhooks.flush()


def tables_with_data(server: EmulatorServer) -> list[str]:
    async def count() -> list[str]:
        async with server.emu.transaction() as tx:
            return [table for table in server.emu.db.tables
                    if await tx.one(f"SELECT 1 FROM {table} LIMIT 1")]
    return server.call(count())


def per_reset_us(resets: dict[str, tuple[Any, Any]]) -> dict[str, float]:
    """Median µs of each `(reset, dirty)`, taken in turn within every round, so a busy spell of the
    machine weighs on all of them alike."""
    samples: dict[str, list[float]] = {name: [] for name in resets}
    for _ in range(RESET_ROUNDS):
        for name, (reset, dirty) in resets.items():
            dirty()
            started = time.perf_counter()
            reset()
            samples[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) * 1e6 for name, values in samples.items()}


def reset_figures() -> None:
    with WebhookReceiver() as receiver, EmulatorServer() as server:
        populate(server, receiver)
        filled = tables_with_data(server)
        server.mark_baseline()

        def dirty() -> None:
            server.request("POST", "/emails", MAIL)

        def quiet_write() -> None:
            server.request("PATCH", f"/api-keys/{key_id}", {"name": "renamed"})

        key_id = server.request("GET", "/api-keys")["data"][0]["id"]
        medians = per_reset_us({
            "plugin": (server.reset, dirty), "quiet": (server.reset, quiet_write),
            "kernel": (lambda: server.call(server.emu.reset()), dirty),
            "http": (lambda: server._transport.call("POST", "/_emulator/reset"), dirty),
        })
        plugin, quiet, kernel, http = (medians[name] for name in ("plugin", "quiet", "kernel", "http"))
    print(f"per-test reset, all {len(filled)} tables holding data: {plugin:6.0f} µs"
          " (plugin: baseline restore, after a send whose webhook delivery is in flight)")
    print(f"  same, after a write that starts no job:        {quiet:8.0f} µs")
    print(f"  kernel DELETE-based reset (empties, no seed):   {kernel:8.0f} µs  ratio {plugin / kernel:.2f}")
    print(f"  HTTP POST /_emulator/reset round trip:          {http:8.0f} µs  ratio {plugin / http:.2f}")
    targets.record("pytest: per-test reset vs DELETE-based", f"{plugin / kernel:.2f}x ({plugin:.0f} µs,"
                   f" {len(filled)} tables)", "<= 1.2x", plugin / kernel <= 1.2)


def snapshot_figures() -> None:
    from emulator.control.snapshots import restore, save
    from emulator.resources.emails.service import send_email

    with EmulatorServer(smtp=False, clock="frozen") as server, tempfile.TemporaryDirectory() as folder:
        async def fill() -> None:
            emu = server.emu
            credential = emu.state["keyring"].by_token[server.api_key]
            for start in range(0, SNAPSHOT_EMAILS, 200):
                async with emu.transaction(credential.account) as tx:
                    for index in range(start, start + 200):
                        await send_email(tx, {**MAIL, "subject": f"Bench {index}"}, credential)

        started = time.perf_counter()
        server.call(fill(), timeout=600)
        filled_s = time.perf_counter() - started
        path = str(Path(folder) / "snapshot.db")
        started = time.perf_counter()
        report = server.call(save(server.emu, path))
        save_ms = (time.perf_counter() - started) * 1000
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            server.call(restore(server.emu, path))
            samples.append((time.perf_counter() - started) * 1000)
        emails = server.request("GET", "/emails", limit=1)
    restore_ms = statistics.mean(samples)
    size_mb = report["bytes"] / 1e6
    print(f"snapshot of {SNAPSHOT_EMAILS} emails ({size_mb:.1f} MB, filled in {filled_s:.1f} s):"
          f" save {save_ms:.0f} ms, restore {restore_ms:.0f} ms"
          f" ({restore_ms * 1000 / SNAPSHOT_EMAILS:.1f} µs per email)")
    assert emails["data"][0]["subject"] == f"Bench {SNAPSHOT_EMAILS - 1}"


def _phase_overhead(folder: str, test_file: str, *options: str) -> list[float]:
    """Setup + teardown seconds of each test in one pytest run (what pytest and the fixtures add)."""
    Path(folder, "test_many.py").write_text(test_file)
    Path(folder, "conftest.py").write_text(PHASES_CONFTEST)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options], cwd=folder,
                   capture_output=True, check=True)
    phases: dict[str, float] = {}
    for line in Path(folder, "phases.jsonl").read_text().splitlines():
        test, seconds = json.loads(line)
        phases[test] = phases.get(test, 0.0) + seconds
    Path(folder, "phases.jsonl").unlink()
    return list(phases.values())[1:]  # the first test's setup starts the emulator


def per_test_reset_figures() -> None:
    """The reset as a suite feels it: setup + teardown of a test using `resend_emulator` (after the
    previous test sent an email) minus those of a test with a plain fixture, per test, in real runs."""
    samples: dict[str, list[float]] = {"process": [], "thread": [], "bare": []}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(3):
            for shape in ("process", "thread"):
                option = f"--resend-emulator-shape={shape}"
                samples[shape] += _phase_overhead(folder, MANY_WITH_FIXTURE, option)
            samples["bare"] += _phase_overhead(folder, MANY_WITHOUT_FIXTURE)
    bare = statistics.median(samples["bare"]) * 1e6
    print(f"per-test reset as a suite feels it ({RESET_TESTS} tests x 3 runs, setup + teardown beyond"
          f" a plain fixture's {bare:.0f} µs):")
    for shape in ("process", "thread"):
        extra = statistics.median(samples[shape]) * 1e6 - bare
        print(f"  {shape:<8} {extra:6.0f} µs")
        if shape == "thread":  # the default shape
            targets.record("pytest: per-test reset (setup + teardown beyond a plain fixture's)",
                           f"{extra:.0f} µs", "<= 500 µs", extra <= 500)


def wait_figures() -> None:
    """`outbox.wait_for` through either shape's handle, in turn within every round: on mail already
    there (first read: it renders the message; again: already rendered), and on mail that arrives while
    it waits. The verdicts are the default shape's (thread)."""
    from emulator.testing.process import ChildEmulator, spawn

    handles: dict[str, Any] = {"thread": EmulatorServer(smtp=False).start(),
                               "process": ChildEmulator(spawn(), smtp=False).start()}
    names = ("fresh", "again", "health", "send", "wake")
    samples: dict[str, dict[str, list[float]]] = {shape: {name: [] for name in names} for shape in handles}
    try:
        for index in range(WAIT_ROUNDS):
            for shape, server in handles.items():
                for name, value in zip(names, _wait_round(server, f"{shape}{index}"), strict=True):
                    samples[shape][name].append(value)
    finally:
        for server in handles.values():
            server.stop()
    for shape in handles:
        us = {name: statistics.median(values) * 1e6 for name, values in samples[shape].items()}
        print(f"outbox.wait_for, {shape}, {WAIT_ROUNDS} rounds: mail already there {us['fresh']:.0f} µs"
              f" (first read), {us['again']:.0f} µs (again); GET /_emulator/health {us['health']:.0f} µs;"
              f" mail sent while waiting: returned {us['wake']:.0f} µs after the send's answer"
              f" (the send itself {us['send']:.0f} µs)")
        if shape != "thread":
            continue
        targets.record("pytest: outbox.wait_for on mail already there", f"{us['fresh']:.0f} µs",
                       "<= 300 µs", us["fresh"] <= 300)
        # Woken by the commit, not polled: the waiting call answers no later after the send than a call
        # made after the send would (a poll would add up to its interval on top).
        targets.record("pytest: wait_for woken by the commit (after the send's answer)",
                       f"{us['wake']:.0f} µs", "<= a wait_for on mail there", us["wake"] <= us["fresh"])


def _wait_round(server: Any, tag: str) -> tuple[float, ...]:
    def timed(call: Any, *args: Any, **kwargs: Any) -> float:
        started = time.perf_counter()
        call(*args, **kwargs)
        return time.perf_counter() - started

    address = f"{tag}@example.com"
    server.request("POST", "/emails", {**MAIL, "to": [address]})
    fresh = timed(server.outbox.wait_for, to=address)
    again = timed(server.outbox.wait_for, to=address)
    health = timed(server.health)
    return (fresh, again, health, *_woken(server, f"late-{tag}@example.com"))


def _woken(server: Any, address: str) -> tuple[float, float]:
    """(send seconds, seconds from the send's answer to the waiting `wait_for`'s return)."""
    returned: list[float] = []
    waiter = threading.Thread(target=lambda: (server.outbox.wait_for(to=address),
                                              returned.append(time.perf_counter())))
    waiter.start()
    time.sleep(0.005)  # the long poll is in place
    started = time.perf_counter()
    server.request("POST", "/emails", {**MAIL, "to": [address]})
    answered = time.perf_counter()
    waiter.join()
    return answered - started, returned[0] - answered


def main() -> None:
    first_test_figures()
    per_test_reset_figures()
    wait_figures()
    reset_figures()
    snapshot_figures()


if __name__ == "__main__":
    main()
