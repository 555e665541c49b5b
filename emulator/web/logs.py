"""The Logs page (`/_emulator/ui/logs`): the account's API request log, newest first, in keyset pages
(paging.py) with filters: status (`2xx`, `4xx`, … or an exact code), method, and path (a substring such as
`/emails`, or a template such as `/emails/{id}`, where each `{…}` stands for one path segment); and one
log's page with its bodies in full.

The account filter is the header's account switcher: a log row records its account, not which of the
account's API keys made the request (GET /logs has no key either), so there is no per-key filter.
A body is shown inline only when short, so a page stays small (≤ 200 KB at any size of the log); a longer
one is on the log's own page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from emulator.api.ops import emulator_of
from emulator.core.typed import whole_number_or_none
from emulator.web.paging import cursor_of, seek
from emulator.web.render import UI, _pretty_json, not_found, page
from emulator.web.sessions import account_of
from emulator.web.views import _chrome as page_chrome

if TYPE_CHECKING:
    from collections.abc import Mapping

    from emulator.core.db import Row

BASE = f"{UI}/logs"
PAGE_SIZE = 50
INLINE_BODY = 800  # characters of pretty JSON shown in the list; longer bodies are on the log's page
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
CLASSES = ("2xx", "3xx", "4xx", "5xx")
COLUMNS = "seq, id, created_at, endpoint, method, response_status, user_agent, request_body, response_body"
_PLACEHOLDER = re.compile(r"\{[^{}/]*\}")
_GLOB_SPECIAL = re.compile(r"([*?\[])")
STATUS_SENTENCE = "Status takes 2xx, 3xx, 4xx, 5xx or a code from 100 to 599 (such as 404), not “{}”."
METHOD_SENTENCE = "Method takes one of GET, POST, PUT, PATCH or DELETE, not “{}”."


@dataclass(frozen=True)
class LogFilter:
    status: str = ""
    method: str = ""
    path: str = ""

    @property
    def active(self) -> bool:
        return bool(self.status or self.method or self.path)

    def params(self) -> dict[str, str]:
        return {k: v for k, v in (("status", self.status), ("method", self.method), ("path", self.path)) if v}

    def problem(self) -> str | None:
        """The sentence saying why a filter value cannot be used, if one cannot."""
        if self.status and self.status.lower() not in CLASSES and \
                whole_number_or_none(self.status, minimum=100, maximum=599) is None:
            return STATUS_SENTENCE.format(self.status[:40])
        if self.method and self.method.upper() not in METHODS:
            return METHOD_SENTENCE.format(self.method[:40])
        return None

    def where(self, account: str) -> tuple[str, list[Any]]:
        clauses, params = ["account = ?"], list[Any]([account])
        if self.status.lower() in CLASSES:
            first = int(self.status[0]) * 100
            clauses.append("response_status BETWEEN ? AND ?")
            params += [first, first + 99]
        elif self.status:
            clauses.append("response_status = ?")
            params.append(int(self.status))
        if self.method:
            clauses.append("method = ?")
            params.append(self.method.upper())
        if self.path:
            clause, value = _path_test(self.path)
            clauses.append(clause)
            params.append(value)
        return " AND ".join(clauses), params


def _path_test(path: str) -> tuple[str, str]:
    """A template (`/emails/{id}`) matches whole paths, each `{…}` one non-empty segment (GLOB `?*`, and
    as many `/` as the template has); anything else is a case-sensitive substring."""
    if not _PLACEHOLDER.search(path):
        return "instr(endpoint, ?) > 0", path
    pieces = [_GLOB_SPECIAL.sub(r"[\1]", piece) for piece in _PLACEHOLDER.split(path)]
    slashes = path.count("/")
    return (f"endpoint GLOB ? AND length(endpoint) - length(replace(endpoint, '/', '')) = {slashes}",
            "?*".join(pieces))


def parse_filter(query: Mapping[str, str]) -> LogFilter:
    return LogFilter(status=query.get("status", "").strip()[:40], method=query.get("method", "").strip()[:40],
                     path=query.get("path", "").strip()[:200])


def _body(text: str | None) -> dict[str, Any] | None:
    """A logged body as the list shows it: pretty JSON when it parses (a row must never break the page),
    in full only when short."""
    if not text:
        return None
    pretty = _pretty_json(text)
    short = len(pretty) <= INLINE_BODY
    return {"text": pretty if short else None, "size": len(text.encode())}


def _entry(row: Row) -> dict[str, Any]:
    return {**row, "request_body": _body(row["request_body"]), "response_body": _body(row["response_body"]),
            "url": f"{BASE}/{row['id']}"}


async def logs_page(request: Request) -> Response:
    chosen = parse_filter(request.query_params)
    problem = chosen.problem()
    async with emulator_of(request).transaction(account_of(request)) as tx:
        tx.include_deferred()
        window = None
        if problem is None:
            where, params = chosen.where(tx.account)
            window = await seek(tx, f"SELECT {COLUMNS} FROM request_logs", where, params, seq="seq",
                                cursor=cursor_of(request.query_params), size=PAGE_SIZE,
                                link=(BASE, chosen.params()))
        header = await page_chrome(tx, "logs")
    return page(request, "logs.html", {
        **header, "logs": [_entry(row) for row in window.rows] if window else [], "chosen": chosen,
        "problem": problem, "methods": METHODS, "older_url": window and window.older_url,
        "newer_url": window and window.newer_url, "filter_query": _query(chosen)})


def _query(chosen: LogFilter) -> str:
    return f"?{urlencode(chosen.params())}" if chosen.active else ""


async def log_page(request: Request) -> Response:
    async with emulator_of(request).transaction(account_of(request)) as tx:
        tx.include_deferred()
        row = await tx.one("SELECT * FROM request_logs WHERE account = ? AND id = ?",
                           (tx.account, request.path_params["id"]))
        header = await page_chrome(tx, "logs")
    if row is None:
        return not_found(request, "Log")
    bodies = {name: _pretty_json(row[name]) if row[name] else None
              for name in ("request_body", "response_body")}
    return page(request, "log.html", {**header, "log": {**row, **bodies}})


ROUTES: list[BaseRoute] = [
    Route(BASE, logs_page, methods=["GET"]),
    Route(f"{BASE}/{{id}}", log_page, methods=["GET"]),
]
