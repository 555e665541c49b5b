"""docs/team-host.md runs as written: its commands make a password file and a certificate, start one
protected emulator (on 127.0.0.1 and free ports: tests listen on loopback only) and talk to it over HTTPS
with the password; its Prometheus scrape job scrapes that emulator with the settings it names."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.readme_helpers import BIN, BLOCKS, ROOT, clean_env, is_scrape_config, is_team_host, shell

PAGE = ROOT / "docs" / "team-host.md"
DOC_PORT = "2580"


def page_blocks() -> list[str]:
    return [body for lang, body in BLOCKS if is_team_host(lang, body)]


def page_lines(body: str) -> list[str]:
    """The block's commands, a trailing `\\` joining a line to the next."""
    joined = re.sub(r"\\\n\s*", " ", body)
    return [line for line in joined.splitlines() if line.strip() and not line.startswith("#")]


@pytest.fixture(scope="module")
def team_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, list[str]]]:
    """Runs the page's first block: its emulator is left running for the rest; yields the folder, the port
    it really listens on, and what each later command printed."""
    folder = tmp_path_factory.mktemp("team-host")
    first, *_ = page_blocks()
    processes: list[subprocess.Popen[str]] = []
    port = ""
    printed: list[str] = []
    try:
        for line in page_lines(first):
            if line.startswith("resend-emulator "):
                process, port = start(line, folder)
                processes.append(process)
                continue
            done = shell(line.replace(f":{DOC_PORT}", f":{port}"), folder)
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
            printed.append(done.stdout)
        yield folder, port, printed
    finally:
        for process in processes:
            process.terminate()
            process.wait(30)


def start(line: str, folder: Path) -> tuple[subprocess.Popen[str], str]:
    args = shlex.split(line.rstrip("&").strip())[1:]
    assert args[args.index("--host") + 1] == "0.0.0.0"
    args[args.index("--host") + 1] = "127.0.0.1"
    args += ["--port", "0", "--smtp-port", "0", "--smtps-port", "0"]
    process = subprocess.Popen([str(BIN / "resend-emulator"), *args], cwd=folder, stdout=subprocess.PIPE,
                               text=True, env=clean_env())
    assert process.stdout is not None
    started = json.loads(process.stdout.readline())
    assert started["event"] == "start" and started["url"].startswith("https://"), started
    assert "re_emulator_default_key" not in json.dumps(started)
    return process, started["url"].rsplit(":", 1)[1]


def test_the_page_starts_a_protected_https_emulator_and_reads_its_metrics(team_host) -> None:
    folder, port, printed = team_host
    health, metrics = printed[-2:]
    assert json.loads(health)["status"] == "ok"
    names = {family.name for family in text_string_to_metric_families(metrics)}
    assert "resend_emulator_emails_accepted" in names
    certificate = str(folder / "emulator.crt")
    refused = httpx.get(f"https://localhost:{port}/_emulator/metrics", verify=certificate)
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Basic")


def test_the_backup_command_writes_a_snapshot_in_the_snapshot_folder(team_host) -> None:
    folder, port, _ = team_host
    [backup] = page_blocks()[1:]
    for line in page_lines(backup):
        done = shell(line.replace(f":{DOC_PORT}", f":{port}"), folder)
        assert done.returncode == 0, done.stderr
    assert (folder / "backups" / "nightly.db").stat().st_size > 0


def test_the_scrape_job_scrapes_the_emulator_with_the_settings_it_names(team_host) -> None:
    folder, port, _ = team_host
    [config] = [yaml.safe_load(body) for lang, body in BLOCKS if is_scrape_config(lang, body)]
    [job] = config["scrape_configs"]
    [target] = job["static_configs"][0]["targets"]
    assert target == f"qa-mail.internal:{DOC_PORT}"
    auth = job["basic_auth"]
    scraped = httpx.get(f"{job['scheme']}://localhost:{port}{job['metrics_path']}",
                        auth=(auth["username"], auth["password"]), verify=str(folder / "emulator.crt"))
    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert any(text_string_to_metric_families(scraped.text))
