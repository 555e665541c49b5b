"""Who is calling: bearer API keys resolved from an in-memory key ring (no database read per request),
or OAuth access tokens (JWTs) resolved by the OAuth group's verifier.

The ring mirrors the `api_keys` table; the API keys service updates it after each commit.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NamedTuple

from emulator.api.refusals import tell_refused
from emulator.core import errors
from emulator.core.accounts import isolated_account_id, redacted_key
from emulator.core.errors import ApiError

if TYPE_CHECKING:
    from starlette.requests import Request

    from emulator.core.db import Host
    from emulator.core.emulator import Emulator

FULL_ACCESS = "full_access"
SENDING_ACCESS = "sending_access"
WELL_FORMED_KEY = re.compile(r"^re_[A-Za-z0-9_]{1,128}$")


class Credential(NamedTuple):
    """A resolved caller: the account every query is scoped to, and what it may do."""

    account: str
    key_id: str | None
    permission: str
    domain_id: str | None = None
    active: bool = True
    # OAuth access tokens: the grant they belong to and their scopes (None for API keys).
    grant_id: str | None = None
    scopes: frozenset[str] | None = None

    @property
    def full_access(self) -> bool:
        return self.permission == FULL_ACCESS


Provisioner = Callable[["Emulator", str], Awaitable[Credential]]
# Verifies an OAuth access token: its credential, None when it is not one, ApiError when it is unusable.
BearerVerifier = Callable[["Emulator", str], Awaitable["Credential | None"]]
OAUTH_FULL_ACCESS = "full_access"
OAUTH_SEND = "emails:send"


class KeyRing:
    def __init__(self) -> None:
        self.by_token: dict[str, Credential] = {}
        # Isolated account → its first key, redacted (`re_…1234`): what the UI and outbox JSON show.
        self.labels: dict[str, str] = {}
        # Isolation mode: how an unknown well-formed key becomes an account (the API keys group
        # registers it at install; the pipeline sits below the resources and cannot import them).
        self.provision_isolated: Provisioner | None = None
        # Registered by the OAuth group at install, for the same reason.
        self.verify_access_token: BearerVerifier | None = None

    def put(self, token: str, credential: Credential) -> None:
        self.by_token[token] = credential

    def deactivate(self, key_id: str) -> None:
        for token, cred in self.by_token.items():
            if cred.key_id == key_id:
                self.by_token[token] = Credential(cred.account, cred.key_id, cred.permission,
                                                  cred.domain_id, active=False)

    def label(self, account: str, token: str) -> None:
        self.labels.setdefault(account, redacted_key(token))

    def clear(self) -> None:
        self.by_token.clear()
        self.labels.clear()


def keyring(emu: Host) -> KeyRing:
    ring = emu.state.get("keyring")
    if ring is None:
        ring = emu.state["keyring"] = KeyRing()
    return ring  # type: ignore[no-any-return]


def isolated_account(emu: Host, token: str) -> str:
    """The account an unknown well-formed key gets in isolation mode (`--isolate-keys`): derived from
    the key and the seed, never containing the key (core/accounts.py)."""
    return isolated_account_id(emu.settings.seed, token)


def account_label(emu: Host, account: str) -> str:
    """How a person recognises `account`: an isolated account by its key redacted (`re_…1234`), any
    other by its id."""
    return keyring(emu).labels.get(account, account)


def account_of_key(emu: Emulator, token: str) -> str | None:
    """The account `token` acts for — or, in isolation mode, the one it will get on its first call, so
    a test may set things up (faults, waits) before it sends anything. None when no account would."""
    credential = keyring(emu).by_token.get(token)
    if credential is not None:
        return credential.account
    if emu.settings.isolate_keys and WELL_FORMED_KEY.match(token):
        return isolated_account(emu, token)
    return None


def sign_in_account(emu: Emulator, token: str) -> tuple[str, str | None]:
    """The account and key id (None for a key not seen yet) a UI sign-in with `token` acts for: the
    account the API would resolve the key to, refused as the API refuses it (an unknown key, a deleted
    one). Under --isolate-keys a well-formed key the emulator has not seen is accepted, as the API
    accepts it, but nothing is written: its account is derived, and it appears once the key is used.
    A sending-access key is accepted too (assumed): it is the key a staging app sends with, and the
    mail it sent is what QA signs in to see. OAuth tokens are not API keys and are refused."""
    credential = keyring(emu).by_token.get(token)
    if credential is None:
        account = account_of_key(emu, token)
        if account is None:
            raise ApiError(errors.INVALID_API_KEY)
        return account, None
    if not credential.active:
        raise ApiError(errors.INACTIVE_API_KEY)
    return credential.account, credential.key_id


def selected_account(emu: Emulator, account: str | None, api_key: str | None) -> str | None:
    """A control-plane filter naming an account directly (`account`) or by one of its keys."""
    if api_key is None:
        return account
    keyed = account_of_key(emu, api_key)
    if keyed is None:
        raise errors.invalid("Unknown `api_key`: no account uses this API key.")
    return keyed


def bearer_token(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(errors.MISSING_API_KEY)
    return token.strip()


async def credential_of(emu: Emulator, token: str) -> Credential | None:
    """The key's credential; in isolation mode an unknown well-formed key gets a new account."""
    ring = keyring(emu)
    credential = ring.by_token.get(token)
    if credential is None and ring.provision_isolated and emu.settings.isolate_keys \
            and WELL_FORMED_KEY.match(token):
        credential = await ring.provision_isolated(emu, token)
    return credential


def accepted_keys(emu: Emulator) -> list[str]:
    """The active API keys, the ones the banner printed first."""
    provisioned = emu.settings.provisioned_keys
    active = [token for token, cred in keyring(emu).by_token.items() if cred.active]
    return sorted(active, key=lambda token: token not in provisioned)


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2 and not token.startswith("re_")


def _check_scopes(credential: Credential, access: str) -> None:
    """`full_access` may call anything; `emails:send` only the send routes (reference 00-general §2.3)."""
    scopes = credential.scopes or frozenset()
    allowed = OAUTH_FULL_ACCESS in scopes or (access == "send" and OAUTH_SEND in scopes)
    if not allowed:
        raise ApiError(errors.INVALID_PERMISSION)


async def _oauth_credential(emu: Emulator, token: str, access: str) -> Credential | None:
    verify = keyring(emu).verify_access_token
    if verify is None or not looks_like_jwt(token):
        return None
    credential = await verify(emu, token)
    if credential is not None:
        _check_scopes(credential, access)
    return credential


async def authenticate(emu: Emulator, request: Request, access: str, used_at: str) -> Credential:
    """Resolve the bearer token and check it may call an operation of `access` ("full" or "send");
    `used_at` (as stored) becomes the key's `last_used_at`."""
    token = bearer_token(request)
    oauth = await _oauth_credential(emu, token, access)
    if oauth is not None:
        return oauth
    credential = await credential_of(emu, token)
    if credential is None:
        tell_refused(emu, token, lambda: accepted_keys(emu))
        raise ApiError(errors.INVALID_API_KEY)
    if not credential.active:
        raise ApiError(errors.INACTIVE_API_KEY)
    if access == "full" and not credential.full_access:
        raise ApiError(errors.RESTRICTED_API_KEY)
    emu.db.defer("UPDATE api_keys SET last_used_at = ? WHERE id = ?",
                 (used_at, credential.key_id), latest=("last_used", credential.key_id))
    return credential
