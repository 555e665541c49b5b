"""Isolated accounts (`--isolate-keys`): their ids, how a person recognises one, and the start-up
migration of database files made before issue 36, whose isolated accounts were named `acct_<raw key>`.

An account id never contains its key: it appears in URLs, the UI's switcher, a cookie and outbox JSON,
where anyone who sees a screen or a log would read the key. The id is `acct_` and the first 20 base32
characters (100 bits) of HMAC-SHA256(secret, key), the secret derived from `--seed`: the same seed and
key give the same id on every start and in every database, and the id is short, lower-case and URL-safe.
Assumed: the seed is no secret (it defaults to 0), so the HMAC hides the key from a reader of the id but
does not stop someone who also knows the seed from testing guesses of a short key against it.

A person recognises an isolated account by its key redacted: `re_…` and its last few characters.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import sqlite3
from collections.abc import Sequence

ACCOUNT_PREFIX = "acct_"
_ID_CHARS = 20
# Before issue 36 an isolated account was `acct_` + its key, and keys are `re_…` (auth.WELL_FORMED_KEY).
# A derived id is base32 (no `_`), so it can never be mistaken for one of those.
_OLD_PREFIX = "acct_re_"
MANAGED_SUFFIX = ".resend.app"
MIGRATION_CHUNK = 5_000  # rows per transaction when renaming a table's accounts


def _secret(seed: int) -> bytes:
    return hashlib.sha256(f"resend-emulator/isolated-accounts/{seed}".encode()).digest()


def isolated_account_id(seed: int, token: str) -> str:
    """The account an isolated key acts for (see the module docstring)."""
    digest = hmac.new(_secret(seed), token.encode(), hashlib.sha256).digest()
    return ACCOUNT_PREFIX + base64.b32encode(digest).decode().lower()[:_ID_CHARS]


def redacted_key(token: str) -> str:
    """`re_…1234`: the last 4 characters of the key, fewer for a short key (never more than half of what
    follows `re_`), so a person can tell keys apart without the screen showing one."""
    body = token.removeprefix("re_")
    shown = min(4, len(body) // 2)
    return "re_…" + (body[-shown:] if shown else "")


def managed_domain(account: str) -> str:
    """[rec] The account's managed receiving subdomain: stable per account, no secret in it."""
    return hashlib.sha256(account.encode()).hexdigest()[:12] + MANAGED_SUFFIX


# ---- migration of `acct_<raw key>` accounts -------------------------------------------------------

def _renames(raw: sqlite3.Connection, seed: int) -> list[tuple[str, str]]:
    rows = raw.execute("SELECT id FROM accounts WHERE substr(id, 1, ?) = ?",
                       (len(_OLD_PREFIX), _OLD_PREFIX)).fetchall()
    olds = {row["id"] for row in rows}
    counter = "id_counter:" + _OLD_PREFIX  # not LIKE, whose `_` would match any character
    counters = raw.execute("SELECT key FROM meta WHERE substr(key, 1, ?) = ?", (len(counter), counter))
    olds |= {row["key"].partition(":")[2] for row in counters.fetchall()}
    return [(old, isolated_account_id(seed, old.removeprefix(ACCOUNT_PREFIX))) for old in sorted(olds)]


def _account_tables(raw: sqlite3.Connection) -> list[tuple[str, bool]]:
    """(table, has rowid) of every table with an `account` column but `accounts` itself."""
    tables = raw.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"
                         " AND name NOT LIKE 'sqlite_%' AND name != 'accounts'").fetchall()
    found = []
    for table in tables:
        columns = {row["name"] for row in raw.execute(f"PRAGMA table_info({table['name']})")}
        if "account" in columns:
            found.append((table["name"], "WITHOUT ROWID" not in (table["sql"] or "").upper()))
    return found


_RENAMED = ("account = (SELECT new FROM temp.account_renames WHERE old = account)"
            " WHERE account IN (SELECT old FROM temp.account_renames)")


def _write(raw: sqlite3.Connection, statements: Sequence[tuple[str, tuple[object, ...]]]) -> None:
    raw.execute("BEGIN IMMEDIATE")
    try:
        for sql, params in statements:
            raw.execute(sql, params)
    except BaseException:
        raw.execute("ROLLBACK")
        raise
    raw.execute("COMMIT")


def _rename_table(raw: sqlite3.Connection, table: str, rowid: bool) -> None:
    """Rename the table's accounts in chunks of rowids, each its own transaction, so memory and the log
    stay bounded however large the table; a table without rowids (small join tables) in one."""
    if not rowid:
        _write(raw, [(f"UPDATE OR IGNORE {table} SET {_RENAMED}", ())])
        return
    top = raw.execute(f"SELECT max(rowid) AS top FROM {table}").fetchone()["top"] or 0
    for low in range(0, top, MIGRATION_CHUNK):
        _write(raw, [(f"UPDATE {table} SET {_RENAMED} AND rowid > ? AND rowid <= ?",
                      (low, low + MIGRATION_CHUNK))])


def _finish(raw: sqlite3.Connection, old: str, new: str) -> list[tuple[str, tuple[object, ...]]]:
    """The account's own row and id sequence, and its inboxes' forwarding addresses on its managed
    domain (which follows the id): renamed last, so a migration cut short resumes at the next start."""
    old_domain, new_domain = "@" + managed_domain(old), "@" + managed_domain(new)
    steps: list[tuple[str, tuple[object, ...]]] = [
        ("INSERT OR IGNORE INTO accounts (id, created_at) SELECT ?, created_at FROM accounts WHERE id = ?",
         (new, old)),
        ("DELETE FROM accounts WHERE id = ?", (old,)),
        ("UPDATE OR REPLACE meta SET key = ? WHERE key = ?", (f"id_counter:{new}", f"id_counter:{old}")),
    ]
    inboxes = {row["name"] for row in raw.execute("PRAGMA table_info(inboxes)")}
    if "receiving_address" in inboxes:
        steps.append(("UPDATE inboxes SET receiving_address = substr(receiving_address, 1,"
                      " length(receiving_address) - ?) || ? WHERE account = ? AND receiving_address LIKE ?",
                      (len(old_domain), new_domain, new, "%" + old_domain)))
    return steps


def migrate_key_named_accounts(raw: sqlite3.Connection, seed: int) -> list[tuple[str, str]]:
    """Rewrite every `acct_<raw key>` account of the database to its derived id (issue 36): in every
    table with an `account` column, the accounts table and the account's id sequence in `meta`.
    Returns the (old, new) pairs renamed."""
    renames = _renames(raw, seed)
    if not renames:
        return []
    raw.execute("CREATE TEMP TABLE IF NOT EXISTS account_renames (old TEXT PRIMARY KEY, new TEXT NOT NULL)")
    raw.execute("DELETE FROM temp.account_renames")
    raw.executemany("INSERT INTO temp.account_renames (old, new) VALUES (?, ?)", renames)
    for table, rowid in _account_tables(raw):
        _rename_table(raw, table, rowid)
    for old, new in renames:
        _write(raw, _finish(raw, old, new))
    # Counters kept per account (control/counts.py) are built afresh rather than trusted to the rename.
    _write(raw, [("DELETE FROM meta WHERE key = 'mail_counts'", ())])
    raw.execute("DROP TABLE temp.account_renames")
    return renames


