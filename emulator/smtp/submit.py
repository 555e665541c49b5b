"""One SMTP submission → one `send_email()` call in one transaction (reference/smtp.md).

`Resend-Idempotency-Key` follows the HTTP header's rules (00-general.md §6) in the kernel's
`idempotency_keys` table, under its own endpoint name: the same key on `POST /emails` is independent.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from emulator.api import idempotency
from emulator.api.ratelimit import charge
from emulator.core import errors
from emulator.core.clock import to_db
from emulator.core.errors import ApiError
from emulator.mime import intake
from emulator.resources.emails.service import send_email

if TYPE_CHECKING:
    from emulator.api.auth import Credential
    from emulator.core.emulator import Emulator

SLOT_METHOD, SLOT_PATH = "SMTP", "/emails"


async def submit(emu: Emulator, credential: Credential, mail_from: str, recipients: list[str],
                 raw: bytes) -> str:
    """Store the message as a sent email; return its id. Raises ApiError or IntakeError."""
    charge(emu, credential.account)  # the API's per-team pool: SMTP counts too [docs]
    parsed = await intake.parse_async(raw)
    body = intake.send_body(parsed, mail_from, recipients)
    key = parsed.header(intake.IDEMPOTENCY_HEADER)
    if key is not None:
        return await _once(emu, credential, key, body)
    async with emu.transaction(credential.account) as tx:
        result = await send_email(tx, body, credential, source="smtp")
    return str(result["id"])


async def _once(emu: Emulator, credential: Credential, key: str, body: dict[str, object]) -> str:
    if not 1 <= len(key) <= 256:
        raise ApiError(errors.INVALID_IDEMPOTENCY_KEY)
    slot = (credential.account, SLOT_METHOD, SLOT_PATH, key)
    in_flight: set[tuple[str, str, str, str]] = emu.state.setdefault("idempotency_in_flight", set())
    if slot in in_flight:
        raise ApiError(errors.CONCURRENT_IDEMPOTENT_REQUESTS)
    in_flight.add(slot)
    try:
        async with emu.transaction(credential.account) as tx:
            stored = await tx.one(
                "SELECT fingerprint, response FROM idempotency_keys"
                " WHERE account = ? AND method = ? AND path = ? AND key = ? AND created_at > ?",
                (*slot, to_db(tx.now - idempotency.RETENTION)),
            )
            fingerprint = idempotency.fingerprint(body)
            if stored is not None:
                if stored["fingerprint"] != fingerprint:
                    raise ApiError(errors.INVALID_IDEMPOTENT_REQUEST)
                return str(json.loads(stored["response"])["id"])
            result = await send_email(tx, body, credential, source="smtp")
            await tx.run("INSERT OR REPLACE INTO idempotency_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (*slot, fingerprint, 200, json.dumps(result, separators=(",", ":")), tx.now_db))
            return str(result["id"])
    finally:
        in_flight.discard(slot)
