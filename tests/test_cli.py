"""The command line: start, port 0, flags, clear one-line errors."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from emulator.cli import parse_settings

ROOT = Path(__file__).resolve().parent.parent


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
    assert result.stderr == ("resend-emulator: argument --port: invalid port: 'abc' (a number from 0"
                             " to 65535) (see resend-emulator --help)\n")


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


def test_version_prints_the_package_version() -> None:
    result = subprocess.run([sys.executable, "-m", "emulator", "--version"], capture_output=True, text=True,
                            timeout=30)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert result.returncode == 0 and result.stdout == f"resend-emulator {version}\n"


def test_help_tells_seed_from_scenario_names_the_bundled_ones_and_says_requests_are_not_logged() -> None:
    result = subprocess.run([sys.executable, "-m", "emulator", "--help"], capture_output=True, text=True,
                            timeout=30)
    text = " ".join(result.stdout.split())
    assert "--scenario NAME|FILE, --seed-file NAME|FILE" in text
    assert "a bundled scenario (basic, demo, empty) or the path of a JSON scenario file" in text
    assert "it loads no data: for that see --scenario" in text
    assert "--log-requests, -v" in text
    assert "HTTP requests are not logged unless --log-requests (-v) is given." in text


def test_scenario_and_its_old_spelling_set_the_same_setting() -> None:
    assert parse_settings(["--scenario", "basic"]).seed_file == "basic"
    assert parse_settings(["--seed-file", "demo"]).seed_file == "demo"
    os.environ["RESEND_EMULATOR_SCENARIO"] = "empty"
    try:
        assert parse_settings([]).seed_file == "empty"
    finally:
        del os.environ["RESEND_EMULATOR_SCENARIO"]


def banner_then_rest(process: subprocess.Popen[str]) -> tuple[str, list[str]]:
    """The URL of a `--no-smtp` start (3 banner lines); after termination, every later line."""
    assert process.stdout is not None
    banner = [process.stdout.readline() for _ in range(3)]
    return banner[0].split()[-1], banner


def lines_after(process: subprocess.Popen[str]) -> list[str]:
    process.terminate()
    rest, _ = process.communicate(timeout=30)
    return rest.splitlines()


def test_a_bundled_scenario_name_works_without_a_fixtures_folder(tmp_path: Path) -> None:
    # A pip user runs from their own project, where no fixtures/ folder exists.
    process = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", "--seed-file",
                                "basic"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=tmp_path)
    try:
        url, _ = banner_then_rest(process)
        domains = httpx.get(f"{url}/domains", headers={"Authorization": "Bearer re_emulator_default_key"})
        assert [d["name"] for d in domains.json()["data"]] == ["acme.dev"]
    finally:
        lines_after(process)


def test_log_requests_prints_method_path_status_and_ms_one_line_each() -> None:
    process = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", "-v"],
                               stdout=subprocess.PIPE, text=True)
    url, _ = banner_then_rest(process)
    auth = {"Authorization": "Bearer re_emulator_default_key"}
    httpx.get(f"{url}/domains?limit=5", headers=auth)
    httpx.post(f"{url}/emails", headers=auth, json={"from": "a@acme.dev"})
    httpx.get(f"{url}/nowhere", headers=auth)
    lines = lines_after(process)
    assert len(lines) == 3, lines
    pattern = r"^{} {} {} \d+\.\dms$"
    for line, (method, path, status) in zip(lines, [("GET", "/domains", 200), ("POST", "/emails", 422),
                                                    ("GET", "/nowhere", 404)], strict=True):
        assert re.match(pattern.format(method, re.escape(path), status), line), line


def test_requests_are_not_logged_by_default() -> None:
    process = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp"],
                               stdout=subprocess.PIPE, text=True)
    url, banner = banner_then_rest(process)
    assert httpx.get(f"{url}/domains", headers={"Authorization": "Bearer re_emulator_default_key"}).is_success
    assert lines_after(process) == []
    assert "outbox UI" in banner[-1]


def test_the_banner_says_what_a_scenario_loaded() -> None:
    process = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", "--scenario",
                                "basic"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        banner = [process.stdout.readline() for _ in range(4)]
        assert banner[2] == ("  scenario basic: 1 domain, 3 contacts, 1 segment, 1 topic, 1 contact property,"
                             " 1 template, 1 webhook, 1 API key\n")
        url = banner[0].split()[-1]
        auth = {"Authorization": "Bearer re_emulator_default_key"}
        # The counts are the rows the API now shows, not a description of the fixture.
        assert len(httpx.get(f"{url}/contacts", headers=auth).json()["data"]) == 3
    finally:
        lines_after(process)


def test_the_banner_counts_the_demo_scenario_from_what_it_made() -> None:
    process = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", "--scenario",
                                "demo", "--seed", "3"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        banner = [process.stdout.readline() for _ in range(4)]
        url = banner[0].split()[-1]
        outbox = httpx.get(f"{url}/_emulator/outbox", params={"limit": 100}).json()["data"]
        assert banner[2] == f"  scenario demo: {len(outbox)} emails, 1 domain\n"
    finally:
        lines_after(process)


def test_a_reader_that_closes_the_pipe_after_the_url_does_not_stop_the_server() -> None:
    # What a Node test runner's global setup does: read the first line, close the pipe, keep testing.
    process = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", "-v"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[-1]
        process.stdout.close()
        for _ in range(3):  # each request now writes its log line into the closed pipe
            assert httpx.get(f"{url}/_emulator/health").status_code == 200
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
    assert errors == ""
