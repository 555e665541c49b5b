"""The Inboxes tab: every inbox, its threads by folder (searchable with the outbox's language,
control/mailsearch.py), its drafts and labels, and a thread as a conversation (oldest message first).
Through the inbox service functions; opening a thread reads it, as the API's `read: true` does.
Message HTML only in the sandboxed frame the outbox uses (frame.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.control import mailsearch
from emulator.core.errors import ApiError
from emulator.resources.inboxes import drafts, inboxes, labels, threads
from emulator.resources.inboxes.store import FOLDERS
from emulator.resources.inboxes.threads import list_item, thread_where
from emulator.web import csrf
from emulator.web.frame import frame_response
from emulator.web.render import UI, not_found, page
from emulator.web.sessions import account_of
from emulator.web.views import _chrome as page_chrome

if TYPE_CHECKING:
    from emulator.core.db import Tx

BASE = f"{UI}/inboxes"
SHOWN = "100"  # threads and drafts shown per folder: the UI is for looking, not paging


def _folder(request: Request) -> str:
    chosen = request.query_params.get("folder", "inbox")
    return chosen if chosen in FOLDERS else "inbox"


async def inbox_list(request: Request) -> Response:
    async with emulator_of(request).transaction(account_of(request)) as tx:
        listed = await inboxes.list_inboxes(tx, {"limit": "100"})
        cards = [await inboxes.get_inbox(tx, item["id"]) for item in listed["data"]]
        chrome = await page_chrome(tx, "inboxes")
    return page(request, "inboxes.html", {**chrome, "inboxes": cards, "base": BASE})


async def _searched(tx: Tx, inbox: dict[str, Any], folder: str, text: str) -> list[dict[str, Any]]:
    """The folder's threads the search finds, newest activity first (raises 422 for a wrong query)."""
    where, params = thread_where(inbox, [folder], None, None)
    sql, search_params = mailsearch.where(mailsearch.THREADS, text)
    await mailsearch.scan_off_loop(tx)
    rows = await tx.all(f"SELECT * FROM inbox_threads WHERE {' AND '.join(where)} AND ({sql})"
                        f" ORDER BY tick DESC LIMIT {SHOWN}", [*params, *search_params])
    return [await list_item(tx, row) for row in rows]


async def _threads(tx: Tx, inbox: dict[str, Any], folder: str, text: str) -> tuple[list[Any], str | None]:
    if not text:
        found = await threads.list_threads(tx, inbox["id"], {"folder": folder, "limit": SHOWN})
        return found["data"], None
    try:
        return await _searched(tx, inbox, folder, text), None
    except ApiError as error:
        return [], error.message


async def inbox_view(request: Request) -> Response:
    folder, text = _folder(request), request.query_params.get("q", "").strip()[:200]
    try:
        async with emulator_of(request).transaction(account_of(request)) as tx:
            inbox = await inboxes.get_inbox(tx, request.path_params["inbox_id"])
            found, search_error = await _threads(tx, inbox, folder, text)
            unsent = await drafts.list_drafts(tx, inbox["id"], {"limit": SHOWN})
            tags = await labels.list_labels(tx, inbox["id"])
            chrome = await page_chrome(tx, "inboxes")
    except ApiError:
        return not_found(request, "Inbox")
    context = {**chrome, "inbox": inbox, "folder": folder, "folders": FOLDERS, "threads": found,
               "drafts": unsent["data"], "labels": tags["data"], "base": BASE, "q": text,
               "search_error": search_error}
    return page(request, "inbox.html", context)


async def thread_view(request: Request) -> Response:
    inbox_id, thread_id = request.path_params["inbox_id"], request.path_params["thread_id"]
    try:
        async with emulator_of(request).transaction(account_of(request)) as tx:
            inbox = await inboxes.get_inbox(tx, inbox_id)
            thread = await threads.get_thread(tx, inbox["id"], thread_id)
            # Opening a thread in the browser reads it, through the API's own update; a request another
            # site makes (an <img>) reads nothing (csrf.is_own_navigation).
            if not thread["read"] and csrf.is_own_navigation(request):
                await threads.update_thread(tx, inbox["id"], thread_id, {"read": True}, source="ui")
                thread = await threads.get_thread(tx, inbox["id"], thread_id)
            chrome = await page_chrome(tx, "inboxes")
    except ApiError:
        return not_found(request, "Thread")
    frame_base = f"{BASE}/{inbox['id']}/threads/{thread['id']}/emails"
    messages: list[dict[str, Any]] = [{**m, "frame_url": f"{frame_base}/{m['id']}/frame"}
                                      for m in thread["messages"]]
    return page(request, "thread.html", {**chrome, "inbox": inbox, "thread": thread, "messages": messages,
                                         "base": BASE})


async def message_frame(request: Request) -> Response:
    p = request.path_params
    try:
        async with emulator_of(request).transaction(account_of(request)) as tx:
            thread = await threads.get_thread(tx, p["inbox_id"], p["thread_id"])
    except ApiError:
        return frame_response(request, "<p>Message not found.</p>", remote=False, status=404)
    for message in thread["messages"]:
        if message["id"] == p["email_id"] and message["html"] is not None:
            return frame_response(request, message["html"], remote=False)
    return frame_response(request, "<p>Message not found.</p>", remote=False, status=404)


ROUTES: list[BaseRoute] = [
    Route(BASE, inbox_list, methods=["GET"]),
    Route(BASE + "/{inbox_id}", inbox_view, methods=["GET"]),
    Route(BASE + "/{inbox_id}/threads/{thread_id}", thread_view, methods=["GET"]),
    Route(BASE + "/{inbox_id}/threads/{thread_id}/emails/{email_id}/frame", message_frame, methods=["GET"]),
]
