"""Run the emulator inside a test process, or drive one that runs elsewhere.

`EmulatorServer` starts the whole emulator (HTTP on uvicorn with uvloop/httptools, SMTP when enabled)
in a background thread on free ports of 127.0.0.1 and returns only once a real request has succeeded::

    with EmulatorServer(isolate_keys=True) as server:
        with server.patch_env():
            send_welcome_mail("ada@example.com")     # your code, using the Resend SDK
        mail = server.outbox.wait_for(to="ada@example.com")

`EmulatorClient` is the same handle for a server started another way (the CLI, a container): it only
speaks HTTP to the control plane, so every method works against either.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import ssl
import sys
import threading
import time
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from emulator.core.config import Settings
from emulator.testing.controls import (
    ClockControl,
    EmulatorError,
    FaultControl,
    Outbox,
    Transport,
    WebhookControl,
)

if TYPE_CHECKING:
    import smtplib

    from emulator.control.snapshots import Baseline
    from emulator.core.emulator import Emulator
    from emulator.testing.serving import ThreadServer

__all__ = ["EmulatorClient", "EmulatorError", "EmulatorServer"]

T = TypeVar("T")
START_TIMEOUT = 30.0
ENV_NAMES = ("RESEND_API_URL", "RESEND_BASE_URL", "RESEND_API_KEY")


class EmulatorClient:
    """A handle on a running emulator: `outbox`, `clock`, `faults`, `webhooks`, reset, snapshots, env.

    `url` is the HTTP base URL, `api_key` the key the handle uses for the API and account-scoped
    control calls; `smtp_host`/`smtp_port` say where SMTP listens (None when disabled or unknown).
    `ssl_context` is what an `https://` URL is verified with (None: the system's trusted certificates).
    """

    def __init__(self, url: str, api_key: str, *, smtp_host: str | None = None,
                 smtp_port: int | None = None, smtps_port: int | None = None,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.smtp_host = smtp_host
        self.smtp_port = smtp_port
        self.smtps_port = smtps_port
        self.ssl_context = ssl_context
        self._transport = Transport(self.url, api_key, ssl_context=ssl_context)
        self.outbox = Outbox(self._transport)
        self.clock = ClockControl(self._transport)
        self.faults = FaultControl(self._transport)
        self.webhooks = WebhookControl(self._transport)

    def request(self, method: str, path: str, json: Any = None, **params: Any) -> Any:
        """Call the Resend API with the handle's key; return the JSON body or raise `EmulatorError`."""
        return self._transport.call(method, path, json=json, params=params or None, auth=True)

    def health(self) -> dict[str, Any]:
        return self._transport.call("GET", "/_emulator/health")  # type: ignore[no-any-return]

    def reset(self) -> None:
        """Back to a fresh state: no data but the configured keys, the seed's ids, the configured clock."""
        self._transport.call("POST", "/_emulator/reset", json={})

    def load_scenario(self, scenario: str | dict[str, Any]) -> dict[str, Any]:
        """Load a seed scenario into the handle's account: a name from `fixtures/`, a path, or a dict."""
        body = {"scenario": scenario} if isinstance(scenario, dict) else {"name": str(scenario)}
        return self._transport.call("POST", "/_emulator/scenario", json=body, auth=True)  # type: ignore[no-any-return]

    def snapshot(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Save the whole state (data, id sequence, clock) to a file the server can read back."""
        body = {"path": os.fspath(path)}
        return self._transport.call("POST", "/_emulator/snapshot/save", json=body)  # type: ignore[no-any-return]

    def restore(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Replace the whole state with a file written by `snapshot()`."""
        body = {"path": os.fspath(path)}
        return self._transport.call("POST", "/_emulator/snapshot/restore", json=body)  # type: ignore[no-any-return]

    def env(self) -> dict[str, str]:
        """The variables the Resend SDKs read: RESEND_API_URL (Python), RESEND_BASE_URL (Node), the key."""
        return {"RESEND_API_URL": self.url, "RESEND_BASE_URL": self.url, "RESEND_API_KEY": self.api_key}

    @contextmanager
    def patch_env(self) -> Iterator[dict[str, str]]:
        """Set `env()` in `os.environ` (and point an imported `resend` module here) for the block.

        The Python SDK reads RESEND_API_URL once at import, so an already imported `resend` gets its
        `api_url` and `api_key` set as well; everything is put back afterwards.
        """
        values = self.env()
        saved_env = {name: os.environ.get(name) for name in values}
        sdk = sys.modules.get("resend")
        saved_sdk = _sdk_settings(sdk)
        os.environ.update(values)
        if sdk is not None:
            _set_sdk(sdk, self.url, self.api_key)
        try:
            yield values
        finally:
            for name, value in saved_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            if sdk is not None and saved_sdk is not None:
                _set_sdk(sdk, *saved_sdk)

    def smtp(self, api_key: str | None = None, *, implicit_tls: bool = False) -> smtplib.SMTP:
        """A logged-in SMTP session (STARTTLS, or implicit TLS) trusting the emulator's certificate.

        Username `resend`, password the API key (the handle's by default), as with the real relay.
        """
        import smtplib  # here: a session that never opens one does not load it (issue 28, start)

        info = self._transport.call("GET", "/_emulator/smtp")
        if not info["enabled"]:
            raise RuntimeError("SMTP is disabled on this emulator")
        context = ssl.create_default_context(cadata=info["certificate"])
        host = self.smtp_host or info["host"]
        client: smtplib.SMTP
        if implicit_tls:
            client = smtplib.SMTP_SSL(host, info["ports"]["smtps"], context=context, timeout=30)
        else:
            client = smtplib.SMTP(host, info["ports"]["smtp"], timeout=30)
            client.starttls(context=context)
        client.login("resend", api_key or self.api_key)
        return client

    def close(self) -> None:
        self._transport.close()


def _set_sdk(sdk: ModuleType, url: Any, key: Any) -> None:
    sdk.__dict__["api_url"], sdk.__dict__["api_key"] = url, key


def _sdk_settings(sdk: ModuleType | None) -> tuple[Any, Any] | None:
    if sdk is None:
        return None
    return getattr(sdk, "api_url", None), getattr(sdk, "api_key", None)


class EmulatorServer(EmulatorClient):
    """The emulator in a background thread of this process, on free ports of 127.0.0.1.

    Keyword overrides are `Settings` fields (`isolate_keys=True`, `clock="frozen"`, `seed=7`,
    `seed_file=...`, `smtp=False`, `https=True`, ...) applied to `settings`, or to defaults with every
    port 0 (free) when no `settings` is given. Use it as a context manager, or call `start()` and
    `stop()`. `emu` is the live `Emulator`, for in-process access through `call()`.

    With `https=True` the URL is `https://`, and `certificate_pem` / `ssl_context` are the certificate
    to trust (`httpx.Client(verify=server.ssl_context)`); the handle's own calls already trust it.
    """

    def __init__(self, settings: Settings | None = None, **overrides: Any) -> None:
        base = settings or Settings(port=0, smtp_port=0, smtps_port=0, quiet=True)
        self.settings = dataclasses.replace(base, **overrides)
        self.settings.host = "127.0.0.1"
        self._server: ThreadServer | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._failure: BaseException | None = None
        self._emu: Emulator | None = None
        self._baseline: Baseline | None = None
        self.certificate_pem: str | None = None  # with https=True: the PEM the HTTPS port presents
        super().__init__("http://127.0.0.1:0", self.settings.provisioned_keys[0])

    @property
    def emu(self) -> Emulator:
        assert self._emu is not None, "the server is not running"
        return self._emu

    def start(self) -> EmulatorServer:
        """Bind, start the thread, and return once the HTTP API (and SMTP, if on) answers."""
        from emulator.app import create_app
        from emulator.core.net import bind

        sock = bind(self.settings.host, self.settings.port)
        port = sock.getsockname()[1]
        app = create_app(self.settings)
        self._emu = app.state.emu
        self.url = f"{self.settings.scheme}://127.0.0.1:{port}"
        self._emu.state["http_url"] = self.url
        ready = threading.Event()
        self._emu.state["on_ready"] = lambda emu: self._ready(ready)
        from emulator.testing.serving import thread_server

        self._server = thread_server(app, self._tls() if self.settings.https else None)
        self._thread = threading.Thread(target=self._serve, args=(sock, ready), daemon=True,
                                        name=f"resend-emulator:{port}")
        with _startup_errors() as seen:
            self._thread.start()
            started = ready.wait(START_TIMEOUT)
        if not started or self._failure is not None or self._loop is None:
            reason = seen[-1] if seen else (self._failure or "no answer in time")
            raise RuntimeError(f"resend-emulator did not start: {reason}")
        self._transport.retarget(self.url)
        self._wait_until_serving()
        ports = self.emu.state.get("smtp_ports", {})
        self.smtp_host = self.settings.host if ports else None
        self.smtp_port, self.smtps_port = _pick_ports(ports)
        self.mark_baseline()
        return self

    def _tls(self) -> ssl.SSLContext:
        from emulator.core import tls

        credentials, eager = tls.shared(self.emu.state, self.settings)
        self.certificate_pem = credentials.certificate.cert_pem.decode()
        self.ssl_context = self._transport.ssl_context = tls.client_context(credentials.certificate.cert_pem)
        return tls.server_context(credentials, eager=eager)

    def mark_baseline(self) -> None:
        """Make the current state the one `reset()` returns to (after loading a scenario, say)."""
        from emulator.control.snapshots import Baseline

        previous, self._baseline = self._baseline, self.call(Baseline.take(self.emu))
        if previous is not None:
            self.call(previous.close())

    def reset(self) -> None:
        """Back to the baseline — the state right after start and `--seed-file`, or the last
        `mark_baseline()` — data, id sequence and clock alike; fault rules and caches cleared.

        It copies an in-memory snapshot into the live database (SQLite's backup API): about a
        millisecond with every table holding data, cheap enough to run before every test.
        """
        if self._baseline is None:
            super().reset()
        else:
            self.call(self._baseline.restore(self.emu))

    def _ready(self, ready: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        ready.set()

    def _serve(self, sock: Any, ready: threading.Event) -> None:
        assert self._server is not None
        try:
            self._server.run(sockets=[sock])
        except BaseException as exc:
            self._failure = exc
        finally:
            sock.close()
            ready.set()

    def _wait_until_serving(self) -> None:
        # The socket already listens, so the first request only waits for uvicorn's accept loop.
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                self.health()
                return
            except Exception:  # the accept loop may not run yet
                if time.monotonic() > deadline or self._failure is not None:
                    raise
                time.sleep(0.001)

    def call(self, coroutine: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        """Run a coroutine on the server's event loop (in-process access to `emu`) and return its result."""
        assert self._loop is not None, "the server is not running"
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(timeout)

    def stop(self) -> None:
        """Shut the server down and wait for the thread (a few milliseconds when no request is under way)."""
        if self._baseline is not None and self._loop is not None:
            self.call(self._baseline.close())
            self._baseline = None
        self.close()  # the handle's own keep-alive connections first: the server need not wait for them
        if self._server is not None:
            self._server.request_stop()
        if self._thread is not None:
            self._thread.join(START_TIMEOUT)
        self._server = self._thread = self._loop = None

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def _startup_errors() -> Iterator[list[str]]:
    """Collect the exceptions uvicorn logs (and swallows) when the app's startup fails."""
    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.exc_info and record.exc_info[1] is not None:
                seen.append(f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}")
            elif record.getMessage().startswith("Traceback"):  # the lifespan logs the formatted text
                seen.append(record.getMessage().strip().splitlines()[-1])

    handler = Collect(logging.ERROR)
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(handler)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)


def _pick_ports(ports: dict[str, int]) -> tuple[int | None, int | None]:
    """Read the SMTP module's `{name: port}`: the implicit-TLS one has "smtps" in its name."""
    plain = [port for name, port in ports.items() if "smtps" not in name.lower()]
    implicit = [port for name, port in ports.items() if "smtps" in name.lower()]
    return (plain[0] if plain else None), (implicit[0] if implicit else None)


def fixtures_dir() -> Path:
    """The directory of the bundled seed scenarios (`fixtures/*.json`)."""
    from emulator.core.bundled import FIXTURES

    return FIXTURES
