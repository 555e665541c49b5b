"""Local-only by construction (issue 11): an ASGI middleware in front of everything.

- **Host allow-list.** Only requests whose `Host` names this machine get an answer: the bound host,
  `localhost`, `127.0.0.1`, `[::1]`, plus `--allowed-host` names (for containers; `*` allows any). A DNS
  rebinding page (`Host: evil.example` pointing at 127.0.0.1) is refused before any route runs.
- **No cross-site control.** A state-changing request (not GET/HEAD/OPTIONS) to `/_emulator/*` that a
  browser marks as cross-site (`Sec-Fetch-Site`), or whose `Origin` is another origin, is refused; on the
  control plane (not the UI's own forms) a body must not carry one of the CORS-safelisted types
  (`text/plain`, form-encoded, multipart, or none): `application/json` (or `message/rfc822` for inbound
  mail) can only come from a page after a CORS preflight that nothing here answers. Recipient-facing
  pages are exempt: mail clients and providers call them from anywhere (RFC 8058 one-click unsubscribe
  is a cross-site form POST).
- **One body limit.** The control plane and the UI refuse bodies past the API's limit (`413`) as the
  API does, so a 400 MB POST is not held in memory.
No CORS header is ever sent. A request with no browser behind it carries no cross-site mark, so the UI's
POSTs must also prove they come from its own pages (emulator/web/csrf.py), and the emulator's own webhook
client never calls its own ports (resources/webhooks/client.py).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from emulator.core import errors
from emulator.core.errors import ApiError

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[Any]]
ASGIApp = Callable[[Scope, Receive, Callable[[Any], Awaitable[None]]], Awaitable[None]]

CONTROL = "/_emulator/"
UI = "/_emulator/ui/"
EXEMPT = ("/_emulator/unsubscribe/", "/_emulator/t/")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
WATCHED = frozenset({b"host", b"origin", b"sec-fetch-site", b"content-type", b"content-length",
                     b"transfer-encoding"})


def _hostname(host: str) -> str:
    """`127.0.0.1:2580` → `127.0.0.1`; `[::1]:2580` → `::1`."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


class Guard:
    def __init__(self, app: ASGIApp, bound_host: str, allowed: Iterable[str] = (),
                 max_body: int = 50 * 1024 * 1024) -> None:
        self.app = app
        self.max_body = max_body
        names = {name.strip().lower() for name in allowed if name.strip()}
        self.any_host = "*" in names
        self.hosts = frozenset({*LOCAL_NAMES, _hostname(bound_host) or bound_host.lower(), *names})

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name: value for name, value in scope["headers"]
                   if name in WATCHED}
        problem = self._refusal(scope, headers) or self._too_large(scope, headers)
        if problem is None:
            limited = receive if not scope["path"].startswith(CONTROL) else self._limited(receive)
            await self.app(scope, limited, send)
            return
        status, name, message = problem
        await _reply(send, status, {"statusCode": status, "message": message, "name": name})

    def _refusal(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, str, str] | None:
        host = headers.get(b"host", b"").decode("latin-1")
        if not self.any_host and _hostname(host) not in self.hosts:
            return 400, "invalid_host", (f"This emulator answers only to local host names, not `{host[:100]}`"
                                         " (add it with --allowed-host).")
        path = scope["path"]
        if scope["method"] in SAFE_METHODS or not path.startswith(CONTROL) or path.startswith(EXEMPT):
            return None
        if self._cross_site(headers, host):
            error = errors.CROSS_SITE_REQUEST
            return error.status, error.name, error.message
        if not path.startswith(UI) and _has_body(headers) and _is_simple_type(headers):
            return 415, "unsupported_media_type", "Control-plane bodies must be sent as application/json."
        return None

    def _too_large(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, str, str] | None:
        """The API's body limit holds on the control plane and the UI too (the API checks its own)."""
        length = headers.get(b"content-length", b"").strip()
        if scope["path"].startswith(CONTROL) and length.isdigit() and int(length) > self.max_body:
            error = errors.PAYLOAD_TOO_LARGE
            return error.status, error.name, error.message
        return None

    def _limited(self, receive: Receive) -> Receive:
        """`receive`, refusing a (chunked) body once it grows past the limit."""
        seen = 0

        async def limited() -> Any:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_body:
                raise ApiError(errors.PAYLOAD_TOO_LARGE)
            return message

        return limited

    def _cross_site(self, headers: dict[bytes, bytes], host: str) -> bool:
        site = headers.get(b"sec-fetch-site", b"").decode("latin-1").lower()
        if site:
            # A page cannot set Sec-Fetch-Site, so where a browser sent it, it decides: under the UI's
            # `Referrer-Policy: no-referrer` Chromium sends `Origin: null` even with a same-origin form.
            return site not in ("same-origin", "none")
        origin = headers.get(b"origin")
        if origin is None:
            return False
        text = origin.decode("latin-1")
        return text == "null" or urlsplit(text).netloc.lower() != host.lower()


def _has_body(headers: dict[bytes, bytes]) -> bool:
    length = headers.get(b"content-length")
    if length is None:
        return b"chunked" in headers.get(b"transfer-encoding", b"").lower()
    return length.strip() not in (b"", b"0")


# The types a cross-site page may send without a CORS preflight (Fetch standard), plus none at all.
SIMPLE_TYPES = frozenset({b"", b"text/plain", b"application/x-www-form-urlencoded", b"multipart/form-data"})


def _is_simple_type(headers: dict[bytes, bytes]) -> bool:
    return headers.get(b"content-type", b"").split(b";")[0].strip().lower() in SIMPLE_TYPES


async def _reply(send: Callable[[Any], Awaitable[None]], status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json; charset=utf-8"),
                            (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})
