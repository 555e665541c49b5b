"""The Logs API: every authenticated API request as the account made it (reference
logs-automations-events.md §1). The kernel records the rows (`emulator/api/request_log.py`, secrets
redacted there); this group reads them back, newest first, with seed §4.5 pagination.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from emulator.api.ops import ApiRequest, Op
from emulator.core.clock import from_db
from emulator.core.errors import INVALID_PARAMETER, ApiError, not_found
from emulator.core.pages import UUID, fetch_page, list_body, parse_page

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

COLUMNS = "seq, id, account, created_at, endpoint, method, response_status, user_agent"


def _millis(value: str) -> str:
    return from_db(value).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "+00"


def summary(row: Row) -> dict[str, Any]:
    return {"id": row["id"], "created_at": _millis(row["created_at"]), "endpoint": row["endpoint"],
            "method": row["method"], "response_status": row["response_status"],
            "user_agent": row["user_agent"]}


def _body(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


async def list_logs(tx: Tx, query: Any) -> dict[str, Any]:
    tx.include_deferred()  # the requests just before this one are still waiting to be written
    rows, has_more = await fetch_page(tx, "request_logs", parse_page(query, optional_limit=False),
                                      columns=COLUMNS)
    return list_body([summary(row) for row in rows], has_more)


async def get_log(tx: Tx, log_id: str) -> dict[str, Any]:
    if not UUID.match(log_id):
        raise ApiError(INVALID_PARAMETER, "The `log_id` must be a valid UUID.")
    tx.include_deferred()
    row = await tx.one("SELECT * FROM request_logs WHERE account = ? AND id = ?", (tx.account, log_id))
    if row is None:
        raise not_found("Log")
    return {"object": "log", **summary(row), "request_body": _body(row["request_body"]),
            "response_body": _body(row["response_body"])}


async def http_list(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await list_logs(tx, req.query)


async def http_get(tx: Tx, req: ApiRequest) -> dict[str, Any]:
    return await get_log(tx, req.params["log_id"])


OPS = [
    Op("logs/list", "GET", "/logs", http_list),
    Op("logs/get", "GET", "/logs/{log_id}", http_get),
]
