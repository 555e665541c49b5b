"""OAuth tables and the small helpers every part of the group shares.

Clients are global (Dynamic Client Registration is unauthenticated); authorizations, codes, grants and
refresh tokens belong to the account (team) that approved them. Codes and refresh tokens are stored
only as SHA-256 hashes, client secrets too: what the wire carries once is never readable again.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from emulator.core import errors
from emulator.core.errors import ApiError, ErrorKind

SCOPES = ("emails:send", "full_access")  # reference oauth.md "Scopes", in the docs' order
GRANT_TYPES = ("authorization_code", "refresh_token")
AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
CODE_SECONDS = 10 * 60  # [seed] §3
REFRESH_SECONDS = 60 * 24 * 3600  # [seed] §3, §5.4
# Not documented: a consent screen left open this long is treated as abandoned, like a code.
AUTHORIZATION_SECONDS = CODE_SECONDS

TABLES = [
    """CREATE TABLE IF NOT EXISTS oauth_clients (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        client_name TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,
        grant_types TEXT NOT NULL,
        scope TEXT NOT NULL,
        token_endpoint_auth_method TEXT NOT NULL,
        client_uri TEXT,
        logo_uri TEXT,
        secret_hash TEXT,
        registered_from TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS oauth_authorizations (
        id TEXT PRIMARY KEY,
        client_id TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        scope TEXT NOT NULL,
        code_challenge TEXT NOT NULL,
        state TEXT,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        decided_at TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS oauth_codes (
        code_hash TEXT PRIMARY KEY,
        account TEXT NOT NULL,
        client_id TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        scope TEXT NOT NULL,
        code_challenge TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        consumed_at TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS oauth_grants (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account TEXT NOT NULL,
        client_id TEXT NOT NULL,
        scopes TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT,
        revoked_reason TEXT,
        last_used_at TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS oauth_grants_by_account ON oauth_grants (account, seq)",
    """CREATE TABLE IF NOT EXISTS oauth_refresh_tokens (
        token_hash TEXT PRIMARY KEY,
        grant_id TEXT NOT NULL,
        client_id TEXT NOT NULL,
        account TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        rotated_at TEXT
    )""",
]


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def dumps(values: list[str]) -> str:
    return json.dumps(values)


def loads(text: str) -> list[str]:
    return list(json.loads(text))


def scope_list(scope: str) -> list[str]:
    """Space-delimited scope text → its values, in the order given, without repeats."""
    return list(dict.fromkeys(scope.split()))


def fail(kind: ErrorKind, description: str, headers: dict[str, str] | None = None) -> ApiError:
    return ApiError(kind, description, headers)


def invalid_request(description: str) -> ApiError:
    return ApiError(errors.OAUTH_INVALID_REQUEST, description)


def text_field(body: dict[str, Any], name: str) -> str | None:
    """An optional string parameter; present but not a string is malformed."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid_request(f"`{name}` must be a string.")
    return value


def required_text(body: dict[str, Any], name: str) -> str:
    value = text_field(body, name)
    if value is None or value == "":
        raise invalid_request(f"Missing required parameter `{name}`.")
    return value
