"""Proof that a UI request came from the UI's own pages (issue 36).

The guard (emulator.api.guard) refuses what a browser marks as cross-site, but a request with no browser
behind it carries no such mark: a webhook delivery the emulator itself makes, a server-side fetch, curl.
So every UI POST must also prove it comes from a page of this UI, in one of two ways:
- `Sec-Fetch-Site: same-origin`, which a browser sets and no page can forge;
- the `csrf` field its form carries: an HMAC of the session cookie (httponly, SameSite=Strict) under a
  secret of this process, so only a page this UI rendered for that browser knows it.
Anything else gets 403 and changes nothing.

GETs change nothing a foreign page could trigger: `is_own_navigation` tells the page views (opening a
message or a thread reads it) whether the user really opened it here.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import error_response
from emulator.core import errors
from emulator.core.errors import ApiError

SESSION_COOKIE = "emulator_ui_session"
FIELD = "csrf"
# Tokens are secrets, not ids: they come from `secrets`, never from the seeded source that makes ids
# reproducible (a seeded token would be the same on every machine).
_SECRET = secrets.token_bytes(32)
REFUSAL = ("This UI action must come from the emulator's own page: the form's `csrf` token is missing"
           " or does not match this browser's session (reload the page and try again).")

# The field is found, not the whole form parsed: a form of any size costs one scan (the token is hex).
_FIELD_IN_FORM = re.compile(rb"(?:^|&)" + FIELD.encode() + rb"=([0-9a-f]{1,64})(?:&|$)")
Endpoint = Callable[[Request], Awaitable[Response]]


def _session(request: Request) -> str:
    """This browser's session id: its cookie, or a new one (kept on `request.state` until `keep`)."""
    made = getattr(request.state, "ui_session", None)
    if made is not None:
        return str(made)
    cookie = request.cookies.get(SESSION_COOKIE, "")
    return cookie if 16 <= len(cookie) <= 64 and cookie.isascii() else _new_session(request)


def _new_session(request: Request) -> str:
    request.state.ui_session = secrets.token_urlsafe(24)
    return str(request.state.ui_session)


def _token_for(session: str) -> str:
    return hmac.new(_SECRET, session.encode(), hashlib.sha256).hexdigest()[:40]


def token(request: Request) -> str:
    """The token this request's forms carry."""
    return _token_for(_session(request))


def keep(request: Request, response: Response) -> Response:
    """Set the session cookie when this request started the session."""
    made = getattr(request.state, "ui_session", None)
    if made is not None:
        # Secure over --https: a browser then never sends the session over plain HTTP to this host.
        response.set_cookie(SESSION_COOKIE, str(made), httponly=True, samesite="strict",
                            secure=request.url.scheme == "https")
    return response


def _fetch(request: Request, name: str) -> str:
    return request.headers.get(f"sec-fetch-{name}", "").lower()


async def proves_same_origin(request: Request) -> bool:
    if _fetch(request, "site") == "same-origin":
        return True
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return False
    found = _FIELD_IN_FORM.search(await request.body())
    return found is not None and hmac.compare_digest(found[1], _token_for(cookie).encode())


def is_own_navigation(request: Request) -> bool:
    """Did the user open this page as a page, from this UI or by typing its address? Only then does
    opening a message read it. Chosen over a marking POST from the page's script so that the pages still
    work without JavaScript, and because it costs no second request: a browser sets these headers and
    no page can forge them. `none` is a navigation the user started (address bar, bookmark), which no
    foreign page can cause; an `<img>`, a frame or a link from another site says `cross-site`, or names
    another destination. A client without fetch metadata (a script) reads nothing: it can mark read
    with the UI's POST."""
    return (_fetch(request, "site") in ("same-origin", "none") and _fetch(request, "mode") == "navigate"
            and _fetch(request, "dest") == "document")


def required(endpoint: Endpoint) -> Endpoint:
    async def checked(request: Request) -> Response:
        if not await proves_same_origin(request):
            return error_response(ApiError(errors.CROSS_SITE_REQUEST, REFUSAL))
        return await endpoint(request)

    return checked


def guarded(routes: list[BaseRoute], under: str) -> list[BaseRoute]:
    """The routes, each POST one whose path starts with `under` behind `required`."""
    return [Route(route.path, required(route.endpoint), methods=sorted(route.methods or ()), name=route.name)
            if isinstance(route, Route) and route.path.startswith(under) and "POST" in (route.methods or ())
            else route
            for route in routes]
