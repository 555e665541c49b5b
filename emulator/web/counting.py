"""A search's exact match count, for a list page that could not count it in its own time (issue 39).

    GET /_emulator/ui/count/{outbox|received}?q=…&status=…&tag=…   → {"total", "shown", "upto"}

`total` is exact; `upto` is the highest `seq` it counts, which the page's "Delete these N results"
form then carries, so the delete acts on no mail stored after the count (actions.py). The count runs
in windows of `seq` (control/windows.py `count`): the loop stays free and other requests run between
windows, however long the whole count takes.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of, json_response
from emulator.core.errors import ApiError
from emulator.web import csrf
from emulator.web.listing import RECEIVED, SENT, count, parse_filters
from emulator.web.render import UI, UI_HEADERS
from emulator.web.sessions import account_of


def shown(number: int) -> str:
    """How the UI writes a count: `12,345` (as the progress figures do)."""
    return f"{number:,}"


async def search_count(request: Request) -> Response:
    box = RECEIVED if request.path_params["box"] == RECEIVED.name else SENT
    filters = parse_filters(request.query_params)
    try:
        async with emulator_of(request).transaction(account_of(request)) as tx:
            total, upto = await count(tx, box, filters)
    except ApiError as error:  # a wrong search: the page already says why
        return json_response({"error": error.message}, error.status, UI_HEADERS)
    assert total is not None  # no budget: counted to the end
    return csrf.keep(request, json_response({"total": total, "shown": shown(total), "upto": upto},
                                            headers=UI_HEADERS))


ROUTES: list[BaseRoute] = [Route(f"{UI}/count/{{box}}", search_count, methods=["GET"])]
