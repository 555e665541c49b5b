"""create_app(settings) → Starlette: the composition root."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import ASGIApp, Receive, Scope, Send

from emulator.api import idempotency, request_log
from emulator.api.access_log import RequestWriter, json_request, text_line
from emulator.api.barrier import Barrier
from emulator.api.guard import Guard
from emulator.api.ops import Op, error_response
from emulator.api.pipeline import ApiShortcut, build_routes, literal_endpoints
from emulator.api.telemetry import Telemetry
from emulator.control import base as control
from emulator.control import (
    counts,
    labels,
    mailindex,
    reads,
    retention,
    scenarios,
    snapshots,
)
from emulator.control import (
    faults as api_faults,
)
from emulator.control import metrics as control_metrics
from emulator.core import errors, events, jobs, metrics
from emulator.core.config import Settings
from emulator.core.emulator import Emulator
from emulator.core.errors import ApiError
from emulator.core.stdout import JSON
from emulator.resources import MODULES
from emulator.smtp import server as smtp

log = logging.getLogger("emulator")

KERNEL_MODULES: list[Any] = [events, jobs, idempotency, request_log]
# Extra parts (webhook delivery, SMTP, web UI, test plugin support) plug in here: each may offer
# TABLES, OPS, ROUTES, `install(emu)` (at creation) and `async start(emu)` / `async stop(emu)`.
# The control plane's modules that only add routes are not here: see `control_routes`.
EXTENSIONS: list[Any] = [control, reads, counts, smtp, api_faults, snapshots, scenarios, mailindex, retention,
                         control_metrics, labels]


class LazyRoutes(BaseRoute):
    """Routes imported on the first request whose path may be one of theirs (`exact`, or under one of
    `prefixes`): the web UI, whose templates and views a test session or a send never needs, is ~15 ms
    of the emulator's start (issue 28). Until then nothing of it runs; `load(emu)` also installs it."""

    def __init__(self, exact: tuple[str, ...], prefixes: tuple[str, ...],
                 load: Callable[[Emulator], list[BaseRoute]], label: str = "") -> None:
        self.exact, self.prefixes, self._load, self.label = exact, prefixes, load, label
        self._routes: list[BaseRoute] | None = None

    def routes_for(self, emu: Emulator) -> list[BaseRoute]:
        if self._routes is None:
            self._routes = self._load(emu)
        return self._routes

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        path = scope.get("path", "")
        if scope["type"] != "http" or (path not in self.exact and not path.startswith(self.prefixes)):
            return Match.NONE, {}
        partial: tuple[Match, Scope] = (Match.NONE, {})
        for route in self.routes_for(scope["app"].state.emu):
            match, child = route.matches(scope)
            if match == Match.FULL:
                return match, {**child, "lazy_route": route}
            if match == Match.PARTIAL and partial[0] == Match.NONE:  # a wrong method: 405, as Router does
                partial = (match, {**child, "lazy_route": route})
        return partial

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = scope["route"] = scope.pop("lazy_route")  # the route that answers, for api/telemetry.py
        await route.handle(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        for route in self._routes or []:
            try:
                return route.url_path_for(name, **path_params)
            except NoMatchFound:
                pass
        raise NoMatchFound(name, path_params)


def _control_routes(emu: Emulator) -> list[BaseRoute]:
    from emulator.control import (
        domains,
        engagement,
        files,
        housekeeping,
        inbound,
        oauth,
        outbox,
        outbox_labels,
        webhook_faults,
    )
    from emulator.control import smtp as control_smtp

    modules = [outbox, housekeeping, domains, control_smtp, files, webhook_faults, inbound, engagement, oauth,
               outbox_labels]
    return [route for module in modules for route in module.ROUTES]


def control_routes() -> LazyRoutes:
    # The control plane's modules that add routes and nothing else (no tables, no start): 19 modules,
    # ~6 ms of the start with bytecode (issue 40), loaded with the first /_emulator/ request. Their
    # paths and the other /_emulator/ routes (faults, snapshot, scenario, metrics) cannot match the same
    # request, so answers are the same whichever comes first; among themselves they keep their order.
    return LazyRoutes((), (f"{control.PREFIX}/",), _control_routes, label="control")


def control_plane_routes(app: Starlette) -> list[BaseRoute]:
    """The app's route table with the lazy control-plane group unfolded (the web UI's and the QA checks'
    stay folded): every route a walk over the table should see, loaded now."""
    emu = app.state.emu
    return [child for route in app.routes
            for child in (route.routes_for(emu) if isinstance(route, LazyRoutes) and route.label == "control"
                          else [route])]


def _web_routes(emu: Emulator) -> list[BaseRoute]:
    from emulator import web

    web.install(emu)
    return web.ROUTES


def _qa_routes(emu: Emulator) -> list[BaseRoute]:
    from emulator.control import qa

    return list(qa.ROUTES)


def qa_checks() -> LazyRoutes:
    # The outbox's QA checks (/_emulator/outbox/{id}/html-check, ...): their HTML scanner, spam client and
    # tables are ~10 ms of the emulator's start that a test session rarely needs (issue 28). Earlier
    # routes take the other outbox paths first; these load on the first request none of those matched.
    return LazyRoutes((), (f"{control.PREFIX}/outbox/",), _qa_routes, label="qa")


def web_ui() -> LazyRoutes:
    # Every path the web UI serves: the redirect at `/`, the pages (the OAuth consent page among them)
    # and the unsubscribe pages of broadcast links (reference/broadcasts.md).
    from emulator.resources.broadcasts import UNSUBSCRIBE_PATH

    return LazyRoutes(("/", "/_emulator/ui"), ("/_emulator/ui/", UNSUBSCRIBE_PATH), _web_routes, label="web")


def all_ops() -> list[Op]:
    return [op for module in MODULES for op in getattr(module, "OPS", [])]


def all_ddl() -> list[str]:
    return [ddl for module in [*KERNEL_MODULES, *MODULES, *EXTENSIONS]
            for ddl in getattr(module, "TABLES", [])]


async def _not_found(request: Request, exc: Exception) -> Response:
    return error_response(ApiError(errors.NOT_FOUND))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        return error_response(ApiError(errors.METHOD_NOT_ALLOWED))
    if exc.status_code == 404:
        return error_response(ApiError(errors.NOT_FOUND))
    return error_response(ApiError(errors.VALIDATION_ERROR, str(exc.detail)))


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc)


async def _write_deferred(emu: Emulator) -> None:
    """Request-log rows wait for the next commit; at shutdown there is none, so make one (issue 11:
    the last row was lost on SIGTERM)."""
    if emu.db.has_deferred:
        try:
            async with emu.transaction():
                pass
        except Exception:  # the database may be the reason we stop: say so, and let the process exit
            log.exception("could not write the last request-log rows")


def _request_writer(settings: Settings) -> RequestWriter | None:
    # With --log-format json every request is a line (what a log collector wants) unless --quiet;
    # in text, only with -v, as before.
    if settings.log_format == JSON:
        return None if settings.quiet else json_request
    return text_line if settings.log_requests else None


def _sign_in(settings: Settings) -> list[Middleware]:
    """`--ui-auth-file`: inside the guard (a foreign Host is refused before any password is checked), and
    only when set, so an emulator without it pays not even a hop for it."""
    if not settings.ui_auth_file:
        return []
    from emulator.api.basic_auth import BasicAuth
    from emulator.api.htpasswd import Users

    return [Middleware(BasicAuth, users=Users(settings.ui_auth_file))]


def _middleware(emu: Emulator, api_routes: list[BaseRoute]) -> list[Middleware]:
    """Outermost first: telemetry (metrics, request lines) sees every answer, the guard refuses before
    anything is read, the sign-in (--ui-auth-file) asks the UI's and control plane's callers for a
    password, literal API paths go straight to their endpoints (ApiShortcut), the barrier turns a crash
    into a Resend-shaped 500 on a connection that stays open."""
    settings = emu.settings
    return [Middleware(Telemetry, metrics=metrics.of(emu), write=_request_writer(settings)),
            Middleware(Guard, bound_host=settings.host, allowed=settings.allowed_hosts,
                       max_body=settings.max_body_bytes),
            *_sign_in(settings),
            Middleware(ApiShortcut, endpoints=literal_endpoints(api_routes)),
            Middleware(Barrier)]


class App(Starlette):
    """Starlette without its outermost ServerErrorMiddleware: the Barrier already answers any crash with
    a Resend-shaped 500 (and keeps the connection open), so that layer only cost every request a hop."""

    def build_middleware_stack(self) -> ASGIApp:
        handlers = dict(self.exception_handlers)
        app: ASGIApp = ExceptionMiddleware(self.router, handlers=handlers, debug=self.debug)
        for cls, args, kwargs in reversed(self.user_middleware):
            app = cls(app, *args, **kwargs)
        return app


def create_app(settings: Settings | None = None) -> Starlette:
    emu = Emulator(settings or Settings())
    modules = [*KERNEL_MODULES, *MODULES, *EXTENSIONS]
    for module in modules:
        if hasattr(module, "install"):
            module.install(emu)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        started: list[Any] = []
        try:
            await emu.open(all_ddl())
            for module in modules:
                if hasattr(module, "start"):
                    await module.start(emu)
                started.append(module)
            await emu.jobs.start()
            on_ready = emu.state.get("on_ready")
            if on_ready:
                on_ready(emu)
            yield
        finally:
            # Also after a failed start: what did start is stopped, so the process can exit.
            emu.begin_stop()  # done already when a server ran the app (cli.py, testing/serving.py)
            await emu.jobs.stop()
            for module in reversed(started):
                if hasattr(module, "stop"):
                    await module.stop(emu)
            await _write_deferred(emu)
            await emu.db.close()

    # The API first: Starlette tries routes in order and sends are the hot path. No API pattern can
    # match a /_emulator/ path, so the control plane and UI lose nothing by coming after.
    api_routes: list[BaseRoute] = list(build_routes(all_ops()))
    routes = [*api_routes]
    routes += [*control.ROUTES, control_routes()]
    routes += [route for module in [*EXTENSIONS, *MODULES] if module is not control
               for route in getattr(module, "ROUTES", [])]
    routes += [qa_checks(), web_ui()]
    app = App(
        routes=routes,
        lifespan=lifespan,
        middleware=_middleware(emu, api_routes),
        exception_handlers={
            404: _not_found, HTTPException: _http_error, ApiError: _api_error,
        },
    )
    app.state.emu = emu
    return app
