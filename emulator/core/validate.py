"""Small field checkers. Each raises the Resend-shaped error the real API reports for that field."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from emulator.core.errors import invalid, missing_field


def required(body: dict[str, Any], field: str) -> Any:
    if body.get(field) is None:
        raise missing_field(field)
    return body[field]


def string(body: dict[str, Any], field: str, *, required_: bool = False, max_len: int | None = None,
           allow_empty: bool = True) -> str | None:
    value = required(body, field) if required_ else body.get(field)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(f"The `{field}` field must be a `string`.")
    if not allow_empty and not value.strip():
        raise invalid(f"The `{field}` field must not be empty.")
    if max_len is not None and len(value) > max_len:
        raise invalid(f"The `{field}` field must be at most {max_len} characters.")
    return value


def boolean(body: dict[str, Any], field: str) -> bool | None:
    value = body.get(field)
    if value is not None and not isinstance(value, bool):
        raise invalid(f"The `{field}` field must be a `boolean`.")
    return value


def one_of(body: dict[str, Any], field: str, choices: Iterable[str]) -> str | None:
    value = string(body, field)
    allowed = list(choices)
    if value is not None and value not in allowed:
        options = ", ".join(f"`{choice}`" for choice in allowed)
        raise invalid(f"Invalid `{field}` field. Must be one of: {options}.")
    return value


def integer(body: dict[str, Any], field: str, *, minimum: int | None = None,
            maximum: int | None = None) -> int | None:
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(f"The `{field}` field must be a `number`.")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise invalid(f"The `{field}` field must be between {minimum} and {maximum}.")
    return value


def obj(body: dict[str, Any], field: str) -> dict[str, Any] | None:
    value = body.get(field)
    if value is not None and not isinstance(value, dict):
        raise invalid(f"The `{field}` field must be an `object`.")
    return value
