"""The UI's actions on mail, each a POST only the UI's own pages can make (emulator.api.guard refuses
cross-site ones, csrf.py any without proof of the UI's page), on the account the UI's switcher chose
(`session_account`; a `?account=` in the URL only shows a page): delete one email, the selected ones, a
search's results or all mail; mark read or unread; send a scheduled email now or cancel it; reset the
whole emulator. Each goes through the same
control and service functions as the control plane and the API (deletion.py, reads.py, the emails
service), and answers with a redirect to the page to show next (303, so a reload does not repeat it).

Pages send no Referer (`<meta name="referrer" content="no-referrer">`), so forms name the page to return
to in a `back` field; only UI paths are followed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.control import deletion, mailsearch, reads, scenarios, windows
from emulator.control.search import index_new_mail
from emulator.core import errors
from emulator.core.errors import ApiError
from emulator.core.events import notify
from emulator.core.typed import whole_number_or_none
from emulator.resources.emails import service as emails
from emulator.web import confirm
from emulator.web.listing import RECEIVED, SENT, Box, list_where, parse_filters
from emulator.web.message import message_row
from emulator.web.render import UI, not_found, page, redirect
from emulator.web.sessions import session_account, signed_in

if TYPE_CHECKING:
    from emulator.core.db import Tx
    from emulator.core.emulator import Emulator

ACTIONS = ("delete", "read", "unread")
SCOPES = ("selected", "search", "all")
RESET_REFUSED = ("Signed in with an API key, this browser sees one account and cannot reset the whole"
                 " emulator: every account's mail would go.")
MAX_SELECTED = 500  # a page shows 50; a form with more ids than this did not come from it
NOTICE_MAX = 10**8  # more than any one action touches (views.py)


async def form_of(request: Request) -> dict[str, list[str]]:
    """The urlencoded form fields (the UI's forms post nothing else)."""
    return parse_qs((await request.body()).decode("utf-8", "replace"), keep_blank_values=True)


def _first(form: dict[str, list[str]], name: str) -> str:
    return (form.get(name) or [""])[0]


def back_to(form: dict[str, list[str]], fallback: str) -> str:
    back = _first(form, "back")
    return back if back.startswith(UI + "/") and "\\" not in back else fallback


def _mail(box: Box) -> deletion.Mail:
    return deletion.SENT if box is SENT else deletion.RECEIVED


def _list_url(box: Box) -> str:
    return f"{UI}/" if box is SENT else f"{UI}/received"


def _box_of(request: Request) -> Box:
    return RECEIVED if request.url.path.startswith(RECEIVED.url + "/") else SENT


def _with_notice(url: str, **notice: int) -> str:
    return f"{url}{'&' if '?' in url else '?'}{urlencode(notice)}"


async def _failed(request: Request, title: str, error: ApiError) -> Response:
    return page(request, "error.html", {"title": title, "message": error.message}, error.status)


# ---- one message -------------------------------------------------------------------------------

async def delete_message(request: Request) -> Response:
    box, message_id = _box_of(request), request.path_params["id"]
    form = await form_of(request)
    async with emulator_of(request).transaction(session_account(request)) as tx:
        if await message_row(tx, box, message_id) is None:
            return not_found(request, "Message")
        await deletion.remove(tx, _mail(box), [message_id])
        notify(tx, box.name)
    return redirect(_with_notice(back_to(form, _list_url(box)), deleted=1))


async def mark_message(request: Request) -> Response:
    """Read goes back to where the user was; unread to the list (opening the message would read it)."""
    box, message_id = _box_of(request), request.path_params["id"]
    read = request.url.path.endswith("/read")
    form = await form_of(request)
    async with emulator_of(request).transaction(session_account(request)) as tx:
        if await message_row(tx, box, message_id) is None:
            return not_found(request, "Message")
        await reads.mark(tx, box.name, box.table, [message_id], read)
        notify(tx, box.name)
    return redirect(back_to(form, _list_url(box)))


async def send_now(request: Request) -> Response:
    """A scheduled email, sent at the emulator's current time: the API's reschedule to `now`."""
    message_id = request.path_params["id"]
    form = await form_of(request)
    back = back_to(form, f"{SENT.url}/{message_id}")
    if (asked := await confirm.scheduled_email(request, form, message_id, confirm.SEND_NOW, back)):
        return asked
    emu = emulator_of(request)
    try:
        async with emu.transaction(session_account(request)) as tx:
            await emails.reschedule(tx, message_id, {"scheduled_at": "now"})
    except ApiError as error:
        return await _failed(request, "Cannot send now", error)
    await emu.jobs.flush()  # the send is due now: make it before the page shows the email
    return redirect(back)


async def cancel(request: Request) -> Response:
    message_id = request.path_params["id"]
    form = await form_of(request)
    back = back_to(form, f"{SENT.url}/{message_id}")
    if (asked := await confirm.scheduled_email(request, form, message_id, confirm.CANCEL, back)):
        return asked
    try:
        async with emulator_of(request).transaction(session_account(request)) as tx:
            await emails.cancel(tx, message_id)
    except ApiError as error:
        return await _failed(request, "Cannot cancel", error)
    return redirect(back)


# ---- many messages -----------------------------------------------------------------------------

def _scope_where(box: Box, form: dict[str, list[str]], account: str) -> tuple[str, list[Any], bool]:
    """SQL for the emails a bulk form means, and whether it searches."""
    scope = _first(form, "scope")
    if scope == "all":
        return "account = ?", [account], False
    if scope == "search":
        filters = parse_filters({name: _first(form, name) for name in ("q", "status", "tag")})
        sql, params = list_where(box, filters, account)
        return sql, params, bool(filters.q)
    ids = (form.get("id") or [])[:MAX_SELECTED]
    marks = ", ".join("?" for _ in ids) or "NULL"
    return f"account = ? AND id IN ({marks})", [account, *ids], False


async def _delete(emu: Emulator, box: Box, form: dict[str, list[str]], account: str, where: reads.Sql,
                  prepare: Callable[[Tx], Awaitable[None]] | None) -> dict[str, int]:
    """Delete what the form's button stated (issue 39): `expect` emails, none newer than `upto`. The
    matches are counted again first; when they are no longer `expect` (mail was read, deleted or
    changed status meanwhile) nothing is deleted and the notice says so. A form without the two
    (not the UI's own: a script's) deletes what matches now, as before."""
    expect = whole_number_or_none(_first(form, "expect"), maximum=NOTICE_MAX)
    upto = whole_number_or_none(_first(form, "upto"))
    if _first(form, "scope") == "selected" or expect is None or upto is None:
        return {"deleted": await deletion.delete_where(emu, _mail(box), account, *where, prepare)}
    async with emu.transaction(account) as tx:
        if prepare is not None:
            await prepare(tx)
        now, _ = await windows.count(tx, box.table, *where, upto=upto)
    if now != expect:
        return {"stale": now or 0, "stated": expect}
    return {"deleted": await deletion.delete_where(emu, _mail(box), account, *where, prepare, upto)}


async def bulk(request: Request) -> Response:
    box = RECEIVED if request.path_params["box"] == RECEIVED.name else SENT
    form = await form_of(request)
    action, account = _first(form, "action"), session_account(request)
    if action not in ACTIONS or _first(form, "scope") not in SCOPES:
        return page(request, "error.html", {"title": "Unknown action",
                                            "message": "This form asked for an action the UI does not have."},
                    422)
    try:
        sql, params, searched = _scope_where(box, form, account)
        prepare = (index_new_mail if box is SENT else mailsearch.scan_off_loop) if searched else None
        emu = emulator_of(request)
        if action == "delete":
            notice = await _delete(emu, box, form, account, (sql, params), prepare)
        else:
            count = await reads.mark_where(emu, box.name, box.table, account, (sql, params),
                                           action == "read", prepare)
            notice = {"marked": count}
    except ApiError as error:  # a search that is wrong (the list showed why already)
        return await _failed(request, "Cannot do that", error)
    return redirect(_with_notice(back_to(form, _list_url(box)), **notice))


async def reset(request: Request) -> Response:
    """Reset emulator: everything goes, then the --scenario the emulator started with is loaded again.
    Not for a signed-in browser (issue 38): it sees one account, and a reset would take every account's
    mail; the control plane's reset stays for whoever runs the host."""
    if signed_in(request) is not None:
        return await _failed(request, "Cannot reset", ApiError(errors.FORBIDDEN, RESET_REFUSED))
    try:
        await scenarios.reset_and_reload(emulator_of(request))
    except ApiError as error:
        return await _failed(request, "Reset done, scenario not loaded", error)
    return redirect(f"{UI}/")


def _message_actions(box: Box) -> list[BaseRoute]:
    one = box.url + "/{id}"
    return [
        Route(one + "/delete", delete_message, methods=["POST"]),
        Route(one + "/read", mark_message, methods=["POST"]),
        Route(one + "/unread", mark_message, methods=["POST"]),
    ]


ROUTES: list[BaseRoute] = [
    *_message_actions(SENT),
    *_message_actions(RECEIVED),
    Route(f"{SENT.url}/{{id}}/send-now", send_now, methods=["POST"]),
    Route(f"{SENT.url}/{{id}}/cancel", cancel, methods=["POST"]),
    Route(f"{UI}/bulk/{{box}}", bulk, methods=["POST"]),
    Route(f"{UI}/reset", reset, methods=["POST"]),
]
