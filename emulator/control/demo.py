"""The `demo` scenario: a plausible week of mail, so the outbox UI can be judged as a user would see it.

Every email goes through `emails.send_email` with the clock set back over the week, and the delivery
jobs run at the time each email was sent, so timestamps, statuses (delivered, bounced, complained,
scheduled) and events look like a real week. The choices come from a `random.Random` seeded with the
emulator's seed: the same seed gives the same week. The clock is put back as it was at the end.
"""

from __future__ import annotations

import base64
import random
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from emulator.core.errors import invalid
from emulator.resources.domains import service as domains
from emulator.resources.emails import service as emails

if TYPE_CHECKING:
    from emulator.api.auth import Credential
    from emulator.core.emulator import Emulator

SENDERS = ["Acme <hello@acme.dev>", "Acme Billing <billing@acme.dev>", "Acme Security <security@acme.dev>",
           "Ada at Acme <ada@acme.dev>"]
PEOPLE = ["grace@hopper.dev", "alan@turing.dev", "Katherine Johnson <katherine@nasa.dev>",
          "linus@kernel.dev", "margaret@apollo.dev", "delivered@resend.dev", "delivered+team@resend.dev"]
TROUBLE = ["bounced@resend.dev", "complained@resend.dev"]
MESSAGES = [
    ("Welcome to Acme, {name}!", "onboarding", "<h1>Welcome aboard, {name}</h1><p>Your workspace is ready."
     " <a href=\"https://acme.dev/start\">Take the two-minute tour</a>.</p>"),
    ("Your invoice INV-{number} is ready", "billing", "<p>Hi {name},</p><p>Invoice <b>INV-{number}</b>"
     " for <b>$49.00</b> is attached.</p><table><tr><td>Pro plan</td><td>$49.00</td></tr></table>"),
    ("Reset your password", "security", "<p>Someone asked to reset the password of {name}.</p>"
     "<p><a href=\"https://acme.dev/reset?token={number}\">Choose a new password</a> (valid 1 hour).</p>"),
    ("New sign-in from Firefox on Linux", "security", "<p>A new sign-in to your account happened from"
     " Berlin, Germany.</p><p>Not you? <a href=\"https://acme.dev/security\">Secure your account</a>.</p>"),
    ("Weekly digest: 12 new comments", "digest", "<h2>This week at Acme</h2><ul><li>12 new comments</li>"
     "<li>3 tasks completed</li><li>1 new teammate: {name}</li></ul>"),
    ("Your export is ready", "exports", "<p>The CSV export you asked for is attached ({number} rows).</p>"),
]


def _options(spec: Any) -> tuple[int, int]:
    spec = spec if isinstance(spec, dict) else {}
    days, count = spec.get("days", 7), spec.get("emails", 60)
    for name, value, high in (("days", days, 30), ("emails", count, 1000)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
            raise invalid(f"`demo.{name}` must be an integer between 1 and {high}.")
    return days, count


def _email(rng: random.Random, index: int) -> dict[str, Any]:
    subject, tag, html = rng.choice(MESSAGES)
    person = rng.choice(TROUBLE if rng.random() < 0.12 else PEOPLE)
    name = person.split("@")[0].split("<")[0].strip().split(" ")[0].title()
    number = 1000 + index
    body: dict[str, Any] = {
        "from": SENDERS[MESSAGES.index((subject, tag, html)) % len(SENDERS)],
        "to": [person],
        "subject": subject.format(name=name, number=number),
        "html": html.format(name=name, number=number),
        "tags": [{"name": "category", "value": tag}],
    }
    if rng.random() < 0.25:
        body["cc"] = [rng.choice(PEOPLE)]
    if tag in ("billing", "exports"):
        content = f"item,amount\nPro plan,49.00\nrows,{number}\n".encode()
        body["attachments"] = [{"filename": f"{tag}-{number}.csv",
                                "content": base64.b64encode(content).decode()}]
    return body


async def _ensure_domain(emu: Emulator, account: str) -> None:
    async with emu.transaction(account) as tx:
        if await tx.one("SELECT id FROM domains WHERE account = ? AND name = 'acme.dev'", (account,)):
            return
        created = await domains.create_domain(tx, {"name": "acme.dev"})
        await domains.verify_domain(tx, created["id"])
    await emu.jobs.flush()


async def load_demo(emu: Emulator, spec: Any, credential: Credential) -> dict[str, Any]:
    days, count = _options(spec)
    rng = random.Random(emu.settings.seed)
    saved = emu.clock.export()
    end = emu.clock.now()
    step = timedelta(days=days) / count
    emu.clock.freeze(end - timedelta(days=days))
    await _ensure_domain(emu, credential.account)
    sent: list[str] = []
    try:
        for index in range(count):
            body = _email(rng, index)
            if index == count - 1:
                body["scheduled_at"] = (end + timedelta(days=1)).isoformat()
            async with emu.transaction(credential.account) as tx:
                sent.append((await emails.send_email(tx, body, credential))["id"])
            emu.clock.set(min(emu.clock.now() + step * rng.uniform(0.3, 1.7), end))
            await emu.jobs.flush()
    finally:
        emu.clock.load(saved)
    await emu.jobs.flush()
    return {"emails": len(sent), "days": days, "first_id": sent[0], "last_id": sent[-1]}
