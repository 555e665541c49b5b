"""The plugin's two shapes (the emulator in a thread, the default, or a child process) through real runs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

MAIL_DOES_NOT_CARRY_OVER = '''
import pytest
import resend
from emulator.testing import EmulatorError

def test_first_sends(resend_emulator):
    resend.Emails.send({"from": "a@acme.dev", "to": ["left@acme.dev"], "subject": "s", "text": "t"})
    assert resend_emulator.outbox.wait_for(to="left@acme.dev")["subject"] == "s"

def test_second_sees_no_mail(resend_emulator):
    assert resend_emulator.outbox.list() == []
    with pytest.raises(EmulatorError) as failure:
        resend_emulator.outbox.wait_for(to="left@acme.dev", timeout=0.05)
    assert failure.value.status == 408
'''

HANDLE_KIND = '''
def test_kind(resend_emulator):
    assert type(resend_emulator).__name__ == "{kind}"
'''

WAITS_THEN_HANGS = '''
import os, time

def test_hangs(resend_emulator):
    with open(os.environ["URL_FILE"], "w") as out:
        out.write(resend_emulator.url)
    time.sleep(60)
'''


@pytest.mark.parametrize("shape", ["process", "thread"])
def test_a_test_never_sees_the_previous_tests_mail(pytester: pytest.Pytester, shape: str) -> None:
    pytester.makepyfile(test_carry=MAIL_DOES_NOT_CARRY_OVER)
    pytester.runpytest_subprocess("-q", f"--resend-emulator-shape={shape}").assert_outcomes(passed=2)


def test_the_default_shape_is_a_thread(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_kind=HANDLE_KIND.format(kind="EmulatorServer"))
    pytester.runpytest_subprocess("-q").assert_outcomes(passed=1)


def test_the_ini_option_picks_the_process_and_the_command_line_wins(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nresend_emulator_shape = process\n")
    pytester.makepyfile(test_kind=HANDLE_KIND.format(kind="ChildEmulator"))
    pytester.runpytest_subprocess("-q").assert_outcomes(passed=1)
    pytester.makepyfile(test_kind=HANDLE_KIND.format(kind="EmulatorServer"))
    pytester.runpytest_subprocess("-q", "--resend-emulator-shape", "thread").assert_outcomes(passed=1)


def test_a_child_that_cannot_start_fails_the_test_saying_why(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('''
import pytest

@pytest.fixture(scope="session")
def resend_emulator_settings():
    return {"tls_cert": "/nonexistent/cert.pem", "tls_key": "/nonexistent/key.pem"}
''')
    pytester.makepyfile(test_kind=HANDLE_KIND.format(kind="ChildEmulator"))
    result = pytester.runpytest_subprocess("-q", "--resend-emulator-shape=process")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*resend-emulator did not start*"])


def _answers(url: str) -> bool:
    host, port = url.removeprefix("http://").split(":")
    try:
        socket.create_connection((host, int(port)), timeout=0.5).close()
        return True
    except OSError:
        return False


def test_the_child_dies_with_a_pytest_killed_by_sigkill(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(test_hang=WAITS_THEN_HANGS)
    url_file = tmp_path / "url"
    env = {**os.environ, "URL_FILE": str(url_file)}
    run = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "--resend-emulator-shape=process"],
                           cwd=pytester.path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not (url_file.exists() and url_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        url = url_file.read_text()
        assert _answers(url)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    deadline = time.monotonic() + 10
    while _answers(url) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _answers(url)


EVERY_PART = '''
import resend

def test_every_part_of_the_handle_works(resend_emulator, tmp_path):
    assert resend_emulator.health()["status"] == "ok"
    with resend_emulator.smtp() as session:
        session.sendmail("robot@acme.dev", ["smtp@acme.dev"], b"Subject: by smtp\\r\\n\\r\\nbody\\r\\n")
    assert resend_emulator.outbox.wait_for(to="smtp@acme.dev")["subject"] == "by smtp"
    resend_emulator.clock.freeze("2031-05-01T00:00:00Z")
    assert resend_emulator.clock.now().startswith("2031-05-01T00:00:00")
    resend_emulator.load_scenario("basic")
    resend_emulator.snapshot(tmp_path / "state.db")
    resend.Domains.create({"name": "later.dev"})
    resend_emulator.restore(tmp_path / "state.db")
    assert [d["name"] for d in resend.Domains.list()["data"]] == ["acme.dev"]
    resend_emulator.mark_baseline()
    resend.Domains.create({"name": "gone.dev"})
    resend_emulator.reset()
    assert [d["name"] for d in resend.Domains.list()["data"]] == ["acme.dev"]

def test_a_baseline_marked_by_a_test_holds_for_the_next(resend_emulator):
    assert [d["name"] for d in resend.Domains.list()["data"]] == ["acme.dev"]
'''


@pytest.mark.parametrize("shape", ["process", "thread"])
def test_smtp_clock_scenarios_snapshots_and_baselines_work_in_either_shape(pytester: pytest.Pytester,
                                                                           shape: str) -> None:
    pytester.makepyfile(test_parts=EVERY_PART)
    pytester.runpytest_subprocess("-q", f"--resend-emulator-shape={shape}").assert_outcomes(passed=2)
