"""Signing a delivery the Svix (Standard Webhooks) way. Reference: webhooks.md §4.

`svix-signature: v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>` with the key after `whsec_`;
during a secret's 24 h rotation overlap, one signature per active secret, space-separated.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from emulator.core.clock import from_db

if TYPE_CHECKING:
    from emulator.core.db import Row

USER_AGENT = "Svix-Webhooks/1.0 (resend-emulator)"


@lru_cache(maxsize=256)
def _keyed(secret: str) -> hmac.HMAC:
    """An HMAC-SHA256 already keyed with `secret`'s key (the bytes after `whsec_`): copying it costs about
    half of keying afresh, once per delivery (issue 28)."""
    return hmac.new(base64.b64decode(secret.removeprefix("whsec_")), digestmod=hashlib.sha256)


def _signature(secret: str, signed: bytes) -> str:
    mac = _keyed(secret).copy()
    mac.update(signed)
    return "v1," + base64.b64encode(mac.digest()).decode()


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>` with the key after `whsec_`."""
    return _signature(secret, f"{message_id}.{timestamp}.".encode() + body)


def signature_header(secrets: list[str], message_id: str, timestamp: int, body: bytes) -> str:
    return " ".join(sign(secret, message_id, timestamp, body) for secret in secrets)


def active_secrets(webhook: Row, now: datetime) -> list[str]:
    """The current secret, then the previous one while its 24 h overlap lasts (on the clock)."""
    secrets = [webhook["secret"]]
    until = webhook["previous_until"]
    if webhook["previous_secret"] and until and from_db(until) > now:
        secrets.append(webhook["previous_secret"])
    return secrets


def build_headers(webhook: Row, message_id: str, now: datetime, body: bytes) -> dict[str, str]:
    # Stamped with the time of this attempt, not the event's: verifiers allow ±5 minutes.
    timestamp = str(int(now.timestamp()))
    signed = f"{message_id}.{timestamp}.".encode() + body
    signature = _signature(webhook["secret"], signed)
    until = webhook["previous_until"]
    if webhook["previous_secret"] and until and from_db(until) > now:  # as `active_secrets`
        signature += " " + _signature(webhook["previous_secret"], signed)
    return {
        "content-type": "application/json", "user-agent": USER_AGENT, "svix-id": message_id,
        "svix-timestamp": timestamp, "svix-signature": signature,
    }
