"""Debian's real spamd (package `spamassassin`) on a free loopback port, for the spam-check tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

INSTALL = "apt-get install -y spamassassin"
STARTUP_SECONDS = 120  # spamd compiles its rule set at start: seconds on an idle machine, more on a busy one


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def ask(port: int, command: str, message: bytes = b"", timeout: float = 60) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        head = f"{command} SPAMC/1.5\r\nContent-length: {len(message)}\r\n\r\n"
        connection.sendall(head.encode() + message)
        connection.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _wait_until_answering(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"spamd exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            if b"PONG" in ask(port, "PING", timeout=5):
                # The first scan compiles the rules: pay for it here, not in a test's timeout.
                ask(port, "REPORT", b"Subject: warm-up\r\n\r\nhello\r\n", timeout=STARTUP_SECONDS)
                return
        except OSError:
            time.sleep(0.2)  # not listening yet: the process is still starting
    pytest.fail(f"spamd did not answer PING within {STARTUP_SECONDS} s: {log.read_text()[-2000:]}")


@contextmanager
def running_spamd(tmp: Path) -> Iterator[int]:
    """spamd listening on 127.0.0.1:<port>, local tests only (no DNS or network rules); yields the port."""
    spamd = shutil.which("spamd") or ("/usr/sbin/spamd" if Path("/usr/sbin/spamd").exists() else None)
    if spamd is None:
        pytest.fail(f"spamd is not installed: run `{INSTALL}` (Debian's SpamAssassin) to run these tests")
    port = _free_port()
    log = tmp / "spamd.log"
    command = [spamd, f"--listen=127.0.0.1:{port}", "--allowed-ips=127.0.0.1", "--local",
               "--max-children=1", "--min-children=1", "--syslog=stderr", "--nouser-config"]
    if os.geteuid() == 0:
        command.append("--username=nobody")  # spamd will not scan as root
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=output)
    try:
        _wait_until_answering(process, port, log)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)
