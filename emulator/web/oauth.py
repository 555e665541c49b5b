"""The OAuth tab (`/_emulator/ui/oauth`: registered clients and the account's grants) and the consent page
`GET /oauth/authorize` sends a browser to when consent is `ask` (the real service shows its dashboard).

The consent form posts back to the emulator, which answers with a redirect to the client's callback. Two
headers differ from the other UI pages so that this works with the control-plane guard and in Chromium:
`Referrer-Policy: same-origin` (under `no-referrer` a browser sends `Origin: null` with a form POST, which
the guard must refuse as cross-site), and a `form-action` that also allows the callback's origin (browsers
apply it to the redirect that follows the submission).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote_plus, urlsplit

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.auth import account_label
from emulator.api.ops import emulator_of
from emulator.core.errors import ApiError
from emulator.resources.oauth import CONSENT_PATH, authorize, clients
from emulator.resources.oauth.store import scope_list
from emulator.web.render import UI, UI_CSP, UI_HEADERS, page, redirect
from emulator.web.sessions import account_of, session_account, signed_in
from emulator.web.views import _chrome as page_chrome

MAX_FORM = 4096
SCOPE_TEXT = {"emails:send": "Send emails on your behalf",
              "full_access": "Full access to your account: domains, contacts, API keys and more"}


async def tab(request: Request) -> Response:
    async with emulator_of(request).transaction(account_of(request)) as tx:
        rows = await tx.all("SELECT * FROM oauth_clients ORDER BY seq DESC")
        grants = await tx.all(
            "SELECT g.*, c.client_name FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id "
            "WHERE g.account = ? ORDER BY g.seq DESC", (tx.account,))
        chrome = await page_chrome(tx, "oauth")
    context = {**chrome, "clients": [clients.client_view(row) for row in rows],
               "grants": [{**grant, "scopes": scope_list(grant["scopes"])} for grant in grants]}
    return page(request, "oauth.html", context)


def _consent_headers(redirect_uri: str) -> dict[str, str]:
    parts = urlsplit(redirect_uri)
    target = f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else f"{parts.scheme}:"
    csp = UI_CSP.replace("form-action 'self'", f"form-action 'self' {target}")
    return {**UI_HEADERS, "Content-Security-Policy": csp, "Referrer-Policy": "same-origin"}


def _gone(request: Request, error: ApiError) -> Response:
    message = f"{error.message}: it was already answered or has expired."
    return page(request, "error.html", {"title": "Authorization request not found", "message": message},
                error.status)


async def consent(request: Request) -> Response:
    emu = emulator_of(request)
    try:
        async with emu.transaction() as tx:
            pending, client = await authorize.pending_authorization(tx, request.path_params["id"])
            accounts = [row["id"] for row in await tx.all("SELECT id FROM accounts ORDER BY created_at, id")]
    except ApiError as error:
        return _gone(request, error)
    context: dict[str, Any] = {
        "client": client, "scopes": [(s, SCOPE_TEXT.get(s, s)) for s in scope_list(pending.scope)],
        "callback": urlsplit(pending.redirect_uri), "accounts": accounts, "account": account_of(request),
        "account_labels": {name: account_label(emu, name) for name in accounts},
    }
    response = page(request, "consent.html", context)
    response.headers.update(_consent_headers(pending.redirect_uri))
    return response


def _form(raw: bytes) -> dict[str, str]:
    pairs = (part.partition("=") for part in raw[:MAX_FORM].decode("utf-8", "replace").split("&"))
    return {unquote_plus(name): unquote_plus(value) for name, _, value in pairs}


async def decide(request: Request) -> Response:
    form = _form(await request.body())
    approved = form.get("decision") == "approve"
    try:
        async with emulator_of(request).transaction() as tx:
            # Without an `account` field the form means the account the page preselected; a signed-in
            # browser grants for its own account only, whatever the form names.
            account = session_account(request) if signed_in(request) else (
                form.get("account") or session_account(request))
            location = await authorize.decide(tx, request.path_params["id"], account, approved)
    except ApiError as error:
        return _gone(request, error) if error.status == 404 else page(
            request, "error.html", {"title": "Cannot authorize", "message": error.message}, error.status)
    return redirect(location)


ROUTES: list[BaseRoute] = [
    Route(f"{UI}/oauth", tab, methods=["GET"]),
    Route(CONSENT_PATH + "{id}", consent, methods=["GET"]),
    Route(CONSENT_PATH + "{id}", decide, methods=["POST"]),
]
