"""Sending a broadcast: one personalised email per eligible contact of its segment, through the same
store as POST /emails (reference/broadcasts.md §3, issue "Broadcasts that really go out").

Eligible: not `unsubscribed`; when the broadcast has a topic, subscribed to it (the contact's choice, else
the topic's default); not on the suppression list — a suppressed contact gets no email and is counted
among the `suppressed` recipients. Each email carries `List-Unsubscribe` and `List-Unsubscribe-Post`
(RFC 8058) pointing at the emulator's own unsubscribe page.

The fan-out is a chunked job: each chunk is a long transaction (core/db.py) of slices, each taking the
next SLICE members of the segment in joining order and storing their emails (with their events and
delivery jobs) and recipient rows, with a breath between slices, until it is `long_enough`; the
cursor in `broadcast_sends` moves in the same transaction. After a crash the job resumes after the last
committed member, so every recipient gets exactly one email. The broadcast stays `queued` until the last chunk
marks it `sent`; `broadcast_sends` also holds the audience size and how many members were walked, which
the UI shows as progress.
"""

from __future__ import annotations

import html as html_lib
import json
import re
import time
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from emulator.core.clock import from_db
from emulator.core.events import notify
from emulator.core.jobs import DONE, MORE
from emulator.resources import suppressions
from emulator.resources.broadcasts.service import SEND_JOB
from emulator.resources.broadcasts.store import find_broadcast
from emulator.resources.contacts import (
    contact_properties,
    property_fallbacks,
    segment_members_after,
    segment_size,
)
from emulator.resources.emails import EmailDraft
from emulator.resources.emails.service import spend_quota, store

if TYPE_CHECKING:
    from emulator.core.db import Row, Tx

UNSUBSCRIBE_PATH = "/_emulator/unsubscribe/"
# A slice takes up to SLICE members and stops early once it has rendered for SLICE_SECONDS (wall clock;
# storing them then takes about as long again): on a busy machine a slice gets fewer members, never a
# longer hold on the loop. The loop serves other tasks between slices, so this bounds how long a health
# check waits behind a broadcast. Where a slice or chunk ends changes nothing a user sees: members are
# taken in the same order either way.
SLICE = 200
SLICE_SECONDS = 0.01
# `{{{NAME}}}` or `{{{NAME|fallback}}}`; names are letters, digits, `_` and `.` — no nested repetition, so
# matching stays linear in the length of the HTML.
VARIABLE = re.compile(r"\{\{\{\s*([A-Za-z0-9_.]+)\s*(?:\|([^{}|]*))?\}\}\}")
CONTACT_FIELDS = {"FIRST_NAME": "first_name", "LAST_NAME": "last_name", "EMAIL": "email",
                  "contact.first_name": "first_name", "contact.last_name": "last_name",
                  "contact.email": "email"}


def base_url(tx: Tx) -> str:
    settings = tx.emu.settings
    return str(tx.emu.state.get("http_url") or f"{settings.scheme}://{settings.host}:{settings.port}")


class Personaliser:
    """Fills the documented contact variables for one contact: `{{{FIRST_NAME}}}`, `{{{LAST_NAME}}}`,
    `{{{EMAIL}}}` (also as `{{{contact.first_name}}}` …), contact properties (`{{{contact.plan}}}` or
    `{{{plan}}}`) and `{{{RESEND_UNSUBSCRIBE_URL}}}`. A missing value takes the inline `|fallback`, then the
    property's own fallback value, then nothing (our reading of the docs' fallback rules). Values are
    inserted as given, as the triple braces say, except in HTML where they are escaped: a contact's name
    must not become markup."""

    def __init__(self, contact: Row, fallbacks: dict[str, Any], unsubscribe_url: str) -> None:
        self.contact = contact
        self.properties = contact_properties(contact)
        self.fallbacks = fallbacks
        self.unsubscribe_url = unsubscribe_url

    def value(self, name: str, inline: str | None) -> str:
        if name == "RESEND_UNSUBSCRIBE_URL":
            return self.unsubscribe_url
        found: Any = None
        if name in CONTACT_FIELDS:
            found = self.contact[CONTACT_FIELDS[name]]
        else:
            key = name.removeprefix("contact.")
            found = self.properties.get(key)
            if found is None and inline is None:
                found = self.fallbacks.get(key)
        if found is None or found == "":
            return inline if inline is not None else ""
        return str(found)

    def fill(self, source: str | None, escape: bool = False) -> str | None:
        if source is None:
            return None
        pieces = _pieces(source)
        out = [pieces[0]]
        for index in range(1, len(pieces), 3):
            name, inline = pieces[index], pieces[index + 1]
            text = self.value(name, inline)
            out.append(html_lib.escape(text) if escape and name != "RESEND_UNSUBSCRIBE_URL" else text)
            out.append(pieces[index + 2])
        return "".join(out)


@lru_cache(maxsize=64)
def _pieces(source: str) -> list[Any]:
    """`source` cut at its variables once per broadcast, not once per email: text, then (name, inline
    fallback or None, text) for each variable."""
    return VARIABLE.split(source)


def _with_preview(html: str | None, preview: str | None) -> str | None:
    """The preview text as the hidden first line of the HTML, where mail clients read it."""
    if html is None or not preview:
        return html
    hidden = ('<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">'
              f"{html_lib.escape(preview)}</div>")
    return hidden + html


def _eligible(broadcast: Row, contact: Row) -> bool:
    """Not unsubscribed, and in the broadcast's topic if it has one (a topic deleted since the send
    started has no default: its absent consent counts as out)."""
    if contact["unsubscribed"]:
        return False
    return broadcast["topic_id"] is None or contact["subscription"] == "opt_in"


async def _progress(tx: Tx, broadcast: Row) -> Row:
    """The fan-out's cursor row, made (with the audience size) by the first chunk."""
    found = await tx.one("SELECT * FROM broadcast_sends WHERE account = ? AND broadcast_id = ?",
                         (tx.account, broadcast["id"]))
    if found is not None:
        return found
    row = {"account": tx.account, "broadcast_id": broadcast["id"], "cursor": 0, "walked": 0,
           "audience": await segment_size(tx, broadcast["segment_id"]), "started_at": tx.now_db}
    await tx.insert("broadcast_sends", row)
    return row


async def run_send(tx: Tx, job: dict[str, Any]) -> str | None:
    """One chunk of the fan-out; MORE until the segment is walked, then the broadcast is `sent`."""
    broadcast = await find_broadcast(tx, job["payload"]["broadcast_id"])
    if broadcast is None or broadcast["status"] not in ("queued", "scheduled"):
        return DONE  # canceled or deleted before it fell due
    if broadcast["scheduled_at"] and from_db(broadcast["scheduled_at"]) > tx.now:
        return DONE  # rescheduled: the job of the new time sends it
    progress = await _progress(tx, broadcast)
    cursor = progress["cursor"]
    while True:
        members = await segment_members_after(tx, broadcast["segment_id"], cursor, SLICE,
                                              broadcast["topic_id"])
        walked = await _send_to(tx, broadcast, members)
        if walked:
            cursor = members[walked - 1]["member_seq"]
            tx.queue("UPDATE broadcast_sends SET cursor = ?, walked = walked + ?"
                     " WHERE account = ? AND broadcast_id = ?", (cursor, walked, tx.account, broadcast["id"]))
        if walked == len(members) < SLICE:
            break
        if tx.long_enough:
            notify(tx, broadcast["id"])
            return MORE
        await tx.breathe()
    notify(tx, broadcast["id"])
    await tx.update("broadcasts", broadcast["id"], {"status": "sent", "sent_at": tx.now_db})
    return DONE


async def _send_to(tx: Tx, broadcast: Row, members: list[Row]) -> int:
    """Email the eligible among `members`, in order, until SLICE_SECONDS have passed; how many were walked."""
    started = time.perf_counter()
    eligible = [contact for contact in members if _eligible(broadcast, contact)]
    listed = await suppressions.lookup(tx, [contact["email"] for contact in eligible])
    fallbacks = await property_fallbacks(tx) if eligible else {}
    mark = tx.mark()
    walked = sent = 0
    for contact in members:
        walked += 1
        if not _eligible(broadcast, contact):
            continue
        if suppressions.normalize(contact["email"]) in listed:
            await _record(tx, broadcast, contact, None, "suppressed", None)
        else:
            await _send_one(tx, broadcast, contact, fallbacks)
            sent += 1
        if time.perf_counter() - started > SLICE_SECONDS:
            break
    if not tx.sent_since(mark):
        tx.group_inserts(mark)
    if sent:
        # Counted as it goes out, never refused here: a background job has no caller to answer a 429.
        # The send request was refused instead if its audience would pass a quota (service.py
        # `_check_quota`). One email, one recipient.
        await spend_quota(tx, sent, enforce=False)
    return walked


async def _send_one(tx: Tx, broadcast: Row, contact: Row, fallbacks: dict[str, Any]) -> None:
    token = tx.new_id()
    url = f"{base_url(tx)}{UNSUBSCRIBE_PATH}{token}"
    person = Personaliser(contact, fallbacks, url)
    text = person.fill(broadcast["text"])
    draft = EmailDraft(
        # A contact's value must not break the Subject header: line breaks become spaces.
        from_=broadcast["from_addr"], to=[contact["email"]],
        subject=" ".join(str(person.fill(broadcast["subject"])).splitlines()),
        reply_to=json.loads(broadcast["reply_to"]) if broadcast["reply_to"] else None,
        html=_with_preview(person.fill(broadcast["html"], escape=True), broadcast["preview_text"]),
        # None ⇒ generated from the HTML; "" ⇒ the sender opted out of a text part [docs].
        text=text, topic_id=broadcast["topic_id"],
        headers={"List-Unsubscribe": f"<{url}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
    )
    email_id = await store(tx, draft, None, None, "broadcast", queued=False, broadcast_id=broadcast["id"])
    await _record(tx, broadcast, contact, email_id, "sent", token)


async def _record(tx: Tx, broadcast: Row, contact: Row, email_id: str | None, status: str,
                  token: str | None) -> None:
    await tx.insert("broadcast_recipients", {
        "account": tx.account, "broadcast_id": broadcast["id"], "contact_id": contact["id"],
        "email": contact["email"], "email_id": email_id, "status": status, "token": token,
        "created_at": tx.now_db,
    })


def install(emu: Any) -> None:
    emu.jobs.chunked(SEND_JOB, run_send)
