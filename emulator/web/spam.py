"""The Checks tab's spam row: asked for by the tab when it opens (spamd takes a moment the first time),
so the email itself never waits for SpamAssassin."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.control.qa import spam
from emulator.web.listing import SENT
from emulator.web.message import message_row, raw_of
from emulator.web.render import UI_HEADERS, render
from emulator.web.sessions import account_of


async def spam_row(request: Request) -> Response:
    if spam.configured(request) is None:
        return HTMLResponse(render("_spam.html", {"s": spam.disabled()}), headers=UI_HEADERS)
    async with emulator_of(request).transaction(account_of(request)) as tx:
        row = await message_row(tx, SENT, request.path_params["id"])
        message = await raw_of(tx, SENT, row) if row is not None else None
    if message is None:
        return HTMLResponse("<p>Message not found.</p>", 404, headers=UI_HEADERS)
    return HTMLResponse(render("_spam.html", {"s": await spam.check_message(request, message)}),
                        headers=UI_HEADERS)


ROUTES: list[BaseRoute] = [Route(f"{SENT.url}/{{id}}/spam", spam_row, methods=["GET"])]
