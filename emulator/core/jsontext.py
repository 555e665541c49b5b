"""Compact JSON text, as the API answers and as rows store it.

One encoder made once: `json.dumps` with any non-default option builds a new encoder on every call,
which shows on the send path (several documents per request).
"""

from __future__ import annotations

import json
from typing import Any

_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact(value: Any) -> str:
    return _COMPACT.encode(value)
