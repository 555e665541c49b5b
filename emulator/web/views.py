"""UI pages under /_emulator/ui/ (and `/` → there). Views open one short transaction each; opening a
message in the browser also marks it read (csrf.is_own_navigation).
The actions (delete, mark read, send now, reset) are in actions.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from emulator.api.auth import account_label
from emulator.api.ops import emulator_of, json_response
from emulator.control import qa, reads
from emulator.control.downloads import file_response
from emulator.control.outbox import STATUSES
from emulator.control.qa import spam as qa_spam
from emulator.core.errors import ApiError
from emulator.core.events import notify
from emulator.core.typed import whole_number_or_none
from emulator.web import activity, csrf, sse
from emulator.web.counting import shown
from emulator.web.frame import SCHEMES, frame_response
from emulator.web.listing import (
    RECEIVED,
    SENT,
    Box,
    Filters,
    ListPage,
    count,
    list_page,
    parse_filters,
    totals,
)
from emulator.web.message import attachment_row, attachments_of, framed_html, message_row, raw_of, view_model
from emulator.web.render import HERE, UI, UI_HEADERS, not_found, page, render, zone_for
from emulator.web.sessions import ACCOUNT_COOKIE, account_of, signed_in

if TYPE_CHECKING:
    from emulator.core.db import Tx

NOTICE_MAX = 10**8  # more than any one action touches: a larger count in the URL was not made by a page


async def _chrome(tx: Tx, section: str) -> dict[str, Any]:
    """What every page's header needs: the accounts to switch between, whether inbound mail exists."""
    accounts = [row["id"] for row in await tx.all("SELECT id FROM accounts ORDER BY created_at, id")]
    return {"account": tx.account, "accounts": accounts, "section": section,
            "account_labels": {name: account_label(tx.emu, name) for name in accounts},
            "has_inbound": "received_emails" in tx.db.tables}


def _remember_account(request: Request, response: Response) -> Response:
    """The account chosen with the UI's own switcher is remembered; a `?account=` link from anywhere
    else (another site, a pasted URL) shows that account on that page only (issue 11: such a link
    switched the UI for good). Browsers send Sec-Fetch-Site on every navigation; clients without it
    (scripts, TestClient) are not browsers a link could steer."""
    chosen = request.query_params.get("account")
    site = request.headers.get("sec-fetch-site", "same-origin")
    if signed_in(request) is not None:  # a signed-in browser sees its own account only
        return response
    # A cookie holds Latin-1 only: a name outside printable ASCII is no account the switcher offers.
    if chosen and site == "same-origin" and chosen.isascii() and chosen.isprintable():
        response.set_cookie(ACCOUNT_COOKIE, chosen[:200], httponly=True, samesite="strict",
                            secure=request.url.scheme == "https")
    return response


# ---- lists -------------------------------------------------------------------------------------

async def _listing(tx: Tx, box: Box, filters: Filters, base: str) -> tuple[ListPage, str | None]:
    """The page, or no rows and the reason when the search itself is wrong (`status:lost`)."""
    try:
        return await list_page(tx, box, filters, base), None
    except ApiError as error:
        return ListPage([], None, None, True), error.message


async def _list(request: Request, box: Box) -> Response:
    filters = parse_filters(request.query_params)
    base = request.url.path
    async with emulator_of(request).transaction(account_of(request)) as tx:
        listing, search_error = await _listing(tx, box, filters, base)
        chrome = await _chrome(tx, box.name)
        mail = await totals(tx, box)
        everything = await count(tx, box, Filters()) if filters.active else (mail.total, listing.upto)
    context = {**chrome, "messages": listing.rows, "filters": filters, "statuses": STATUSES,
               "search_error": search_error, "unread": mail.unread, "notice": _notice(request),
               "older_url": listing.older_url, "newer_url": listing.newer_url,
               "first_page": listing.first_page, "total": listing.total, "upto": listing.upto,
               "all_total": everything[0], "all_upto": everything[1],
               "count_url": f"{UI}/count/{box.name}{filters.query}",
               "live_rows_url": f"{UI}/rows/{box.name}{filters.query}"}
    return _remember_account(request, page(request, "outbox.html", context))


async def outbox(request: Request) -> Response:
    return await _list(request, SENT)


async def received(request: Request) -> Response:
    if "received_emails" not in emulator_of(request).db.tables:
        return not_found(request, "Received mail")
    return await _list(request, RECEIVED)


async def rows(request: Request) -> Response:
    """The first page's rows as HTML, for live updates (same filters as the page that asks)."""
    box = RECEIVED if request.path_params["box"] == RECEIVED.name else SENT
    filters = parse_filters(request.query_params)
    async with emulator_of(request).transaction(account_of(request)) as tx:
        listing, _ = await _listing(tx, box, filters, request.url.path)
        unread = (await totals(tx, box)).unread
    list_path = f"{UI}/" if box is SENT else RECEIVED.url
    html = render("_rows.html", {"messages": listing.rows, "filters": filters, "path": list_path,
                                  "section": box.name, "csrf": csrf.token(request),
                                  "zone": zone_for(request)})
    # `total` null: not counted in the page's time; the page asks the count route (counting.py).
    total = None if listing.total is None else shown(listing.total)
    return csrf.keep(request, json_response({"rows": html, "total": total, "count": listing.total,
                                             "upto": listing.upto,
                                             "unread": shown(unread)}, headers=UI_HEADERS))


def _notice(request: Request) -> str | None:
    """What the last action did, from the redirect that ended it (`?deleted=3`)."""
    query = request.query_params
    stated = whole_number_or_none(query.get("stated"), maximum=NOTICE_MAX)
    now = whole_number_or_none(query.get("stale"), maximum=NOTICE_MAX)
    if stated is not None and now is not None:
        return (f"Nothing was deleted: the button stated {shown(stated)} but {shown(now)} match now (mail"
                " changed meanwhile). The count below is fresh; check it and delete again.")
    for name, verb in (("deleted", "Deleted"), ("marked", "Marked")):
        count = whole_number_or_none(request.query_params.get(name), maximum=NOTICE_MAX)
        if count is not None:
            return f"{verb} {count} {'email' if count == 1 else 'emails'}."
    return None


async def _read_on_open(tx: Tx, box: Box, message_id: str) -> None:
    if not await reads.is_read(tx, box.name, box.table, message_id):
        await reads.mark(tx, box.name, box.table, [message_id], True)
        notify(tx, box.name)  # open lists show it read


# ---- one message -------------------------------------------------------------------------------

def _box(request: Request) -> Box:
    return RECEIVED if request.url.path.startswith(RECEIVED.url + "/") else SENT


async def message(request: Request) -> Response:
    box, message_id = _box(request), request.path_params["id"]
    remote = request.query_params.get("remote") == "1"
    filters = parse_filters(request.query_params)
    async with emulator_of(request).transaction(account_of(request)) as tx:
        row = await message_row(tx, box, message_id)
        if row is None:
            return not_found(request, "Message")
        if csrf.is_own_navigation(request):  # an <img> or a link from elsewhere reads nothing
            await _read_on_open(tx, box, message_id)
        model = await view_model(tx, box, row, remote, filters)
        model["events"] = await activity.events_for(tx, message_id)
        chrome = await _chrome(tx, box.name)
    if model["qa"] is not None:
        model["qa"] = await qa.report(row["id"], model["qa"])
    model["back_url"] = (f"{UI}/" if box is SENT else f"{UI}/received") + str(model["list_query"])
    # Without a spamd the row says how to get one at once; with one, the Checks tab asks for it (spam.py).
    model["spam"] = None if emulator_of(request).settings.spamassassin else qa_spam.disabled()
    model["pending"] = activity.any_pending(model["events"])
    return _remember_account(request, page(request, "message.html", {**chrome, "m": model}))


async def message_live(request: Request) -> Response:
    box, message_id = _box(request), request.path_params["id"]
    async with emulator_of(request).transaction(account_of(request)) as tx:
        row = await message_row(tx, box, message_id)
        if row is None:
            return json_response({"error": "not found"}, 404, UI_HEADERS)
        events = await activity.events_for(tx, message_id)
    model = {"id": message_id, "status": row.get("last_event"), "events": events}
    return csrf.keep(request, json_response({
        "status": render("_status.html", {"m": model, "csrf": csrf.token(request)}),
        "activity": render("_activity.html", {"m": model, "zone": zone_for(request)}),
        "pending": activity.any_pending(events),
    }, headers=UI_HEADERS))


async def message_frame(request: Request) -> Response:
    box, message_id = _box(request), request.path_params["id"]
    async with emulator_of(request).transaction(account_of(request)) as tx:
        row = await message_row(tx, box, message_id)
        if row is None:
            return frame_response(request, "<p>Message not found.</p>", remote=False, status=404)
        html = framed_html(row, await attachments_of(tx, box, message_id))
    query = request.query_params
    scheme = query.get("scheme", "light")
    return frame_response(request, html, remote=query.get("remote") == "1",
                          scheme=scheme if scheme in SCHEMES else "light")


async def message_eml(request: Request) -> Response:
    box, message_id = _box(request), request.path_params["id"]
    async with emulator_of(request).transaction(account_of(request)) as tx:
        row = await message_row(tx, box, message_id)
        raw = await raw_of(tx, box, row) if row is not None else None
    if raw is None:
        return not_found(request, "Message")
    return file_response(raw, "message/rfc822", f"{message_id}.eml", inline=False)


async def message_attachment(request: Request) -> Response:
    box, message_id = _box(request), request.path_params["id"]
    async with emulator_of(request).transaction(account_of(request)) as tx:
        row = await attachment_row(tx, box, message_id, request.path_params["attachment_id"])
    if row is None:
        return not_found(request, "Attachment")
    return file_response(bytes(row["content"]), row["content_type"], row["filename"] or "attachment",
                         inline=request.query_params.get("inline") == "1")


# ---- webhooks, live events, entry ---------------------------------------------------------------

async def events(request: Request) -> Response:
    return sse.stream(emulator_of(request), account_of(request))


async def to_ui(request: Request) -> Response:
    return RedirectResponse(f"{UI}/", status_code=307)


def _message_routes(box: Box) -> list[BaseRoute]:
    base = box.url + "/{id}"
    return [
        Route(base, message, methods=["GET"]),
        Route(base + "/frame", message_frame, methods=["GET"]),
        Route(base + "/live", message_live, methods=["GET"]),
        Route(base + "/raw.eml", message_eml, methods=["GET"]),
        Route(base + "/attachments/{attachment_id}", message_attachment, methods=["GET"]),
    ]


ROUTES: list[BaseRoute] = [
    Route("/", to_ui, methods=["GET"]),
    Route(UI, to_ui, methods=["GET"]),
    Route(f"{UI}/", outbox, methods=["GET"]),
    Route(f"{UI}/received", received, methods=["GET"]),
    Route(f"{UI}/rows/{{box}}", rows, methods=["GET"]),
    Route(f"{UI}/events", events, methods=["GET"]),
    *_message_routes(SENT),
    *_message_routes(RECEIVED),
    Mount(f"{UI}/static", app=StaticFiles(directory=HERE / "static"), name="ui-static"),
]
