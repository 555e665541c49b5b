"""Grants: what one approval created, the tokens issued under it, and their revocation.

A grant is revoked as a whole (`/oauth/revoke`, `DELETE /oauth/grants/{id}`, or a rotated refresh token
used again): every access and refresh token of it stops working at once. Access tokens are not stored;
each API call checks the grant named in the token (oauth.md §3 "Access-token JWT").
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from emulator.api.auth import FULL_ACCESS, OAUTH_FULL_ACCESS, SENDING_ACCESS, Credential
from emulator.core import errors
from emulator.core.clock import from_db, iso_z, pg_timestamp, to_db
from emulator.core.errors import ApiError
from emulator.core.pages import fetch_page, list_body, parse_page
from emulator.resources.oauth import keys
from emulator.resources.oauth.store import REFRESH_SECONDS, digest, scope_list

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx
    from emulator.core.emulator import Emulator

REFRESH_LENGTH = 43  # the length of the docs' example refresh tokens
REVOKED_FROM_API = "revoked_from_api"  # [docs] revoke-grant
# Not documented: the reasons for the two other ways a grant ends.
REVOKED_BY_CLIENT = "revoked_by_client"
REFRESH_TOKEN_REUSE = "refresh_token_reuse"


async def create_grant(tx: Tx, client_id: str, scope: str) -> str:
    grant_id = tx.new_id()
    await tx.insert("oauth_grants", {
        "id": grant_id, "account": tx.account, "client_id": client_id, "scopes": scope,
        "created_at": tx.now_db, "revoked_at": None, "revoked_reason": None, "last_used_at": tx.now_db,
    })
    return grant_id


async def issue_tokens(tx: Tx, issuer: str, grant: Row, scope: str, with_refresh: bool) -> dict[str, Any]:
    """The token response ([seed] §2.12): an ES256 access token for `scope`, and a fresh refresh token."""
    claims = keys.access_claims(issuer, tx.account, grant["client_id"], scope, grant["id"], tx.new_id(),
                                tx.now)
    response: dict[str, Any] = {"access_token": keys.sign(tx.emu, claims), "token_type": "Bearer",
                                "expires_in": keys.ACCESS_TOKEN_SECONDS}
    if with_refresh:
        refresh = tx.emu.ids.token(REFRESH_LENGTH)
        await tx.insert("oauth_refresh_tokens", {
            "token_hash": digest(refresh), "grant_id": grant["id"], "client_id": grant["client_id"],
            "account": tx.account, "created_at": tx.now_db,
            "expires_at": to_db(tx.now + timedelta(seconds=REFRESH_SECONDS)), "rotated_at": None,
        })
        response["refresh_token"] = refresh
    response["scope"] = scope
    return response


async def revoke(tx: Tx, grant_id: str, reason: str) -> None:
    tx.queue("UPDATE oauth_grants SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL",
             (tx.now_db, reason, grant_id))


# ---- the API: GET /oauth/grants, DELETE /oauth/grants/{id} -------------------------------------

def serialize(row: Row) -> dict[str, Any]:
    revoked = row["revoked_at"]
    return {
        "id": row["id"], "client_id": row["client_id"], "scopes": scope_list(row["scopes"]),
        "created_at": pg_timestamp(from_db(row["created_at"])),
        "revoked_at": pg_timestamp(from_db(revoked)) if revoked else None,
        "revoked_reason": row["revoked_reason"],
        "client": {"name": row["client_name"], "logo_uri": row["logo_uri"]},
    }


# Grants with their client's name and logo, as one table the pagination helper can seek in.
GRANTS_WITH_CLIENTS = ("(SELECT g.*, c.client_name, c.logo_uri FROM oauth_grants g "
                       "JOIN oauth_clients c ON c.id = g.client_id)")


async def list_grants(tx: Tx, query: Any) -> dict[str, Any]:
    """The team's grants, newest first, revoked ones included; `limit` optional ([docs] list-grants)."""
    page = parse_page(query, optional_limit=True)
    rows, has_more = await fetch_page(tx, GRANTS_WITH_CLIENTS, page)
    return list_body([serialize(row) for row in rows], has_more)


async def revoke_grant(tx: Tx, grant_id: str) -> dict[str, Any]:
    """404 for an unknown grant and for one already revoked ([docs] revoke-grant)."""
    row = await tx.one("SELECT id FROM oauth_grants WHERE id = ? AND account = ? AND revoked_at IS NULL",
                       (grant_id, tx.account))
    if row is None:
        raise errors.not_found("OAuth grant")
    await revoke(tx, grant_id, REVOKED_FROM_API)
    return {"object": "oauth_grant", "id": grant_id, "revoked_at": iso_z(tx.now),
            "revoked_reason": REVOKED_FROM_API}


# ---- access tokens as API credentials ----------------------------------------------------------

def _unusable(reason: str) -> ApiError:
    # The reference names no error for a bad access token; an unknown credential is 403 `invalid_api_key`
    # (00-general §2.4). The RFC 6750 header tells an OAuth client why, so it knows to refresh.
    challenge = f'Bearer error="invalid_token", error_description="{reason}"'
    return ApiError(errors.INVALID_API_KEY, headers={"WWW-Authenticate": challenge})


async def verify_access_token(emu: Emulator, token: str) -> Credential | None:
    """Signature, `exp` on the emulator's clock, and the grant still active; None if not our token."""
    claims = keys.verified_claims(emu, token)
    if claims is None:
        return None
    now = emu.clock.now()
    if not isinstance(claims["exp"], int) or claims["exp"] <= now.timestamp():
        raise _unusable("The access token has expired.")
    async with emu.transaction() as tx:
        grant_id = claims["grant_id"]
        grant = await tx.one("SELECT account, revoked_at FROM oauth_grants WHERE id = ?", (grant_id,))
        if grant is None or grant["revoked_at"] is not None or grant["account"] != claims["sub"]:
            raise _unusable("The grant of this access token has been revoked.")
        emu.db.defer("UPDATE oauth_grants SET last_used_at = ? WHERE id = ?", (to_db(now), grant_id),
                     latest=("oauth_grant_used", grant_id))
    scopes = frozenset(scope_list(str(claims.get("scope", ""))))
    permission = FULL_ACCESS if OAUTH_FULL_ACCESS in scopes else SENDING_ACCESS
    return Credential(claims["sub"], None, permission, grant_id=claims["grant_id"], scopes=scopes)
