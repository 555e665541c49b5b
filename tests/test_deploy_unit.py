"""The systemd unit in docs/deploy is a real one: `systemd-analyze verify` accepts it without a word, and
its ExecStart runs the emulator with flags the command knows, with values it accepts."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from emulator.cli import build_parser

UNIT = Path(__file__).resolve().parent.parent / "docs" / "deploy" / "resend-emulator.service"
COMMAND = str(Path(sys.executable).with_name("resend-emulator"))


def directives(text: str) -> dict[str, list[str]]:
    """`Key=value` lines (continuations joined), comments and section headers left out."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found: dict[str, list[str]] = {}
    for line in joined.splitlines():
        if line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            found.setdefault(key, []).append(value)
    return found


def exec_start() -> list[str]:
    [line] = directives(UNIT.read_text())["ExecStart"]
    return shlex.split(line)


def test_systemd_analyze_verify_accepts_the_unit_without_a_warning(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    # verify wants ExecStart's program to exist: the same unit, pointing at a stand-in that does.
    program = exec_start()[0]
    stand_in = tmp_path / "resend-emulator"
    stand_in.write_text("#!/bin/sh\n")
    stand_in.chmod(0o755)
    unit = tmp_path / UNIT.name
    unit.write_text(UNIT.read_text().replace(f"ExecStart={program} ", f"ExecStart={stand_in} "))
    assert str(stand_in) in unit.read_text()
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def test_the_unit_runs_the_venv_command_as_its_own_user_with_its_state_in_the_state_directory() -> None:
    unit = directives(UNIT.read_text())
    command = exec_start()
    assert command[0] == "/opt/resend-emulator/.venv/bin/resend-emulator"
    assert unit["User"] == ["resend-emulator"] and unit["StateDirectory"][0].startswith("resend-emulator")
    assert command[command.index("--db") + 1].startswith("/var/lib/resend-emulator/")
    assert {"--https", "--ui-auth-file", "--max-emails", "--max-age"} <= set(command)
    assert unit["KillSignal"] == ["SIGTERM"] and unit["Restart"] == ["on-failure"]
    assert float(unit["TimeoutStopSec"][0].rstrip("s")) > 5  # the graceful stop's 5 s, and the close
    for hardening in ("NoNewPrivileges", "ProtectHome", "PrivateTmp"):
        assert unit[hardening] == ["yes"], hardening
    assert unit["ProtectSystem"] == ["strict"]


def test_every_flag_in_exec_start_is_one_resend_emulator_knows() -> None:
    known = set(re.findall(r"--[a-z][a-z0-9-]*", subprocess.run(
        [COMMAND, "--help"], capture_output=True, text=True, timeout=60, check=True).stdout))
    used = {word.split("=", 1)[0] for word in exec_start()[1:] if word.startswith("--")}
    assert used - known == set()


def test_the_flags_values_are_ones_the_command_line_accepts(tmp_path: Path) -> None:
    credentials = str(tmp_path)  # %d: the credentials directory systemd makes at start
    args = [word.replace("%d", credentials) for word in exec_start()[1:]]
    settings = build_parser().parse_args(args)
    assert (settings.https, settings.host, settings.max_emails, settings.max_age) == (True, "0.0.0.0", 50000,
                                                                                     7 * 86400)
