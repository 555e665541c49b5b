"""A confirmation step before Replay, Send now and Cancel act (issue 39 item 9): the first POST answers
with a page that names what would happen ("Replay delivery msg_… to https://…?") and two choices; only a
second POST, carrying `confirmed=yes` from that page's own form (csrf-guarded like every UI POST), acts.
Keep is a plain link back: it posts nothing. No JavaScript is needed, so it works everywhere the UI does.

A request that could not act anyway (the email is not scheduled, the delivery does not exist) is not
asked about: the action itself answers with its error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from emulator.api.ops import emulator_of
from emulator.web.listing import SENT
from emulator.web.message import message_row
from emulator.web.render import page
from emulator.web.sessions import session_account

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from emulator.core.db import Row


@dataclass(frozen=True)
class Verb:
    question: str  # formatted with the subject and the recipients
    detail: str  # formatted with the scheduled time
    act: str
    keep: str


SEND_NOW = Verb("Send “{subject}” to {to} now?", "It is scheduled for {when}; it goes at the emulator's"
                " current time instead.", "Send now", "Keep scheduled")
CANCEL = Verb("Cancel the scheduled send of “{subject}” to {to}?", "It is scheduled for {when}. A"
              " canceled email cannot be scheduled again.", "Cancel send", "Keep scheduled")


def confirmed(form: dict[str, list[str]]) -> bool:
    return (form.get("confirmed") or [""])[0] == "yes"


def ask(request: Request, *, question: str, detail: str, act: str, keep: str, back: str,
        when: str | None = None) -> Response:
    return page(request, "confirm.html", {"question": question, "detail": detail, "act": act, "keep": keep,
                                          "back": back, "when": when})


def _recipients(row: Row) -> str:
    to = json.loads(row["to_addrs"] or "[]")
    shown = ", ".join(to[:3]) + (f" and {len(to) - 3} more" if len(to) > 3 else "")
    return shown or "no one"


async def scheduled_email(request: Request, form: dict[str, list[str]], message_id: str, verb: Verb,
                          back: str) -> Response | None:
    """The question about a scheduled email, or None when the form confirmed it or nothing is scheduled."""
    if confirmed(form):
        return None
    async with emulator_of(request).transaction(session_account(request)) as tx:
        row = await message_row(tx, SENT, message_id)
    if row is None or row.get("last_event") != "scheduled":
        return None
    question = verb.question.format(subject=row["subject"] or "(no subject)", to=_recipients(row))
    return ask(request, question=question, detail=verb.detail, act=verb.act, keep=verb.keep, back=back,
               when=row.get("scheduled_at"))
