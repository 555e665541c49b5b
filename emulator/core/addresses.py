"""Email address fields as Resend checks them: `x@y` or `Name <x@y>`, one at a time or in a list."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from emulator.core.errors import invalid, missing_field

MAX_RECIPIENTS = 50  # `to` per the OpenAPI maxItems; cc/bcc/reply_to undocumented, same limit [rec]
_LOCAL = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+"
_DOMAIN = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z0-9-]{2,63}"
BARE_ADDRESS = re.compile(rf"^{_LOCAL}@{_DOMAIN}$")
HEADER_BREAKS = ("\r", "\n", "\x00")
ADDRESS_FORMAT = ("The email address needs to follow the `email@example.com` or"
                  " `Name <email@example.com>` format.")


def split_named(value: str) -> tuple[str, str] | None:
    r"""`Name <x@y>` → ("Name", "x@y"), None for any other form. One pass over the text: a pattern like
    `(.*?)\s*<` backtracks quadratically on a long run of spaces (a 100 KB `from` took seconds)."""
    value = value.strip()
    if not value.endswith(">"):
        return None
    start = value.rfind("<")
    name = value[:start]
    if start < 0 or "<" in name or ">" in name:
        return None
    return name.rstrip(), value[start + 1:-1]


def _named_address(value: str) -> str | None:
    parts = split_named(value)
    return parts[1] if parts is not None and BARE_ADDRESS.match(parts[1]) else None


def address_of(value: str) -> str:
    """The bare address of `x@y` or `Name <x@y>`."""
    return _named_address(value) or value.strip()


@lru_cache(maxsize=256)
def domain_of(value: str) -> str:
    # Cached: every send asks it of its sender (message id, tracking settings), mostly the same few.
    return address_of(value).rpartition("@")[2].lower()


# Addresses this long or shorter have their verdict cached (`valid_address`).
CACHED_LENGTH = 320


def valid_address(value: str) -> bool:
    """`x@y` or `Name <x@y>`; a line break or NUL anywhere (it would end up in a header) is invalid."""
    # Cached for the lengths addresses have: a send checks its sender and recipients, mostly the same
    # few (~3 µs each by the patterns); longer text is checked each time and never kept.
    return _valid_cached(value) if len(value) <= CACHED_LENGTH else _valid(value)


def _valid(value: str) -> bool:
    value = value.strip()
    if any(char in value for char in HEADER_BREAKS):
        return False
    return bool(BARE_ADDRESS.match(value) or _named_address(value))


_valid_cached = lru_cache(maxsize=1024)(_valid)


def sender(body: dict[str, Any], required: bool) -> str | None:
    value = body.get("from")
    if value is None:
        if required:
            raise missing_field("from")
        return None
    if not isinstance(value, str):
        raise invalid("The `from` field must be a `string`.")
    if not valid_address(value):
        raise invalid(f"Invalid `from` field. {ADDRESS_FORMAT}")
    return value.strip()


def addresses(body: dict[str, Any], name: str, required: bool = False) -> list[str] | None:
    value = body.get(name)
    if value is None:
        if required:
            raise missing_field(name)
        return None
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise invalid(f"The `{name}` field must be a `string` or an array of strings.")
    if required and not items:
        raise missing_field(name)
    if len(items) > MAX_RECIPIENTS:
        raise invalid(f"Too many recipients in the `{name}` field. The maximum is {MAX_RECIPIENTS}.")
    for item in items:
        if not valid_address(item):
            raise invalid(f"Invalid `{name}` field. {ADDRESS_FORMAT}")
    return [item.strip() for item in items]
