"""The page behind `{{{RESEND_UNSUBSCRIBE_URL}}}` and the `List-Unsubscribe` header of broadcast emails.

GET shows who is unsubscribing from what; POST is the one click. A form post from the page names its
`scope` (`topic` or `all`); a mail provider's RFC 8058 one-click POST (`List-Unsubscribe=One-Click`)
names none and unsubscribes from the broadcast's topic, or from everything when it has none. The link's
token is its only credential, as on the real service, so the POST needs no same-origin check.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.core.errors import ApiError
from emulator.resources import broadcasts
from emulator.web.render import page

MAX_FORM = 4096


async def _recipient(request: Request) -> dict[str, object] | None:
    async with emulator_of(request).transaction(None) as tx:
        return await broadcasts.find_recipient(tx, request.path_params["token"][:100])


def _gone(request: Request) -> Response:
    return page(request, "error.html", {"title": "Link not found",
                                        "message": "This unsubscribe link is unknown or has expired."}, 404)


async def show(request: Request) -> Response:
    recipient = await _recipient(request)
    if recipient is None:
        return _gone(request)
    topic = None
    if recipient["topic_id"]:
        async with emulator_of(request).transaction(str(recipient["account"])) as tx:
            row = await tx.one("SELECT name FROM topics WHERE account = ? AND id = ?",
                               (tx.account, recipient["topic_id"]))
            topic = row["name"] if row else None
    return page(request, "unsubscribe.html", {
        "title": "Unsubscribe", "done": False, "email": recipient["email"], "topic": topic,
        "broadcast": recipient["broadcast_name"] or "this list", "sender": recipient["from_addr"]})


async def act(request: Request) -> Response:
    recipient = await _recipient(request)
    if recipient is None:
        return _gone(request)
    form = (await request.body())[:MAX_FORM].decode("utf-8", "replace")
    everything = "scope=all" in form.split("&")
    try:
        async with emulator_of(request).transaction(str(recipient["account"])) as tx:
            await broadcasts.unsubscribe(tx, recipient, everything)
    except ApiError as error:
        return page(request, "error.html", {"title": "Cannot unsubscribe", "message": error.message},
                    error.status)
    return page(request, "unsubscribe.html", {
        "title": "Unsubscribed", "done": True,
        "message": f"{recipient['email']} will no longer receive these emails."})


ROUTES: list[BaseRoute] = [
    Route(broadcasts.UNSUBSCRIBE_PATH + "{token}", show, methods=["GET"]),
    Route(broadcasts.UNSUBSCRIBE_PATH + "{token}", act, methods=["POST"]),
]
