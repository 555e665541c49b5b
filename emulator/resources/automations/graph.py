"""Validating an automation's steps and connections as a graph (reference logs-automations-events.md §2),
and reading durations like "30 minutes". Each refusal is a 422 `validation_error` naming the problem."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from emulator.core.errors import invalid, missing_field

STEP_TYPES = (
    "trigger",
    "send_email",
    "delay",
    "wait_for_event",
    "condition",
    "contact_update",
    "contact_delete",
    "add_to_segment",
)
CONNECTION_TYPES = ("default", "condition_met", "condition_not_met", "timeout", "event_received")
# Which connection types may leave a step of each type ([recommendation]: the documented meaning of each).
OUTGOING = {
    "condition": {"condition_met", "condition_not_met"},
    "wait_for_event": {"event_received", "timeout"},
}
MAX_STEPS = 150
_DURATION = re.compile(
    r"^\s*([0-9]{1,6})\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w)\s*$",
    re.IGNORECASE,
)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def duration(text: Any, field: str) -> timedelta:
    """ "30 minutes", "1 hour", "2 days", "45s" → a timedelta."""
    match = _DURATION.match(text) if isinstance(text, str) else None
    if match is None:
        raise invalid(f"Invalid `{field}`: use a duration like `30 minutes`, `1 hour` or `2 days`.")
    unit = match.group(2).lower()
    return timedelta(seconds=int(match.group(1)) * _UNITS[unit[0]])


def _check_config(step: dict[str, Any], where: str) -> None:
    config, kind = step["config"], step["type"]
    if kind in ("trigger", "wait_for_event") and not isinstance(config.get("event_name"), str):
        raise invalid(f"{where}: a `{kind}` step needs `config.event_name`.")
    if kind == "delay":
        duration(config.get("duration"), f"{where}.config.duration")
    if kind == "wait_for_event" and config.get("timeout") is not None:
        duration(config["timeout"], f"{where}.config.timeout")
    if kind == "send_email":
        template = config.get("template")
        if not isinstance(template, dict) or not isinstance(template.get("id"), str):
            raise invalid(f"{where}: a `send_email` step needs `config.template.id`.")
        if not isinstance(template.get("variables") or {}, dict):
            raise invalid(f"{where}: `config.template.variables` must be an object.")
    if kind == "add_to_segment" and not isinstance(config.get("segment_id"), str):
        raise invalid(f"{where}: an `add_to_segment` step needs `config.segment_id`.")
    if kind == "condition":
        _check_rule(config, f"{where}.config")
    if kind == "wait_for_event" and config.get("filter_rule") is not None:
        _check_rule(config["filter_rule"], f"{where}.config.filter_rule")


# The operators of the SDKs' `ConditionRule` type; `exists` and `is_empty` take no value.
OPERATORS = ("eq", "neq", "gt", "gte", "lt", "lte", "contains", "starts_with", "ends_with", "exists",
             "is_empty")
UNARY = ("exists", "is_empty")


def _check_rule(rule: Any, where: str) -> None:
    """A rule tree as the runner evaluates it: an unknown operator or an empty `and` would otherwise be
    silently false or true on every run."""
    kind = rule.get("type") if isinstance(rule, dict) else None
    if kind not in ("rule", "and", "or"):
        raise invalid(f"{where}: a condition needs a rule tree (`type` rule, and or or).")
    if kind in ("and", "or"):
        rules = rule.get("rules")
        if not isinstance(rules, list) or not rules:
            raise invalid(f"{where}: an `{kind}` rule needs a non-empty `rules` array.")
        for index, child in enumerate(rules):
            _check_rule(child, f"{where}.rules[{index}]")
        return
    if not isinstance(rule.get("field"), str) or not rule["field"]:
        raise invalid(f"{where}: a rule needs a `field` such as `contact.plan` or `event.total`.")
    if rule.get("operator") not in OPERATORS:
        raise invalid(f"{where}.operator must be one of: {', '.join(OPERATORS)}.")
    if rule["operator"] not in UNARY and "value" not in rule:
        raise invalid(f"{where}: the `{rule['operator']}` operator needs a `value`.")


def _steps(steps: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(steps, list):
        raise invalid("The `steps` field must be an `array`.")
    if not 1 <= len(steps) <= MAX_STEPS:
        raise invalid(f"An automation must have between 1 and {MAX_STEPS} steps.")
    by_key: dict[str, dict[str, Any]] = {}
    for index, step in enumerate(steps):
        where = f"steps[{index}]"
        if not isinstance(step, dict) or not isinstance(step.get("key"), str) or not step["key"]:
            raise invalid(f"{where}: each step needs a string `key`.")
        if step.get("type") not in STEP_TYPES:
            raise invalid(f"{where}: `type` must be one of: {', '.join(STEP_TYPES)}.")
        if step["key"] in by_key:
            raise invalid(f"Duplicate step key `{step['key']}`: step keys must be unique.")
        step = {"key": step["key"], "type": step["type"], "config": step.get("config") or {}}
        if not isinstance(step["config"], dict):
            raise invalid(f"{where}: `config` must be an object.")
        _check_config(step, where)
        by_key[step["key"]] = step
    triggers = [key for key, step in by_key.items() if step["type"] == "trigger"]
    if len(triggers) != 1:
        raise invalid(f"An automation must have exactly one `trigger` step; found {len(triggers)}.")
    return by_key


def _connections(connections: Any, steps: dict[str, dict[str, Any]]) -> list[dict[str, str]]:
    if not isinstance(connections, list):
        raise invalid("The `connections` field must be an `array`.")
    checked = []
    for index, connection in enumerate(connections):
        if not isinstance(connection, dict):
            raise invalid(f"connections[{index}] must be an object with `from` and `to`.")
        kind = connection.get("type") or "default"
        for end in ("from", "to"):
            if connection.get(end) not in steps:
                raise invalid(f"connections[{index}].{end}: `{connection.get(end)}` is not a step key.")
        if kind not in CONNECTION_TYPES:
            raise invalid(f"connections[{index}].type must be one of: {', '.join(CONNECTION_TYPES)}.")
        source = steps[connection["from"]]["type"]
        allowed = OUTGOING.get(source, {"default"})
        if kind not in allowed:
            raise invalid(
                f"connections[{index}]: a `{source}` step cannot have a `{kind}` connection"
                f" (allowed: {', '.join(sorted(allowed))})."
            )
        if steps[connection["to"]]["type"] == "trigger":
            raise invalid(f"connections[{index}]: no connection may lead into the trigger step.")
        checked.append({"from": connection["from"], "to": connection["to"], "type": kind})
    return checked


def validate_graph(body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, str]], str]:
    """(steps, connections, trigger event name) of a valid graph, else the 422 naming the problem."""
    if body.get("steps") is None:
        raise missing_field("steps")
    if body.get("connections") is None:
        raise missing_field("connections")
    steps = _steps(body["steps"])
    connections = _connections(body["connections"], steps)
    trigger = next(step for step in steps.values() if step["type"] == "trigger")
    return list(steps.values()), connections, str(trigger["config"]["event_name"])
