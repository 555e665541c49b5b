"""What a team's suite feels: 200 tests of a small app that sends mail through the official `resend` SDK.

    python -m benchmarks suite

A generated app module (in a temp folder) sends a welcome email and a receipt with a PDF attachment;
each of 200 tests calls both and reads the receipt back with `resend.Emails.get`. The same test file
runs as whole `pytest` processes in four variants, alternated within each of ROUNDS rounds:

- fixture, thread: the `resend_emulator` fixture, emulator in a thread of the pytest process (the
  plugin's default); a reset before every test and `outbox.wait_for` on the receipt;
- fixture, process: the same, emulator in a child process (`resend_emulator_shape=process`);
- emulate: the peer (benchmarks/peer.py) started once, RESEND_API_URL pointed at it, a fresh bearer
  token per run (it allows 5 000 requests per token);
- stub: a Starlette app on uvicorn in its own process answering each send with a fresh id and each read
  with a fixed body — the least any server could cost the suite.

Targets (issue 40): the fixture's suite ≤ 1.0x emulate's and ≤ 1.3x the stub's (the default shape).
"""

from __future__ import annotations

import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks import peer, targets

TESTS = 200
ROUNDS = 5
APP = '''
import resend

RECEIPT = list(b"%PDF-1.4 receipt " * 64)


def send_welcome(to):
    return resend.Emails.send({"from": "Acme <hello@acme.dev>", "to": [to], "subject": "Welcome to Acme",
                               "html": "<p>Welcome aboard!</p>", "text": "Welcome aboard!"})


def send_receipt(to, amount):
    return resend.Emails.send({"from": "Acme <billing@acme.dev>", "to": [to],
                               "subject": f"Your receipt for ${amount}",
                               "html": f"<p>Thanks! You paid ${amount}.</p>",
                               "attachments": [{"filename": "receipt.pdf", "content": RECEIPT}]})


def read(email_id):
    return resend.Emails.get(email_id)
'''
TEST_FILE = '''
import pytest
import shop


@pytest.mark.parametrize("n", range({tests}))
def test_signup_sends_welcome_and_receipt(n, outbox_check):
    to = f"user{{n}}@example.com"
    assert shop.send_welcome(to)["id"]
    receipt = shop.send_receipt(to, n)
    assert shop.read(receipt["id"])["id"] == receipt["id"]
    outbox_check(to)
'''
WITH_FIXTURE = '''
import pytest


@pytest.fixture
def outbox_check(resend_emulator):
    def check(to):
        assert resend_emulator.outbox.wait_for(to=to, subject="receipt")["to"] == [to]
    return check
'''
WITHOUT_FIXTURE = '''
import pytest


@pytest.fixture
def outbox_check():
    return lambda to: None
'''
_tokens = itertools.count()


def write_suite(folder: Path, fixture: bool) -> None:
    (folder / "shop.py").write_text(APP)
    (folder / "test_shop.py").write_text(TEST_FILE.format(tests=TESTS))
    (folder / "conftest.py").write_text(WITH_FIXTURE if fixture else WITHOUT_FIXTURE)


def run_suite(folder: Path, env: dict[str, str], *options: str) -> float:
    """Wall seconds of one whole `pytest` process on the suite; it must pass."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options],
                          cwd=folder, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or f"{TESTS} passed" not in done.stdout:
        raise RuntimeError(f"the suite failed in {folder}:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return elapsed


@contextmanager
def stub_server() -> Iterator[str]:
    port = peer.free_port()
    process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("stub_app.py")), str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        peer.wait_until_listening(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)


def _env(url: str | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("RESEND_") and key != "PYTEST_ADDOPTS"}
    if url is not None:
        # A fresh token for each run: emulate answers 403 after 5 000 requests per token.
        env.update(RESEND_API_URL=url, RESEND_API_KEY=f"re_suite_{os.getpid()}_{next(_tokens)}")
    return env


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def measure(rounds: int = ROUNDS) -> dict[str, list[float]]:
    command = peer.ensure_installed()
    with tempfile.TemporaryDirectory() as fixture_dir, tempfile.TemporaryDirectory() as bare_dir, \
            peer.running(command) as emulate, stub_server() as stub:
        write_suite(Path(fixture_dir), fixture=True)
        write_suite(Path(bare_dir), fixture=False)
        emulate_url = f"http://127.0.0.1:{emulate.port}"
        variants = {
            "fixture, process": lambda: run_suite(Path(fixture_dir), _env(), "-o",
                                                  "resend_emulator_shape=process"),
            "fixture, thread": lambda: run_suite(Path(fixture_dir), _env(), "-o",
                                                 "resend_emulator_shape=thread"),
            "emulate": lambda: run_suite(Path(bare_dir), _env(emulate_url)),
            "stub": lambda: run_suite(Path(bare_dir), _env(stub)),
        }
        for run in variants.values():  # warm-up: caches, the peer's JIT
            run()
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(rounds):
            for name, run in variants.items():
                seconds[name].append(run())
    return seconds


def main() -> None:
    seconds = measure()
    print(f"{TESTS}-test suite (welcome + receipt with attachment + read back per test), whole pytest"
          f" processes, {ROUNDS} rounds alternated: seconds, median (min–max)")
    for name, values in seconds.items():
        print(f"  {name:<18} {spread(values)} s")
    shapes = [one / other for one, other in zip(seconds["fixture, process"], seconds["fixture, thread"],
                                                strict=True)]
    print(f"  process / thread, round by round: {spread(shapes)}x (the plugin's default: thread)")
    for shape in ("fixture, process", "fixture, thread"):
        ours = seconds[shape]
        versus = {peer_name: [one / other for one, other in zip(ours, seconds[peer_name], strict=True)]
                  for peer_name in ("emulate", "stub")}
        print(f"  {shape}: {spread(versus['emulate'])}x emulate, {spread(versus['stub'])}x stub")
        if shape == "fixture, thread":  # the default shape carries the verdict
            for peer_name, target in (("emulate", 1.0), ("stub", 1.3)):
                ratio = statistics.median(versus[peer_name])
                targets.record(f"200-test suite with the fixture vs {peer_name}",
                               f"{spread(versus[peer_name])}x", f"<= {target}x", ratio <= target)


if __name__ == "__main__":
    main()
