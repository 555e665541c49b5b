"""Emails: send, batch, schedule, render, deliver. Reference: reference/emails.md.

`service` is what other groups and side channels call (`send_email`, `serialize_email`, `email_eml`).
"""

from __future__ import annotations

from typing import Any

from emulator.resources.emails import attachments, metrics, outcomes, scripted, service, tracking

TABLES = [*service.TABLES, *tracking.TABLES, *scripted.TABLES]
OPS = [*service.OPS, *metrics.OPS, *attachments.OPS]


def install(emu: Any) -> None:
    outcomes.install(emu)
