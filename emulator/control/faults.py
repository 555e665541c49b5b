"""Scripted failures of the Resend API itself, under /_emulator/faults.

A rule says "the next N requests matching method + path (+ account) answer this Resend error, and/or
are delayed by M ms", so a test of retry code fails exactly where it means to — never by chance.

    POST   /_emulator/faults        {"method": "POST", "path": "/emails", "error": "rate_limit_exceeded",
                                     "times": 2}                                      → 201 the rule
    GET    /_emulator/faults        every rule, with `matched` and `remaining`
    DELETE /_emulator/faults        remove every rule
    DELETE /_emulator/faults/{id}   remove one

Rules are checked in the order they were added, after authentication (emulator/api/pipeline.py calls the
`before_op` hooks), so a faulted request still needs a valid key, like on the real edge. Every
injected answer carries `x-emulator-fault: <rule id>` so a failing test shows why it failed.
Exhausted rules stay listed (remaining 0) until cleared or reset: the list explains past answers.
"""

from __future__ import annotations

import asyncio
import fnmatch
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from emulator.api.auth import selected_account
from emulator.api.ops import emulator_of, json_response
from emulator.api.ratelimit import ADVERTISED_LIMIT, headers_for
from emulator.control.base import PREFIX, body_of
from emulator.control.fields import INTEGER, STRING, Spec
from emulator.core import errors
from emulator.core.errors import ApiError, ErrorKind, invalid, not_found

if TYPE_CHECKING:
    from emulator.api.auth import Credential
    from emulator.api.ops import ApiCall, Op
    from emulator.core.emulator import Emulator

FAULT_HEADER = "x-emulator-fault"
METHODS = {"*", "GET", "POST", "PATCH", "PUT", "DELETE"}
MAX_DELAY_MS = 600_000
RULE: Spec = {"method": STRING, "path": STRING, "error": STRING, "status": INTEGER, "message": STRING,
              "delay_ms": INTEGER, "times": INTEGER, "retry_after": INTEGER, "account": STRING,
              "api_key": STRING}


@dataclass
class Rule:
    id: str
    method: str
    path: str
    remaining: int | None  # None: until cleared
    delay_ms: int = 0
    status: int | None = None
    error: str | None = None
    message: str | None = None
    retry_after: int | None = None
    account: str | None = None
    matched: int = 0

    def matches(self, method: str, path: str, op_path: str, account: str | None) -> bool:
        if self.remaining == 0:
            return False
        if self.method not in ("*", method) or self.account not in (None, account):
            return False
        return self.path == op_path or fnmatch.fnmatchcase(path, self.path)

    def describe(self) -> dict[str, Any]:
        return {"object": "api_fault", **asdict(self)}


class FaultBook:
    def __init__(self) -> None:
        self.rules: list[Rule] = []
        self.counter = 0

    def add(self, rule: Rule) -> Rule:
        self.rules.append(rule)
        return rule

    def next_id(self) -> str:
        self.counter += 1
        return f"fault_{self.counter}"

    def take(self, method: str, path: str, op_path: str, account: str | None) -> Rule | None:
        """The first live rule for this request, with one use consumed."""
        for rule in self.rules:
            if rule.matches(method, path, op_path, account):
                rule.matched += 1
                if rule.remaining is not None:
                    rule.remaining -= 1
                return rule
        return None


def book(emu: Emulator) -> FaultBook:
    found = emu.state.get("api_faults")
    if found is None:
        found = emu.state["api_faults"] = FaultBook()
    return found  # type: ignore[no-any-return]


# ---- the hook in the request pipeline ----------------------------------------------------------

async def before_op(emu: Emulator, op: Op, request: ApiCall, credential: Credential | None) -> None:
    if not book(emu).rules:
        return
    account = credential.account if credential else None
    rule = book(emu).take(request.method, request.scope["path"], op.path, account)
    if rule is None:
        return
    if rule.delay_ms:
        # A delay fault is real waiting by design: the client's timeout handling is what is tested.
        await asyncio.sleep(rule.delay_ms / 1000)
    if rule.status is not None:
        raise _error_for(rule, emu.settings.rate_limit or ADVERTISED_LIMIT)
    # A delay alone lets the request through; emulator/api/pipeline.py adds these headers to its answer.
    request.response_headers = {FAULT_HEADER: rule.id}


def _error_for(rule: Rule, limit: int) -> ApiError:
    kind = _kind(rule.error or "", rule.status or 0)
    assert kind is not None  # checked when the rule was added
    headers = {FAULT_HEADER: rule.id}
    if kind is errors.RATE_LIMIT_EXCEEDED:
        # What the real 429 carries: the spent window and when to come back (00-general.md §5).
        retry = rule.retry_after or 1
        headers.update(headers_for(limit, 0, retry))
        headers["retry-after"] = str(retry)
    elif kind.status == 503 and rule.retry_after:
        headers["retry-after"] = str(rule.retry_after)
    return ApiError(kind, rule.message, headers)


def _kind(name: str, status: int) -> ErrorKind | None:
    if status:
        return errors.find_kind(name, status)
    named = [kind for kind in errors.CATALOGUE.values() if kind.name == name]
    return named[0] if len(named) == 1 else None


# ---- the control routes ------------------------------------------------------------------------

def _int(body: dict[str, Any], field: str, low: int, high: int) -> int | None:
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid(f"`{field}` must be an integer between {low} and {high}.")
    return value


def _text(body: dict[str, Any], field: str) -> str | None:
    value = body.get(field)
    if value is not None and (not isinstance(value, str) or not value):
        raise invalid(f"`{field}` must be a non-empty string.")
    return value


def _error_kind(body: dict[str, Any]) -> ErrorKind | None:
    name, status = _text(body, "error"), _int(body, "status", 400, 599)
    if name is None and status is None:
        return None
    if name is None:
        matching = [kind for kind in errors.CATALOGUE.values() if kind.status == status]
        if not matching:
            raise invalid(f"No Resend error has status {status}; name one with `error`.")
        return matching[0]
    kind = _kind(name, status or 0)
    if kind is None:
        known = sorted({kind.name for kind in errors.CATALOGUE.values()})
        raise invalid(f"`error` must name one Resend error (give `status` when several share the name):"
                      f" {', '.join(known)}.")
    return kind


def _account(emu: Emulator, body: dict[str, Any]) -> str | None:
    return selected_account(emu, _text(body, "account"), _text(body, "api_key"))


def parse_rule(emu: Emulator, body: dict[str, Any]) -> Rule:
    method = (_text(body, "method") or "*").upper()
    if method not in METHODS:
        raise invalid(f"`method` must be one of: {', '.join(sorted(METHODS))}.")
    path = _text(body, "path")
    if path is None or not path.startswith("/"):
        raise invalid("`path` must be a path starting with `/` (globs such as `/emails/*` allowed).")
    kind = _error_kind(body)
    delay = _int(body, "delay_ms", 0, MAX_DELAY_MS) or 0
    if kind is None and not delay:
        raise invalid("A rule needs an `error` (or `status`), a `delay_ms`, or both.")
    times = _int(body, "times", 1, 1_000_000) if "times" in body else 1
    return Rule(
        id=book(emu).next_id(), method=method, path=path, remaining=times, delay_ms=delay,
        status=kind.status if kind else None, error=kind.name if kind else None,
        message=_text(body, "message"), retry_after=_int(body, "retry_after", 1, 3600),
        account=_account(emu, body),
    )


async def add_rule(request: Request) -> Response:
    emu = emulator_of(request)
    rule = book(emu).add(parse_rule(emu, await body_of(request, RULE)))
    return json_response(rule.describe(), 201)


async def list_rules(request: Request) -> Response:
    rules = [rule.describe() for rule in book(emulator_of(request)).rules]
    return json_response({"object": "list", "has_more": False, "data": rules})


async def clear_rules(request: Request) -> Response:
    book(emulator_of(request)).rules.clear()
    return json_response({"object": "list", "deleted": True})


async def remove_rule(request: Request) -> Response:
    rules, rule_id = book(emulator_of(request)).rules, request.path_params["rule_id"]
    found = [rule for rule in rules if rule.id == rule_id]
    if not found:
        raise not_found("Fault rule")
    rules.remove(found[0])
    return json_response({"object": "api_fault", "id": rule_id, "deleted": True})


async def _reset(emu: Emulator) -> None:
    emu.state["api_faults"] = FaultBook()


def install(emu: Emulator) -> None:
    book(emu)
    emu.state.setdefault("before_op", []).append(before_op)
    emu.reset_hooks.append(_reset)


ROUTES = [
    Route(f"{PREFIX}/faults", list_rules, methods=["GET"]),
    Route(f"{PREFIX}/faults", add_rule, methods=["POST"]),
    Route(f"{PREFIX}/faults", clear_rules, methods=["DELETE"]),
    Route(f"{PREFIX}/faults/{{rule_id}}", remove_rule, methods=["DELETE"]),
]
