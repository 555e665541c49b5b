"""The time-zone setting (zones.py): the header's short zone link opens `/_emulator/ui/zone`, a page
to choose UTC, the browser's zone, or any IANA zone by name; its forms post here. Remembered in a
cookie for a year, as the theme is (theme.py). A name this system does not know changes nothing: the
page says so and keeps what was set."""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.web.render import UI, page, redirect, zone_for
from emulator.web.zones import LOCAL, ZONE_COOKIE, known_zones, lookup

BASE = f"{UI}/zone"


def _back(value: str) -> str:
    return value if value.startswith(f"{UI}/") and "\\" not in value else f"{UI}/"


async def choose_zone(request: Request) -> Response:
    # A small urlencoded form, parsed as theme.py parses its own (no python-multipart needed).
    form = parse_qs((await request.body())[:4096].decode("utf-8", "replace"))
    chosen = form.get("zone", ["UTC"])[0].strip()[:100]
    back = _back(form.get("back", [""])[0])
    if chosen != LOCAL and lookup(chosen) is None:
        return redirect(f"{BASE}?{urlencode({'back': back, 'unknown': chosen})}")
    response = redirect(back)
    response.set_cookie(ZONE_COOKIE, "UTC" if chosen.upper() == "UTC" else chosen, max_age=365 * 86400,
                        httponly=True, samesite="strict", secure=request.url.scheme == "https")
    return response


async def zone_page(request: Request) -> Response:
    unknown = request.query_params.get("unknown", "")[:100]
    return page(request, "zone.html", {
        "title": "Time zone", "section": "", "zones": known_zones(), "unknown": unknown,
        "back": _back(request.query_params.get("back", "")), "current": zone_for(request)})


ROUTES: list[BaseRoute] = [
    Route(BASE, choose_zone, methods=["POST"]),
    Route(BASE, zone_page, methods=["GET"]),
]
