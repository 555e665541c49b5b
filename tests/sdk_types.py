"""Does an answer carry what the official Python SDK's types declare? Every required key of a TypedDict,
nested TypedDicts and lists of them, and the declared primitive types and literals, all the way down."""

from __future__ import annotations

import types
import typing
from typing import Any

from typing_extensions import is_typeddict

from tests.templates_helpers import plain

# The SDK adds `http_headers` to every dict response client-side; it is never on the wire.
CLIENT_SIDE = {"http_headers"}


def _union_problems(options: tuple[Any, ...], value: Any, where: str) -> list[str]:
    attempts = [problems(option, value, where) for option in options]
    return [] if any(not found for found in attempts) else min(attempts, key=len)


def problems(declared: Any, value: Any, where: str = "body") -> list[str]:
    """What in `value` disagrees with the SDK type `declared` (an empty list when it conforms)."""
    origin = typing.get_origin(declared)
    if declared is Any or declared is object:
        return []
    if declared is type(None) or declared is None:
        return [] if value is None else [f"{where}: expected null, got {value!r}"]
    if origin in (typing.Union, types.UnionType):
        return _union_problems(typing.get_args(declared), value, where)
    if origin is typing.Literal:
        return [] if value in typing.get_args(declared) else [f"{where}: {value!r} not in {declared}"]
    if origin in (list, typing.List):  # noqa: UP006 - the SDK's own spelling
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {value!r}"]
        (item,) = typing.get_args(declared) or (Any,)
        return [found for n, entry in enumerate(value) for found in problems(item, entry, f"{where}[{n}]")]
    if origin in (dict, typing.Dict):  # noqa: UP006
        return [] if isinstance(value, dict) else [f"{where}: expected an object, got {value!r}"]
    if is_typeddict(declared):
        return _typeddict_problems(declared, value, where)
    if declared is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif declared is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, declared)
    return [] if ok else [f"{where}: expected {declared.__name__}, got {value!r}"]


def _typeddict_problems(declared: Any, value: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: expected {declared.__name__}, got {value!r}"]
    hints = typing.get_type_hints(declared)
    required = set(getattr(declared, "__required_keys__", hints)) - CLIENT_SIDE
    found = [f"{where}.{key}: missing" for key in sorted(required - set(value))]
    for key, hint in hints.items():
        if key in value and key not in CLIENT_SIDE:
            found += problems(hint, value[key], f"{where}.{key}")
    return found


def declared(sdk_type: Any, body: Any) -> Any:
    """`body` (an SDK answer) after asserting it conforms to `sdk_type`; returned for chaining."""
    found = problems(sdk_type, body, sdk_type.__name__)
    assert not found, found
    return body


def keys_declared(sdk_type: Any, body: Any, *, but: frozenset[str] = frozenset(),
                  every_key: bool = False) -> Any:
    """`body` as the wire body, after checking it has every required key of `sdk_type` (with `every_key`,
    every key it declares; `but`: keys a [rec] fact says the real service does not send). Shallow: for
    the whole tree use `declared`."""
    expected = set(sdk_type.__annotations__ if every_key else sdk_type.__required_keys__)
    missing = expected - CLIENT_SIDE - but - set(body)
    assert not missing, (sdk_type.__name__, missing)
    return plain(body)
