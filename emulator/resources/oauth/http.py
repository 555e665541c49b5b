"""Thin handlers: the OAuth protocol endpoints (plain routes: form bodies, redirects, the OAuth error
shape), discovery metadata and JWKS, and the two API operations on grants (the Op pipeline)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import ApiRequest, Op, emulator_of, json_response
from emulator.core import jsontext
from emulator.core.db import Tx
from emulator.core.errors import ApiError
from emulator.resources.oauth import authorize, clients, grants, keys, tokens
from emulator.resources.oauth.store import SCOPES, invalid_request

MAX_BODY = 64 * 1024
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
CONSENT_PATH = "/_emulator/ui/oauth/consent/"  # the web UI serves it (emulator/web/oauth.py)


def issuer_of(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _form(raw: bytes) -> dict[str, Any]:
    try:
        pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        raise invalid_request("The request body is not valid UTF-8.") from None
    names = [name for name, _ in pairs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:  # RFC 6749 §3.1: parameters must not be included more than once
        raise invalid_request(f"Parameter `{repeated[0]}` is included more than once.")
    return dict(pairs)


async def read_params(request: Request, form_allowed: bool = True) -> dict[str, Any]:
    """The body as parameters: form-encoded (preferred) or JSON ([seed] §4.4)."""
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise invalid_request("The request body is too large.")
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if form_allowed and kind == "application/x-www-form-urlencoded":
        return _form(raw)
    if kind == "application/json" or (kind == "" and raw.strip().startswith(b"{")):
        try:
            body = await jsontext.parse_async(raw)
        except jsontext.BodyError as exc:
            raise invalid_request(str(exc)) from None
        if not isinstance(body, dict):
            raise invalid_request("The request body must be a JSON object.")
        return body
    if not raw.strip():
        return {}
    accepted = "application/x-www-form-urlencoded or application/json" if form_allowed else "application/json"
    raise invalid_request(f"Unsupported content type; send {accepted}.")


async def register(request: Request) -> Response:
    body = await read_params(request, form_allowed=False)
    address = request.client.host if request.client else "unknown"
    async with emulator_of(request).transaction() as tx:
        client = await clients.register_client(tx, body, address)
    return json_response(client, 201, NO_STORE)


async def authorize_endpoint(request: Request) -> Response:
    query = dict(request.query_params)
    try:
        async with emulator_of(request).transaction() as tx:
            location = await authorize.start(tx, query, issuer_of(request) + CONSENT_PATH)
    except ApiError as error:
        return json_response(error.body(), error.status, {**NO_STORE, **error.headers})
    return RedirectResponse(location, 302, headers=NO_STORE)


async def token(request: Request) -> Response:
    try:
        body = await read_params(request)
        async with emulator_of(request).transaction() as tx:
            result = await tokens.exchange(tx, body, request.headers.get("authorization"), issuer_of(request))
    except ApiError as error:
        result = error
    if isinstance(result, ApiError):
        return json_response(result.body(), result.status, {**NO_STORE, **result.headers})
    return json_response(result, 200, NO_STORE)


async def revoke(request: Request) -> Response:
    body = await read_params(request)
    async with emulator_of(request).transaction() as tx:
        await tokens.revoke_token(tx, body, request.headers.get("authorization"))
    return Response(b"", 200, headers=NO_STORE)


async def metadata(request: Request) -> Response:
    """RFC 8414 metadata (undocumented by Resend; oauth.md [rec])."""
    base = issuer_of(request)
    return json_response({
        "issuer": base,
        "authorization_endpoint": f"{base}/oauth/authorize",
        "token_endpoint": f"{base}/oauth/token",
        "registration_endpoint": f"{base}/oauth/register",
        "revocation_endpoint": f"{base}/oauth/revoke",
        "jwks_uri": f"{base}/.well-known/jwks.json",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "scopes_supported": list(SCOPES),
    })


async def jwks(request: Request) -> Response:
    return json_response(keys.jwks(emulator_of(request)))


async def http_list_grants(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await grants.list_grants(tx, req.query)


async def http_revoke_grant(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await grants.revoke_grant(tx, req.params["oauth_grant_id"])


OPS = [
    Op("oauth/list-grants", "GET", "/oauth/grants", http_list_grants),
    Op("oauth/revoke-grant", "DELETE", "/oauth/grants/{oauth_grant_id}", http_revoke_grant),
]

ROUTES: list[BaseRoute] = [
    Route("/oauth/register", register, methods=["POST"]),
    Route("/oauth/authorize", authorize_endpoint, methods=["GET"]),
    Route("/oauth/token", token, methods=["POST"]),
    Route("/oauth/revoke", revoke, methods=["POST"]),
    Route("/.well-known/oauth-authorization-server", metadata, methods=["GET"]),
    Route("/.well-known/jwks.json", jwks, methods=["GET"]),
]
