"""The request pipeline every Resend API operation goes through, and the route table built from Ops.

auth → rate limit → faults → JSON body → (idempotency) → one transaction → service → JSON reply.
Handlers parse and call one service function; they hold no state.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Any

from starlette.requests import ClientDisconnect
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from emulator.api import idempotency, request_log
from emulator.api.auth import Credential, authenticate
from emulator.api.barrier import Barrier
from emulator.api.ops import ApiCall, ApiRequest, FormBody, Op, Reply, dumps, send_json
from emulator.api.ratelimit import rate_limit
from emulator.core import errors, jsontext, quota
from emulator.core.errors import ApiError
from emulator.core.typed import whole_number_or_none

if TYPE_CHECKING:
    from emulator.core.emulator import Emulator


async def _read_body(receive: Receive, limit: int) -> bytes:
    """The whole body, straight from ASGI `receive` (Starlette's `Request.stream()` is an async generator
    around the same loop: a few µs more per request). Nothing else reads an API request's body."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ApiError(errors.PAYLOAD_TOO_LARGE)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def read_json(request: ApiCall, limit: int, form: bool = False) -> Any:
    declared = whole_number_or_none(request.headers.get("content-length"))
    if declared is not None and declared > limit:
        raise ApiError(errors.PAYLOAD_TOO_LARGE)
    raw = await _read_body(request.receive, limit)
    if not raw.strip():
        return None
    content_type = request.headers.get("content-type", "")
    if form and content_type.lower().startswith("multipart/form-data"):
        if len(raw) <= jsontext.ON_LOOP_BYTES:
            return FormBody.parse(content_type, raw)
        return await asyncio.to_thread(FormBody.parse, content_type, raw)
    try:
        body = await jsontext.parse_async(raw)
    except jsontext.BodyError as exc:
        raise ApiError(errors.MALFORMED_BODY, str(exc)) from None
    request.json_body = raw  # kept for the request log
    return body


async def run_op(emu: Emulator, op: Op, request: ApiCall) -> tuple[int, Any, Credential | None]:
    credential = None
    if op.access != "public":
        credential = await authenticate(emu, request, op.access, request.now_db)
        request.credential = credential  # the request log needs it even when the op fails
    for hook in emu.state.get("before_op", []):
        await hook(emu, op, request, credential)
    body = await read_json(request, emu.settings.max_body_bytes, op.form)
    req = ApiRequest(request.method, request.scope["path"], dict(request.path_params),
                     request.headers, body, credential, request)
    account = credential.account if credential else None
    if op.idempotent and "idempotency-key" in request.headers:
        status, result = await idempotency.run(emu, op, req, account)
        return status, result, credential
    # This task runs no other transaction: no loop turn first unless in company (db.py).
    async with emu.transaction(account, turn=False) as tx:
        result = await op.handler(tx, req)
    if isinstance(result, Reply):
        return result.status, result.body, credential
    return op.status, result, credential


async def quota_headers(emu: Emulator, account: str, now: datetime) -> dict[str, str]:
    """`x-resend-daily-quota` / `x-resend-monthly-quota`: in memory, read once per account by the loader
    the emails group registers (the API layer does not know its tables)."""
    usage = quota.current(emu, account, now)
    loader = emu.state.get(quota.LOADER)
    if usage is None and loader is not None:
        async with emu.transaction(account) as tx:
            usage = await loader(tx)
    return usage.headers() if usage is not None else {}


class ApiEndpoint:
    """The ASGI app of one API path, dispatching on the method.

    An ASGI app rather than a `Request → Response` function: Starlette wraps a function endpoint in two
    layers per request (a Request/Response adapter and a second exception-handler lookup, both done
    again by the app's own middleware), and the hot path does without them (issue 18). An exception
    that escapes still reaches the app's exception middleware and the barrier, as before.
    """

    def __init__(self, ops: dict[str, Op]) -> None:
        self.ops = ops

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        emu: Emulator = scope["app"].state.emu
        request = ApiCall(scope, receive, emu.clock.now())
        op = self.ops.get(scope["method"]) or self.ops["GET"]  # Starlette adds HEAD to GET routes
        headers: dict[str, str] = {}
        credential = None
        try:
            headers = rate_limit(emu, request)
            with emu.db.expecting():
                status, body, credential = await run_op(emu, op, request)
        except ApiError as error:
            status, body = error.status, error.body()
            headers = {**headers, **error.headers}
            credential = request.credential
        if status < 300 and credential is not None:
            headers = {**headers, **await quota_headers(emu, credential.account, request.now)}
        payload = dumps(body)
        if credential is not None:
            scope["account"] = credential.account  # for the JSON request log (api/telemetry.py): never a key
        # Headers a `before_op` hook asked for on a request it let through (control/faults.py: delays).
        headers.update(request.response_headers)
        try:
            await send_json(send, status, payload, headers)
        finally:
            # After the answer is on its way: ~12 µs of a lone send's latency (issue 40, c=1). The row is
            # deferred to a later commit as before, and no other request runs in between (sending does
            # not suspend unless the client stops reading), so a read that follows still finds it.
            request_log.record(emu, request, credential, status, payload)


def _route_sort_key(path: str) -> list[int]:
    # Literal segments win over parameters at the same depth (`/emails/batch` before `/emails/{id}`).
    # Sends never reach the router: ApiShortcut takes literal paths first.
    return [1 if segment.startswith("{") else 0 for segment in path.strip("/").split("/")]


class ApiShortcut:
    """ASGI middleware: a request for a literal API path (`/emails`, `/emails/batch`, `/domains`, ...)
    goes straight to its endpoint behind the crash barrier, past Starlette's exception middleware and
    router (with the body read straight from `receive`: ~15 µs of ~235 per send in process, issue 28).
    Anything else (paths with parameters, a method the path lacks, HEAD, the control plane and the UI)
    goes on to `app`. ApiEndpoint answers its own errors, so the exception middleware had nothing to
    add for these paths; the barrier still turns a crash into Resend's 500."""

    def __init__(self, app: ASGIApp, endpoints: dict[str, Route]) -> None:
        self.app = app
        self.endpoints = {path: _shortcut(route) for path, route in endpoints.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = self.endpoints.get(scope["path"]) if scope["type"] == "http" else None
        if found is not None and scope["method"] in found[0]:
            scope["route"] = found[2]  # as Starlette's router marks the route it took (api/telemetry.py)
            await found[1](scope, receive, send)
            return
        await self.app(scope, receive, send)


def _shortcut(route: Route) -> tuple[frozenset[str], Barrier, Route]:
    endpoint = route.app
    assert isinstance(endpoint, ApiEndpoint)
    return frozenset(endpoint.ops), Barrier(endpoint), route


def literal_endpoints(routes: list[BaseRoute]) -> dict[str, Route]:
    """The API routes without path parameters, by path (for ApiShortcut)."""
    return {route.path: route for route in routes
            if isinstance(route, Route) and isinstance(route.app, ApiEndpoint) and "{" not in route.path}


def build_routes(ops: list[Op]) -> list[Route]:
    by_path: dict[str, dict[str, Op]] = {}
    for op in ops:
        by_path.setdefault(op.path, {})[op.method] = op
    return [
        Route(path, ApiEndpoint(methods), methods=list(methods))
        for path, methods in sorted(by_path.items(), key=lambda item: _route_sort_key(item[0]))
    ]
