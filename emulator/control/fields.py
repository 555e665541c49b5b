"""What a control-plane JSON body may hold: each route names its fields and their JSON types.

A field a route does not take, or a value of the wrong JSON type, is a 422 `validation_error` that
names the field, as the API answers (issue 25: `"count": -1` on a route whose field is `times` used to be
ignored and the rule created with its default). `null` counts as "not given": each route's own parser
then applies its default or its own rule. Ranges and allowed values stay with those parsers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from emulator.core.errors import invalid


class Kind(NamedTuple):
    description: str
    accepts: Callable[[Any], bool]


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    # NaN and ±Infinity (which Python's JSON reader accepts) are no numbers here; an integer too big for a
    # float is, and each route's range check refuses it.
    return _is_integer(value) or (isinstance(value, float) and math.isfinite(value))


def _is_amount(value: Any) -> bool:
    return _is_integer(value) or (isinstance(value, float) and not math.isnan(value))


STRING = Kind("a string", lambda value: isinstance(value, str))
INTEGER = Kind("an integer", _is_integer)
NUMBER = Kind("a finite number", _is_number)
# Infinity too, for a route that refuses an amount out of its range with its own, clearer message.
AMOUNT = Kind("a number", _is_amount)
BOOLEAN = Kind("a boolean", lambda value: isinstance(value, bool))
OBJECT = Kind("an object", lambda value: isinstance(value, dict))
ARRAY = Kind("an array", lambda value: isinstance(value, list))
ADDRESSES = Kind("an email address or an array of them",
                 lambda value: isinstance(value, str | list))

Spec = Mapping[str, Kind]


def check(body: dict[str, Any], spec: Spec) -> dict[str, Any]:
    """`body` unchanged when every field is one `spec` names, with a value of its kind (or null)."""
    for name, value in body.items():
        kind = spec.get(name)
        if kind is None:
            taken = ", ".join(f"`{field}`" for field in spec) or "no fields"
            raise invalid(f"Unknown field `{name[:100]}`. This route takes {taken}.")
        if value is not None and not kind.accepts(value):
            raise invalid(f"The `{name}` field must be {kind.description}.")
    return body
