"""Emulator-only OAuth settings, changed through `/_emulator/oauth` (see README "OAuth").

`consent` decides what `GET /oauth/authorize` does once the request is valid: `ask` (default) sends the
browser to the consent page in the UI, as the real service sends it to its dashboard; `approve` and
`deny` answer at once for `account`, so a test completes the flow with no browser. The registration
limit is the documented 20 per IP per hour; `None` turns it off. Settings are configuration, like
command-line flags: `POST /_emulator/reset` keeps them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from emulator.core import errors
from emulator.core.config import DEFAULT_ACCOUNT

if TYPE_CHECKING:
    from emulator.core.db import Host

CONSENT_MODES = ("ask", "approve", "deny")
REGISTRATIONS_PER_HOUR = 20  # [docs] oauth/register


@dataclass
class OAuthSettings:
    consent: str = "ask"
    account: str = DEFAULT_ACCOUNT
    registration_limit: int | None = REGISTRATIONS_PER_HOUR

    def export(self) -> dict[str, Any]:
        return asdict(self)


def settings_of(emu: Host) -> OAuthSettings:
    current = emu.state.get("oauth_settings")
    if current is None:
        current = emu.state["oauth_settings"] = OAuthSettings()
    return current  # type: ignore[no-any-return]


def update(emu: Host, body: dict[str, Any]) -> OAuthSettings:
    """Apply the fields present in `body` (all checked before any is applied)."""
    current = settings_of(emu)
    consent = body.get("consent", current.consent)
    if consent not in CONSENT_MODES:
        raise errors.invalid("`consent` must be one of `ask`, `approve`, `deny`.")
    account = body.get("account", current.account)
    if not isinstance(account, str) or not account or len(account) > 200:
        raise errors.invalid("`account` must be a non-empty account id.")
    limit = body.get("registration_limit", current.registration_limit)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise errors.invalid("`registration_limit` must be a positive integer or null.")
    current.consent, current.account, current.registration_limit = consent, account, limit
    return current
