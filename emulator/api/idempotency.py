"""Idempotency-Key (reference 00-general.md §6): replay, conflict and in-flight rules, 24 h on the clock."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from emulator.api.ops import Reply
from emulator.core import errors
from emulator.core.clock import to_db
from emulator.core.errors import ApiError

if TYPE_CHECKING:
    from emulator.api.ops import ApiRequest, Op
    from emulator.core.emulator import Emulator

TABLES = [
    """CREATE TABLE IF NOT EXISTS idempotency_keys (
        account TEXT NOT NULL,
        method TEXT NOT NULL,
        path TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        status INTEGER NOT NULL,
        response TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (account, method, path, key)
    )""",
]
RETENTION = timedelta(hours=24)


def fingerprint(body: Any) -> str:
    """Bodies are compared as parsed JSON, so key order and white space do not matter."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _in_flight(emu: Emulator) -> set[tuple[str, str, str, str]]:
    return emu.state.setdefault("idempotency_in_flight", set())  # type: ignore[no-any-return]


async def run(emu: Emulator, op: Op, req: ApiRequest, account: str | None) -> tuple[int, Any]:
    """Run `op` once per (account, method, path, key); replay its stored 2xx answer afterwards."""


    key = req.headers["idempotency-key"]
    if not 1 <= len(key) <= 256:
        raise ApiError(errors.INVALID_IDEMPOTENCY_KEY)
    slot = (account or "", req.method, req.path, key)
    in_flight = _in_flight(emu)
    if slot in in_flight:
        raise ApiError(errors.CONCURRENT_IDEMPOTENT_REQUESTS)
    in_flight.add(slot)
    try:
        async with emu.transaction(account) as tx:
            stored = await tx.one(
                "SELECT fingerprint, status, response FROM idempotency_keys"
                " WHERE account = ? AND method = ? AND path = ? AND key = ? AND created_at > ?",
                (*slot, to_db(tx.now - RETENTION)),
            )
            print_ = fingerprint(req.body)
            if stored is not None:
                if stored["fingerprint"] != print_:
                    raise ApiError(errors.INVALID_IDEMPOTENT_REQUEST)
                return stored["status"], json.loads(stored["response"])
            result = await op.handler(tx, req)
            status, body = (result.status, result.body) if isinstance(result, Reply) else (op.status, result)
            # Only successes consume the key (a failed request may be retried with it).
            await tx.run(
                "INSERT OR REPLACE INTO idempotency_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*slot, print_, status, json.dumps(body, separators=(",", ":")), tx.now_db),
            )
            return status, body
    finally:
        in_flight.discard(slot)
