"""`/_emulator/webhooks/…`: scripted webhook failures, delivery settings and flush."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.ops import emulator_of, json_response
from emulator.control.base import PREFIX, body_of
from emulator.control.fields import ARRAY, INTEGER, NUMBER, STRING, Spec
from emulator.core.errors import invalid, not_found
from emulator.resources.webhooks.faults import (
    DEFAULT_TIMEOUT_MS,
    FaultBook,
    book,
    int_field,
    parse_random,
    parse_rule,
)

TARGET: Spec = {"webhook_id": STRING, "url": STRING}
RULE: Spec = {**TARGET, "action": STRING, "status": INTEGER, "body": STRING, "delay_ms": INTEGER,
              "count": INTEGER}
RANDOM: Spec = {**TARGET, "seed": INTEGER, "statuses": ARRAY, "failure_rate": NUMBER, "timeout_rate": NUMBER,
                "refuse_rate": NUMBER}
CONFIG: Spec = {"timeout_ms": INTEGER, "retry_scale": NUMBER}


async def list_faults(request: Request) -> Response:
    return json_response(book(emulator_of(request)).describe())


async def add_rule(request: Request) -> Response:
    faults = book(emulator_of(request))
    rule = parse_rule(await body_of(request, RULE), f"wflt_{faults.counter + 1}")
    faults.counter += 1
    faults.rules.append(rule)
    return json_response(asdict(rule), 201)


async def clear_faults(request: Request) -> Response:
    faults = book(emulator_of(request))
    faults.rules.clear()
    faults.random_mode = None
    return json_response(faults.describe())


async def remove_rule(request: Request) -> Response:
    faults = book(emulator_of(request))
    rule_id = request.path_params["rule_id"]
    kept = [rule for rule in faults.rules if rule.id != rule_id]
    if len(kept) == len(faults.rules):
        raise not_found("Fault rule")
    faults.rules = kept
    return json_response({"id": rule_id, "deleted": True})


async def set_random(request: Request) -> Response:
    faults = book(emulator_of(request))
    faults.random_mode = parse_random(await body_of(request, RANDOM))
    return json_response(faults.describe())


async def clear_random(request: Request) -> Response:
    faults = book(emulator_of(request))
    faults.random_mode = None
    return json_response(faults.describe())


def _config(faults: FaultBook) -> dict[str, Any]:
    return {"timeout_ms": faults.timeout_ms, "retry_scale": faults.retry_scale}


async def get_config(request: Request) -> Response:
    return json_response(_config(book(emulator_of(request))))


async def set_config(request: Request) -> Response:
    """`timeout_ms` per attempt; `retry_scale` multiplies the retry delays (1 = Resend's schedule)."""
    faults, body = book(emulator_of(request)), await body_of(request, CONFIG)
    if "timeout_ms" in body:
        faults.timeout_ms = int_field(body, "timeout_ms", DEFAULT_TIMEOUT_MS, 1, 600_000)
    if "retry_scale" in body:
        scale = body["retry_scale"]
        if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 <= scale <= 1000:
            raise invalid("`retry_scale` must be a number between 0 and 1000.")
        faults.retry_scale = float(scale)
    return json_response(_config(faults))


async def flush(request: Request) -> Response:
    """Deliver everything due now (retries made due by a clock move too) and return once all
    attempts, HTTP included, are recorded."""
    await emulator_of(request).jobs.flush()
    return json_response({"flushed": True})


_BASE = f"{PREFIX}/webhooks"
ROUTES = [
    Route(f"{_BASE}/faults", list_faults, methods=["GET"]),
    Route(f"{_BASE}/faults", add_rule, methods=["POST"]),
    Route(f"{_BASE}/faults", clear_faults, methods=["DELETE"]),
    Route(f"{_BASE}/faults/random", set_random, methods=["POST", "PUT"]),
    Route(f"{_BASE}/faults/random", clear_random, methods=["DELETE"]),
    Route(f"{_BASE}/faults/{{rule_id}}", remove_rule, methods=["DELETE"]),
    Route(f"{_BASE}/config", get_config, methods=["GET"]),
    Route(f"{_BASE}/config", set_config, methods=["POST", "PATCH"]),
    Route(f"{_BASE}/flush", flush, methods=["POST"]),
]
