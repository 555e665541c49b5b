"""Inboxes (private beta): agent inboxes with threads, drafts, labels and agent settings.
Reference: reference/inboxes.md (seed §2.8–2.11, §3, §4.3); events: reference/webhooks.md §6.8.

Modules: `store` (tables, lookups, wire shapes), `inboxes`, `filing` (how inbound and sent mail joins
threads), `threads`, `search`, `messages` (thread emails, reply, forward), `drafts`, `labels` (and agent
settings), `events` (the `inbox.*` payloads), `filters` (list and search query checks).

For other groups: `accept_inbound(tx, received_row, attachment_rows, received_for)` — called by
Receiving for every stored received email. Not in Resend's OpenAPI: operation ids follow its
`group/verb` form.
"""

from __future__ import annotations

from typing import Any

from emulator.api.ops import Op
from emulator.resources.inboxes import drafts, inboxes, labels, messages, search, store, threads
from emulator.resources.inboxes.filing import accept_inbound

TABLES = store.TABLES
_INBOX = "/inboxes/{inbox_id}"
_THREAD = _INBOX + "/threads/{thread_id}"
_EMAIL = _THREAD + "/emails/{email_id}"
_DRAFT = _INBOX + "/drafts/{draft_id}"

OPS = [
    Op("inboxes/create", "POST", "/inboxes", inboxes.http_create, status=201),
    Op("inboxes/list", "GET", "/inboxes", inboxes.http_list),
    Op("inboxes/get", "GET", _INBOX, inboxes.http_get),
    Op("inboxes/update", "PATCH", _INBOX, inboxes.http_update),
    Op("inboxes/delete", "DELETE", _INBOX, inboxes.http_delete),
    Op("inboxes/list-threads", "GET", _INBOX + "/threads", threads.http_list),
    Op("inboxes/search-threads", "GET", _INBOX + "/threads/search", search.http_search),
    Op("inboxes/get-thread", "GET", _THREAD, threads.http_get),
    Op("inboxes/update-thread", "PATCH", _THREAD, threads.http_update),
    Op("inboxes/delete-thread", "DELETE", _THREAD, threads.http_delete),
    Op("inboxes/add-thread-labels", "POST", _THREAD + "/labels", threads.http_add_labels),
    Op("inboxes/set-thread-labels", "PUT", _THREAD + "/labels", threads.http_set_labels),
    Op("inboxes/remove-thread-label", "DELETE", _THREAD + "/labels/{label_id}", threads.http_remove_label),
    Op("inboxes/list-thread-emails", "GET", _THREAD + "/emails", messages.http_list),
    Op("inboxes/get-thread-email", "GET", _EMAIL, messages.http_get),
    Op("inboxes/reply-thread-email", "POST", _EMAIL + "/reply", messages.http_reply, idempotent=True),
    Op("inboxes/forward-thread-email", "POST", _EMAIL + "/forward", messages.http_forward, idempotent=True),
    Op("inboxes/create-draft", "POST", _INBOX + "/drafts", drafts.http_create, status=201, idempotent=True),
    Op("inboxes/list-drafts", "GET", _INBOX + "/drafts", drafts.http_list),
    Op("inboxes/get-draft", "GET", _DRAFT, drafts.http_get),
    Op("inboxes/update-draft", "PATCH", _DRAFT, drafts.http_update),
    Op("inboxes/delete-draft", "DELETE", _DRAFT, drafts.http_delete),
    Op("inboxes/send-draft", "POST", _DRAFT + "/send", drafts.http_send, idempotent=True),
    Op("inboxes/create-label", "POST", _INBOX + "/labels", labels.http_create, status=201),
    Op("inboxes/list-labels", "GET", _INBOX + "/labels", labels.http_list),
    Op("inboxes/update-label", "PATCH", _INBOX + "/labels/{label_id}", labels.http_update),
    Op("inboxes/delete-label", "DELETE", _INBOX + "/labels/{label_id}", labels.http_delete),
    Op("inboxes/get-agent", "GET", _INBOX + "/agent", labels.http_get_agent),
    Op("inboxes/update-agent", "PATCH", _INBOX + "/agent", labels.http_update_agent),
]



def install(emu: Any) -> None:
    emu.jobs.tx_handler(threads.PURGE_JOB, threads.purge)


__all__ = ["OPS", "TABLES", "accept_inbound", "install"]
