"""Query parameters of the thread list and search, checked with the documented messages (reference §3.6).

SDKs send lists comma-separated (`folders=inbox,sent`); repeated parameters are accepted too.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from emulator.core.clock import parse_iso
from emulator.core.errors import invalid
from emulator.core.pages import BOTH_CURSORS_TEXT, INBOX_DOCS, UUID, Page, parse_page
from emulator.resources.inboxes.store import FOLDERS, require_label

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

MAX_QUERY_CHARS = 256
MAX_QUERY_WORDS = 32
MAX_ADDRESS_VALUES = 20
MAX_LABELS = 50
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_DATE_LIKE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ].*)?$")


def values(query: Any, name: str) -> list[str] | None:
    """Every value of `name`, comma lists split; None when the parameter is absent."""
    raw = query.getlist(name) if hasattr(query, "getlist") else [query[name]] if name in query else []
    if not raw:
        return None
    return [part.strip() for item in raw for part in item.split(",") if part.strip()]


def flag(query: Any, name: str) -> bool | None:
    raw: str | None = query.get(name)
    if raw is None:
        return None
    if raw not in ("true", "false"):
        raise invalid(f"The `{name}` parameter must be `true` or `false`.")
    return raw == "true"


def text_query(query: Any) -> str | None:
    raw = query.get("query")
    if raw is None:
        return None
    if len(raw) > MAX_QUERY_CHARS:
        raise invalid(f"The `query` parameter must be at most {MAX_QUERY_CHARS} characters,"
                      f" but received {len(raw)}.")
    words = len(raw.split())
    if words > MAX_QUERY_WORDS:
        raise invalid(f"The `query` parameter must contain at most {MAX_QUERY_WORDS} words,"
                      f" but received {words}.")
    return raw.strip() or None


def address_filter(query: Any, name: str) -> list[str] | None:
    items = values(query, name)
    if items is not None and len(items) > MAX_ADDRESS_VALUES:
        raise invalid(f"The `{name}` parameter must contain at most {MAX_ADDRESS_VALUES} values,"
                      f" but received {len(items)}.")
    return [item.lower() for item in items] if items else None


def folders(query: Any, with_labels: bool, names: tuple[str, ...] = ("folders", "folder")) -> list[str]:
    chosen: list[str] | None = None
    for name in names:
        chosen = chosen or values(query, name)
    for folder in chosen or []:
        if folder not in FOLDERS:
            raise invalid(f'The `folders` value "{folder}" must be one of: {", ".join(FOLDERS)}.')
    if chosen:
        return chosen
    return ["inbox", "archive", "sent"] if with_labels else ["inbox"]


async def labels(tx: Tx, inbox: Row, query: Any) -> list[str] | None:
    ids = values(query, "labels") or values(query, "label")
    if not ids:
        return None
    for label_id in ids:
        if not UUID.match(label_id):
            raise invalid(f'The `labels` value "{label_id}" must be a valid UUID.')
    if len(ids) > MAX_LABELS:
        raise invalid(f"The `labels` parameter must contain at most {MAX_LABELS} label IDs,"
                      f" but received {len(ids)}.")
    for label_id in ids:
        await require_label(tx, inbox, label_id)
    return [label_id.lower() for label_id in ids]


def page(query: Any) -> Page:
    """`after`/`before` take thread ids; a date there gets the documented pointer to search."""
    for name, bound in (("after", "start_date"), ("before", "end_date")):
        value = query.get(name)
        if value is not None and _DATE_LIKE.match(value.strip()):
            raise invalid(f"The `{name}` parameter must be a thread ID. To filter by date, use"
                          f" `GET /inboxes/:id/threads/search` with `{bound}`.")
    if query.get("after") is not None and query.get("before") is not None:
        raise invalid(f"{BOTH_CURSORS_TEXT} {INBOX_DOCS}")
    return parse_page(query, optional_limit=False, docs=INBOX_DOCS)


class DateRange(NamedTuple):
    start: datetime | None
    end: datetime | None


def _date(raw: str, name: str, end: bool) -> datetime:
    try:
        if _DATE.match(raw.strip()):
            day = parse_iso(raw.strip() + "T00:00:00Z")
            return day.replace(hour=23, minute=59, second=59, microsecond=999999) if end else day
        return parse_iso(raw)
    except (ValueError, OverflowError):
        raise invalid(f"The `{name}` must be a valid ISO 8601 date.") from None


def dates(query: Any) -> DateRange:
    """A bare date is the whole UTC day; a timestamp is used as given."""
    start_raw, end_raw = query.get("start_date"), query.get("end_date")
    start = _date(start_raw, "start_date", end=False) if start_raw is not None else None
    end = _date(end_raw, "end_date", end=True) if end_raw is not None else None
    if start is not None and end is not None and end < start:
        raise invalid("The `start_date` must be on or before the `end_date`.")
    return DateRange(start, end)
