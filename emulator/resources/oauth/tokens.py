"""`POST /oauth/token` (both grants) and `POST /oauth/revoke`. Reference: oauth.md §3–4, [seed] §3, §5.2–5.4,
§7.2.

A refused request normally changes nothing, but one does: a rotated refresh token used again revokes
its grant *and* fails. So the token service returns its refusal (`Refusal`) instead of raising it; the
handler raises it after the transaction has committed the revocation.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import TYPE_CHECKING, Any

from emulator.core import errors
from emulator.core.clock import from_db
from emulator.core.errors import ApiError
from emulator.resources.oauth.clients import Presented, authenticate_client, presented_credentials
from emulator.resources.oauth.grants import (
    REFRESH_TOKEN_REUSE,
    REVOKED_BY_CLIENT,
    create_grant,
    issue_tokens,
    revoke,
)
from emulator.resources.oauth.store import (
    GRANT_TYPES,
    digest,
    fail,
    invalid_request,
    loads,
    required_text,
    scope_list,
    text_field,
)

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")  # [seed] §5.3
BAD_VERIFIER = "`code_verifier` must be 43 to 128 characters from A-Z, a-z, 0-9, `-`, `.`, `_`, `~`."
Refusal = ApiError


def s256(verifier: str) -> str:
    """base64url(SHA-256(verifier)) without padding: the S256 `code_challenge` (RFC 7636 §4.2)."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


def _invalid_grant(description: str) -> ApiError:
    return fail(errors.OAUTH_INVALID_GRANT, description)


def _presented(body: dict[str, Any], authorization: str | None) -> Presented:
    client_id, secret = text_field(body, "client_id"), text_field(body, "client_secret")
    return presented_credentials(authorization, client_id, secret)


async def exchange(tx: Tx, body: dict[str, Any], authorization: str | None,
                   issuer: str) -> dict[str, Any] | Refusal:
    """The token response, or the refusal to raise once the transaction is committed."""
    presented = _presented(body, authorization)
    grant_type = text_field(body, "grant_type")
    if not grant_type:
        raise invalid_request("Missing required parameter `grant_type`.")
    if grant_type not in GRANT_TYPES:
        # RFC 6749 says `unsupported_grant_type`; Resend documents only `invalid_request` (oauth.md §3).
        raise invalid_request(f"Unsupported `grant_type` `{grant_type}`.")
    client = await authenticate_client(tx, presented)
    if grant_type not in loads(client["grant_types"]):
        raise fail(errors.OAUTH_UNAUTHORIZED_CLIENT, f"This client is not registered for `{grant_type}`.")
    if grant_type == "authorization_code":
        return await _redeem_code(tx, client, body, issuer)
    return await _refresh(tx, client, body, issuer)


async def _redeem_code(tx: Tx, client: Row, body: dict[str, Any], issuer: str) -> dict[str, Any]:
    code = required_text(body, "code")
    redirect_uri = required_text(body, "redirect_uri")
    verifier = required_text(body, "code_verifier")
    if not VERIFIER.fullmatch(verifier):
        raise invalid_request(BAD_VERIFIER)
    row = await tx.one("SELECT * FROM oauth_codes WHERE code_hash = ?", (digest(code),))
    if row is None or row["client_id"] != client["id"]:
        raise _invalid_grant("The authorization code is invalid.")
    if row["consumed_at"] is not None:
        raise _invalid_grant("The authorization code has already been used.")
    if from_db(row["expires_at"]) <= tx.now:
        raise _invalid_grant("The authorization code has expired.")
    if redirect_uri != row["redirect_uri"]:
        raise _invalid_grant("`redirect_uri` does not match the one used in the authorization request.")
    if s256(verifier) != row["code_challenge"]:
        raise _invalid_grant("The `code_verifier` does not match the `code_challenge`.")
    tx.queue("UPDATE oauth_codes SET consumed_at = ? WHERE code_hash = ?", (tx.now_db, row["code_hash"]))
    team = tx.as_account(row["account"])
    grant_id = await create_grant(team, client["id"], row["scope"])
    grant = {"id": grant_id, "client_id": client["id"]}
    with_refresh = "refresh_token" in loads(client["grant_types"])
    return await issue_tokens(team, issuer, grant, row["scope"], with_refresh)


def _narrowed(grant: Row, requested: str | None) -> str:
    """A refresh may ask for less than the grant holds, never more ([seed] §7.2 `invalid_scope`)."""
    if requested is None:
        return str(grant["scopes"])
    values, held = scope_list(requested), scope_list(grant["scopes"])
    outside = [value for value in values if value not in held]
    if not values or outside:
        raise fail(errors.OAUTH_INVALID_SCOPE,
                   f"The scope `{outside[0] if outside else requested}` is not part of this grant.")
    return " ".join(values)


async def _refresh(tx: Tx, client: Row, body: dict[str, Any], issuer: str) -> dict[str, Any] | Refusal:
    token = required_text(body, "refresh_token")
    requested = text_field(body, "scope")
    row = await tx.one("SELECT * FROM oauth_refresh_tokens WHERE token_hash = ?", (digest(token),))
    if row is None or row["client_id"] != client["id"]:
        raise _invalid_grant("The refresh token is invalid.")
    grant = await tx.one("SELECT * FROM oauth_grants WHERE id = ?", (row["grant_id"],))
    if grant is None or grant["revoked_at"] is not None:
        raise _invalid_grant("The grant of this refresh token has been revoked.")
    team = tx.as_account(grant["account"])
    if row["rotated_at"] is not None:
        # [seed] §3: reuse of a rotated token revokes the grant. The docs' one-minute grace (no revocation
        # when the rotation is under a minute old) contradicts the binding seed and is not replayed.
        await revoke(team, grant["id"], REFRESH_TOKEN_REUSE)
        return _invalid_grant("The refresh token was already used; the grant has been revoked.")
    if from_db(row["expires_at"]) <= tx.now:
        raise _invalid_grant("The refresh token has expired.")
    scope = _narrowed(grant, requested)
    tx.queue("UPDATE oauth_refresh_tokens SET rotated_at = ? WHERE token_hash = ?",
             (tx.now_db, row["token_hash"]))
    tx.queue("UPDATE oauth_grants SET last_used_at = ? WHERE id = ?", (tx.now_db, grant["id"]))
    return await issue_tokens(team, issuer, grant, scope, with_refresh=True)


async def revoke_token(tx: Tx, body: dict[str, Any], authorization: str | None) -> None:
    """RFC 7009: revokes the refresh token's whole grant; an unknown token (or another client's) is a
    silent success, so the endpoint tells nothing about tokens the caller does not own."""
    presented = _presented(body, authorization)
    token = required_text(body, "token")
    if text_field(body, "token_type_hint") == "access_token":
        raise invalid_request("Access tokens cannot be revoked; revoke the refresh token instead.")
    client = await authenticate_client(tx, presented)
    row = await tx.one("SELECT grant_id, account FROM oauth_refresh_tokens "
                       "WHERE token_hash = ? AND client_id = ?", (digest(token), client["id"]))
    if row is not None:
        await revoke(tx.as_account(row["account"]), row["grant_id"], REVOKED_BY_CLIENT)
