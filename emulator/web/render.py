"""Jinja2 environment and the response helpers every UI page goes through (CSP and friends)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, tzinfo
from email.utils import parseaddr
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from emulator.api.ops import emulator_of
from emulator.core.clock import from_db, parse_iso
from emulator.web import csrf
from emulator.web.bidi import escaped_in_json, visible
from emulator.web.sessions import signed_in
from emulator.web.zones import ZONE_COOKIE, Zone, offset_text, zone_of

if TYPE_CHECKING:
    from jinja2 import Environment

HERE = Path(__file__).parent
UI = "/_emulator/ui"

# UI pages load only our own script and stylesheet: no inline script or style, so nothing a message
# manages to inject into a page could run. Message HTML lives in a frame served with its own policy.
UI_CSP = "; ".join([
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "frame-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
])
UI_HEADERS = {
    "Content-Security-Policy": UI_CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}


def _instant(value: str) -> datetime:
    """Stored (`to_db`) or ISO text, whichever the source table or serializer gave."""
    try:
        return from_db(value)
    except ValueError:
        return parse_iso(value)


def _zone_tz(context: Any) -> tzinfo:
    zone = context.get("zone")
    return zone.tz if isinstance(zone, Zone) else UTC


def _when(context: Any, value: str | None) -> str:
    """→ `2026-05-14 09:00:01` in the page's time zone (zones.py; seconds are what QA compares)."""
    return _instant(value).astimezone(_zone_tz(context)).strftime("%Y-%m-%d %H:%M:%S") if value else ""


def _iso(context: Any, value: str | None) -> str:
    return _instant(value).astimezone(_zone_tz(context)).isoformat() if value else ""


def _offset(context: Any, value: str | None) -> str:
    """`UTC`, or the page's zone's offset at that instant (`+09:00`): for times shown with their zone."""
    return offset_text(_instant(value).astimezone(_zone_tz(context))) if value else ""


@lru_cache(maxsize=4096)
def _parsed(value: str) -> tuple[str, str]:
    """A list page parses the same few senders and recipients row after row."""
    return parseaddr(value)


def _address(value: str | None) -> str:
    """`Ada <ada@x.dev>` → `ada@x.dev`: lists show addresses (the full value sits in the title)."""
    address = _parsed(value or "")[1]
    return address or (value or "")


def _display_name(value: str | None) -> str:
    """`Ada Lovelace <ada@x.dev>` → `Ada Lovelace`; a bare address has none (``)."""
    return _parsed(value or "")[0]


def _size(value: int | None) -> str:
    number = float(value or 0)
    for unit in ("B", "KB", "MB"):
        if number < 1024 or unit == "MB":
            return f"{number:.0f} {unit}" if unit == "B" else f"{number:.1f} {unit}"
        number /= 1024
    return f"{number:.1f} MB"


def _pretty_json(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return escaped_in_json(str(value))
    return escaped_in_json(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False))


def _from_json(value: str | None) -> Any:
    return json.loads(value) if value else []


def _status_class(status: str | None) -> str:
    groups = {
        "delivered": "ok", "sent": "ok", "opened": "ok", "clicked": "ok",
        "queued": "wait", "scheduled": "wait", "delivery_delayed": "warn",
        "bounced": "bad", "failed": "bad", "complained": "bad", "suppressed": "bad",
        "canceled": "muted", "completed": "ok", "running": "wait", "waiting": "wait", "cancelled": "muted",
    }
    return groups.get(status or "", "muted")


@cache
def _env() -> Environment:
    """Built at the first page asked for: jinja2 costs an import a test run that never opens the UI
    should not pay."""
    from jinja2 import Environment, FileSystemLoader, pass_context, select_autoescape

    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(address=_address, display_name=_display_name, when=pass_context(_when),
                       iso=pass_context(_iso), offset=pass_context(_offset), size=_size,
                       pretty_json=_pretty_json, from_json=_from_json, status_class=_status_class,
                       visible=visible)
    env.globals["UI"] = UI
    return env


def render(name: str, context: dict[str, Any]) -> str:
    return _env().get_template(name).render(**context)


THEMES = ("auto", "light", "dark")
THEME_COOKIE = "emulator_ui_theme"


def theme_of(request: Request) -> str:
    chosen = request.cookies.get(THEME_COOKIE, "auto")
    return chosen if chosen in THEMES else "auto"


def zone_for(request: Request) -> Zone:
    """The time zone this browser chose (zones.py); partials rendered outside `page` pass it as `zone`."""
    return zone_of(request.cookies.get(ZONE_COOKIE))


def _zone_url(request: Request) -> str:
    """The time-zone page (zone.py), which comes back here."""
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return f"{UI}/zone?{urlencode({'back': here})}"


def _sign_in_context(request: Request) -> dict[str, Any]:
    """A signed-in browser's header names its own account only, with a Sign out control; where keys are
    isolated, one not signed in is offered a Sign in link (sessions.py, signin.py)."""
    session = signed_in(request)
    if session is None:
        return {"sign_in_offered": emulator_of(request).settings.isolate_keys}
    return {"signed_in": session.label, "account": session.account, "accounts": [session.account],
            "account_labels": {session.account: session.label}}


def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    body = render(name, {"request": request, "path": request.url.path, "theme": theme_of(request),
                         "themes": THEMES, "csrf": csrf.token(request), "zone": zone_for(request),
                         "zone_url": _zone_url(request), **context,
                         **_sign_in_context(request)})
    return csrf.keep(request, HTMLResponse(body, status, headers=UI_HEADERS))


def not_found(request: Request, what: str) -> Response:
    return page(request, "error.html", {"title": f"{what} not found",
                                         "message": f"No {what.lower()} with this id."}, 404)


def redirect(url: str) -> Response:
    return RedirectResponse(url, status_code=303, headers={"Cache-Control": "no-store"})

