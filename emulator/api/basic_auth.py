"""`--ui-auth-file` (issue 38): HTTP Basic sign-in in front of the web UI, its live stream and the whole
control plane, for an emulator on a shared team host. The Resend API (everything outside `/_emulator/`,
`/oauth/*` included) is not touched: it keeps authenticating by API key only, and a Basic user is no key.

Open without sign-in, because something other than a person at the UI calls them:
- `/_emulator/health`: load balancers and container health checks, which carry no credentials;
- the recipient-facing pages (guard.EXEMPT: unsubscribe links, open and click tracking): mail clients
  and providers call them from anywhere, for people who were never given a password.

bcrypt costs ~50-250 ms a check, so it runs on a small thread pool, never on the event loop, and a good
sign-in is remembered briefly (keyed by an HMAC of the header under a per-process secret, so the cache
holds no password and its lookups leak nothing usable) — a browser sends the same header with every
request. Checks of one header under way are shared; failures are never remembered.
"""

from __future__ import annotations

import asyncio
import binascii
import hashlib
import hmac
import os
import time
from base64 import b64decode
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from emulator.api.guard import EXEMPT
from emulator.api.htpasswd import Entry, Users, verify
from emulator.api.ops import error_response
from emulator.core import errors
from emulator.core.errors import ApiError

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

HEALTH = "/_emulator/health"
CHALLENGE = 'Basic realm="resend-emulator", charset="UTF-8"'
REMEMBER_SECONDS = 60.0
MAX_REMEMBERED = 1024
# Checks waiting for the pool past this are refused at once: a flood of wrong passwords must not queue
# minutes of bcrypt ahead of the people who know theirs.
MAX_PENDING = 64
BCRYPT_MAX_BYTES = 72  # bcrypt reads no further (htpasswd truncates there too; bcrypt>=5 refuses longer)


def protected(path: str) -> bool:
    """The UI (and `/`, its redirect) and the control plane, minus health and the recipient pages."""
    if path == "/":
        return True
    if path != "/_emulator" and not path.startswith("/_emulator/"):
        return False
    return path != HEALTH and not path.startswith(EXEMPT)


def credentials(header: bytes) -> tuple[str, bytes] | None:
    """`Basic base64(user:password)` → (user, password bytes as sent), or None."""
    scheme, _, token = header.strip().partition(b" ")
    if scheme.lower() != b"basic":
        return None
    try:
        raw = b64decode(token.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None
    user, colon, password = raw.partition(b":")
    if not colon:
        return None
    # Browsers send UTF-8 when the challenge says charset="UTF-8" (RFC 7617); older ones Latin-1.
    try:
        return user.decode("utf-8"), password
    except UnicodeDecodeError:
        return user.decode("latin-1"), password


def _check(entry: Entry, password: bytes) -> bool:
    return verify(entry, password[:BCRYPT_MAX_BYTES] if entry.slow else password)


class BasicAuth:
    def __init__(self, app: ASGIApp, users: Users) -> None:
        self.app, self.users = app, users
        self._secret = os.urandom(32)  # a cache key, not emulated data: deliberately not from the seed
        self._good: OrderedDict[bytes, float] = OrderedDict()
        self._pending: dict[bytes, asyncio.Future[bool]] = {}
        self._pool: ThreadPoolExecutor | None = None
        users.on_change = self._good.clear  # a changed password or a removed user counts at once

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not protected(scope["path"]):
            await self.app(scope, receive, send)
            return
        header = next((value for name, value in scope["headers"] if name == b"authorization"), None)
        if header is not None and await self._accepts(header):
            await self.app(scope, receive, send)
            return
        refusal = ApiError(errors.UI_AUTH_REQUIRED, headers={"WWW-Authenticate": CHALLENGE})
        await error_response(refusal)(scope, receive, send)

    async def _accepts(self, header: bytes) -> bool:
        users = self.users.current()  # may take a new version of the file, which forgets the cache
        key = hmac.new(self._secret, header, hashlib.sha256).digest()
        now = time.monotonic()
        if self._good.get(key, 0.0) > now:
            return True
        given = credentials(header)
        if given is None:
            return False
        pending = self._pending.get(key)
        if pending is None:
            if len(self._pending) >= MAX_PENDING:
                return False
            pending = asyncio.ensure_future(self._verify(users, *given))
            self._pending[key] = pending
            pending.add_done_callback(lambda _: self._pending.pop(key, None))
        accepted = await asyncio.shield(pending)
        if accepted and users is self.users.users:  # not if the file changed during the check
            self._remember(key, now)
        return accepted

    async def _verify(self, users: dict[str, Entry], user: str, password: bytes) -> bool:
        entry = users.get(user)
        # An unknown user costs what a known one does (checked against another user's hash), so the
        # time of an answer does not tell which names exist.
        probe = entry or next(iter(users.values()))
        if probe.slow:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ui-auth")
            matched = await asyncio.get_running_loop().run_in_executor(self._pool, _check, probe, password)
        else:
            matched = _check(probe, password)
        return matched and entry is not None

    def _remember(self, key: bytes, now: float) -> None:
        self._good[key] = now + REMEMBER_SECONDS
        self._good.move_to_end(key)
        while len(self._good) > MAX_REMEMBERED:
            self._good.popitem(last=False)
