"""`/_emulator/oauth`: what `GET /oauth/authorize` does with a valid request (show the consent page, or
approve or deny at once for an account) and the registration rate limit. See README "OAuth"."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.ops import emulator_of, json_response
from emulator.control.base import PREFIX, body_of
from emulator.control.fields import INTEGER, STRING
from emulator.core import errors
from emulator.resources.oauth import settings


async def show(request: Request) -> Response:
    return json_response(settings.settings_of(emulator_of(request)).export())


async def change(request: Request) -> Response:
    emu, body = emulator_of(request), await body_of(
        request, {"consent": STRING, "account": STRING, "registration_limit": INTEGER})
    account = body.get("account")
    if isinstance(account, str):
        async with emu.transaction() as tx:
            if await tx.one("SELECT id FROM accounts WHERE id = ?", (account,)) is None:
                raise errors.invalid(f"`account` `{account[:200]}` does not exist in this emulator.")
    return json_response(settings.update(emu, body).export())


ROUTES = [
    Route(f"{PREFIX}/oauth", show, methods=["GET"]),
    Route(f"{PREFIX}/oauth", change, methods=["POST"]),
]
