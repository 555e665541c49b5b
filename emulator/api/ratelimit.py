"""Rate-limit headers like the real service's, with optional enforcement (reference 00-general.md §5).

The window is one real second per account (not the emulator clock: a frozen clock would never reset it).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from emulator.api.auth import keyring
from emulator.core import errors
from emulator.core.errors import ApiError

if TYPE_CHECKING:
    from starlette.requests import Request

    from emulator.core.emulator import Emulator

ADVERTISED_LIMIT = 10  # the documented default per team, shown even when not enforced


def _account_hint(emu: Emulator, request: Request) -> str:
    token = request.headers.get("authorization", "").partition(" ")[2].strip()
    credential = keyring(emu).by_token.get(token)
    return credential.account if credential else token


def headers_for(limit: int, remaining: int, reset: float) -> dict[str, str]:
    return {
        "ratelimit-limit": str(limit),
        "ratelimit-remaining": str(max(0, remaining)),
        "ratelimit-reset": str(max(1, math.ceil(reset))),
        "ratelimit-policy": f"{limit};w=1",
    }


def rate_limit(emu: Emulator, request: Request) -> dict[str, str]:
    """Count the request; raise 429 when enforcement is on and the window is spent."""
    return charge(emu, _account_hint(emu, request))


def charge(emu: Emulator, account: str) -> dict[str, str]:
    """Count one request of `account` (HTTP or SMTP: the pool is shared per team, as documented)."""
    limit = emu.settings.rate_limit or ADVERTISED_LIMIT
    windows: dict[str, tuple[int, int]] = emu.state.setdefault("rate_windows", {})
    now = time.monotonic()
    second = int(now)
    start, count = windows.get(account, (second, 0))
    if start != second:
        start, count = second, 0
    count += 1
    windows[account] = (start, count)
    headers = headers_for(limit, limit - count, start + 1 - now)
    if emu.settings.rate_limit and count > limit:
        raise ApiError(errors.RATE_LIMIT_EXCEEDED, headers={**headers, "retry-after": "1"})
    return headers
