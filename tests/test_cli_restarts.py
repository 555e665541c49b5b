"""Restarting the command on one --db keeps the state and adds nothing; one process per database file."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.test_cli_startup import one_line, start

AUTH = {"Authorization": "Bearer re_emulator_default_key"}


def launch(*args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)


def banner(process: subprocess.Popen[str]) -> tuple[str, list[str]]:
    """The URL and the banner lines, up to the outbox UI line that ends it."""
    assert process.stdout is not None
    lines: list[str] = []
    while not lines or "outbox UI" not in lines[-1]:
        line = process.stdout.readline()
        assert line, f"ended before its banner: {process.communicate(timeout=30)}"
        lines.append(line)
    return lines[0].split()[-1], lines


def stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGINT)
    try:
        process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()  # no stray emulator outlives the test that failed
        process.communicate(timeout=30)
        raise
    return process.returncode


@contextmanager
def serving(*args: str) -> Iterator[tuple[subprocess.Popen[str], str, list[str]]]:
    process = launch(*args)
    try:
        url, lines = banner(process)
        yield process, url, lines
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


def counts(url: str) -> tuple[int, int, int]:
    """Sent emails, contacts and domains of the default account, as the API shows them."""
    outbox = httpx.get(f"{url}/_emulator/outbox", params={"limit": 100}).json()["data"]
    contacts = httpx.get(f"{url}/contacts", params={"limit": 100}, headers=AUTH).json()["data"]
    domains = httpx.get(f"{url}/domains", headers=AUTH).json()["data"]
    return len(outbox), len(contacts), len(domains)


def run_once(*args: str) -> tuple[tuple[int, int, int], list[str]]:
    """Start, count, stop with Ctrl-C: the counts, the banner; the run must end with status 0."""
    with serving(*args) as (process, url, lines):
        seen = counts(url)
        assert stop(process) == 0
    return seen, lines


@pytest.mark.parametrize("scenario", ["basic", "demo"])
def test_a_scenario_restarted_on_the_same_db_keeps_its_rows_and_adds_none(tmp_path: Path,
                                                                          scenario: str) -> None:
    db = str(tmp_path / "state.db")
    first, _ = run_once("--db", db, "--scenario", scenario)
    assert first != (0, 0, 0)
    for _ in range(2):
        again, lines = run_once("--db", db, "--scenario", scenario)
        assert again == first
        assert f"  scenario {scenario}: loaded before into {db}, nothing added\n" in lines


def test_another_scenario_on_a_db_that_holds_one_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    before, _ = run_once("--db", db, "--scenario", "basic")
    one_line(start("--db", db, "--scenario", "demo"), 2,
             f"--scenario demo: {db} already holds scenario basic", "give a new --db file")
    after, _ = run_once("--db", db)
    assert after == before


def test_a_scenario_given_to_a_db_used_without_one_loads_once(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    assert run_once("--db", db)[0] == (0, 0, 0)
    loaded, _ = run_once("--db", db, "--scenario", "basic")
    assert loaded[1:] == (3, 1)
    assert run_once("--db", db, "--scenario", "basic")[0] == loaded


def test_a_second_process_on_the_same_db_is_one_line_naming_the_file_and_the_holder(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    with serving("--db", db, "--scenario", "basic") as (first, url, _):
        before = counts(url)
        line = one_line(start("--db", db), 1, f"--db {db}: in use by another resend-emulator"
                        f" (PID {first.pid})")
        assert "give another --db file" in line
        assert counts(url) == before, "the refused start touched nothing"
        assert first.poll() is None


def test_the_same_file_by_another_name_is_the_same_database(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    with serving("--db", str(tmp_path / "state.db")) as (first, _, _):
        one_line(start("--db", str(tmp_path / "sub" / ".." / "state.db")), 1, f"(PID {first.pid})")


def test_after_the_holder_is_killed_with_sigkill_a_new_process_starts_on_the_db(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    with serving("--db", db, "--scenario", "basic") as (first, url, _):
        before = counts(url)
        first.kill()  # SIGKILL: no exit handler runs, only the kernel releases the lock
        first.wait(timeout=30)
    after, _ = run_once("--db", db, "--scenario", "basic")
    assert after == before


def test_without_db_no_lock_file_is_made(tmp_path: Path) -> None:
    process = launch(cwd=tmp_path)
    try:
        banner(process)
    finally:
        assert stop(process) == 0
    assert list(tmp_path.iterdir()) == []
