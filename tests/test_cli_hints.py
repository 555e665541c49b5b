"""The command line helps a person who typed something slightly wrong: a mistyped flag gets the nearest
real one, and a refused API key gets one console line naming (redacted) the keys that would work."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

INVALID = {"statusCode": 403, "name": "invalid_api_key", "message": "API key is invalid"}


def start(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", *args],
                          capture_output=True, text=True, timeout=30)


def test_a_mistyped_flag_names_the_nearest_on_one_line_and_exits_2() -> None:
    result = start("--sctp-port", "25")
    assert result.returncode == 2 and result.stdout == ""  # nothing started: no banner
    assert result.stderr == ("resend-emulator: unrecognized arguments: --sctp-port 25; did you mean"
                             " --smtp-port? (see resend-emulator --help)\n")


def test_each_mistyped_flag_gets_its_own_suggestion_and_values_after_equals_are_ignored() -> None:
    result = start("--sctp-port=25", "--quite")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("resend-emulator: unrecognized arguments: --sctp-port=25 --quite; did you mean"
                             " --smtp-port (for --sctp-port), --quiet (for --quite)? (see resend-emulator"
                             " --help)\n")


def test_a_flag_like_no_other_gets_no_guess() -> None:
    result = start("--bogus")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "resend-emulator: unrecognized arguments: --bogus (see resend-emulator --help)\n"


@contextmanager
def emulator(*args: str) -> Iterator[tuple[str, list[str]]]:
    """A real `python -m emulator`; yields its URL and, once the block is done and it has stopped, the
    lines it printed after the banner (filled in on exit)."""
    process = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    later: list[str] = []
    try:
        banner = [process.stdout.readline()]
        while not banner[-1].startswith("  outbox UI:"):
            banner.append(process.stdout.readline())
        yield banner[0].split()[-1], later
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=30)
        later += out.splitlines()


def refuse(url: str, key: str) -> None:
    response = httpx.post(f"{url}/domains", json={"name": "acme.dev"},
                          headers={"Authorization": f"Bearer {key}"})
    assert (response.status_code, response.json()) == (403, INVALID)


def test_a_refused_key_is_logged_once_naming_the_accepted_keys_redacted() -> None:
    with emulator("--api-key", "re_test_123", "--api-key", "re_second_9876") as (url, later):
        for key in ("re_emulator_default_key", "re_emulator_default_key", "re_typo_4567", "sk_live_abcd"):
            refuse(url, key)
        listed = httpx.get(f"{url}/domains", headers={"Authorization": "Bearer re_test_123"}).json()
        assert listed["data"] == []  # the refused creates left nothing behind
    accepts = "it accepts re_…_123, re_…9876 (the start-up banner prints the key in full; --api-key KEY" \
              " provisions another)"
    assert later == [
        f"resend-emulator: refused API key re_…_key (403 invalid_api_key); {accepts}",
        f"resend-emulator: refused API key re_…4567 (403 invalid_api_key); {accepts}",
        "resend-emulator: refused a key that does not start with re_ (Resend's keys all do)"
        f" (403 invalid_api_key); {accepts}",
    ]
    assert not any(key in line for line in later
                   for key in ("re_test_123", "re_second_9876", "re_emulator_default_key", "re_typo_4567"))


def test_under_isolate_keys_a_refused_key_is_told_what_shape_works() -> None:
    with emulator("--isolate-keys") as (url, later):
        refuse(url, "re_not-well-formed")
        assert httpx.get(f"{url}/domains", headers={"Authorization": "Bearer re_any_other_key"}).is_success
    assert later == ["resend-emulator: refused API key re_…rmed (403 invalid_api_key); under --isolate-keys"
                     " any well-formed key works: re_ then 1 to 128 letters, digits or underscores"]


def test_refusals_stop_being_logged_after_twenty_distinct_keys_and_quiet_logs_none() -> None:
    with emulator() as (url, later):
        for n in range(25):
            refuse(url, f"re_wrong_{n:04d}")
    assert len(later) == 21 and later[-1] == ("resend-emulator: more than 20 different API keys refused;"
                                              " no more are logged")
    with emulator("--quiet") as (url, quiet):
        refuse(url, "re_wrong_0001")
    assert quiet == []


def test_help_names_every_bundled_scenario_without_loading_the_app() -> None:
    # Issue 40: the names come from the fixtures folder, so `--help` and a usage error start fast.
    code = ("import sys; from emulator.cli import build_parser; text = build_parser().format_help();"
            " print(sorted(m for m in ('starlette', 'emulator.app', 'emulator.control.scenarios', 'shutil')"
            " if m in sys.modules)); print(text)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    loaded, _, text = result.stdout.partition("\n")
    assert loaded == "[]"
    assert "a bundled scenario (basic, demo, empty)" in " ".join(text.split())


def test_the_command_line_server_runs_without_uvicorns_command_line_package() -> None:
    # Issue 40: click, watchfiles and uvicorn's reloaders are never run by the emulator; not imported.
    code = ("import sys, os\n"
            "from emulator import cli\n"
            "def probe(emu):\n"
            "    names = ('click', 'watchfiles', 'uvicorn.main')\n"
            "    print(sorted(m for m in names if m in sys.modules), flush=True)\n"
            "    os._exit(0)\n"
            "cli.on_ready = probe\n"
            "cli.main(['--port', '0', '--smtp-port', '0', '--smtps-port', '0'])\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert result.stdout.strip() == "[]", result.stderr
