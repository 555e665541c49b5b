"""The Contacts page: search by email or name, filter by segment, topic or unsubscribed state, newest
first in keyset pages (`?before=<seq>`), fast at any size. Read-only, one short transaction."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.core.typed import whole_number_or_none
from emulator.resources.contacts.browse import Filters, browse, choices
from emulator.web.render import UI, page
from emulator.web.sessions import account_of
from emulator.web.views import _chrome as page_chrome

BASE = f"{UI}/contacts"


def _filters(request: Request) -> Filters:
    query = request.query_params
    return Filters(text=query.get("q", "").strip()[:200], segment_id=query.get("segment", "")[:100],
                   topic_id=query.get("topic", "")[:100], unsubscribed=query.get("unsubscribed", ""),
                   before=whole_number_or_none(query.get("before")))


def _link(request: Request, before: int | None) -> str:
    """This page's filters, from the newest contact or from below `before`."""
    kept: dict[str, object] = {key: value for key, value in request.query_params.items()
                               if key != "before" and value}
    if before is not None:
        kept["before"] = before
    return f"{BASE}?{urlencode(kept)}" if kept else BASE


async def contacts(request: Request) -> Response:
    filters = _filters(request)
    async with emulator_of(request).transaction(account_of(request)) as tx:
        rows, cursor = await browse(tx, filters)
        options = await choices(tx)
        chrome = await page_chrome(tx, "contacts")
    return page(request, "contacts.html", {**chrome, **options, "contacts": rows, "filters": filters,
                                           "base": BASE,
                                           "first": _link(request, None) if filters.before else None,
                                           "next": _link(request, cursor) if cursor else None})


ROUTES: list[BaseRoute] = [Route(BASE, contacts, methods=["GET"])]
