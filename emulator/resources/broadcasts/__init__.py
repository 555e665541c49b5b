"""Broadcasts: marketing mail to a segment's contacts. Reference: reference/broadcasts.md.

Modules: `store` (tables, bodies), `service` (create, list, get, update, delete, duplicate, send, cancel),
`fanout` (the send job: eligibility, personalisation, one email per contact through the emails store),
`recipients` (recipients by status, clicked links, the unsubscribe action behind each email's link).

Public functions for side channels (the unsubscribe page):
- `find_recipient(tx, token) -> Row | None` — the recipient an unsubscribe link names (any account).
- `unsubscribe(tx, recipient, everything) -> None` — what one click on that page does.
"""

from __future__ import annotations

from typing import Any

from emulator.resources.broadcasts import fanout, recipients, service, store
from emulator.resources.broadcasts.fanout import UNSUBSCRIBE_PATH
from emulator.resources.broadcasts.recipients import find_recipient, unsubscribe

TABLES = store.TABLES
OPS = [*service.OPS, *recipients.OPS]


def install(emu: Any) -> None:
    fanout.install(emu)


__all__ = ["OPS", "TABLES", "UNSUBSCRIBE_PATH", "find_recipient", "install", "unsubscribe"]
