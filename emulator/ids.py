"""Deterministic identifiers. Every id, token and secret derives from (seed, counter).

The counter is persisted with the state (see db.py), so a file database never reissues an id and a
snapshot restores the exact sequence that would have followed it.
"""

from __future__ import annotations

import base64
import hashlib
import string

_TOKEN_ALPHABET = string.ascii_letters + string.digits + "_"


class IdFactory:
    def __init__(self, seed: int, counter: int = 0, stream: str = "") -> None:
        self.seed = seed
        self.counter = counter
        self.stream = stream  # independent sequences, e.g. request-log ids apart from resource ids

    def _bytes(self, size: int) -> bytes:
        self.counter += 1
        material = f"{self.seed}:{self.stream}:{self.counter}".encode()
        return hashlib.shake_256(material).digest(size)

    def uuid(self) -> str:
        """A UUID v4-shaped, lowercase, hyphenated id (the format Resend uses for most objects)."""
        raw = bytearray(self._bytes(16))
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        text = raw.hex()
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"

    def token(self, length: int) -> str:
        """Characters from `[A-Za-z0-9_]`, like the body of a `re_…` API key."""
        raw = self._bytes(64)
        return "".join(_TOKEN_ALPHABET[b % len(_TOKEN_ALPHABET)] for b in raw[:length])

    def secret_bytes(self, size: int = 24) -> bytes:
        return self._bytes(size)

    def base64_secret(self, size: int = 24) -> str:
        return base64.b64encode(self.secret_bytes(size)).decode()

    def hex(self, size: int = 16) -> str:
        return self._bytes(size).hex()

    def api_key(self) -> str:
        return "re_" + self.token(8) + "_" + self.token(24)
