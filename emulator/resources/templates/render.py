"""Rendering a published template for a send. Reference: reference/templates.md, emails.md "Template sending".

Placeholders are triple-brace `{{{KEY}}}` (Mustache's unescaped form, so values go in verbatim). A
placeholder takes the send's value, else the variable's `fallback_value`; a declared variable with
neither refuses the send. Substitution is one pass: a value that itself contains `{{{X}}}` is not
expanded again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from emulator.core.errors import invalid

if TYPE_CHECKING:
    pass

PLACEHOLDER = re.compile(r"\{\{\{\s*([A-Za-z0-9_]+)\s*\}\}\}")
VARIABLE_KEY = re.compile(r"^[A-Za-z0-9_]{1,50}$")
MAX_STRING = 2000
MAX_NUMBER = 2**53 - 1

Value = str | int | float


class RenderedTemplate(NamedTuple):
    """The published version of a template with the send's variables applied.

    `from_`, `subject`, `reply_to` are the template's defaults (None when it has none); the sender's own
    fields override them. `text` None means the template has no text part of its own, so the caller
    generates one from `html` as for any email; `""` means the author opted out of plain text.
    """

    template_id: str
    from_: str | None
    subject: str | None
    reply_to: list[str] | None
    html: str
    text: str | None


# ---- values ------------------------------------------------------------------------------------

def format_value(value: Value) -> str:
    """How a value reads in the message; numbers as JavaScript prints them (`25`, not `25.0`)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def value_type(value: Any) -> str | None:
    """`string`, `number` or None (any other JSON type, booleans included, is not a variable value)."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "number"
    return None


def check_value(value: Any, field: str) -> Value:
    """A send-time or fallback value: a string of at most 2,000 characters or a safe-integer-sized number."""
    kind = value_type(value)
    if kind is None:
        raise invalid(f"Invalid `{field}` field. Template variable values must be a `string` or a `number`.")
    if kind == "string" and len(value) > MAX_STRING:
        raise invalid(f"Invalid `{field}` field. String values must be at most {MAX_STRING} characters.")
    if kind == "number" and (not math.isfinite(value) or abs(value) > MAX_NUMBER):
        raise invalid(f"Invalid `{field}` field. Numbers must be at most {MAX_NUMBER}.")
    return value  # type: ignore[no-any-return]


def check_send_variables(raw: Any) -> dict[str, Value]:
    """The `template.variables` object of a send: keys of ASCII letters, digits, `_` (≤ 50 characters)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise invalid("The `template.variables` field must be an `object`.")
    values: dict[str, Value] = {}
    for key, value in raw.items():
        if not VARIABLE_KEY.match(key):
            raise invalid(f"Invalid `template.variables` key `{key}`. Keys may only contain ASCII letters,"
                          " numbers and underscores, and be at most 50 characters long.")
        values[key] = check_value(value, f"template.variables.{key}")
    return values


# ---- rendering ---------------------------------------------------------------------------------

def resolve_values(declared: list[dict[str, Any]], given: dict[str, Value]) -> dict[str, Value]:
    """Values for every placeholder: the send's, else fallbacks. Declared types are enforced."""
    values = dict(given)
    missing: list[str] = []
    for variable in declared:
        key, kind = variable["key"], variable["type"]
        if key in given:
            if value_type(given[key]) != kind:
                raise invalid(f"Invalid `template.variables.{key}` field. The variable `{key}` is of type"
                              f" `{kind}`, but a `{value_type(given[key])}` was given.")
        elif variable.get("fallback_value") is not None:
            values[key] = variable["fallback_value"]
        else:
            missing.append(key)
    if missing:
        names = ", ".join(f"`{key}`" for key in missing)
        raise invalid(f"Missing template variables: {names}. Provide them in `template.variables`"
                      " or give them a `fallback_value`.")
    return values


def render(source: str, values: Mapping[str, Value]) -> str:
    """Replace each `{{{KEY}}}` that has a value; placeholders without one stay as written."""
    def substitute(match: re.Match[str]) -> str:
        key = match.group(1)
        return format_value(values[key]) if key in values else match.group(0)

    return PLACEHOLDER.sub(substitute, source)


def placeholders(source: str) -> list[str]:
    """Keys referenced in `source`, in order of first appearance."""
    return list(dict.fromkeys(PLACEHOLDER.findall(source)))
