"""OAuth 2.1: client registration, authorize (PKCE S256), token, revoke, and the team's grants.
Reference: reference/oauth.md ([seed] §2.12, §3, §4.4, §5.2–5.4, §7.2, §8 replayed exactly).

The protocol endpoints are plain routes (ROUTES: form bodies, redirects, the OAuth error shape); the grants
API is two Ops. Access tokens work as API credentials through the verifier installed into the key ring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emulator.api.auth import keyring
from emulator.resources.oauth.grants import verify_access_token
from emulator.resources.oauth.http import CONSENT_PATH, OPS, ROUTES
from emulator.resources.oauth.store import TABLES

if TYPE_CHECKING:
    from emulator.core.emulator import Emulator

__all__ = ["CONSENT_PATH", "OPS", "ROUTES", "TABLES", "install"]


def install(emu: Emulator) -> None:
    keyring(emu).verify_access_token = verify_access_token
