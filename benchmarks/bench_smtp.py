"""SMTP submission throughput: the emulator beside a bare aiosmtpd sink, measured in the same run.

Three loads, each against both servers: one connection sending many messages, a new connection per
message, and 8 concurrent clients (one connection each), ROUNDS rounds alternating emulator and sink;
medians with min–max. As with `wrk` for HTTP, each server runs pinned to core 0 and the load generator
(this process) to core 1, so neither takes the other's CPU. Both servers run in their own process with the
same aiosmtpd settings (EHLO, AUTH PLAIN over plaintext via `--smtp-auth-plaintext`, no TLS, so the
numbers compare intake work rather than handshakes); the sink accepts any credentials and stores each
message as one row in a SQLite file through aiosqlite (WAL, synchronous=NORMAL, one commit per message:
the SMTP counterpart of the HTTP ceiling). The emulator stores each message as a sent email (parse,
validate, SQLite file, events). Messages are about 5 KB (issue 18), text and HTML alternatives.
The load comes from this process: a minimal asyncio SMTP client.
"""

from __future__ import annotations

import asyncio
import base64
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email import policy
from email.message import EmailMessage
from typing import Any

from benchmarks import targets, wrk

API_KEY = "re_bench_smtp_key"
CONCURRENCY = 8
ROUNDS = 5
COUNTS = {"one connection": 400, "connection per message": 150, f"{CONCURRENCY} clients": 800}


def _message() -> bytes:
    message = EmailMessage(policy=policy.SMTP)
    message["From"] = "Acme <hello@acme.dev>"
    message["To"] = "delivered@resend.dev"
    message["Subject"] = "Your receipt"
    lines = [f"Item {index}: a widget of the kind you ordered, quantity 1, price 9.99 EUR."
             for index in range(30)]
    message.set_content("Thanks for your order #1042.\n" + "\n".join(lines) + "\n")
    rows = "".join(f"<tr><td>{line}</td></tr>" for line in lines)
    message.add_alternative(f"<p>Thanks for your order <strong>#1042</strong>.</p><table>{rows}</table>",
                            subtype="html")
    return message.as_bytes()


MESSAGE = _message().replace(b"\r\n.", b"\r\n..")


class Client:
    """Just enough SMTP for a load test: EHLO, AUTH PLAIN, MAIL, RCPT, DATA, QUIT."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, port: int) -> Client:
        client = cls(*await asyncio.open_connection("127.0.0.1", port))
        await client.expect(220)
        await client.command(b"EHLO bench.local", 250)
        token = base64.b64encode(f"\0resend\0{API_KEY}".encode())
        await client.command(b"AUTH PLAIN " + token, 235)
        return client

    async def expect(self, code: int) -> None:
        while True:
            line = await self.reader.readline()
            if not line.startswith(str(code).encode()):
                raise RuntimeError(f"expected {code}, got {line!r}")
            if line[3:4] != b"-":
                return

    async def command(self, line: bytes, code: int) -> None:
        self.writer.write(line + b"\r\n")
        await self.expect(code)

    async def send(self) -> None:
        await self.command(b"MAIL FROM:<hello@acme.dev>", 250)
        await self.command(b"RCPT TO:<delivered@resend.dev>", 250)
        await self.command(b"DATA", 354)
        self.writer.write(MESSAGE + b".\r\n")
        await self.expect(250)

    async def close(self) -> None:
        await self.command(b"QUIT", 221)
        self.writer.close()


async def _one_connection(port: int, count: int) -> None:
    client = await Client.connect(port)
    for _ in range(count):
        await client.send()
    await client.close()


async def _per_message(port: int, count: int) -> None:
    for _ in range(count):
        client = await Client.connect(port)
        await client.send()
        await client.close()


async def _concurrent(port: int, count: int) -> None:
    await asyncio.gather(*(_one_connection(port, count // CONCURRENCY) for _ in range(CONCURRENCY)))


LOADS = {"one connection": _one_connection, "connection per message": _per_message,
         f"{CONCURRENCY} clients": _concurrent}


def rate(port: int, name: str) -> float:
    count = COUNTS[name]
    started = time.perf_counter()
    asyncio.run(LOADS[name](port, count))
    return count / (time.perf_counter() - started)


# ---- the two servers --------------------------------------------------------------------------

def sink(path: str) -> None:
    """`python -m benchmarks.bench_smtp sink FILE`: bare aiosmtpd with the emulator's settings, one SQLite
    row per message; prints its port."""
    import aiosqlite
    from aiosmtpd.smtp import SMTP, AuthResult

    class Store:
        def __init__(self, db: aiosqlite.Connection) -> None:
            self.db = db

        async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:
            await self.db.execute("INSERT INTO mail (sender, raw) VALUES (?, ?)",
                                  (envelope.mail_from, envelope.content))
            await self.db.commit()
            return "250 OK"

    def accept(*_args: object) -> AuthResult:
        return AuthResult(success=True)

    async def serve() -> None:
        db = await aiosqlite.connect(path)
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.execute("CREATE TABLE mail (id INTEGER PRIMARY KEY, sender TEXT, raw BLOB)")
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: SMTP(Store(db), hostname="localhost", enable_SMTPUTF8=True, auth_required=True,
                         auth_require_tls=False, authenticator=accept, data_size_limit=41943040),
            "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Event().wait()

    import warnings

    warnings.simplefilter("ignore")
    asyncio.run(serve())


@contextmanager
def process(args: list[str], port_of: object) -> Iterator[int]:
    proc = subprocess.Popen(wrk.pinned([sys.executable, *args]), stdout=subprocess.PIPE, text=True,
                            stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        port = None
        while port is None:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{args} exited before reporting its port")
            port = port_of(line)  # type: ignore[operator]
        yield int(port)
    finally:
        proc.terminate()
        proc.wait(10)


def _emulator_port(line: str) -> int | None:
    text = line.strip()
    return int(text.rsplit(":", 1)[1]) if text.startswith("smtp on ") else None


@contextmanager
def on_load_core() -> Iterator[None]:
    """This process (the load generator) on core 1 while it runs, as `wrk` is for HTTP."""
    if not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {int(wrk.LOAD_CORE)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        emulator_args = ["-m", "emulator", "--port", "0", "--smtp-port", "0", "--smtps-port", "0",
                         "--smtp-auth-plaintext", "--api-key", API_KEY, "--db", os.path.join(folder, "b.db")]
        with process(emulator_args, _emulator_port) as emulator_port, \
                process(["-m", "benchmarks.bench_smtp", "sink", os.path.join(folder, "sink.db")],
                        lambda line: int(line)) as sink_port, on_load_core():
            rate(emulator_port, "one connection")  # warm-up: first-use imports and caches
            rate(sink_port, "one connection")
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in COUNTS}
            for _ in range(ROUNDS):
                for name in COUNTS:
                    runs[name].append((rate(emulator_port, name), rate(sink_port, name)))
    print(f"{'load':<26}{'emulator msg/s':>16}{'bare sink msg/s':>18}   ratio (min–max of {ROUNDS} rounds)")
    for name, pairs in runs.items():
        ratios = [ours / bare for ours, bare in pairs]
        ours = statistics.median(o for o, _ in pairs)
        bare = statistics.median(b for _, b in pairs)
        ratio = statistics.median(ratios)
        print(f"{name:<26}{ours:>16.0f}{bare:>18.0f}   {ratio:.2f} ({min(ratios):.2f}–{max(ratios):.2f})",
              flush=True)
        spread = f"{ratio:.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
        targets.record(f"SMTP 5 KB, {name}", f"{spread} of a bare sink", ">= 0.70", ratio >= 0.70)


if __name__ == "__main__" and sys.argv[1:2] == ["sink"]:
    sink(sys.argv[2])
