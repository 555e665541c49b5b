"""Webhooks: endpoints (service), the event catalogue, signed delivery after commit, scripted faults.

Reference: reference/webhooks.md.
"""

from __future__ import annotations

from typing import Any

from emulator.resources.webhooks import delivery, faults, service

TABLES = service.TABLES
OPS = service.OPS


def install(emu: Any) -> None:
    service.install(emu)
    delivery.install(emu)
    faults.install(emu)


async def stop(emu: Any) -> None:
    await delivery.stop(emu)
