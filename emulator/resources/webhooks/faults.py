"""Webhook failure injection and delivery settings (driven from /_emulator/webhooks/, see control/).

Tests script failures ("the next 2 attempts to this webhook answer 500") rather than hope for them:
a rule targets a webhook id, an endpoint URL, or every webhook, and is consumed attempt by attempt.
A seeded probabilistic mode exists for soak tests; its draws follow the attempt order, so a seed
replays the same failures. Faulted `status`, `timeout` and `refuse` attempts never reach the receiver
(the emulator answers for it); `delay` waits, then really delivers.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from emulator.core.errors import invalid

if TYPE_CHECKING:
    from emulator.core.db import Host
    from emulator.core.emulator import Emulator

ACTIONS = ("status", "timeout", "refuse", "delay")
DEFAULT_TIMEOUT_MS = 15_000  # undocumented for Resend (reference §8); Svix documents 15 s per attempt


@dataclass
class Fault:
    """What one attempt does instead of (or before) a real POST."""

    action: str
    status: int = 0
    body: str = ""
    delay_ms: int = 0


@dataclass
class Rule:
    id: str
    action: str
    remaining: int
    webhook_id: str | None = None
    url: str | None = None
    status: int = 0
    body: str = ""
    delay_ms: int = 0

    def matches(self, webhook_id: str, url: str) -> bool:
        return (self.webhook_id in (None, webhook_id)) and (self.url in (None, url))


@dataclass
class RandomMode:
    seed: int
    failure_rate: float
    statuses: list[int]
    timeout_rate: float = 0.0
    refuse_rate: float = 0.0
    webhook_id: str | None = None
    url: str | None = None
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def draw(self, webhook_id: str, url: str) -> Fault | None:
        if self.webhook_id not in (None, webhook_id) or self.url not in (None, url):
            return None
        roll = self.rng.random()
        if roll < self.timeout_rate:
            return Fault("timeout")
        if roll < self.timeout_rate + self.refuse_rate:
            return Fault("refuse")
        if roll < self.timeout_rate + self.refuse_rate + self.failure_rate:
            status = self.rng.choice(self.statuses)
            return Fault("status", status, _phrase(status))
        return None


@dataclass
class FaultBook:
    rules: list[Rule] = field(default_factory=list)
    random_mode: RandomMode | None = None
    counter: int = 0
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    retry_scale: float = 1.0

    def decide(self, webhook_id: str, url: str) -> Fault | None:
        """The fault for the next attempt to this webhook, consuming one use of the first matching rule."""
        for rule in self.rules:
            if rule.matches(webhook_id, url):
                rule.remaining -= 1
                if rule.remaining <= 0:
                    self.rules.remove(rule)
                return Fault(rule.action, rule.status, rule.body, rule.delay_ms)
        return self.random_mode.draw(webhook_id, url) if self.random_mode else None

    def describe(self) -> dict[str, Any]:
        mode = None
        if self.random_mode:
            mode = {k: v for k, v in asdict(self.random_mode).items() if k != "rng"}
        return {"rules": [asdict(rule) for rule in self.rules], "random": mode}


def book(emu: Host) -> FaultBook:
    found = emu.state.get("webhook_faults")
    if found is None:
        found = emu.state["webhook_faults"] = FaultBook()
    return found  # type: ignore[no-any-return]


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


# ---- parsing -----------------------------------------------------------------------------------

def int_field(body: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid(f"`{name}` must be an integer between {low} and {high}.")
    return value


def _rate(body: dict[str, Any], name: str) -> float:
    value = body.get(name, 0.0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise invalid(f"`{name}` must be a number between 0 and 1.")
    return float(value)


def _target(body: dict[str, Any]) -> tuple[str | None, str | None]:
    webhook_id, url = body.get("webhook_id"), body.get("url")
    for name, value in (("webhook_id", webhook_id), ("url", url)):
        if value is not None and not isinstance(value, str):
            raise invalid(f"`{name}` must be a string.")
    return webhook_id, url


def parse_rule(body: dict[str, Any], rule_id: str) -> Rule:
    action = body.get("action", "status")
    if action not in ACTIONS:
        raise invalid(f"`action` must be one of: {', '.join(ACTIONS)}.")
    webhook_id, url = _target(body)
    status = int_field(body, "status", 500, 100, 599) if action == "status" else 0
    text = body.get("body", _phrase(status))
    if not isinstance(text, str):
        raise invalid("`body` must be a string.")
    delay_ms = int_field(body, "delay_ms", 0, 0, 600_000) if action == "delay" else 0
    return Rule(rule_id, action, int_field(body, "count", 1, 1, 1_000_000), webhook_id, url, status, text,
                delay_ms)


def parse_random(body: dict[str, Any]) -> RandomMode:
    statuses = body.get("statuses", [500])
    if not isinstance(statuses, list) or not statuses or not all(
            isinstance(s, int) and not isinstance(s, bool) and 100 <= s <= 599 for s in statuses):
        raise invalid("`statuses` must be a non-empty list of HTTP status codes.")
    webhook_id, url = _target(body)
    seed = int_field(body, "seed", 0, 0, 2**63)
    return RandomMode(seed, _rate(body, "failure_rate"), statuses, _rate(body, "timeout_rate"),
                      _rate(body, "refuse_rate"), webhook_id, url, random.Random(seed))


async def _reset(emu: Emulator) -> None:
    emu.state["webhook_faults"] = FaultBook()


def install(emu: Emulator) -> None:
    book(emu)
    emu.reset_hooks.append(_reset)
