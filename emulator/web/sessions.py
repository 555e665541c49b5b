"""Whose mail a UI request sees and acts on: the one place the web UI decides it (issue 38).

Under `--isolate-keys` a person may sign in with an API key (signin.py). The sign-in is a session kept
here, in memory: an opaque id from `secrets` (never the seed, which is no secret) → the account the key
resolves to. The key itself is never kept, only the account and its redacted label. A signed-in request
sees that account only: `?account=` and the switcher's cookie are ignored for it.

Assumed (the issue is silent): a session ends after 12 hours without a request, or 7 days after sign-in
whatever its use, and at most 1,000 live at once (the least recently used goes first). Times are the
machine's monotonic clock, not the emulator's: tests freeze and advance that one, which must neither keep
a sign-in alive forever nor sign everyone out. Sessions live in this process only: a restart signs
everyone out, which a team host's QA can afford (signing in again takes one key).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from emulator.api.auth import keyring
from emulator.api.ops import emulator_of
from emulator.core.config import DEFAULT_ACCOUNT

if TYPE_CHECKING:
    from starlette.requests import Request

    from emulator.core.emulator import Emulator

SIGN_IN_COOKIE = "emulator_ui_sign_in"
ACCOUNT_COOKIE = "emulator_ui_account"
IDLE_SECONDS = 12 * 3600
LIFETIME_SECONDS = 7 * 86400
MAX_SESSIONS = 1_000
_ID_MAX = 100  # longer than any id we make: a longer cookie is not ours and is not looked up


@dataclass
class SignIn:
    account: str
    label: str  # the key redacted (`re_…1234`): what the header shows
    key_id: str | None  # the API key's id (not the key) when the emulator knew the key at sign-in
    created: float
    last_used: float


class SignIns:
    """The live sign-ins, by a digest of their id (the id itself is only in the browser's cookie)."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._by_digest: OrderedDict[str, SignIn] = OrderedDict()

    @staticmethod
    def _digest(session_id: str) -> str:
        return hashlib.sha256(session_id.encode()).hexdigest()

    def open(self, account: str, label: str, key_id: str | None) -> str:
        session_id = secrets.token_urlsafe(32)
        now = self._now()
        self._by_digest[self._digest(session_id)] = SignIn(account, label, key_id, now, now)
        while len(self._by_digest) > MAX_SESSIONS:
            self._by_digest.popitem(last=False)
        return session_id

    def find(self, session_id: str) -> SignIn | None:
        digest = self._digest(session_id)
        found = self._by_digest.get(digest)
        now = self._now()
        if found is None:
            return None
        if now - found.last_used > IDLE_SECONDS or now - found.created > LIFETIME_SECONDS:
            del self._by_digest[digest]
            return None
        found.last_used = now
        self._by_digest.move_to_end(digest)
        return found

    def close(self, session_id: str) -> None:
        self._by_digest.pop(self._digest(session_id), None)

    def __len__(self) -> int:
        return len(self._by_digest)


def sign_ins(emu: Emulator) -> SignIns:
    store = emu.state.get("ui_sign_ins")
    if store is None:
        store = emu.state["ui_sign_ins"] = SignIns()
    return store  # type: ignore[no-any-return]


def _revoked(emu: Emulator, key_id: str | None) -> bool:
    """A key deleted after sign-in ends its sessions. A key the ring no longer holds at all (a reset
    dropped it) does not: the account is derived from the key, and using the key again brings it back."""
    if key_id is None:
        return False
    return any(cred.key_id == key_id and not cred.active for cred in keyring(emu).by_token.values())


def signed_in(request: Request) -> SignIn | None:
    """This request's sign-in, if it carries a live one (looked up once per request)."""
    if "sign_in" in request.scope:
        return request.scope["sign_in"]  # type: ignore[no-any-return]
    emu = emulator_of(request)
    cookie = request.cookies.get(SIGN_IN_COOKIE, "")
    found = None
    if emu.settings.isolate_keys and 0 < len(cookie) <= _ID_MAX:
        found = sign_ins(emu).find(cookie)
        if found is not None and _revoked(emu, found.key_id):
            sign_ins(emu).close(cookie)
            found = None
    request.scope["sign_in"] = found
    return found


def ui_account(request: Request, *, follow_link: bool) -> str:
    """The account a UI request is about. Signed in: that account, whatever the request names. Else a
    page may follow a `?account=` link (issue 11: a link may show any account), and actions take the
    account chosen with the UI's own switcher (issue 36: a URL from anywhere must not pick whose mail
    an action changes); with neither, the default account."""
    session = signed_in(request)
    if session is not None:
        account = session.account
    else:
        chosen = request.query_params.get("account") if follow_link else None
        chosen = chosen or request.cookies.get(ACCOUNT_COOKIE)
        account = chosen[:200] if chosen else DEFAULT_ACCOUNT
    request.scope["account"] = account  # for the request's log line (--log-format json)
    return account


def account_of(request: Request) -> str:
    """The account a page shows."""
    return ui_account(request, follow_link=True)


def session_account(request: Request) -> str:
    """The account the UI's actions act on."""
    return ui_account(request, follow_link=False)
