"""The registry of resource groups: one module each, all of the same shape (TABLES, services, OPS).

Adding a group = one module + one line here + its test module.
"""

from __future__ import annotations

from types import ModuleType

from emulator.resources import api_keys, domain_claims, domains, emails, receiving, templates, webhooks

MODULES: list[ModuleType] = [
    api_keys,
    domains,
    domain_claims,
    emails,
    receiving,
    templates,
    webhooks,
]
