"""The UI's own theme, auto (the system's) / light / dark, remembered in a cookie and rendered by the server
(no flash of the wrong theme). The preview of an email has its own light/dark switch (frame.py)."""

from __future__ import annotations

from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.web.render import THEME_COOKIE, THEMES, UI, redirect


async def choose_theme(request: Request) -> Response:
    # A two-field urlencoded form: parsed here rather than with Starlette's form parser, which needs
    # python-multipart installed.
    form = parse_qs((await request.body())[:4096].decode("utf-8", "replace"))
    theme = form.get("theme", ["auto"])[0]
    back = form.get("back", [""])[0] or f"{UI}/"
    response = redirect(back if back.startswith(f"{UI}/") else f"{UI}/")
    if theme in THEMES:
        response.set_cookie(THEME_COOKIE, theme, max_age=365 * 86400, httponly=True, samesite="strict",
                            secure=request.url.scheme == "https")
    return response


ROUTES: list[BaseRoute] = [Route(f"{UI}/theme", choose_theme, methods=["POST"])]
