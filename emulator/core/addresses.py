"""Email address fields as Resend checks them: `x@y` or `Name <x@y>`, one at a time or in a list."""

from __future__ import annotations

import re
from typing import Any

from emulator.core.errors import invalid, missing_field

MAX_RECIPIENTS = 50  # `to` per the OpenAPI maxItems; cc/bcc/reply_to undocumented, same limit [rec]
_LOCAL = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+"
_DOMAIN = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z0-9-]{2,63}"
BARE_ADDRESS = re.compile(rf"^{_LOCAL}@{_DOMAIN}$")
NAMED_ADDRESS = re.compile(rf"^(?P<name>[^<>]*?)\s*<(?P<addr>{_LOCAL}@{_DOMAIN})>$")
ADDRESS_FORMAT = ("The email address needs to follow the `email@example.com` or"
                  " `Name <email@example.com>` format.")


def address_of(value: str) -> str:
    """The bare address of `x@y` or `Name <x@y>`."""
    match = NAMED_ADDRESS.match(value.strip())
    return match.group("addr") if match else value.strip()


def domain_of(value: str) -> str:
    return address_of(value).rpartition("@")[2].lower()


def valid_address(value: str) -> bool:
    value = value.strip()
    return bool(BARE_ADDRESS.match(value) or NAMED_ADDRESS.match(value))


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
