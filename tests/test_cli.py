"""The command line: start, port 0, flags, clear one-line errors."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from emulator.cli import parse_settings


@contextmanager
def running(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = subprocess.Popen([sys.executable, "-m", "emulator", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        yield process, first
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_port_0_prints_the_url_and_serves() -> None:
    with running("--port", "0", "--api-key", "re_test_123", "--no-smtp") as (_, first):
        assert first.startswith("resend-emulator listening on http://127.0.0.1:")
        url = first.split()[-1]
        response = httpx.get(f"{url}/domains", headers={"Authorization": "Bearer re_test_123"})
        assert response.status_code == 200


def test_port_in_use_is_one_clear_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "emulator", "--port", str(port), "--no-smtp"],
                                capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_flag_is_a_usage_error() -> None:
    result = subprocess.run([sys.executable, "-m", "emulator", "--port", "abc"], capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "invalid int value" in result.stderr


def test_help_documents_every_flag_and_its_env_var() -> None:
    result = subprocess.run([sys.executable, "-m", "emulator", "--help"], capture_output=True,
                            text=True, timeout=30)
    text = " ".join(result.stdout.split())
    for flag, env in [("--host", "HOST"), ("--port", "PORT"), ("--smtp-port", "SMTP_PORT"),
                      ("--smtps-port", "SMTPS_PORT"), ("--no-smtp", "NO_SMTP"), ("--db", "DB"),
                      ("--seed", "SEED"), ("--api-key", "API_KEYS"), ("--clock", "CLOCK"),
                      ("--strict-domains", "STRICT_DOMAINS"), ("--rate-limit", "RATE_LIMIT"),
                      ("--isolate-keys", "ISOLATE_KEYS"), ("--seed-file", "SEED_FILE")]:
        assert flag in text and f"RESEND_EMULATOR_{env}" in text, flag


def test_settings_from_flags_and_environment(monkeypatch: object) -> None:
    settings = parse_settings(["--api-key", "re_a", "--api-key", "re_b", "--seed", "5",
                               "--clock", "frozen", "--clock-start", "2026-02-01T00:00:00Z"])
    assert settings.api_keys == ["re_a", "re_b"] and settings.seed == 5
    assert settings.clock == "frozen" and settings.clock_start is not None
    os.environ["RESEND_EMULATOR_API_KEYS"] = "re_x, re_y"
    os.environ["RESEND_EMULATOR_PORT"] = "0"
    os.environ["RESEND_EMULATOR_STRICT_DOMAINS"] = "true"
    try:
        settings = parse_settings([])
        assert settings.api_keys == ["re_x", "re_y"] and settings.port == 0
        assert settings.strict_domains is True
    finally:
        for name in ("API_KEYS", "PORT", "STRICT_DOMAINS"):
            del os.environ[f"RESEND_EMULATOR_{name}"]


def test_default_key_is_created_and_printed() -> None:
    with running("--port", "0", "--no-smtp") as (process, first):
        assert process.stdout is not None
        lines = [first] + [process.stdout.readline() for _ in range(2)]
        assert any("re_emulator_default_key" in line for line in lines)
        url = first.split()[-1]
        headers = {"Authorization": "Bearer re_emulator_default_key"}
        assert httpx.get(f"{url}/api-keys", headers=headers).status_code == 200
