"""Engagement on the emulator: the tracking URLs recipients follow, simulated opens and clicks, and scripted
delivery outcomes (README "Engagement and scripted outcomes").

- `GET /_emulator/t/click/{token}` records a click and redirects to the original link; `GET
  /_emulator/t/open/{token}` records an open and answers a 1×1 GIF. Recipient-facing: any client may
  follow them, as mail clients follow the real service's.
- `POST /_emulator/emails/{id}/open` and `/click {"link", "user_agent"?, "ip_address"?}` do the same
  without a browser.
- `POST /_emulator/outcomes {"to" | "email_id", "outcome", ...}` scripts the next delivery outcome;
  `GET` lists the scripts waiting, `DELETE` drops them (`account` or `api_key` select the account).
"""

from __future__ import annotations

import base64

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from emulator.api.auth import selected_account
from emulator.api.ops import emulator_of, json_response
from emulator.control.base import PREFIX, body_of
from emulator.control.fields import NUMBER, STRING, Spec
from emulator.core.config import DEFAULT_ACCOUNT
from emulator.core.db import Row
from emulator.core.errors import invalid, not_found
from emulator.resources.emails import scripted, tracking

PIXEL = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
NO_STORE = {"Cache-Control": "no-store, private"}
CLICK: Spec = {"link": STRING, "ip_address": STRING, "user_agent": STRING}
OUTCOME: Spec = {"outcome": STRING, "email_id": STRING, "to": STRING, "minutes": NUMBER, "reason": STRING,
                 "bounce_type": STRING, "bounce_subtype": STRING, "account": STRING, "api_key": STRING}


def _client_ip(request: Request) -> str:
    return request.client.host if request.client else "127.0.0.1"


async def follow_click(request: Request) -> Response:
    emu = emulator_of(request)
    async with emu.transaction(None) as tx:
        link = await tracking.find_link(tx, "click", request.path_params["token"])
        if link is None:
            raise not_found("Link")
        await tracking.record_click(tx.as_account(link["link_account"]), link, link["link_url"],
                                    _client_ip(request), request.headers.get("user-agent", ""))
    return RedirectResponse(link["link_url"], status_code=302, headers=NO_STORE)


async def load_pixel(request: Request) -> Response:
    emu = emulator_of(request)
    async with emu.transaction(None) as tx:
        link = await tracking.find_link(tx, "open", request.path_params["token"])
        if link is None:
            raise not_found("Pixel")
        await tracking.record_open(tx.as_account(link["link_account"]), link)
    return Response(PIXEL, media_type="image/gif", headers=NO_STORE)


async def _email(request: Request) -> tuple[Row, str]:
    """The email named in the path (any account unless the body names one) and its account."""
    async with emulator_of(request).transaction(None) as tx:
        row = await tx.one("SELECT * FROM emails WHERE id = ?", (request.path_params["email_id"],))
    if row is None:
        raise not_found("Email")
    return row, str(row["account"])


async def simulate_open(request: Request) -> Response:
    await body_of(request, {})  # takes no fields: a body that names one is refused, not ignored
    email, account = await _email(request)
    async with emulator_of(request).transaction(account) as tx:
        await tracking.record_open(tx, email)
    return json_response({"object": "email", "id": email["id"], "last_event": "opened"})


async def simulate_click(request: Request) -> Response:
    body = await body_of(request, CLICK)
    link = body.get("link")
    if not isinstance(link, str) or not link:
        raise invalid("`link` is required: the URL that was clicked.")
    email, account = await _email(request)
    async with emulator_of(request).transaction(account) as tx:
        original = await tracking.original_link(tx, email["id"], link)
        await tracking.record_click(tx, email, original, str(body.get("ip_address") or _client_ip(request)),
                                    str(body.get("user_agent") or request.headers.get("user-agent", "")))
    return json_response({"object": "email", "id": email["id"], "last_event": "clicked"})


def _account(request: Request, body: dict[str, object]) -> str:
    emu = emulator_of(request)
    account = body.get("account") or request.query_params.get("account")
    api_key = body.get("api_key") or request.query_params.get("api_key")
    chosen = selected_account(emu, str(account) if account else None, str(api_key) if api_key else None)
    return chosen or DEFAULT_ACCOUNT


async def add_outcome(request: Request) -> Response:
    body = await body_of(request, OUTCOME)
    async with emulator_of(request).transaction(_account(request, body)) as tx:
        script = await scripted.add_script(tx, body)
    return json_response(script, 201)


async def list_outcomes(request: Request) -> Response:
    async with emulator_of(request).transaction(_account(request, {})) as tx:
        scripts = await scripted.list_scripts(tx)
    return json_response({"object": "list", "data": scripts})


async def clear_outcomes(request: Request) -> Response:
    async with emulator_of(request).transaction(_account(request, {})) as tx:
        await scripted.clear_scripts(tx)
    return json_response({"cleared": True})


ROUTES = [
    Route(f"{tracking.TRACK_PREFIX}/click/{{token}}", follow_click, methods=["GET"]),
    Route(f"{tracking.TRACK_PREFIX}/open/{{token}}", load_pixel, methods=["GET"]),
    Route(f"{PREFIX}/emails/{{email_id}}/open", simulate_open, methods=["POST"]),
    Route(f"{PREFIX}/emails/{{email_id}}/click", simulate_click, methods=["POST"]),
    Route(f"{PREFIX}/outcomes", add_outcome, methods=["POST"]),
    Route(f"{PREFIX}/outcomes", list_outcomes, methods=["GET"]),
    Route(f"{PREFIX}/outcomes", clear_outcomes, methods=["DELETE"]),
]
