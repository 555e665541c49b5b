"""Templates: create, list, get, update, delete, publish, duplicate; rendering for sends.

Reference: reference/templates.md. `service` holds the resource, `render` the triple-brace engine,
`fields` the checks of a template body.
"""

from __future__ import annotations

from emulator.resources.templates import service

TABLES = service.TABLES
OPS = service.OPS
