"""What the command line checks before it starts anything: every flag that names a file, a folder or a
scenario. A mistake is then one line naming the flag, the value and what to do, not a traceback from
deep inside the start (or, for a file that is not SQLite, a start that never ends)."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from contextlib import closing
from pathlib import Path

from emulator.core.config import Settings, StartupError
from emulator.core.net import is_loopback

SQLITE_HEADER = b"SQLite format 3\x00"
IN_MEMORY = ("", ":memory:")


def check(settings: Settings) -> int | None:
    """Raise a StartupError for the first flag the emulator could not start with. Return the descriptor
    of the `--db` file's lock, held for the life of the process (None: no file, no lock)."""
    lock = None
    check_exposure(settings)
    try:
        if settings.db not in IN_MEMORY and not settings.db.startswith("file:"):
            check_db(settings.db)
            lock = hold(settings.db)
            _probe(settings.db)
        check_others(settings)
    except StartupError:
        if lock is not None:
            os.close(lock)
        raise
    return lock


def check_others(settings: Settings) -> None:
    if settings.restore:
        check_restore(settings.restore)
    if settings.snapshot_dir:
        check_snapshot_dir(settings.snapshot_dir)
    if settings.seed_file:
        check_scenario(settings.seed_file)
    if settings.smtp or settings.https:
        check_tls(settings.tls_cert, settings.tls_key)
    if settings.ui_auth_file:
        check_ui_auth_file(settings.ui_auth_file)


def check_exposure(settings: Settings) -> None:
    """Exposed means protected (issue 38): beyond loopback, the UI and control plane (all mail, reset)
    need a sign-in, or an explicit --no-ui-auth."""
    if is_loopback(settings.host) or settings.ui_auth_file or settings.no_ui_auth:
        return
    raise StartupError("--host", settings.host, "not loopback, and without a sign-in anyone who reaches the"
                       " port could read all mail and reset the emulator",
                       "give --ui-auth-file FILE, made with `htpasswd -B -c FILE USER`, or --no-ui-auth"
                       " where only a trusted network reaches the port")


def check_ui_auth_file(value: str) -> None:
    from emulator.api.htpasswd import HtpasswdError, read

    advice = "create it with: htpasswd -B -c FILE USER"
    if not Path(value).is_file():
        raise StartupError("--ui-auth-file", value, "no such file", advice)
    try:
        read(value)
    except OSError as exc:
        raise StartupError("--ui-auth-file", value, f"cannot read it: {exc.strerror}",
                           "give an htpasswd file you can read", usage=False) from None
    except HtpasswdError as exc:
        raise StartupError("--ui-auth-file", value, exc.args[0], exc.advice) from None


def check_db(value: str) -> None:
    path = Path(value)
    if path.is_dir():
        raise StartupError("--db", value, "is a folder",
                           f"give a file path, e.g. --db {path / 'emulator.db'}")
    folder = path.parent
    if not folder.is_dir():
        raise StartupError("--db", value, f"the folder {folder} does not exist",
                           f"create it first: mkdir -p {folder}")
    if path.exists() and not _is_sqlite(path):
        raise StartupError("--db", value, "not an SQLite database", "use a new file name, or delete it")
    # SQLite also writes `-wal` and `-shm` files beside the database, so the folder must be writable too.
    for target in (path, folder):
        if target.exists() and not os.access(target, os.W_OK):
            raise StartupError("--db", value, f"cannot write to {target}: permission denied",
                               "give a path in a folder you can write to", usage=False)


def hold(value: str) -> int | None:
    """An exclusive `flock` on `<db>.lock`, so two emulators never share one database: each would keep
    its own id counters and clock and overwrite the other's rows. Taken before the probe, so a second
    emulator is told who holds the file (not "database is locked"). The kernel drops the lock when the
    process ends, however it ends (`kill -9` too), so a stale file never blocks a start. The file is
    left in place: deleting it would let a starter that opened the old one and one that made a new one
    both hold "the" lock."""
    path = os.path.realpath(value) + ".lock"
    try:
        lock = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        _probe(value)  # SQLite's reason first: the likelier cause (a file system that takes no files)
        raise StartupError("--db", value, f"cannot create its lock file {path}: {exc.strerror}",
                           "give a path in a folder you can write to", usage=False) from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(lock, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(lock)
        raise StartupError("--db", value, f"in use by another resend-emulator (PID {holder})",
                           "stop that one, or give another --db file", usage=False) from None
    except OSError:
        os.close(lock)
        return None  # a file system without flock (some network mounts): start unguarded, as before
    os.ftruncate(lock, 0)
    os.pwrite(lock, f"{os.getpid()}\n".encode(), 0)
    return lock


def _is_sqlite(path: Path) -> bool:
    """An empty file is fine (SQLite makes it a database); anything else must start with SQLite's header."""
    try:
        with path.open("rb") as file:
            head = file.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StartupError("--db", path, f"cannot read it: {exc.strerror}",
                           "give a file you can read and write", usage=False) from None
    return head in (b"", SQLITE_HEADER)


def _probe(value: str) -> None:
    """Open the file and take a write lock, as the emulator will: what the checks above cannot foresee
    (a read-only file system, a lock held by another program, a damaged file) is caught here."""
    try:
        with closing(sqlite3.connect(value, timeout=1)) as conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:
        busy = "locked" in str(exc)
        raise StartupError("--db", value, f"SQLite cannot use it: {exc}",
                           "stop the other emulator using it, or give another file" if busy
                           else "give a new file name", usage=False) from None


def check_restore(value: str) -> None:
    from emulator.control.snapshots import is_snapshot

    path = Path(value)
    if not path.exists():
        raise StartupError("--restore", value, "no such file",
                           "give a file written by POST /_emulator/snapshot/save")
    if not os.access(path, os.R_OK):
        raise StartupError("--restore", value, "cannot read it: permission denied",
                           "give a snapshot file you can read", usage=False)
    if not is_snapshot(path):
        raise StartupError("--restore", value, "not an emulator snapshot",
                           "give a file written by POST /_emulator/snapshot/save")


def check_snapshot_dir(value: str) -> None:
    path = Path(value)
    if not path.exists():
        raise StartupError("--snapshot-dir", value, "no such folder", f"create it first: mkdir -p {path}")
    if not path.is_dir():
        raise StartupError("--snapshot-dir", value, "not a folder", "give the folder snapshots go in")


def check_scenario(value: str) -> None:
    from emulator.control.scenarios import read
    from emulator.core.errors import ApiError

    try:
        read(value)
    except ApiError as error:
        raise StartupError("--scenario", value, error.message,
                           "give a bundled scenario's name or a JSON scenario file") from None


def check_tls(cert: str | None, key: str | None) -> None:
    """Both files or neither, each readable; whether they parse is checked when SMTP starts."""
    if bool(cert) != bool(key):
        flag, value = ("--tls-cert", cert) if cert else ("--tls-key", key)
        raise StartupError(flag, value, "--tls-cert and --tls-key go together", "give both, or neither")
    for flag, value in (("--tls-cert", cert), ("--tls-key", key)):
        if value is None:
            continue
        if not Path(value).is_file():
            raise StartupError(flag, value, "no such file", "give the path of a PEM file")
        if not os.access(value, os.R_OK):
            raise StartupError(flag, value, "cannot read it: permission denied",
                               "give a PEM file you can read", usage=False)
