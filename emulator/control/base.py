"""The control plane under /_emulator/: health, reset, clock, job flush. Never shadows a Resend path.

Test suites in any language drive the emulator through these JSON endpoints (documented in README).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.ops import emulator_of, json_response
from emulator.control import fields
from emulator.control.fields import AMOUNT, STRING, Spec
from emulator.core import errors, jsontext
from emulator.core.clock import check
from emulator.core.errors import ApiError
from emulator.core.typed import instant

PREFIX = "/_emulator"
INSTANT: Spec = {"at": STRING}
ADVANCE_UNITS = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400, "ms": 0.001}
ADVANCE: Spec = dict.fromkeys(ADVANCE_UNITS, AMOUNT)  # the clock names its range for ±Infinity


async def body_of(request: Request, spec: Spec) -> dict[str, Any]:
    """The JSON object a control route was sent, holding only the fields `spec` names (control/fields.py)."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = await jsontext.parse_async(raw)
    except jsontext.BodyError as exc:
        raise ApiError(errors.MALFORMED_BODY, str(exc)) from None
    if not isinstance(body, dict):
        raise ApiError(errors.MALFORMED_BODY, "The request body must be a JSON object.")
    return fields.check(body, spec)


def _instant(body: dict[str, Any], field: str) -> Any:
    value = body.get(field)
    if not isinstance(value, str):
        raise errors.invalid(f"`{field}` must be an ISO 8601 timestamp.")
    return instant(value, field)


def _seconds(body: dict[str, Any]) -> float:
    total = 0.0
    for name, factor in ADVANCE_UNITS.items():
        value = body.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise errors.invalid(f"`{name}` must be a non-negative number.")
        try:
            total += float(value) * factor
        except OverflowError:  # an integer beyond any float: the clock refuses it as out of range
            total = math.inf
    return total


async def health(request: Request) -> Response:
    emu = emulator_of(request)
    return json_response({"status": "ok", "clock": emu.clock.state(), "seed": emu.settings.seed})


async def reset(request: Request) -> Response:
    await emulator_of(request).reset()
    return json_response({"reset": True})


async def clock_get(request: Request) -> Response:
    return json_response(emulator_of(request).clock.state())


def _move(change: Callable[[], Any]) -> Any:
    try:
        return change()
    except ValueError as exc:
        raise errors.invalid(str(exc)) from None


async def clock_freeze(request: Request) -> Response:
    emu, body = emulator_of(request), await body_of(request, INSTANT)
    _move(lambda: emu.clock.freeze(_instant(body, "at") if "at" in body else None))
    await emu.jobs.flush()
    return json_response(emu.clock.state())


async def clock_unfreeze(request: Request) -> Response:
    emu = emulator_of(request)
    emu.clock.unfreeze()
    await emu.jobs.flush()  # also writes the clock's new state
    return json_response(emu.clock.state())


async def clock_set(request: Request) -> Response:
    emu, body = emulator_of(request), await body_of(request, INSTANT)
    at = _move(lambda: check(_instant(body, "at")))
    if at <= emu.clock.now():
        emu.clock.set(at)  # back in time: nothing falls due on the way
        await emu.jobs.flush()
    else:
        await emu.jobs.run_until(at)
    return json_response(emu.clock.state())


async def clock_advance(request: Request) -> Response:
    """Move time forward and run everything that became due on the way (import steps, broadcasts,
    scheduled sends, delays, retries), in due order, before replying."""
    emu, body = emulator_of(request), await body_of(request, ADVANCE)
    seconds = _seconds(body)
    await emu.jobs.run_until(_move(lambda: emu.clock.after(seconds)))
    return json_response(emu.clock.state())


async def flush(request: Request) -> Response:
    await emulator_of(request).jobs.flush()
    return json_response({"flushed": True})


ROUTES = [
    Route(f"{PREFIX}/health", health, methods=["GET"]),
    Route(f"{PREFIX}/reset", reset, methods=["POST"]),
    Route(f"{PREFIX}/clock", clock_get, methods=["GET"]),
    Route(f"{PREFIX}/clock/freeze", clock_freeze, methods=["POST"]),
    Route(f"{PREFIX}/clock/unfreeze", clock_unfreeze, methods=["POST"]),
    Route(f"{PREFIX}/clock/set", clock_set, methods=["POST"]),
    Route(f"{PREFIX}/clock/advance", clock_advance, methods=["POST"]),
    Route(f"{PREFIX}/flush", flush, methods=["POST"]),
]
