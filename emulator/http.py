"""The route table and the request pipeline every Resend API operation goes through.

auth → rate limit → faults → JSON body → (idempotency) → one transaction → service → JSON reply.
Handlers parse and call one service function; they hold no state.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator import errors, idempotency, request_log
from emulator.auth import Credential, authenticate
from emulator.errors import ApiError
from emulator.jsontext import compact
from emulator.ratelimit import rate_limit

if TYPE_CHECKING:
    from starlette.datastructures import Headers, QueryParams

    from emulator.context import Emulator
    from emulator.db import Tx

JSON_TYPE = "application/json; charset=utf-8"


@dataclass
class Reply:
    """A handler result with a status other than its operation's default."""

    body: Any
    status: int = 200


@dataclass
class ApiRequest:
    method: str
    path: str
    params: dict[str, str]
    query: QueryParams
    headers: Headers
    body: Any
    credential: Credential | None
    raw: Request = field(repr=False)

    def json_object(self) -> dict[str, Any]:
        """The body as a JSON object; `{}` when empty (SDKs send bodies on GET/DELETE too)."""
        if self.body is None:
            return {}
        if not isinstance(self.body, dict):
            raise ApiError(errors.MALFORMED_BODY, "The request body must be a JSON object.")
        return self.body


Handler = Callable[["Tx", ApiRequest], Awaitable[Any]]


@dataclass(frozen=True)
class Op:
    """One Resend operation: `operation_id` is the OpenAPI operationId (grep leads spec → code)."""

    operation_id: str
    method: str
    path: str
    handler: Handler
    access: str = "full"  # "full": full_access only; "send": any key; "public": no key
    status: int = 200
    idempotent: bool = False


def dumps(body: Any) -> bytes:
    return compact(body).encode()


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(body), status, headers=headers, media_type=JSON_TYPE)


def error_response(error: ApiError) -> Response:
    return json_response(error.body(), error.status, error.headers)


async def read_json(request: Request, limit: int) -> Any:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ApiError(errors.PAYLOAD_TOO_LARGE)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(errors.PAYLOAD_TOO_LARGE)
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return None
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(errors.MALFORMED_BODY, f"The request body is not valid JSON: {exc}.") from None
    request.state.json_body = raw  # kept for the request log
    return body


async def run_op(emu: Emulator, op: Op, request: Request) -> tuple[int, Any, Credential | None]:
    credential = None
    if op.access != "public":
        credential = await authenticate(emu, request, op.access)
    for hook in emu.state.get("before_op", []):
        await hook(emu, op, request, credential)
    body = await read_json(request, emu.settings.max_body_bytes)
    req = ApiRequest(request.method, request.scope["path"], dict(request.path_params),
                     request.query_params, request.headers, body, credential, request)
    account = credential.account if credential else None
    if op.idempotent and "idempotency-key" in request.headers:
        status, result = await idempotency.run(emu, op, req, account)
        return status, result, credential
    async with emu.transaction(account) as tx:
        result = await op.handler(tx, req)
    if isinstance(result, Reply):
        return result.status, result.body, credential
    return op.status, result, credential


def endpoint_for(ops: dict[str, Op]) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        emu: Emulator = request.app.state.emu
        op = ops.get(request.method) or ops["GET"]  # Starlette adds HEAD to GET routes
        headers = rate_limit(emu, request)
        credential = None
        try:
            status, body, credential = await run_op(emu, op, request)
            response = json_response(body, status, headers)
        except ApiError as error:
            status, body = error.status, error.body()
            response = json_response(body, status, {**headers, **error.headers})
        request_log.record(emu, request, credential, status, bytes(response.body))
        # Headers a `before_op` hook asked for on a request it let through (api_faults: delays).
        response.headers.update(getattr(request.state, "response_headers", {}))
        return response

    return endpoint


def _route_sort_key(path: str) -> list[int]:
    # Literal segments win over parameters at the same depth (`/emails/batch` before `/emails/{id}`).
    return [1 if segment.startswith("{") else 0 for segment in path.strip("/").split("/")]


def build_routes(ops: list[Op]) -> list[Route]:
    by_path: dict[str, dict[str, Op]] = {}
    for op in ops:
        by_path.setdefault(op.path, {})[op.method] = op
    return [
        Route(path, endpoint_for(methods), methods=list(methods))
        for path, methods in sorted(by_path.items(), key=lambda item: _route_sort_key(item[0]))
    ]
