"""Sign in with an API key (issue 38 item 4): under `--isolate-keys` a person sees only the mail of the
key they sign in with (the session itself: sessions.py).

Sign-in is offered whenever keys are isolated, and required on a team host (`Settings.ui_sign_in`):
then every UI page without a sign-in answers 303 to the sign-in page, and the UI's own JSON, stream and
frame endpoints answer 401 `sign_in_required`. The pages for recipients of a broadcast (unsubscribe)
stay open: a recipient has no key.

The key travels only in the body of the sign-in POST (a password field, never a query) and is kept
nowhere: the answer carries an opaque session cookie, the pages name the account by its redacted key.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.auth import sign_in_account
from emulator.api.ops import emulator_of, error_response
from emulator.core import errors
from emulator.core.accounts import redacted_key
from emulator.core.errors import ApiError
from emulator.web.render import UI, not_found, page, redirect
from emulator.web.sessions import SIGN_IN_COOKIE, sign_ins, signed_in

PATH = f"{UI}/sign-in"
OUT_PATH = f"{UI}/sign-out"
MAX_FORM = 4096  # a key is at most 131 characters; a larger form did not come from the page
# The UI's endpoints that a page's script or frame asks for, not a person: they answer 401, not 303.
_FRAGMENT_TAILS = ("/frame", "/live", "/spam")
_FRAGMENT_PATHS = (f"{UI}/events",)
_FRAGMENT_PREFIXES = (f"{UI}/rows/",)
REFUSED = {
    "invalid_api_key": "This API key is not one the emulator accepts. Paste the key your app sends"
                       " with (it starts with re_).",
    "restricted_api_key": "This API key was deleted: sign in with a key that is still active.",
}
Endpoint = Callable[[Request], Awaitable[Response]]


def offered(request: Request) -> bool:
    return emulator_of(request).settings.isolate_keys


def required(request: Request) -> bool:
    # Only where it is offered: a `ui_sign_in` without isolated keys would lock everyone out.
    settings = emulator_of(request).settings
    return settings.ui_sign_in and settings.isolate_keys


def _form_page(request: Request, error: str | None = None, status: int = 200) -> Response:
    return page(request, "sign_in.html", {"error": error, "required": required(request)}, status)


async def sign_in_page(request: Request) -> Response:
    if not offered(request):
        return not_found(request, "Sign-in page")
    if signed_in(request) is not None:
        return redirect(f"{UI}/")
    return _form_page(request)


def _key_in(raw: bytes) -> str:
    form = parse_qs(raw[:MAX_FORM].decode("utf-8", "replace"), keep_blank_values=True)
    return (form.get("key") or [""])[0].strip()


async def sign_in(request: Request) -> Response:
    if not offered(request):
        return not_found(request, "Sign-in page")
    emu = emulator_of(request)
    token = _key_in(await request.body())
    if not token:
        return _form_page(request, "Paste an API key to sign in.", 401)
    try:
        account, key_id = sign_in_account(emu, token)
    except ApiError as error:
        return _form_page(request, REFUSED.get(error.kind.name, error.message), 401)
    session_id = sign_ins(emu).open(account, redacted_key(token), key_id)
    response = redirect(f"{UI}/")
    response.set_cookie(SIGN_IN_COOKIE, session_id, httponly=True, samesite="strict", path="/",
                        secure=request.url.scheme == "https")
    return response


async def sign_out(request: Request) -> Response:
    cookie = request.cookies.get(SIGN_IN_COOKIE)
    if cookie:
        sign_ins(emulator_of(request)).close(cookie)
    response = redirect(PATH)
    response.delete_cookie(SIGN_IN_COOKIE, path="/", httponly=True, samesite="strict",
                           secure=request.url.scheme == "https")
    return response


def _is_fragment(path: str) -> bool:
    return path in _FRAGMENT_PATHS or path.startswith(_FRAGMENT_PREFIXES) or path.endswith(_FRAGMENT_TAILS)


def _gate(endpoint: Endpoint, fragment: bool) -> Endpoint:
    async def gated(request: Request) -> Response:
        if required(request) and signed_in(request) is None:
            if fragment:
                return error_response(ApiError(errors.SIGN_IN_REQUIRED))
            return redirect(PATH)
        return await endpoint(request)

    return gated


def gated(routes: list[BaseRoute]) -> list[BaseRoute]:
    """The routes, each UI route but the sign-in page's behind the sign-in when it is required. The
    static files stay open (they are the same for everyone), and so do the broadcast recipients'
    unsubscribe pages, which are not under the UI."""
    return [Route(route.path, _gate(route.endpoint, _is_fragment(route.path)),
                  methods=sorted(route.methods or ()), name=route.name)
            if isinstance(route, Route) and route.path.startswith(UI) and route.path not in (PATH, OUT_PATH)
            else route
            for route in routes]


ROUTES: list[BaseRoute] = [
    Route(PATH, sign_in_page, methods=["GET"]),
    Route(PATH, sign_in, methods=["POST"]),
    Route(OUT_PATH, sign_out, methods=["POST"]),
]
