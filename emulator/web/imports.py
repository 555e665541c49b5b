"""The Imports page: every CSV contact import, newest first, with its counts and a progress bar (rows
done of the total) while it runs. Read-only, through the imports service."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.resources.contacts.imports import list_imports
from emulator.web.render import UI, page
from emulator.web.sessions import account_of
from emulator.web.views import _chrome as page_chrome

BASE = f"{UI}/imports"
SHOWN = "100"


def _with_progress(item: dict[str, Any]) -> dict[str, Any]:
    counts = item["counts"]
    done = counts["created"] + counts["updated"] + counts["skipped"] + counts["failed"]
    return {**item, "done": done, "running": item["status"] in ("queued", "in_progress")}


async def imports(request: Request) -> Response:
    async with emulator_of(request).transaction(account_of(request)) as tx:
        listed = await list_imports(tx, {"limit": SHOWN})
        chrome = await page_chrome(tx, "contacts")
    items = [_with_progress(item) for item in listed["data"]]
    return page(request, "imports.html", {**chrome, "imports": items,
                                          "running": any(item["running"] for item in items)})


ROUTES: list[BaseRoute] = [Route(BASE, imports, methods=["GET"])]
