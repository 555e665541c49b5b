"""What happens to an accepted email on the emulator clock (reference/emails.md "State machine").

Timeline [rec: the real delays are undocumented; these keep tests short yet ordered]:
- a single send is `sent` in the request's own transaction (`email.sent` at once);
- batch emails start `queued` and are sent by a job due immediately;
- scheduled emails are `scheduled` (`email.scheduled`) and sent by a job due at `scheduled_at`;
- DELIVERY_DELAY after `sent` each recipient gets its outcome: `delivered`, `bounced` (hard bounce,
  the address joins the suppression list) or `suppressed`;
- COMPLAINT_DELAY after delivery `complained@resend.dev` recipients complain (`email.complained`,
  the address joins the suppression list).
With a frozen clock, advance it (or flush after advancing) to see the later states.

Outcome per recipient: the `resend.dev` test addresses first (`delivered`, `bounced`, `complained` with
`+label` variants; `suppressed` only exactly), then the account suppression list, else delivered. So a
test address behaves the same every time even after it has been put on the list. An email with several
recipients gets one event per outcome, `to` naming the impacted recipients; `last_event` is the last.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from emulator.api.auth import keyring
from emulator.core.addresses import address_of
from emulator.core.clock import from_db, iso_z
from emulator.core.events import emit
from emulator.core.jobs import schedule
from emulator.resources import suppressions
from emulator.resources.emails import scripted
from emulator.resources.emails.bounces import ACCOUNT_SUPPRESSED, bounce

if TYPE_CHECKING:
    from emulator.core.db import Host, Row, Tx
    from emulator.core.emulator import Emulator

DELIVERY_DELAY = timedelta(seconds=2)
COMPLAINT_DELAY = timedelta(seconds=3)
SEND_JOB, OUTCOME_JOB, COMPLAINT_JOB = "email.send", "email.outcome", "email.complaint"
DELAYED_JOB = "email.delayed_delivery"
TEST_DOMAIN = "resend.dev"


def event_data(row: Row, to: list[str] | None = None, created: str | None = None,
               parsed: Parsed | None = None) -> dict[str, Any]:
    """OutboundEmailEventData (reference/webhooks.md §6.1) for the email `row`. The send path passes
    what it already holds (`created` in its ISO form, `parsed` JSON columns) to spare decoding its own
    row."""
    parsed = parsed or _parse(row, "to_addrs", "tags", "headers")
    data: dict[str, Any] = {
        "email_id": row["id"],
        "created_at": created or iso_z(from_db(row["created_at"])),
        "from": row["from_addr"],
        "to": to if to is not None else parsed["to_addrs"],
        "subject": row["subject"],
        "message_id": row["message_id"],
    }
    if row["broadcast_id"]:
        data["broadcast_id"] = row["broadcast_id"]
    if row["template_id"]:
        data["template_id"] = row["template_id"]
    if parsed["tags"]:
        data["tags"] = {tag["name"]: tag["value"] for tag in parsed["tags"]}
    if parsed["headers"]:
        data["headers"] = [{"name": k, "value": v} for k, v in parsed["headers"].items()]
    return data


Parsed = dict[str, Any]  # JSON columns of an email row, decoded


def _parse(row: Row, *columns: str) -> Parsed:
    return {column: json.loads(row[column]) if row[column] else None for column in columns}


def recipients(row: Row, parsed: Parsed | None = None) -> list[str]:
    """Every distinct bare address among to, cc and bcc."""
    parsed = parsed or _parse(row, "to_addrs", "cc", "bcc")
    found: list[str] = []
    seen: set[str] = set()
    for column in ("to_addrs", "cc", "bcc"):
        for value in parsed[column] or ():
            address = address_of(value)
            if address.lower() not in seen:
                seen.add(address.lower())
                found.append(address)
    return found


def test_outcome(address: str) -> str | None:
    """The simulated outcome of a `resend.dev` test address, None for any other address."""
    local, _, domain = address.lower().partition("@")
    if domain != TEST_DOMAIN:
        return None
    if local == "suppressed":
        return "suppressed"
    base = local.split("+", 1)[0]
    return base if base in ("bounced", "complained") else "delivered"


def _due(job: dict[str, Any]) -> datetime:
    """Follow-ups count from when a job fell due, not when it ran: one big clock jump still plays the
    whole timeline (sent → delivered → complained) in order."""
    return from_db(job["due_at"])


def outcome_payload(row: Row, data: dict[str, Any], parsed: Parsed | None = None) -> dict[str, Any]:
    """What the outcome job needs, carried in the job itself so it reads nothing back: a sent email's
    state changes only through this job chain."""
    return {"email_id": row["id"], "data": data, "rcpt": recipients(row, parsed)}


async def mark_sent(tx: Tx, row: Row, at: datetime) -> None:
    """`queued`/`scheduled` → `sent`, and the outcome job."""
    await tx.update("emails", row["id"], {"last_event": "sent"})
    data = event_data(row)
    payload = outcome_payload(row, data)
    await emit(tx, "email.sent", data, subject_id=row["id"], context={"recipients": payload["rcpt"]})
    await schedule(tx, OUTCOME_JOB, at + DELIVERY_DELAY, payload)


async def _load(tx: Tx, email_id: str) -> Row | None:
    return await tx.one("SELECT * FROM emails WHERE id = ? AND account = ?", (email_id, tx.account))


def _key_active(emu: Host, key_id: str | None) -> bool:
    if key_id is None:
        return True
    return any(c.key_id == key_id and c.active for c in keyring(emu).by_token.values())


async def run_send(tx: Tx, job: dict[str, Any]) -> None:
    row = await _load(tx, job["payload"]["email_id"])
    if row is None or row["last_event"] not in ("queued", "scheduled"):
        return  # canceled, or already sent by an earlier job
    if row["scheduled_at"] and from_db(row["scheduled_at"]) > tx.now:
        return  # rescheduled later; the newer job sends it
    if row["last_event"] == "scheduled" and not _key_active(tx.emu, row["key_id"]):
        await _fail(tx, row, "api_key_not_active")  # [docs] schedule-email; reason text [rec]
        return
    await mark_sent(tx, row, _due(job))


async def _fail(tx: Tx, row: Row, reason: str) -> None:
    await tx.update("emails", row["id"], {"last_event": "failed"})
    await emit(tx, "email.failed", {**event_data(row), "failed": {"reason": reason}}, subject_id=row["id"])


Groups = dict[str, list[tuple[str, "Row | None"]]]


async def _classify(tx: Tx, addresses: list[str]) -> Groups:
    groups: Groups = {}
    others = [a for a in addresses if test_outcome(a) is None]
    listed = await suppressions.lookup(tx, others) if others else {}
    for address in addresses:
        outcome = test_outcome(address)
        entry = listed.get(suppressions.normalize(address))
        if outcome is None:
            outcome = "listed" if entry is not None else "delivered"
        groups.setdefault(outcome, []).append((address, entry))
    return groups


async def run_outcome(tx: Tx, job: dict[str, Any]) -> None:
    payload = job["payload"]
    email_id, data = payload["email_id"], payload["data"]
    scripts = await scripted.take_scripts(tx, email_id, payload["rcpt"])
    groups = await _classify(tx, [a for a in payload["rcpt"] if a not in scripts])
    for address, script in scripts.items():
        groups.setdefault(script["outcome"], []).append((address, script))
    last = await _delay(tx, job, groups) or "sent"
    delivered = [a for key in ("delivered", "complained") for a, _ in groups.get(key, [])]
    if delivered:
        await emit(tx, "email.delivered", {**data, "to": delivered}, subject_id=email_id)
        last = "delivered"
    if "suppressed" in groups or "listed" in groups:
        await _suppressed(tx, email_id, data, groups)
        last = "suppressed"
    if "bounced" in groups:
        await _bounced(tx, email_id, data, groups["bounced"])
        last = "bounced"
    if "failed" in groups:
        reason = next(entry["reason"] for _, entry in groups["failed"] if entry is not None)
        failed = {**data, "to": [a for a, _ in groups["failed"]], "failed": {"reason": reason}}
        await emit(tx, "email.failed", failed, subject_id=email_id)
        last = "failed"
    await _set_last_event(tx, email_id, last)
    if "complained" in groups:
        await schedule(tx, COMPLAINT_JOB, _due(job) + COMPLAINT_DELAY,
                       {"email_id": email_id, "data": data, "to": [a for a, _ in groups["complained"]]})


# Engagement the recipient already showed (the outbox shows an email before its simulated delivery, so QA
# can open it or follow a link first): a later `delivered` does not move `last_event` back [rec].
ENGAGED = ("opened", "clicked")


async def _set_last_event(tx: Tx, email_id: str, last: str) -> None:
    if last in ("delivered", "delivery_delayed"):
        tx.queue("UPDATE emails SET last_event = ? WHERE id = ? AND account = ? AND last_event NOT IN (?, ?)",
                 (last, email_id, tx.account, *ENGAGED))
    else:
        await tx.update("emails", email_id, {"last_event": last})


async def _delay(tx: Tx, job: dict[str, Any], groups: Groups) -> str | None:
    """Scripted `delivery_delayed`: the event now, `email.delivered` once the script's minutes pass."""
    entries = groups.get("delivery_delayed", [])
    if not entries:
        return None
    payload = job["payload"]
    await emit(tx, "email.delivery_delayed", {**payload["data"], "to": [a for a, _ in entries]},
               subject_id=payload["email_id"])
    for address, script in entries:
        assert script is not None
        await schedule(tx, DELAYED_JOB, _due(job) + timedelta(minutes=script["minutes"] or 0),
                       {"email_id": payload["email_id"], "data": payload["data"], "to": [address]})
    return "delivery_delayed"


def _bounce_kind(entry: Row | None) -> tuple[str, str | None]:
    """(type, subType): a script's choice, else the hard bounce of `bounced@resend.dev`."""
    if entry is not None and "outcome" in entry:
        return str(entry["bounce_type"]), entry["bounce_subtype"]
    return "Permanent", None


async def _bounced(tx: Tx, email_id: str, data: dict[str, Any],
                   entries: list[tuple[str, Row | None]]) -> None:
    """One `email.bounced` per kind of bounce; hard (permanent) bounces join the suppression list."""
    kinds: dict[tuple[str, str | None], list[str]] = {}
    for address, entry in entries:
        kinds.setdefault(_bounce_kind(entry), []).append(address)
    for (kind, subtype), addresses in kinds.items():
        details = bounce(kind, subtype, len(addresses))
        await emit(tx, "email.bounced", {**data, "to": addresses, "bounce": details}, subject_id=email_id)
        if kind == "Permanent":
            for address in addresses:
                await suppressions.add(tx, address, "bounce", email_id)


async def run_delayed(tx: Tx, job: dict[str, Any]) -> None:
    """The delivery that follows a scripted delay."""
    payload = job["payload"]
    await _set_last_event(tx, payload["email_id"], "delivered")
    delivered = {**payload["data"], "to": payload["to"]}
    await emit(tx, "email.delivered", delivered, subject_id=payload["email_id"])


async def _suppressed(tx: Tx, email_id: str, data: dict[str, Any], groups: Groups) -> None:
    """One `email.suppressed` per kind: the global list (`suppressed@resend.dev`) and the account's."""
    if "suppressed" in groups:
        await emit(tx, "email.suppressed", {
            **data, "to": [a for a, _ in groups["suppressed"]],
            "suppressed": {"diagnosticCode": ["smtp; 550 5.1.1 recipient is on the suppression list"],
                           "message": "The recipient is on the suppression list because it"
                                      " previously bounced.",
                           "reason": "previous_bounce", "type": "Suppressed"},
        }, subject_id=email_id)
    if "listed" in groups:
        entries = groups["listed"]
        # A manual entry has no enum value of its own; it reads as a previous bounce [rec].
        complaint = all(entry is not None and entry["origin"] == "complaint" for _, entry in entries)
        reason = "previous_complaint" if complaint else "previous_bounce"
        await emit(tx, "email.suppressed", {
            **data, "to": [a for a, _ in entries],
            "suppressed": {"diagnosticCode": ["smtp; 550 5.1.1 recipient is on the account suppression list"],
                           "message": ACCOUNT_SUPPRESSED,
                           "reason": reason, "type": "OnAccountSuppressionList"},
        }, subject_id=email_id)


async def run_complaint(tx: Tx, job: dict[str, Any]) -> None:
    payload = job["payload"]
    email_id, complained = payload["email_id"], payload["to"]
    await tx.update("emails", email_id, {"last_event": "complained"})
    await emit(tx, "email.complained", {**payload["data"], "to": complained}, subject_id=email_id)
    for address in complained:
        await suppressions.add(tx, address, "complaint", email_id)


def install(emu: Emulator) -> None:
    # Database work only: they run inside the job runner's own transaction (one commit per burst).
    emu.jobs.tx_handler(SEND_JOB, run_send)
    emu.jobs.tx_handler(OUTCOME_JOB, run_outcome)
    emu.jobs.tx_handler(COMPLAINT_JOB, run_complaint)
    emu.jobs.tx_handler(DELAYED_JOB, run_delayed)
