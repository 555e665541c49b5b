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
def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix("whsec_"))


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>` with the key after `whsec_`."""
    digest = hmac.digest(_key(secret), f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256)
    return "v1," + base64.b64encode(digest).decode()


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
    timestamp = int(now.timestamp())
    return {
        "content-type": "application/json", "user-agent": USER_AGENT, "svix-id": message_id,
        "svix-timestamp": str(timestamp),
        "svix-signature": signature_header(active_secrets(webhook, now), message_id, timestamp, body),
    }
