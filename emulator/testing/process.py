"""The emulator in a process of its own, driven from a test session (the pytest plugin's `process` shape).

The parent spawns `python -m emulator.testing.process` as early as it knows a test will need it; the child
imports the emulator at once (while the parent is still collecting tests), then waits on its stdin for
the settings, starts an `EmulatorServer` in itself and answers with where it listens. Afterwards the
parent's handle (`ChildEmulator`, an `EmulatorClient`) speaks HTTP for everything but two commands sent
down the same pipe, `reset` and `mark` (the in-memory baseline lives in the child, next to the data).

The pipe is also the child's lifeline: when it reaches end of file — the parent closed it, exited, or was
killed with SIGKILL — the child stops its server and exits. Every port is a free one of 127.0.0.1, so each
session (each pytest-xdist worker) has its own.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import pickle
import ssl
import subprocess
import sys
from typing import IO, Any

from emulator.core.config import Settings
from emulator.testing.server import EmulatorClient

__all__ = ["DEFAULTS", "ChildEmulator", "spawn"]
# The settings the pytest plugin asks for when a suite overrides none.
DEFAULTS: dict[str, Any] = {"port": 0, "smtp_port": 0, "smtps_port": 0, "quiet": True}


def spawn() -> subprocess.Popen[bytes]:
    """Start the child; it imports the emulator and then waits for `ChildEmulator.start`."""
    return subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


class ChildEmulator(EmulatorClient):
    """A handle on an emulator running in a child process (see the module's docstring)."""

    def __init__(self, child: subprocess.Popen[bytes], **overrides: Any) -> None:
        base = Settings(port=0, smtp_port=0, smtps_port=0, quiet=True)
        self.settings = dataclasses.replace(base, **overrides)
        self.settings.host = "127.0.0.1"
        self.certificate_pem: str | None = None
        self._child = child
        super().__init__("http://127.0.0.1:0", self.settings.provisioned_keys[0])
        self._overrides = overrides
        self._pending = 0  # resets sent whose answer is not read yet

    def start(self) -> ChildEmulator:
        """Hand the child its settings; return once its server answers HTTP (and SMTP, if on)."""
        answer = self._command(base64.b64encode(pickle.dumps(self._overrides)))
        self.url = answer["url"]
        self._transport.retarget(self.url)
        self.smtp_host, self.smtp_port, self.smtps_port = (answer["smtp_host"], answer["smtp_port"],
                                                           answer["smtps_port"])
        self.settings.port = int(self.url.rsplit(":", 1)[1])
        self.certificate_pem = answer["certificate_pem"]
        if self.certificate_pem is not None:
            context = ssl.create_default_context(cadata=self.certificate_pem)
            self.ssl_context = self._transport.ssl_context = context
        return self

    def reset(self) -> None:
        """Back to the baseline (see `EmulatorServer.reset`), restored inside the child."""
        self._command(b"reset")

    def begin_reset(self) -> None:
        """Start a reset and return at once; `settle()` (or any next command) waits for it.

        The plugin sends it as a test ends and settles before the next test's setup: the child
        restores while pytest reports the test and prepares the next one, so the wait left is short.
        """
        self._send(b"reset")
        self._pending += 1

    def settle(self) -> bool:
        """Wait until every reset begun has finished (raising the first failure); whether there was one."""
        begun = self._pending > 0
        while self._pending:
            self._pending -= 1
            self._answer()
        return begun

    def mark_baseline(self) -> None:
        """Make the current state the one `reset()` returns to."""
        self._command(b"mark")

    def stop(self) -> None:
        """Close the lifeline and wait for the child to stop its server and exit."""
        self.close()
        if self._child.stdin is not None:
            self._child.stdin.close()
        try:
            self._child.wait(10)
        except subprocess.TimeoutExpired:
            self._child.kill()
            self._child.wait()
        if self._child.stdout is not None:
            self._child.stdout.close()

    def _command(self, line: bytes) -> dict[str, Any]:
        self.settle()
        self._send(line)
        return self._answer()

    def _send(self, line: bytes) -> None:
        assert self._child.stdin is not None
        try:
            self._child.stdin.write(line + b"\n")
            self._child.stdin.flush()
        except BrokenPipeError:
            pass  # the child is gone: reading its answer says so

    def _answer(self) -> dict[str, Any]:
        assert self._child.stdout is not None
        answer = self._child.stdout.readline()
        if not answer:
            raise RuntimeError(f"resend-emulator's process exited (status {self._child.poll()})")
        parsed: dict[str, Any] = json.loads(answer)
        if "error" in parsed:
            raise RuntimeError(parsed["error"])
        return parsed


def _answer(out: IO[bytes], body: dict[str, Any]) -> None:
    out.write(json.dumps(body).encode() + b"\n")
    out.flush()


def main() -> None:
    # Answers go to a private copy of stdout; anything the emulator or a library prints goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    from emulator.testing.server import EmulatorServer

    # Started before the settings arrive, with the plugin's defaults, which most suites keep: the whole
    # start (imports, schema, ports, TLS material) runs while the parent still collects its tests.
    # Other settings cost this server's stop and a second start.
    ready: EmulatorServer | None
    try:
        ready = EmulatorServer(**DEFAULTS).start()
    except Exception:
        ready = None  # the start with the settings asked for says why, if it fails again
    line = sys.stdin.buffer.readline()
    overrides = pickle.loads(base64.b64decode(line)) if line else None
    if ready is not None and overrides != DEFAULTS:
        ready.stop()
        ready = None
    if overrides is None:
        return
    try:
        server = ready or EmulatorServer(**overrides).start()
    except Exception as exc:  # the parent raises it, in the test that asked for the emulator
        _answer(out, {"error": str(exc)})
        return
    _answer(out, {"url": server.url, "smtp_host": server.smtp_host, "smtp_port": server.smtp_port,
                  "smtps_port": server.smtps_port, "certificate_pem": server.certificate_pem})
    _serve_commands(server, out)
    if server.settings.db == ":memory:":
        os._exit(0)  # nothing to keep: the parent's wait for the stop is ~70 ms of every session's end
    server.stop()


def _serve_commands(server: Any, out: IO[bytes]) -> None:
    for command in sys.stdin.buffer:  # ends when the parent is gone: exited, or killed
        try:
            server.reset() if command == b"reset\n" else server.mark_baseline()
        except Exception as exc:
            _answer(out, {"error": f"resend-emulator: {type(exc).__name__}: {exc}"})
        else:
            _answer(out, {})


if __name__ == "__main__":
    main()
