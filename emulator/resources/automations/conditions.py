"""Condition rule trees and variable references of automation steps (the Node SDK's `ConditionRule`
and `{var: ...}` types; the reference names only `type`, `field`, `operator`, `value`).

Fields and references are dotted paths into the run's context: `event.<key>` (also `payload.<key>`) is the
sent event's payload; `contact.<field>` is the contact (`email`, `first_name`, `last_name`, `unsubscribed`)
or one of its properties (`contact.plan`, also `contact.properties.plan`).
"""

from __future__ import annotations

from typing import Any

_MISSING = object()


def lookup(path: str, context: dict[str, Any]) -> Any:
    head, _, rest = path.partition(".")
    value: Any = context.get("event" if head == "payload" else head, _MISSING)
    for part in rest.split(".") if rest else []:
        value = value.get(part, _MISSING) if isinstance(value, dict) else _MISSING
    return None if value is _MISSING else value


def resolve(value: Any, context: dict[str, Any]) -> Any:
    """A literal as given; `{"var": "event.plan"}` as the value it names."""
    if isinstance(value, dict) and set(value) == {"var"} and isinstance(value["var"], str):
        return lookup(value["var"], context)
    return value


def _compare(operator: str, actual: Any, expected: Any) -> bool:
    if operator == "eq":
        return bool(actual == expected)
    if operator == "neq":
        return bool(actual != expected)
    if operator == "exists":
        return actual is not None
    if operator == "is_empty":
        return actual in (None, "", [], {})
    if operator in ("gt", "gte", "lt", "lte"):
        if (
            not isinstance(actual, int | float)
            or isinstance(actual, bool)
            or not isinstance(expected, int | float)
        ):
            return False
        return {
            "gt": actual > expected,
            "gte": actual >= expected,
            "lt": actual < expected,
            "lte": actual <= expected,
        }[operator]
    if not isinstance(actual, str) or not isinstance(expected, str):
        return False
    if operator == "contains":
        return expected in actual
    if operator == "starts_with":
        return actual.startswith(expected)
    return operator == "ends_with" and actual.endswith(expected)


def matches(rule: dict[str, Any], context: dict[str, Any]) -> bool:
    kind = rule.get("type")
    if kind in ("and", "or"):
        results = [matches(child, context) for child in rule.get("rules") or [] if isinstance(child, dict)]
        return all(results) if kind == "and" else any(results)
    return _compare(str(rule.get("operator")), lookup(str(rule.get("field")), context), rule.get("value"))
