"""Emails: send, batch, schedule, render, deliver. Reference: reference/emails.md.

`service` is what other groups and side channels call (`send_email`, `serialize_email`, `email_eml`,
`store`); the package also offers the `EmailDraft` that `store` takes, `parse_scheduled_at`, and the
account's quota use (`quota_usage`).
"""

from __future__ import annotations

from typing import Any

from emulator.core.quota import LOADER
from emulator.resources.emails import attachments, metrics, outcomes, quota, scripted, service, tracking
from emulator.resources.emails.fields import EmailDraft
from emulator.resources.emails.fields import attachments as parse_attachments
from emulator.resources.emails.quota import usage as quota_usage
from emulator.resources.emails.schedule import parse_scheduled_at, requested_schedule

TABLES = [*service.TABLES, *tracking.TABLES, *scripted.TABLES]
OPS = [*service.OPS, *metrics.OPS, *attachments.OPS]


def install(emu: Any) -> None:
    outcomes.install(emu)
    emu.state[LOADER] = quota.usage


__all__ = ["OPS", "TABLES", "EmailDraft", "install", "parse_attachments", "parse_scheduled_at", "quota_usage",
           "requested_schedule"]
