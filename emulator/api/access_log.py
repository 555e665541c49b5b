"""What a request line says: `-v` text (method, path, status, milliseconds), or with `--log-format json`
a JSON object (method, route template, status, duration, account). Written by api/telemetry.py.

The query string is left out: it can carry an API key (`/_emulator/outbox?api_key=…`), and the line is
for following traffic, not replaying it. The JSON line names the route template (`/emails/{email_id}`),
which a collector can group by, and the account the key resolved to, never the key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.core.stdout import json_line, say

# (scope, route template, status, seconds) → one line written.
RequestWriter = Callable[[dict[str, Any], str, int, float], None]


def access_line(method: str, path: str, status: int, seconds: float) -> str:
    return f"{method} {path} {status} {seconds * 1000:.1f}ms"


def text_line(scope: dict[str, Any], route: str, status: int, seconds: float) -> None:
    say(access_line(scope["method"], scope["path"], status, seconds) + "\n")


def json_request(scope: dict[str, Any], route: str, status: int, seconds: float) -> None:
    json_line("request", method=scope["method"], path=route, status=status,
              duration_ms=round(seconds * 1000, 3), account=scope.get("account"))
