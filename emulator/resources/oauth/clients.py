"""Dynamic Client Registration (`POST /oauth/register`) and client authentication at the token and revoke
endpoints. Reference: oauth.md §1 and §3 "Client authentication" ([seed] §5.2)."""

from __future__ import annotations

import base64
import binascii
import hmac
import math
import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote, urlsplit

from emulator.core import errors
from emulator.core.clock import from_db, to_db
from emulator.resources.oauth.settings import settings_of
from emulator.resources.oauth.store import (
    AUTH_METHODS,
    GRANT_TYPES,
    SCOPES,
    digest,
    dumps,
    fail,
    invalid_request,
    loads,
    scope_list,
)

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
BLOCKED_SCHEMES = ("file", "ftp", "data", "javascript", "blob", "about", "vbscript")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")
MAX_URI = 2048
SECRET_LENGTH = 32
MALFORMED_BASIC = "Malformed Basic authorization header."
BASIC_CHALLENGE = {"WWW-Authenticate": 'Basic realm="oauth"'}


# ---- redirect URIs ---------------------------------------------------------------------------

def redirect_uri_problem(uri: Any) -> str | None:
    """Why `uri` may not be registered (oauth.md "Allowed redirect URIs"), or None when it may."""
    if not isinstance(uri, str) or not uri:
        return "Each redirect URI must be a non-empty string."
    if len(uri) > MAX_URI:
        return f"Redirect URIs must be at most {MAX_URI} characters."
    if "#" in uri:
        return "Redirect URIs must not contain a fragment."
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        return f"Invalid redirect URI: {uri}"
    scheme = parts.scheme.lower()
    if not scheme or not SCHEME.match(scheme):
        return f"Invalid redirect URI: {uri}"
    if scheme in BLOCKED_SCHEMES:
        return f"The `{scheme}` scheme is not allowed for redirect URIs."
    if scheme == "https" and not host:
        return f"Invalid redirect URI: {uri}"
    if scheme == "http" and host not in LOOPBACK_HOSTS:
        return "`http` redirect URIs are only allowed for loopback hosts (127.0.0.1, localhost, [::1])."
    return None


def is_loopback(uri: str) -> bool:
    parts = urlsplit(uri)
    return parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS


def is_private_use(uri: str) -> bool:
    return urlsplit(uri).scheme.lower() not in ("http", "https")


def redirect_matches(registered: str, given: str) -> bool:
    """Exact match; a loopback URI may differ only in its port (RFC 8252 §7.3)."""
    if registered == given:
        return True
    if not (is_loopback(registered) and is_loopback(given)):
        return False
    one, two = urlsplit(registered), urlsplit(given)
    return (one.hostname, one.path, one.query, one.username, one.password) == \
        (two.hostname, two.path, two.query, two.username, two.password)


# ---- registration ----------------------------------------------------------------------------

def _string_list(body: dict[str, Any], name: str) -> list[str] | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise invalid_request(f"`{name}` must be an array of strings.")
    return value


def _client_name(body: dict[str, Any]) -> str:
    name = body.get("client_name")
    if not isinstance(name, str) or not name.strip():
        raise invalid_request("`client_name` is required.")
    if len(name) > 200:
        raise invalid_request("`client_name` must be at most 200 characters.")
    return name


def _redirect_uris(body: dict[str, Any]) -> list[str]:
    uris = _string_list(body, "redirect_uris") if "redirect_uris" in body else None
    if not uris:
        raise invalid_request("`redirect_uris` must contain at least one URI.")
    if len(uris) > 10:
        raise invalid_request("`redirect_uris` may contain at most 10 URIs.")
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem:
            raise invalid_request(problem)
    return list(dict.fromkeys(uris))


def _grant_types(body: dict[str, Any]) -> list[str]:
    grant_types = _string_list(body, "grant_types")
    if grant_types is None:
        return list(GRANT_TYPES)
    unknown = [value for value in grant_types if value not in GRANT_TYPES]
    if unknown:
        raise invalid_request(f"Unsupported grant type `{unknown[0]}`.")
    if "authorization_code" not in grant_types:
        raise invalid_request("`grant_types` must include `authorization_code`.")
    return list(dict.fromkeys(grant_types))


def _response_types(body: dict[str, Any]) -> None:
    response_types = _string_list(body, "response_types")
    if response_types is not None and set(response_types) != {"code"}:
        raise invalid_request("`response_types` may only contain `code`.")


def _scope(body: dict[str, Any]) -> str:
    scope = body.get("scope")
    if scope is None:
        return " ".join(SCOPES)
    if not isinstance(scope, str):
        raise invalid_request("`scope` must be a space-delimited string.")
    values = scope_list(scope)
    unknown = [value for value in values if value not in SCOPES]
    if unknown or not values:
        raise fail(errors.OAUTH_INVALID_SCOPE, f"Unsupported scope `{unknown[0] if unknown else scope}`.")
    return " ".join(values)


def _auth_method(body: dict[str, Any]) -> str:
    method = body.get("token_endpoint_auth_method", "none")
    if method not in AUTH_METHODS:
        raise invalid_request("`token_endpoint_auth_method` must be `none`, `client_secret_basic` or "
                              "`client_secret_post`.")
    return str(method)


def _optional_uri(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and (not isinstance(value, str) or len(value) > MAX_URI):
        raise invalid_request(f"`{name}` must be a URI of at most {MAX_URI} characters.")
    return value


async def _check_rate(tx: Tx, address: str) -> None:
    limit = settings_of(tx.emu).registration_limit
    if limit is None:
        return
    since = tx.now - timedelta(hours=1)
    rows = await tx.all("SELECT created_at FROM oauth_clients WHERE registered_from = ? AND created_at > ? "
                        "ORDER BY seq", (address, to_db(since)))
    if len(rows) >= limit:
        wait = from_db(rows[-limit]["created_at"]) + timedelta(hours=1) - tx.now
        raise fail(errors.OAUTH_TOO_MANY_REQUESTS,
                   f"No more than {limit} client registrations per hour from one address.",
                   {"retry-after": str(max(1, math.ceil(wait.total_seconds())))})


async def register_client(tx: Tx, body: dict[str, Any], address: str) -> dict[str, Any]:
    """Validate in the order of the docs' field table, store, and answer with the secret once."""
    name, uris = _client_name(body), _redirect_uris(body)
    grant_types = _grant_types(body)
    _response_types(body)
    scope, method = _scope(body), _auth_method(body)
    client_uri, logo_uri = _optional_uri(body, "client_uri"), _optional_uri(body, "logo_uri")
    await _check_rate(tx, address)
    client_id = tx.new_id()
    secret = tx.emu.ids.token(SECRET_LENGTH) if method != "none" else None
    await tx.insert("oauth_clients", {
        "id": client_id, "client_name": name, "redirect_uris": dumps(uris), "grant_types": dumps(grant_types),
        "scope": scope, "token_endpoint_auth_method": method, "client_uri": client_uri,
        "logo_uri": logo_uri, "secret_hash": digest(secret) if secret else None,
        "registered_from": address, "created_at": tx.now_db,
    })
    response: dict[str, Any] = {
        "client_id": client_id, "client_id_issued_at": int(tx.now.timestamp()), "client_name": name,
        "redirect_uris": uris, "grant_types": grant_types, "response_types": ["code"],
        "token_endpoint_auth_method": method, "scope": scope,
    }
    extras = (("client_uri", client_uri), ("logo_uri", logo_uri))
    response.update({key: value for key, value in extras if value})
    if secret:
        response.update({"client_secret": secret, "client_secret_expires_at": 0})
    return response


async def find_client(tx: Tx, client_id: str) -> Row | None:
    return await tx.one("SELECT * FROM oauth_clients WHERE id = ?", (client_id,))


def client_view(row: Row) -> dict[str, Any]:
    return {**row, "redirect_uris": loads(row["redirect_uris"]), "grant_types": loads(row["grant_types"])}


# ---- client authentication -------------------------------------------------------------------

class Presented(NamedTuple):
    """The credentials a token or revoke request carries, and by which mechanism."""

    client_id: str
    secret: str | None
    method: str  # one of AUTH_METHODS


def _basic(header: str) -> tuple[str, str] | None:
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise fail(errors.OAUTH_INVALID_CLIENT, MALFORMED_BASIC, BASIC_CHALLENGE) from None
    client_id, colon, secret = decoded.partition(":")
    if not colon or not client_id:
        raise fail(errors.OAUTH_INVALID_CLIENT, MALFORMED_BASIC, BASIC_CHALLENGE)
    return unquote(client_id), unquote(secret)


def presented_credentials(authorization: str | None, client_id: str | None,
                          secret: str | None) -> Presented:
    """Exactly one mechanism per request ([seed] §5.2): a Basic header and a body secret together is
    `invalid_request`; a Basic header whose id differs from the body's is `invalid_client`."""
    basic = _basic(authorization) if authorization else None
    if basic is not None:
        if secret is not None:
            raise invalid_request("Client credentials were sent by more than one mechanism.")
        if client_id and client_id != basic[0]:
            raise fail(errors.OAUTH_INVALID_CLIENT,
                       "`client_id` does not match the Basic authorization header.", BASIC_CHALLENGE)
        return Presented(basic[0], basic[1], "client_secret_basic")
    if not client_id:
        raise invalid_request("Missing required parameter `client_id`.")
    return Presented(client_id, secret, "none" if secret is None else "client_secret_post")


async def authenticate_client(tx: Tx, presented: Presented) -> Row:
    challenge = BASIC_CHALLENGE if presented.method == "client_secret_basic" else None
    client = await find_client(tx, presented.client_id)
    if client is None:
        raise fail(errors.OAUTH_INVALID_CLIENT, "Unknown client.", challenge)
    registered = client["token_endpoint_auth_method"]
    if registered == "none":
        if presented.method != "none":
            raise fail(errors.OAUTH_INVALID_CLIENT, "This client is public and has no secret.", challenge)
        return client
    if presented.method != registered:
        raise fail(errors.OAUTH_INVALID_CLIENT,
                   f"This client must authenticate with `{registered}`.", challenge)
    if not hmac.compare_digest(digest(presented.secret or ""), client["secret_hash"] or ""):
        raise fail(errors.OAUTH_INVALID_CLIENT, "Invalid client secret.", challenge)
    return client
