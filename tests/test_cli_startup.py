"""A start that cannot happen is one line on stderr naming the flag, the value and what to do; exit status 2
for a wrong argument and 1 for a machine that refuses; never a traceback, never a hang."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

ENDS_WITHIN = 5.0  # seconds from the command to its exit, on a machine with a core to spare
DROP_FILE_PERMISSION_OVERRIDE = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def time_limit() -> float:
    """ENDS_WITHIN, stretched by the load: on a shared machine a process gets only its share of a core
    (a hang, the failure this guards against, never ends at all)."""
    return ENDS_WITHIN * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def start(*args: str, unprivileged: bool = False) -> subprocess.CompletedProcess[str]:
    """`python -m emulator ARGS` on free ports (unless ARGS name them); the run must end in time."""
    command = [sys.executable, "-m", "emulator", *free_ports_unless_given(args)]
    if unprivileged and os.geteuid() == 0:
        # root ignores file modes: drop that power, so a mode-000 file is as unreadable as for a user.
        if shutil.which("setpriv") is None:
            pytest.fail("running as root, these checks need `setpriv` (apt-get install util-linux)")
        command = [*DROP_FILE_PERMISSION_OVERRIDE, *command]
    limit, began = time_limit(), time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit * 4)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{' '.join(args)}` did not end: a failed start must never hang")
    assert time.monotonic() - began < limit, f"`{' '.join(args)}` took too long to fail"
    return done


def free_ports_unless_given(args: tuple[str, ...]) -> list[str]:
    ports = [flag for flag in ("--port", "--smtp-port", "--smtps-port") if flag not in args]
    return [*args, *(word for flag in ports for word in (flag, "0"))]


def one_line(done: subprocess.CompletedProcess[str], status: int, *expected: str) -> str:
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    [line] = lines
    assert line.startswith("resend-emulator: "), line
    for text in expected:
        assert text in line, line
    assert done.returncode == status, (done.returncode, line)
    assert done.stdout == "", "nothing started, so no banner"
    return line


@contextmanager
def listening() -> Iterator[int]:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield busy.getsockname()[1]


@pytest.fixture
def not_sqlite(tmp_path: Path) -> Path:
    notes = tmp_path / "notes.txt"
    notes.write_text("shopping list\n")
    return notes


def test_a_db_that_is_not_sqlite_is_refused_at_once(not_sqlite: Path) -> None:
    done = start("--db", str(not_sqlite))
    line = one_line(done, 2, f"--db {not_sqlite}: not an SQLite database")
    assert line.endswith("(use a new file name, or delete it)")
    assert not_sqlite.read_text() == "shopping list\n"  # left alone


def test_a_db_that_is_not_sqlite_is_refused_with_smtp_off_too(not_sqlite: Path) -> None:
    one_line(start("--no-smtp", "--db", str(not_sqlite)), 2, f"--db {not_sqlite}: not an SQLite database")


def test_a_db_that_is_a_folder_says_to_give_a_file(tmp_path: Path) -> None:
    one_line(start("--db", str(tmp_path)), 2, f"--db {tmp_path}: is a folder", str(tmp_path / "emulator.db"))


def test_a_db_in_a_missing_folder_says_how_to_make_it(tmp_path: Path) -> None:
    path = tmp_path / "state" / "emulator.db"
    one_line(start("--db", str(path)), 2, f"--db {path}: the folder {path.parent} does not exist",
             f"mkdir -p {path.parent}")


def test_a_db_in_a_folder_nobody_may_write_is_an_environment_failure(tmp_path: Path) -> None:
    folder = tmp_path / "readonly"
    folder.mkdir(mode=0o555)
    path = folder / "emulator.db"
    one_line(start("--db", str(path), unprivileged=True), 1, f"--db {path}: cannot write to {folder}",
             "permission denied")


def test_a_db_sqlite_cannot_create_is_an_environment_failure() -> None:
    # /proc exists and is a folder, but no file can be made in it, whoever asks.
    one_line(start("--db", "/proc/emulator.db"), 1, "--db /proc/emulator.db: SQLite cannot use it")


def test_an_existing_database_file_is_still_accepted(tmp_path: Path) -> None:
    path = tmp_path / "kept.db"
    sqlite3.connect(path).close()  # an empty SQLite file
    with listening() as busy:  # stops the start right after the --db checks, which it passed
        done = start("--db", str(path), "--port", str(busy))
    one_line(done, 1, f"--port {busy}: cannot listen on 127.0.0.1:{busy}")


def test_restore_of_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"
    one_line(start("--restore", str(path)), 2, f"--restore {path}: no such file", "/_emulator/snapshot/save")


def test_restore_of_a_file_that_is_no_snapshot(not_sqlite: Path) -> None:
    one_line(start("--restore", str(not_sqlite)), 2, f"--restore {not_sqlite}: not an emulator snapshot")


def test_snapshot_dir_that_does_not_exist(tmp_path: Path) -> None:
    path = tmp_path / "snapshots"
    one_line(start("--snapshot-dir", str(path)), 2, f"--snapshot-dir {path}: no such folder",
             f"mkdir -p {path}")


def test_snapshot_dir_that_is_a_file(not_sqlite: Path) -> None:
    one_line(start("--snapshot-dir", str(not_sqlite)), 2, f"--snapshot-dir {not_sqlite}: not a folder")


def test_an_unknown_scenario_names_the_bundled_ones() -> None:
    one_line(start("--scenario", "nope"), 2,
             "--scenario nope: No scenario `nope` (bundled: basic, demo, empty)")


def test_a_scenario_file_that_is_not_json(not_sqlite: Path) -> None:
    one_line(start("--scenario", str(not_sqlite)), 2, f"--scenario {not_sqlite}: Scenario",
             "is not valid JSON")


@pytest.mark.parametrize(("flag", "alternative"), [("--port", ""), ("--smtp-port", "--no-smtp"),
                                                   ("--smtps-port", "--no-smtp")])
def test_every_busy_port_names_its_flag(flag: str, alternative: str) -> None:
    with listening() as busy:
        done = start(flag, str(busy))
    one_line(done, 1, f"{flag} {busy}: cannot listen on 127.0.0.1:{busy}: the port is already in use",
                    "0 picks a free one", alternative)


def test_a_busy_smtps_port_stops_the_http_and_smtp_servers_already_bound() -> None:
    with ExitStack() as stack:
        http, smtp, smtps = (stack.enter_context(listening()) for _ in range(3))
    # The three ports are free again; occupy the last one and start on all three.
    with listening() as smtps:
        done = start("--port", str(http), "--smtp-port", str(smtp), "--smtps-port", str(smtps))
        one_line(done, 1, f"--smtps-port {smtps}")
        for port in (http, smtp):  # nothing was left listening on what the failed start had bound
            with socket.socket() as probe:
                assert probe.connect_ex(("127.0.0.1", port)) != 0


def test_a_host_that_is_not_this_machine() -> None:
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
    # --no-ui-auth: not loopback, so without it the missing sign-in would be the line (test_ui_auth.py).
    one_line(start("--host", "192.0.2.1", "--no-ui-auth"), 1, "--host 192.0.2.1: cannot listen on it",
             "127.0.0.1")


def test_a_host_name_that_does_not_resolve() -> None:
    one_line(start("--host", "no-such-host.invalid", "--no-ui-auth"), 2,
             "--host no-such-host.invalid: cannot listen on it")


def test_a_missing_tls_certificate(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    key.write_text("key")
    one_line(start("--tls-cert", str(cert), "--tls-key", str(key)), 2, f"--tls-cert {cert}: no such file")


def test_an_unreadable_tls_key(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_text("cert")
    key.write_text("key")
    key.chmod(0)
    one_line(start("--tls-cert", str(cert), "--tls-key", str(key), unprivileged=True), 1,
             f"--tls-key {key}: cannot read it: permission denied")


def test_tls_files_that_are_not_pem(not_sqlite: Path) -> None:
    one_line(start("--tls-cert", str(not_sqlite), "--tls-key", str(not_sqlite)), 2,
             f"--tls-cert {not_sqlite}: not a usable certificate and key")


def test_a_tls_certificate_without_its_key(not_sqlite: Path) -> None:
    one_line(start("--tls-cert", str(not_sqlite)), 2,
             f"--tls-cert {not_sqlite}: --tls-cert and --tls-key go together")


@pytest.mark.parametrize(("args", "expected"), [
    (("--port", "abc"), "argument --port: invalid port: 'abc'"),
    (("--smtp-port", "70000"), "argument --smtp-port: invalid port: 70000"),
    (("--clock", "slow"), "argument --clock: invalid choice: 'slow'"),
    (("--bogus",), "unrecognized arguments: --bogus"),
])
def test_a_malformed_argument_is_one_usage_line(args: tuple[str, ...], expected: str) -> None:
    done = subprocess.run([sys.executable, "-m", "emulator", *args], capture_output=True, text=True,
                          timeout=30)
    [line] = done.stderr.splitlines()
    assert line.startswith(f"resend-emulator: {expected}") and line.endswith("(see resend-emulator --help)")
    assert done.returncode == 2
