"""The `--ui-auth-file` reader: an htpasswd file (Apache's format, `user:hash` a line) with the two
hash kinds worth trusting that `htpasswd` writes: bcrypt (`htpasswd -B`: `$2y$`, and `$2a$`/`$2b$` from
other tools) and `{SHA}` (`htpasswd -s`: base64 of an unsalted SHA-1, weak, but common in old files).
Anything else (MD5 `$apr1$`, crypt, plain text) is refused by name rather than half-supported.

`Users` keeps the last good version and looks at the file again at most once a second (a `stat`, no
read unless it changed), so a rotated or rewritten file takes effect without a restart and a request
costs no system call in between.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import sys
import time
from collections.abc import Callable
from typing import NamedTuple

BCRYPT_PREFIXES = ("$2y$", "$2a$", "$2b$")
SHA_PREFIX = "{SHA}"
RECHECK_SECONDS = 1.0
MAX_BYTES = 1024 * 1024
# Schemes htpasswd (or older tools) can write that are refused, named as a user would look them up.
REFUSED = (("$apr1$", "MD5 (apr1)"), ("$1$", "MD5-crypt"), ("$5$", "SHA-256-crypt"),
           ("$6$", "SHA-512-crypt"), ("$2x$", "bcrypt $2x$ (flawed)"))


class HtpasswdError(ValueError):
    """A file the emulator will not take: the text says which user or line and why, `advice` what to do."""

    def __init__(self, problem: str, advice: str) -> None:
        super().__init__(problem)
        self.advice = advice

    def __str__(self) -> str:
        return f"{self.args[0]} ({self.advice})"


class Entry(NamedTuple):
    scheme: str  # "bcrypt" or "sha"
    hashed: str

    @property
    def slow(self) -> bool:
        return self.scheme == "bcrypt"


Signature = tuple[int, int, int, int]  # inode, device, size, mtime (ns): "has the file changed?"


def parse(text: str) -> dict[str, Entry]:
    users: dict[str, Entry] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        user, colon, hashed = line.partition(":")
        if not colon or not user:
            raise HtpasswdError(f"line {number} is not `user:hash`", "one user a line, as htpasswd writes")
        users[user] = _entry(user, hashed.strip())
    if not users:
        raise HtpasswdError("it names no user", "add one: htpasswd -B FILE USER")
    return users


def _entry(user: str, hashed: str) -> Entry:
    if hashed.startswith(BCRYPT_PREFIXES):
        return Entry("bcrypt", hashed)
    if hashed.startswith(SHA_PREFIX):
        return Entry("sha", hashed)
    raise HtpasswdError(f"user {user!r}: {_scheme_of(hashed)} passwords are not accepted",
                        f"use bcrypt or {{SHA}}: htpasswd -B FILE {user}")


def _scheme_of(hashed: str) -> str:
    for prefix, name in REFUSED:
        if hashed.startswith(prefix):
            return name
    # Apache's crypt() hashes are 13 characters of the salt/hash alphabet; anything else is taken as-is.
    if len(hashed) == 13 and all(c.isalnum() or c in "./" for c in hashed):
        return "crypt"
    return "plain-text"


def verify(entry: Entry, password: bytes) -> bool:
    """Constant time for a given hash. bcrypt takes ~50-250 ms: call it off the event loop."""
    if entry.scheme == "sha":
        digest = base64.b64encode(hashlib.sha1(password).digest()).decode()  # the format's, weak as it is
        return hmac.compare_digest(digest, entry.hashed[len(SHA_PREFIX):])
    import bcrypt  # only a file with bcrypt entries pays for loading it

    try:
        return bool(bcrypt.checkpw(password, entry.hashed.encode()))
    except ValueError:  # a damaged hash (wrong length, bad salt): it matches nothing
        return False


def read(path: str) -> dict[str, Entry]:
    """Raise OSError for a file that cannot be read, HtpasswdError for one that is not acceptable."""
    with open(path, "rb") as file:
        data = file.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:  # read on the event loop when it changes: keep that short
        raise HtpasswdError(f"it is larger than {MAX_BYTES // 1024} KiB", "give an htpasswd file")
    return parse(data.decode("utf-8", errors="replace"))


def signature(path: str) -> Signature | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns


def _warn(line: str) -> None:
    sys.stderr.write(f"resend-emulator: {line}\n")
    sys.stderr.flush()


class Users:
    """The users of one htpasswd file, re-read when it changes. `on_change` runs after a new version
    is taken (the middleware drops its cache of good sign-ins then)."""

    def __init__(self, path: str, now: Callable[[], float] = time.monotonic,
                 warn: Callable[[str], None] = _warn) -> None:
        self.path, self._now, self._warn = path, now, warn
        self._seen = signature(path)
        self.users = read(path)  # the first read raises: a bad file stops the start
        self._checked = now()
        self.on_change: Callable[[], None] = lambda: None

    def current(self) -> dict[str, Entry]:
        # The monotonic clock, not the emulator's: this paces file checks, not emulated time.
        now = self._now()
        if now - self._checked >= RECHECK_SECONDS:
            self._checked = now
            self._reload_if_changed()
        return self.users

    def _reload_if_changed(self) -> None:
        seen = signature(self.path)
        if seen == self._seen:
            return
        self._seen = seen  # a broken version is reported once, not every second
        try:
            users = read(self.path)
        except OSError as error:
            self._warn(f"--ui-auth-file {self.path}: cannot read it ({error.strerror});"
                       " keeping the previous users")
            return
        except HtpasswdError as error:
            self._warn(f"--ui-auth-file {self.path}: {error}; keeping the previous users")
            return
        self.users = users
        self.on_change()
