"""The outbox web UI: server-rendered pages under /_emulator/ui/, live updates over server-sent events.

Registered in `emulator.app.EXTENSIONS`; it owns no tables (one index for the broadcast page) and reads
those of the emails, receiving, webhooks, contacts and broadcasts groups. Message HTML is only ever
shown inside a sandboxed frame (see frame.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.routing import BaseRoute

from emulator.web import (
    actions,
    broadcasts,
    contacts,
    counting,
    csrf,
    dashboards,
    deliveries,
    imports,
    inboxes,
    labels,
    logs,
    oauth,
    outbound,
    signin,
    spam,
    sse,
    theme,
    unsubscribe,
    views,
    zone,
)
from emulator.web.render import UI

if TYPE_CHECKING:
    from emulator.core.emulator import Emulator

# Every UI POST needs proof that the UI's own page made it (csrf.py); the recipient pages need none.
# Where a sign-in is required (signin.py), every UI route but the sign-in's own needs one, checked first.
ROUTES: list[BaseRoute] = signin.gated(csrf.guarded([
    *signin.ROUTES, *actions.ROUTES, *views.ROUTES, *deliveries.ROUTES, *dashboards.ROUTES, *logs.ROUTES,
    *inboxes.ROUTES, *unsubscribe.ROUTES, *oauth.ROUTES, *spam.ROUTES, *theme.ROUTES, *contacts.ROUTES,
    *imports.ROUTES, *broadcasts.ROUTES, *outbound.ROUTES, *labels.ROUTES, *zone.ROUTES, *counting.ROUTES,
], under=UI + "/"))

__all__ = ["ROUTES", "install"]


def install(emu: Emulator) -> None:
    sse.install(emu)
