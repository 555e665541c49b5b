"""Deterministic identifiers. Every id, token and secret derives from (seed, counter).

The counter is persisted with the state (see db.py), so a file database never reissues an id and a
snapshot restores the exact sequence that would have followed it.
"""

from __future__ import annotations

import base64
import hashlib
import string
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_TOKEN_ALPHABET = string.ascii_letters + string.digits + "_"


# Isolation mode (--isolate-keys): inside a transaction of an isolated account, ids come from that
# account's own sequence, so a test run sharing the server gets the same ids as when it runs alone.
# A context variable, not an attribute: concurrent coroutines outside the transaction are unaffected.
_ACCOUNT: ContextVar[str | None] = ContextVar("emulator_id_account", default=None)
ACCOUNT_COUNTER_PREFIX = "id_counter:"


class IdFactory:
    def __init__(self, seed: int, counter: int = 0, stream: str = "") -> None:
        self.seed = seed
        self.main_counter = counter
        self.stream = stream  # independent sequences, e.g. request-log ids apart from resource ids
        self.accounts: dict[str, int] = {}  # per isolated account: its own sequence
        self._prefix = f"{seed}:{stream}:"

    @property
    def counter(self) -> int:
        """The sequence ids are drawn from here: the main one, or the current isolated account's."""
        account = _ACCOUNT.get()
        return self.main_counter if account is None else self.accounts.get(account, 0)

    @counter.setter
    def counter(self, value: int) -> None:
        account = _ACCOUNT.get()
        if account is None:
            self.main_counter = value
        else:
            self.accounts[account] = value

    @property
    def meta_key(self) -> str:
        """Where the current sequence is persisted in the `meta` table."""
        account = _ACCOUNT.get()
        return "id_counter" if account is None else ACCOUNT_COUNTER_PREFIX + account

    @contextmanager
    def account_scope(self, account: str) -> Iterator[None]:
        """Draw from `account`'s own sequence inside the block (this task only)."""
        token = _ACCOUNT.set(account)
        try:
            yield
        finally:
            _ACCOUNT.reset(token)

    def load_counters(self, meta: dict[str, str]) -> None:
        """Set every sequence from `meta` rows (`id_counter`, `id_counter:<account>`); absent = 0."""
        self.main_counter = int(meta.get("id_counter", 0))
        self.accounts = {key.removeprefix(ACCOUNT_COUNTER_PREFIX): int(value) for key, value in meta.items()
                         if key.startswith(ACCOUNT_COUNTER_PREFIX)}

    def numbered(self, size: int) -> tuple[int, bytes]:
        """The next number of the sequence, and `size` bytes derived from it."""
        account = _ACCOUNT.get()
        if account is None:
            number = self.main_counter = self.main_counter + 1
            key = f"{self._prefix}{number}"
        else:
            number = self.accounts[account] = self.accounts.get(account, 0) + 1
            key = f"{self.seed}:{self.stream}@{account}:{number}"
        return number, hashlib.shake_256(key.encode()).digest(size)

    def _bytes(self, size: int) -> bytes:
        return self.numbered(size)[1]

    def uuid(self) -> str:
        """A UUID v4-shaped, lowercase, hyphenated id (the format Resend uses for most objects): the
        version nibble set to 4, the variant's top bits to 10, on the hex text (no bytearray per id)."""
        text = self._bytes(16).hex()
        variant = "89ab"[int(text[16], 16) & 3]
        return f"{text[:8]}-{text[8:12]}-4{text[13:16]}-{variant}{text[17:20]}-{text[20:]}"

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
