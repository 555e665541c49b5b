"""Labels in the message view: add one, remove one (UI POSTs, csrf.py), through control/labels.py.

Each answers with a redirect back to the message (303): the page shows the labels as stored.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.control import labels
from emulator.core.errors import ApiError
from emulator.web.actions import back_to, form_of
from emulator.web.listing import SENT
from emulator.web.message import message_row
from emulator.web.render import not_found, page, redirect
from emulator.web.sessions import session_account


async def change(request: Request) -> Response:
    message_id = request.path_params["id"]
    adding = not request.url.path.endswith("/remove")
    form = await form_of(request)
    name = (form.get("label") or [""])[0]
    try:
        async with emulator_of(request).transaction(session_account(request)) as tx:
            if await message_row(tx, SENT, message_id) is None:
                return not_found(request, "Message")
            await (labels.add(tx, message_id, [name]) if adding else labels.remove(tx, message_id, name))
    except ApiError as error:
        return page(request, "error.html", {"title": "Cannot add this label", "message": error.message},
                    error.status)
    return redirect(back_to(form, f"{SENT.url}/{message_id}"))


ROUTES: list[BaseRoute] = [
    Route(f"{SENT.url}/{{id}}/labels", change, methods=["POST"]),
    Route(f"{SENT.url}/{{id}}/labels/remove", change, methods=["POST"]),
]
