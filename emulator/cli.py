"""argv → Settings → run. The only module that reads argv or the environment."""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import signal
import socket
import sys
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from emulator import __version__, preflight
from emulator.banner import print_banner
from emulator.core.bundled import scenario_names
from emulator.core.config import Settings, StartupError
from emulator.core.net import bind, is_loopback
from emulator.core.stdout import JSON, LOG_FORMATS, TEXT, event, log_as_json
from emulator.flags import Formatter, Parser, duration, port_number, spamd, timestamp

if TYPE_CHECKING:
    import ssl

ENV_PREFIX = "RESEND_EMULATOR_"
T = TypeVar("T")


def _env(name: str) -> str | None:
    return os.environ.get(ENV_PREFIX + name)


def _flag(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def bundled_scenarios() -> list[str]:
    # From the folder, not the seeding code: that imports Starlette and most resource groups, and
    # `--help` or a wrong flag should not wait for them.
    return scenario_names()


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="resend-emulator", formatter_class=Formatter,
        description="A local, stateful emulator of the Resend email API. Every flag can also be set"
                    f" with an environment variable {ENV_PREFIX}<NAME> (shown for each flag).",
        epilog="Output: a banner with the URL, SMTP ports and API key, then errors only. HTTP requests"
               " are not logged unless --log-requests (-v) is given. With --log-format json every stdout"
               " line is one JSON object, and every request is logged (unless --quiet): what a team host's"
               " log collector reads; keys never appear in it. A start that fails prints one line"
               " and exits with status 2 when an argument is wrong, 1 when the machine refuses (a port"
               " in use, a permission).",
    )
    add = parser.add_argument

    def option(flags: str | tuple[str, ...], env: str, help_text: str, **kwargs: Any) -> None:
        default = _env(env)
        if default is not None and kwargs.get("action") == "store_true":
            kwargs["default"] = _flag(default)
        elif default is not None:
            kwargs["default"] = kwargs.get("type", str)(default)
        names = (flags,) if isinstance(flags, str) else flags
        add(*names, help=f"{help_text} [env {ENV_PREFIX}{env}]", **kwargs)

    add("--version", action="version", version=f"resend-emulator {__version__}")

    option("--host", "HOST", "interface to listen on (default 127.0.0.1)", default="127.0.0.1")
    option("--port", "PORT", "HTTP port (default 2580; 0 picks a free port and prints it)",
           type=port_number, default=2580)
    option("--smtp-port", "SMTP_PORT", "SMTP submission port with STARTTLS (default 2587; 0 = free port)",
           type=port_number, default=2587)
    option("--smtps-port", "SMTPS_PORT", "SMTP port with implicit TLS (default 2465; 0 = free port)",
           type=port_number, default=2465)
    option("--no-smtp", "NO_SMTP", "do not start the SMTP servers", action="store_true")
    option("--smtp-auth-plaintext", "SMTP_AUTH_PLAINTEXT",
           "test switch: offer SMTP AUTH before TLS (the real relay never does)", action="store_true")
    option("--https", "HTTPS", "serve the HTTP port (API and UI) over TLS 1.2+, with --tls-cert/--tls-key"
           " or else the self-signed certificate SMTP presents", action="store_true")
    option("--tls-cert", "TLS_CERT", "PEM certificate for SMTP TLS and --https (default: self-signed, made"
           " once, naming localhost, --host and the --allowed-host names)")
    option("--tls-key", "TLS_KEY", "PEM private key for --tls-cert")
    option("--db", "DB", "SQLite file to keep state in (default: in memory, gone at exit); one emulator"
           " per file, held by a lock on DB.lock beside it", default=":memory:")
    option("--seed", "SEED", "number that makes ids, secrets and tokens reproducible (default 0); it"
           " loads no data: for that see --scenario", type=int, default=0, metavar="N")
    add("--api-key", action="append", default=None, metavar="KEY",
        help="pre-provision a full-access API key (repeatable); with none, the default key"
             f" re_emulator_default_key is created [env {ENV_PREFIX}API_KEYS, comma-separated]")
    option("--clock", "CLOCK", "clock mode: real (default) or frozen (moves only when told)",
           choices=["real", "frozen"], default="real")
    option("--clock-start", "CLOCK_START", "ISO 8601 time the clock starts at (default: now, or"
           " 2026-01-01T00:00:00Z when frozen)", type=timestamp)
    option("--strict-domains", "STRICT_DOMAINS", "apply the real sending rules: `from` must be on a"
           " verified domain of the account (default: any `from` domain is accepted)",
           action="store_true")
    option("--rate-limit", "RATE_LIMIT", "enforce this many requests per second per account"
           " (default 0: headers only, never 429)", type=int, default=0)
    option("--daily-quota", "DAILY_QUOTA", "refuse sends past N emails a UTC day per account with 429"
           " daily_quota_exceeded (each recipient counts; default 0: no limit, headers only)", type=int,
           default=0, metavar="N")
    option("--monthly-quota", "MONTHLY_QUOTA", "the same per UTC month: 429 monthly_quota_exceeded"
           " (default 0: no limit)", type=int, default=0, metavar="N")
    option("--isolate-keys", "ISOLATE_KEYS", "every distinct well-formed key gets its own isolated"
           " account (for test suites sharing one server)", action="store_true")
    scenarios = ", ".join(bundled_scenarios())
    option(("--scenario", "--seed-file"), "SEED_FILE", "seed data to load at start: a bundled scenario"
           f" ({scenarios}) or the path of a JSON scenario file (--seed-file is the older name;"
           f" env {ENV_PREFIX}SCENARIO works too); with --db it loads once: a restart keeps the state and"
           " adds nothing", dest="seed_file", metavar="NAME|FILE",
           default=_env("SCENARIO"))
    option("--restore", "RESTORE", "snapshot file to restore at start (written by POST"
           " /_emulator/snapshot/save), before --scenario")
    option("--snapshot-dir", "SNAPSHOT_DIR", "confine POST /_emulator/snapshot/save and /restore to this"
           " directory (paths in their bodies are relative to it); default: any path")
    option("--max-emails", "MAX_EMAILS", "keep at most N sent and N received emails, pruning the oldest"
           " with their attachments, events and webhook messages (default 0: no limit)", type=int, default=0)
    option("--max-age", "MAX_AGE", "drop mail and request-log rows older than this on the emulator clock:"
           " seconds, or a number with s/m/h/d (e.g. 24h; default: keep everything)", type=duration,
           default=0.0)
    option("--quiet", "QUIET", "log nothing but errors (the start-up banner still prints)",
           action="store_true")
    option(("--log-requests", "-v"), "LOG_REQUESTS", "print one line per HTTP request: method, path,"
           " status and milliseconds (default: requests are not logged)", action="store_true")
    option("--log-format", "LOG_FORMAT", "text (default: the banner, then -v lines) or json: one JSON"
           " object per line on stdout for the start (URLs and ports; keys redacted), every HTTP request"
           " (method, route template as path, status, duration_ms, account; with or without -v, none"
           " with --quiet), errors and the stop", choices=list(LOG_FORMATS), default=TEXT)
    option("--spamassassin", "SPAMASSASSIN", "a running spamd whose score and rules the Checks tab and"
           " /_emulator/outbox/{id}/qa show (default: no spam check)", type=spamd, metavar="HOST:PORT")
    add("--allowed-host", action="append", default=None, metavar="NAME",
        help="also answer requests whose Host is NAME (repeatable; `*` for any), e.g. a container's"
             " service name; by default only the bound host and loopback names"
             f" [env {ENV_PREFIX}ALLOWED_HOSTS, comma-separated]")
    option("--ui-auth-file", "UI_AUTH_FILE", "htpasswd file (bcrypt as `htpasswd -B` writes, or {SHA})"
           " whose users alone may open the web UI and the control plane (/_emulator/*, except health"
           " and the unsubscribe and tracking links mail recipients follow); re-read when it changes."
           " The Resend API keeps using API keys only", metavar="FILE")
    option("--no-ui-auth", "NO_UI_AUTH", "start on a --host other than loopback without --ui-auth-file,"
           " leaving the UI and control plane open to anyone who reaches the port (all mail, reset):"
           " only where a trusted network alone reaches it, e.g. inside a container whose port only"
           " that network can reach", action="store_true")
    option("--link-check", "LINK_CHECK", "allow the link check on a non-loopback host: the Checks tab's"
           " button requests each link of an email (on by default for a loopback --host)",
           action="store_true")
    option("--release", "RELEASE", "allow release on a non-loopback host: forwarding a captured email to"
           " an SMTP server named in the request (on by default for a loopback --host)", action="store_true")
    return parser


def _names(text: str | None) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def parse_settings(argv: Sequence[str] | None = None) -> Settings:
    args = build_parser().parse_args(argv)
    keys = args.api_key
    if keys is None:
        keys = [k.strip() for k in (_env("API_KEYS") or "").split(",") if k.strip()]
    if args.log_format not in LOG_FORMATS:  # argparse checks choices on the command line, not env defaults
        build_parser().error(f"{ENV_PREFIX}LOG_FORMAT must be text or json, not {args.log_format!r}")
    for flag, value in (("--daily-quota", args.daily_quota), ("--monthly-quota", args.monthly_quota)):
        if value < 0:
            build_parser().error(f"{flag} must be 0 (no limit) or a positive number, not {value}")
    if args.ui_auth_file and args.no_ui_auth:
        build_parser().error("--ui-auth-file and --no-ui-auth contradict each other: give one of them")
    return Settings(
        host=args.host, port=args.port, smtp=not args.no_smtp, smtp_port=args.smtp_port,
        smtps_port=args.smtps_port, smtp_auth_plaintext=args.smtp_auth_plaintext, https=args.https,
        tls_cert=args.tls_cert, tls_key=args.tls_key, db=args.db, seed=args.seed, api_keys=keys,
        clock=args.clock, clock_start=args.clock_start, strict_domains=args.strict_domains,
        rate_limit=args.rate_limit, daily_quota=args.daily_quota, monthly_quota=args.monthly_quota,
        isolate_keys=args.isolate_keys, seed_file=args.seed_file,
        # A team host (issue 38): signed in with a password, or reachable from other machines.
        ui_sign_in=args.isolate_keys and (bool(args.ui_auth_file) or not is_loopback(args.host)),
        restore=args.restore, quiet=args.quiet, log_requests=args.log_requests, log_format=args.log_format,
        snapshot_dir=args.snapshot_dir, max_emails=args.max_emails, max_age=args.max_age,
        allowed_hosts=args.allowed_host or _names(_env("ALLOWED_HOSTS")), spamassassin=args.spamassassin,
        ui_auth_file=args.ui_auth_file, no_ui_auth=args.no_ui_auth,
        link_check=args.link_check or None, release=args.release or None,
    )


async def serve(settings: Settings, sock: socket.socket,
                smtp_sockets: dict[str, socket.socket] | None = None) -> list[int]:
    """Serve until SIGINT or SIGTERM; return the signals that stopped it (for `main` to re-raise)."""
    from emulator.core.uvicorn_light import import_server_only

    import_server_only()  # uvicorn without its command line (click, watchfiles): ~10 ms of the start
    import uvicorn

    from emulator.app import create_app
    from emulator.core.emulator import STOP_GRACE_SECONDS
    from emulator.core.wire import WholeResponses

    app = create_app(settings)
    emu = app.state.emu
    context = https_context(emu) if settings.https else None
    json_log = settings.log_format == JSON
    if json_log:
        log_as_json()  # and uvicorn is told to leave its loggers to us (log_config=None)
    # A stop lets requests under way finish for up to STOP_GRACE_SECONDS (issue 38); live UI streams,
    # which would hold it for their whole 15 s, end as it begins (`Emulator.begin_stop`).
    config = uvicorn.Config(app, http=WholeResponses, log_level="error" if settings.quiet else "warning",
                            access_log=False, lifespan="off", ws="none",
                            timeout_graceful_shutdown=int(STOP_GRACE_SECONDS),
                            log_config=None if json_log else uvicorn.config.LOGGING_CONFIG,
                            ssl_context_factory=(lambda *_: context) if context else None)
    host, port = sock.getsockname()[:2]
    emu.state["http_url"] = f"{settings.scheme}://{host}:{port}"
    emu.state["on_ready"] = on_ready
    emu.state["smtp_sockets"] = smtp_sockets or {}
    server = serving_server(config, emu.begin_stop)
    # The app's start and stop run here, around uvicorn, not inside it: a start that fails is then an
    # exception `main` turns into one line (uvicorn would log a traceback and exit 3), and what did
    # start is stopped by the lifespan on the way out.
    ready = False
    try:
        # Signals are caught from here on, not only once uvicorn serves: the banner prints during the
        # app's start, and a Ctrl-C right after it used to raise KeyboardInterrupt there, after which the
        # process waited forever for the database's worker thread. Caught early, it stops the server
        # as soon as it starts.
        with server.capture_signals():
            async with app.router.lifespan_context(app):
                ready = True
                await server.serve(sockets=[sock])
    except StartupError:
        raise
    except Exception as error:
        if ready:
            raise
        raise StartFailed(f"{type(error).__name__}: {error}") from error
    caught = list(server.caught)
    event(settings.log_format, "stop", None, signals=[signal.Signals(sig).name for sig in caught])
    return caught


def https_context(emu: Any) -> ssl.SSLContext:
    """The HTTP port's TLS context: the certificate SMTP presents too (one PEM to trust for both). A
    user's files are loaded now, so a wrong pair stops the start with one line."""
    from emulator.core import tls

    credentials, eager = tls.shared(emu.state, emu.settings)
    return tls.server_context(credentials, eager=eager)


def serving_server(config: Any, begin_stop: Callable[[], None]) -> Any:
    """uvicorn's server, except that SIGINT/SIGTERM only stop it and are kept in `caught`: uvicorn
    re-raises them as soon as it stopped serving, which would end the process before the app's own
    shutdown (run after it); `main` re-raises them once that is done. Its shutdown first calls
    `begin_stop` (the emulator's other listeners stop accepting too, live streams end)."""
    import uvicorn

    class Server(uvicorn.Server):
        def __init__(self, config: uvicorn.Config) -> None:
            super().__init__(config)
            self.caught: list[int] = []

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            from emulator.core.draining import drain

            begin_stop()
            await drain(self, sockets, float(self.config.timeout_graceful_shutdown or 0))
            if not self.force_exit:  # a second Ctrl-C
                await self.lifespan.shutdown()

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            self.caught.append(sig)
            super().handle_exit(sig, frame)

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return Server(config)


class StartFailed(Exception):
    """Something unforeseen stopped the start (a StartupError is the foreseen kind)."""


def bind_smtp(settings: Settings) -> dict[str, socket.socket]:
    """SMTP ports bound like the HTTP one (a busy port is one clear line); the app's lifespan serves them."""
    if not settings.smtp:
        return {}
    sockets: dict[str, socket.socket] = {}
    try:
        for name, port in (("smtp", settings.smtp_port), ("smtps", settings.smtps_port)):
            sockets[name] = bind(settings.host, port, f"--{name}-port", "--no-smtp")
    except StartupError:
        close_all(sockets.values())
        raise
    return sockets


def close_all(sockets: Iterable[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def on_ready(emu: Any) -> None:
    tune_for_serving()
    print_banner(emu)


def tune_for_serving() -> None:
    """Garbage-collector settings for a process that only serves the emulator (not for library use:
    a test process embedding the emulator keeps its own settings).

    Requests allocate many short-lived objects and build few cycles, so the youngest generation is
    collected less eagerly (default: every 700 allocations), and what start-up made is frozen out of
    the full passes that would otherwise stall requests. The collector, off during the start (`main`),
    is on again from here."""
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    gc.enable()


def run_loop(main_coroutine: Coroutine[Any, Any, T]) -> T:
    """uvloop when installed (uvicorn[standard] brings it): about twice the requests per second."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main_coroutine)
    return uvloop.run(main_coroutine)


def main(argv: Sequence[str] | None = None) -> None:
    # No garbage collection while the start imports ~400 modules and builds the app: those passes find
    # nothing to free and were ~15 ms of CPU before the first answer (issue 40). On again when ready.
    collecting = gc.isenabled()
    gc.disable()
    try:
        start(argv)
    finally:
        if collecting:
            gc.enable()


def start(argv: Sequence[str] | None) -> None:
    settings = parse_settings(argv)
    sockets: list[socket.socket] = []
    lock: int | None = None
    try:
        lock = preflight.check(settings)
        sockets.append(bind(settings.host, settings.port))
        smtp_sockets = bind_smtp(settings)
        sockets += smtp_sockets.values()
        caught = run_loop(serve(settings, sockets[0], smtp_sockets))
        close_all(sockets)
        for sig in caught:  # the exit status says what stopped it: SIGTERM → -15, SIGINT → 0 (below)
            signal.raise_signal(sig)
    except KeyboardInterrupt:
        pass
    except StartupError as error:
        fail(str(error), error.exit_code, settings.log_format)
    except StartFailed as error:
        fail(f"could not start: {error}", 1, settings.log_format)
    finally:
        close_all(sockets)
        if lock is not None:
            os.close(lock)


def fail(message: str, code: int, log_format: str = TEXT) -> NoReturn:
    # The line on stderr in both formats (a person starting it reads that); with json also on stdout,
    # where the log collector reads.
    event(log_format, "error", None, level="error", message=message, exit_code=code)
    print(f"resend-emulator: {message}", file=sys.stderr, flush=True)
    raise SystemExit(code)


if __name__ == "__main__":
    main()
