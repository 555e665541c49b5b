"""`GET /oauth/authorize` and the consent decision. Reference: oauth.md §2, PKCE [seed] §5.3.

Errors about the client or the redirect URI are answered as JSON (nothing safe to redirect to yet);
later ones go back to the redirect URI as `error`, `error_description` and `state` query parameters when
that URI is loopback or a private-use scheme, and as JSON otherwise (DCR clients are never "verified").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlencode, urlsplit, urlunsplit

from emulator.core import errors
from emulator.core.clock import from_db, to_db
from emulator.core.errors import ApiError
from emulator.resources.oauth.clients import find_client, is_loopback, is_private_use, redirect_matches
from emulator.resources.oauth.settings import settings_of
from emulator.resources.oauth.store import (
    AUTHORIZATION_SECONDS,
    CODE_SECONDS,
    digest,
    fail,
    invalid_request,
    loads,
    scope_list,
)

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")  # base64url(SHA-256(...)) without padding
MAX_STATE = 1024
CODE_LENGTH = 32
NO_CIMD = ("Client ID Metadata Documents are not fetched by the emulator; register the client with "
           "POST /oauth/register.")


class Authorization(NamedTuple):
    """A valid authorization request, waiting for (or given) the user's consent."""

    client_id: str
    redirect_uri: str
    scope: str
    code_challenge: str
    state: str | None


def with_query(uri: str, params: dict[str, str]) -> str:
    parts = urlsplit(uri)
    query = "&".join(part for part in (parts.query, urlencode(params)) if part)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def error_location(redirect_uri: str, error: ApiError, state: str | None) -> str:
    params = {"error": error.kind.name, "error_description": error.message}
    return with_query(redirect_uri, {**params, **({"state": state} if state is not None else {})})


async def _client_and_redirect(tx: Tx, query: Mapping[str, str]) -> tuple[Row, str]:
    client_id = query.get("client_id")
    if not client_id:
        raise invalid_request("Missing required parameter `client_id`.")
    client = await find_client(tx, client_id)
    if client is None and client_id.startswith("https://"):
        # A Client ID Metadata Document needs an outbound fetch, which the local-only emulator never makes:
        # refused as a failed fetch is (`invalid_client`).
        raise fail(errors.OAUTH_INVALID_CLIENT, NO_CIMD)
    if client is None:
        raise fail(errors.OAUTH_INVALID_CLIENT, "Unknown client.")
    redirect_uri = query.get("redirect_uri")
    if not redirect_uri:
        raise invalid_request("Missing required parameter `redirect_uri`.")
    if not any(redirect_matches(uri, redirect_uri) for uri in loads(client["redirect_uris"])):
        raise invalid_request("`redirect_uri` does not match any redirect URI registered for this client.")
    return client, redirect_uri


def _scope(client: Row, query: Mapping[str, str]) -> str:
    registered = scope_list(client["scope"])
    if "scope" not in query:
        return " ".join(registered)
    requested = scope_list(query["scope"])
    if not requested:
        raise fail(errors.OAUTH_INVALID_SCOPE, "No scope was requested.")
    for value in requested:
        if value not in registered:
            raise fail(errors.OAUTH_INVALID_SCOPE, f"The scope `{value}` is not allowed for this client.")
    return " ".join(requested)


def _validated(client: Row, redirect_uri: str, query: Mapping[str, str]) -> Authorization:
    if query.get("response_type") != "code":
        raise invalid_request("`response_type` must be `code`.")
    if "authorization_code" not in loads(client["grant_types"]):
        raise fail(errors.OAUTH_UNAUTHORIZED_CLIENT,
                   "This client is not registered for `authorization_code`.")
    challenge = query.get("code_challenge")
    if not challenge:
        raise invalid_request("Missing required parameter `code_challenge` (PKCE is required).")
    if query.get("code_challenge_method") != "S256":
        raise invalid_request("`code_challenge_method` must be `S256`.")
    if not CHALLENGE.fullmatch(challenge):
        raise invalid_request("`code_challenge` must be the base64url SHA-256 of the code verifier.")
    state = query.get("state")
    if state is not None and len(state) > MAX_STATE:
        raise invalid_request(f"`state` must be at most {MAX_STATE} characters.")
    return Authorization(client["id"], redirect_uri, _scope(client, query), challenge, state)


async def start(tx: Tx, query: Mapping[str, str], consent_page: str) -> str:
    """Validate an authorization request; the URL the browser goes to next (consent page or callback)."""
    client, redirect_uri = await _client_and_redirect(tx, query)
    try:
        request = _validated(client, redirect_uri, query)
    except ApiError as error:
        if not (is_loopback(redirect_uri) or is_private_use(redirect_uri)):
            raise
        state = query.get("state")
        return error_location(redirect_uri, error, state if state and len(state) <= MAX_STATE else None)
    settings = settings_of(tx.emu)
    if settings.consent == "approve":
        return await approve(tx, request, settings.account)
    if settings.consent == "deny":
        return deny(request)
    return consent_page + await _pending(tx, request)


async def _pending(tx: Tx, request: Authorization) -> str:
    authorization_id = tx.new_id()
    await tx.insert("oauth_authorizations", {
        "id": authorization_id, "client_id": request.client_id, "redirect_uri": request.redirect_uri,
        "scope": request.scope, "code_challenge": request.code_challenge, "state": request.state,
        "created_at": tx.now_db, "expires_at": to_db(tx.now + timedelta(seconds=AUTHORIZATION_SECONDS)),
        "decided_at": None,
    })
    return authorization_id


async def approve(tx: Tx, request: Authorization, account: str) -> str:
    """Issue a single-use code, valid 10 minutes ([seed] §3), bound to everything the token step checks."""
    if await tx.one("SELECT id FROM accounts WHERE id = ?", (account,)) is None:
        raise fail(errors.OAUTH_SERVER_ERROR, f"The account `{account}` does not exist in this emulator.")
    code = "ac_" + tx.emu.ids.token(CODE_LENGTH)
    await tx.insert("oauth_codes", {
        "code_hash": digest(code), "account": account, "client_id": request.client_id,
        "redirect_uri": request.redirect_uri, "scope": request.scope,
        "code_challenge": request.code_challenge,
        "created_at": tx.now_db, "expires_at": to_db(tx.now + timedelta(seconds=CODE_SECONDS)),
        "consumed_at": None,
    })
    params = {"code": code, **({"state": request.state} if request.state is not None else {})}
    return with_query(request.redirect_uri, params)


def deny(request: Authorization) -> str:
    error = ApiError(errors.OAUTH_ACCESS_DENIED, "The user denied the authorization request.")
    return error_location(request.redirect_uri, error, request.state)


# ---- the consent page's side -------------------------------------------------------------------

async def pending_authorization(tx: Tx, authorization_id: str) -> tuple[Authorization, Row]:
    """The undecided, unexpired request and its client, or 404."""
    row = await tx.one("SELECT * FROM oauth_authorizations WHERE id = ?", (authorization_id[:100],))
    if row is None or row["decided_at"] is not None or from_db(row["expires_at"]) <= tx.now:
        raise errors.not_found("Authorization request")
    client = await find_client(tx, row["client_id"])
    if client is None:
        raise errors.not_found("Authorization request")
    request = Authorization(row["client_id"], row["redirect_uri"], row["scope"], row["code_challenge"],
                            row["state"])
    return request, client


async def decide(tx: Tx, authorization_id: str, account: str, approved: bool) -> str:
    """The consent form's answer. The account comes from the person at the form, so an unknown one is
    their mistake (422), not the emulator's."""
    request, _ = await pending_authorization(tx, authorization_id)
    if approved and await tx.one("SELECT id FROM accounts WHERE id = ?", (account,)) is None:
        raise errors.invalid(f"The account `{account[:200]}` does not exist in this emulator.")
    tx.queue("UPDATE oauth_authorizations SET decided_at = ? WHERE id = ?", (tx.now_db, authorization_id))
    return await approve(tx, request, account) if approved else deny(request)
