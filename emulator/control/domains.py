"""`POST /_emulator/domains/{id}/verification {"outcome": …}`: what the next domain verify settles on."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.ops import emulator_of, json_response
from emulator.control.base import PREFIX, body_of
from emulator.control.fields import STRING
from emulator.core.config import DEFAULT_ACCOUNT
from emulator.resources.domains.service import set_verify_outcome


async def control_verification(request: Request) -> Response:
    """`POST /_emulator/domains/{id}/verification {"outcome": …}`: what the next verify settles on."""
    emu = emulator_of(request)
    body = await body_of(request, {"outcome": STRING, "account": STRING})
    domain_id = request.path_params["domain_id"]
    async with emu.transaction(body.get("account") or DEFAULT_ACCOUNT) as tx:
        await set_verify_outcome(tx, domain_id, str(body.get("outcome")))
    return json_response({"id": domain_id, "outcome": body.get("outcome")})


ROUTES = [Route(f"{PREFIX}/domains/{{domain_id}}/verification", control_verification, methods=["POST"])]
