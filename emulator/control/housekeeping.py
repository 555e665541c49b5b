"""Deleting mail and its read state through the control plane, for sent and received mail alike:

    DELETE /_emulator/outbox/{id}                 one email, with everything that hangs off it
    DELETE /_emulator/outbox?q=…                  every email the filters match (the list's filters,
                                                  `id` repeatable); no filter at all: all sent mail
    POST   /_emulator/outbox/{id}/read | /unread  one email's read state
    POST   /_emulator/outbox/read | /unread       every email the filters match
    … and the same under /_emulator/received (filters: `q`, `id`, `account`/`api_key`).

A delete keeps domains, keys, webhooks, inboxes, contacts and templates (deletion.py); resetting the
whole emulator is `POST /_emulator/reset`. Unknown ids are 404 not_found, bad queries 422.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.auth import selected_account
from emulator.api.ops import emulator_of, json_response
from emulator.control import deletion, mailsearch, outbox, reads
from emulator.control.base import PREFIX, body_of
from emulator.core.errors import not_found

if TYPE_CHECKING:
    from starlette.datastructures import QueryParams

    from emulator.core.db import Row, Tx
    from emulator.core.emulator import Emulator

RECEIVED_BASE = f"{PREFIX}/received"
# What runs first in each chunk (the search index catch-up).
Prepare = Callable[["Tx"], Awaitable[None]] | None
Endpoint = Callable[[Request], Awaitable[Response]]


def _ids_clause(query: QueryParams) -> tuple[str, list[Any]] | None:
    ids = query.getlist("id")
    if not ids:
        return None
    return f"id IN ({', '.join('?' for _ in ids)})", list(ids)


def _both(first: tuple[str, list[Any]], second: tuple[str, list[Any]] | None) -> tuple[str, list[Any]]:
    if second is None:
        return first
    return f"({first[0]}) AND ({second[0]})", [*first[1], *second[1]]


def _sent_where(emu: Emulator, query: QueryParams) -> tuple[str | None, tuple[str, list[Any]], Prepare]:
    found = outbox.parse_filter(emu, query)
    where = _both(found.where(), _ids_clause(query))
    return found.account, where, found.prepare


def _received_where(emu: Emulator, query: QueryParams) -> tuple[str | None,
                                                               tuple[str, list[Any]], Prepare]:
    account = selected_account(emu, query.get("account"), query.get("api_key"))
    text = query.get("q") or ""
    where = mailsearch.where(mailsearch.RECEIVED, text)
    if account is not None:
        where = _both(("account = ?", [account]), where)
    return account, _both(where, _ids_clause(query)), (mailsearch.scan_off_loop if text else None)


async def _received_row(emu: Emulator, request: Request) -> Row:
    query = request.query_params
    account = selected_account(emu, query.get("account"), query.get("api_key"))
    async with emu.transaction() as tx:
        row = await tx.one("SELECT id, account FROM received_emails WHERE id = ?",
                           (request.path_params["email_id"],))
    if row is None or (account is not None and row["account"] != account):
        raise not_found("Email")
    return row


async def _row(request: Request, mail: deletion.Mail) -> Row:
    if mail is deletion.SENT:
        return await outbox.requested_email(request)
    return await _received_row(emulator_of(request), request)


def _one(mail: deletion.Mail, action: str) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        await body_of(request, {})  # takes no fields: a malformed body, or one naming a field, is refused
        emu, row = emulator_of(request), await _row(request, mail)
        async with emu.transaction(row["account"]) as tx:
            done = await _apply(tx, mail, row["id"], action)
        if not done and action == "delete":
            raise not_found("Email")  # deleted by another request in between
        body = {"object": f"{mail.box}_email", "id": row["id"]}
        return json_response({**body, "deleted": True} if action == "delete" else
                             {**body, "read": action == "read"})
    return endpoint


async def _apply(tx: Tx, mail: deletion.Mail, email_id: str, action: str) -> bool:
    if action == "delete":
        return await deletion.remove(tx, mail, [email_id]) > 0
    await reads.mark(tx, mail.box, mail.table, [email_id], action == "read")
    return True


def _many(mail: deletion.Mail, action: str) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        await body_of(request, {})  # filters come in the query string; a body naming a field is refused
        emu = emulator_of(request)
        pick = _sent_where if mail is deletion.SENT else _received_where
        account, (sql, params), prepare = pick(emu, request.query_params)
        if action == "delete":
            count = await deletion.delete_where(emu, mail, account, sql, params, prepare)
            return json_response({"object": "list", "deleted": count})
        count = await reads.mark_where(emu, mail.box, mail.table, account, (sql, params), action == "read",
                                       prepare)
        return json_response({"object": "list", "updated": count, "read": action == "read"})
    return endpoint


def _routes(base: str, mail: deletion.Mail) -> list[Route]:
    one = f"{base}/{{email_id}}"
    return [
        Route(base, _many(mail, "delete"), methods=["DELETE"]),
        Route(f"{base}/read", _many(mail, "read"), methods=["POST"]),
        Route(f"{base}/unread", _many(mail, "unread"), methods=["POST"]),
        Route(one, _one(mail, "delete"), methods=["DELETE"]),
        Route(f"{one}/read", _one(mail, "read"), methods=["POST"]),
        Route(f"{one}/unread", _one(mail, "unread"), methods=["POST"]),
    ]


ROUTES = [*_routes(outbox.BASE, deletion.SENT), *_routes(RECEIVED_BASE, deletion.RECEIVED)]
