"""Domains and domain claims. Reference: reference/domains.md."""

from __future__ import annotations

from typing import Any

from emulator.resources.domains import claims, service

TABLES = [*service.TABLES, *claims.TABLES]
OPS = [*service.OPS, *claims.OPS]


def install(emu: Any) -> None:
    service.install(emu)
