"""Validation of template create/update bodies. Reference: reference/templates.md §1, §4.

Checks run in the order the fields are documented; each failure is the Resend-shaped error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.core import addresses, validate
from emulator.core.errors import invalid, missing_field
from emulator.resources.templates.render import VARIABLE_KEY, check_value, value_type

MAX_VARIABLES = 50
VARIABLE_TYPES = ["string", "number"]
# The union of every list the sources give (seed, create-template, send-email/template-variables
# pages), case-sensitive as written: reference 00-general.md §10.
RESERVED_KEYS = frozenset({
    "FIRST_NAME", "LAST_NAME", "EMAIL", "UNSUBSCRIBE_URL", "RESEND_UNSUBSCRIBE_URL",
    "SERVICE_UNSUBSCRIBE_URL", "contact", "this",
})


def sender(body: dict[str, Any]) -> str | None:
    # The same address rules as a send's `from`, so a template default can never fail at send time.
    return addresses.sender(body, required=False)


def reply_to(body: dict[str, Any]) -> list[str] | None:
    """A string or an array of strings (docs + SDKs; OpenAPI shows only the array); stored as a list."""
    return addresses.addresses(body, "reply_to")


def alias(body: dict[str, Any]) -> str | None:
    value = validate.string(body, "alias")
    if value is not None and not value.strip():
        raise invalid("The `alias` field must not be empty.")
    return value


def name(body: dict[str, Any], required: bool) -> str | None:
    if not required and "name" in body and body["name"] is None:
        raise invalid("The `name` field must be a `string`.")
    value = validate.string(body, "name", required_=required)
    if value is not None and not value.strip():
        raise invalid("The `name` field must not be empty.")
    return value


def html(body: dict[str, Any], required: bool) -> str | None:
    if not required and "html" in body and body["html"] is None:
        raise invalid("The `html` field must be a `string`.")
    return validate.string(body, "html", required_=required)


# ---- variables ---------------------------------------------------------------------------------

def _variable_key(item: dict[str, Any], field: str) -> str:
    key = item.get("key")
    if key is None:
        raise missing_field(f"{field}.key")
    if not isinstance(key, str) or not VARIABLE_KEY.match(key):
        raise invalid(f"Invalid `{field}.key` field. Keys may only contain ASCII letters, numbers and"
                      " underscores, and be at most 50 characters long.")
    if key in RESERVED_KEYS:
        raise invalid(f"Invalid `{field}.key` field. `{key}` is a reserved variable name and cannot be used.")
    return key


def _variable_type(item: dict[str, Any], field: str) -> str:
    kind = item.get("type")
    if kind is None:
        raise missing_field(f"{field}.type")
    if kind not in VARIABLE_TYPES:
        raise invalid(f"Invalid `{field}.type` field. Must be one of: `string`, `number`.")
    return str(kind)


def _fallback(item: dict[str, Any], field: str, kind: str) -> Any:
    # The Node SDK sends `fallback_value: null` for "no fallback".
    value = item.get("fallback_value")
    if value is None:
        return None
    if value_type(value) != kind:
        raise invalid(f"Invalid `{field}.fallback_value` field. It must match the variable type `{kind}`.")
    return check_value(value, f"{field}.fallback_value")


def variable(item: Any, index: int) -> dict[str, Any]:
    field = f"variables[{index}]"
    if not isinstance(item, dict):
        raise invalid(f"The `{field}` field must be an `object`.")
    key = _variable_key(item, field)
    kind = _variable_type(item, field)
    return {"key": key, "type": kind, "fallback_value": _fallback(item, field, kind)}


def variables(body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """`variables` as `[{key, type, fallback_value}]`, or None when the body has none."""
    raw = body.get("variables")
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise invalid("The `variables` field must be an `array`.")
    if len(raw) > MAX_VARIABLES:
        raise invalid(f"Invalid `variables` field. A template may have at most {MAX_VARIABLES} variables.")
    parsed = [variable(item, index) for index, item in enumerate(raw)]
    seen: set[str] = set()
    for item in parsed:
        if item["key"] in seen:
            raise invalid(f"Invalid `variables` field. The key `{item['key']}` is used more than once.")
        seen.add(item["key"])
    return parsed


# ---- whole bodies ------------------------------------------------------------------------------

def content(body: dict[str, Any], creating: bool) -> dict[str, Any]:
    """The versioned fields present in `body` (all of them when creating), validated."""
    parsed: dict[str, Any] = {}
    html_value = html(body, required=creating)
    if creating or "html" in body:
        parsed["html"] = html_value
    checks: dict[str, Callable[[dict[str, Any]], Any]] = {
        "from": sender, "subject": lambda b: validate.string(b, "subject"), "reply_to": reply_to,
        "text": lambda b: validate.string(b, "text"), "variables": variables,
    }
    for field, check in checks.items():
        value = check(body)
        if creating or field in body:
            parsed[field] = value
    if creating and parsed["variables"] is None:
        parsed["variables"] = []
    return parsed


def create_body(body: dict[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
    """(name, alias, content) of a create request; `name` then `html` are the required fields."""
    template_name = name(body, required=True)
    assert template_name is not None
    if body.get("html") is None:
        raise missing_field("html")
    return template_name, alias(body), content(body, creating=True)
