"""The message view's outgoing actions (issue 39): the link check that requests each link (Checks tab)
and release to an SMTP server. Both are UI POSTs (csrf.py) through the control plane's functions
(control/qa/probe.py, control/release.py), off on a non-loopback host unless --link-check / --release.

Without JavaScript each form answers a page with the result; the Checks tab's script asks the link
check with `?fragment=1` and shows the table in place.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.control import release as releasing
from emulator.control.qa import material, probe
from emulator.core.errors import ApiError
from emulator.web.actions import form_of
from emulator.web.listing import SENT
from emulator.web.message import message_row
from emulator.web.render import UI_HEADERS, not_found, page, render
from emulator.web.sessions import session_account


def _shown(request: Request, title: str, context: dict[str, Any], status: int = 200) -> Response:
    back = f"{SENT.url}/{request.path_params['id']}"
    return page(request, "outbound.html", {"title": title, "back": back, **context}, status)


async def link_check(request: Request) -> Response:
    fragment = request.query_params.get("fragment") == "1"
    emu = emulator_of(request)
    try:
        async with emu.transaction(session_account(request)) as tx:
            row = await message_row(tx, SENT, request.path_params["id"])
            found = await material(tx, row) if row is not None else None
        result = await probe.run(emu, row["id"], found) if row is not None and found is not None else None
    except ApiError as error:
        if fragment:
            return HTMLResponse(render("_link_probe.html", {"error": error.message}), error.status,
                                headers=UI_HEADERS)
        return _shown(request, "Link check", {"error": error.message}, error.status)
    if result is None:
        return not_found(request, "Message")
    if fragment:
        return HTMLResponse(render("_link_probe.html", {"p": result}), headers=UI_HEADERS)
    return _shown(request, "Link check", {"p": result})


def _release_body(form: dict[str, list[str]]) -> dict[str, Any]:
    """The form's fields as the control plane's JSON body (control/release.py checks them)."""
    def field(name: str) -> str:
        return (form.get(name) or [""])[0].strip()

    # A blank port is the default (25); anything not a port number is refused by the check (as 0).
    port = field("port")
    number = (int(port) if port.isdigit() and len(port) <= 5 else 0) if port else None
    body: dict[str, Any] = {
        "host": field("host"), "port": number,
        "to": [part.strip() for part in field("to").split(",") if part.strip()],
        "starttls": field("starttls") == "on", "tls_verify": field("tls_verify") == "on",
    }
    if field("from"):
        body["from"] = field("from")
    if field("username"):
        body["username"], body["password"] = field("username"), (form.get("password") or [""])[0]
    return body


async def release(request: Request) -> Response:
    form = await form_of(request)
    message_id = request.path_params["id"]
    try:
        result = await releasing.release(emulator_of(request), message_id, session_account(request),
                                         _release_body(form))
    except ApiError as error:
        return _shown(request, "Release failed", {"error": error.message}, error.status)
    sent = ", ".join(result["to"])
    refused = "; ".join(f"{rcpt}: {said}" for rcpt, said in result["refused"].items())
    note = f"Released to {sent} through {result['host']}:{result['port']}."
    return _shown(request, "Released", {"message": note + (f" Refused: {refused}." if refused else "")})


ROUTES: list[BaseRoute] = [
    Route(f"{SENT.url}/{{id}}/link-check", link_check, methods=["POST"]),
    Route(f"{SENT.url}/{{id}}/release", release, methods=["POST"]),
]
