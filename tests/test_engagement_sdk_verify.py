"""The official SDKs' `Webhooks.verify` (Python `resend`, Node `resend` from npm) accept every engagement
event the emulator now emits: opened, clicked, delivery_delayed, failed, bounced, complained, suppressed."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
import resend

from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.ui_helpers import running_server
from tests.webhooks_helpers import Received, running_receiver

EVENTS = ["email.opened", "email.clicked", "email.delivery_delayed", "email.failed", "email.bounced",
          "email.complained", "email.suppressed"]
OUTCOMES = ("delivery_delayed", "failed", "bounced", "complained")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
NODE_DIR = CACHE / "resend-emulator-tests" / "node-sdk"
NODE_VERIFY = """
const { Resend } = require("resend");
const [secret, file] = process.argv.slice(2);
const resend = new Resend("re_unused");
const deliveries = JSON.parse(require("fs").readFileSync(file, "utf8"));
const types = deliveries.map((d) => resend.webhooks.verify({
  payload: d.body, webhookSecret: secret,
  headers: { id: d.headers["svix-id"], timestamp: d.headers["svix-timestamp"],
             signature: d.headers["svix-signature"] },
}).type);
console.log(JSON.stringify(types));
"""


@pytest.fixture(scope="module")
def node_sdk() -> Path:
    if not (NODE_DIR / "node_modules" / "resend").is_dir():
        NODE_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(NODE_DIR),
                        "resend"], check=True, timeout=300, capture_output=True)
    return NODE_DIR


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    # Frozen at the real time: signatures carry the emulator's clock and the SDKs allow ±5 minutes.
    with running_server(clock_start=datetime.now(UTC)) as running:
        yield running


def engagement_events(api: httpx.Client, receiver_url: str) -> str:
    secret = api.post("/webhooks", json={"endpoint": receiver_url, "events": EVENTS}).json()["signing_secret"]
    for outcome in OUTCOMES:
        api.post("/_emulator/outcomes",
                 json={"to": f"{outcome}@example.org", "outcome": outcome, "minutes": 0})
    sent = [send(api, f"{outcome}@example.org") for outcome in OUTCOMES]
    api.post(f"/_emulator/emails/{sent[0]}/open")
    api.post(f"/_emulator/emails/{sent[0]}/click", json={"link": "https://acme.dev/"})
    assert api.post("/_emulator/clock/advance", json={"seconds": 5}).status_code == 200
    send(api, "bounced@example.org")  # on the suppression list since its hard bounce
    assert api.post("/_emulator/clock/advance", json={"seconds": 5}).status_code == 200
    assert api.post("/_emulator/flush").status_code == 200
    return str(secret)


def send(api: httpx.Client, to: str) -> str:
    body = {"from": "hi@acme.dev", "to": to, "subject": "Hi", "html": "<p>Hi</p>"}
    return str(api.post("/emails", json=body).json()["id"])


def python_verify(secret: str, delivery: Received) -> str:
    headers = {"id": delivery.svix["svix-id"], "timestamp": delivery.svix["svix-timestamp"],
               "signature": delivery.svix["svix-signature"]}
    payload = resend.Webhooks.verify({"payload": delivery.body.decode(), "headers": headers,  # type: ignore[typeddict-item]
                                      "webhook_secret": secret})
    return str(payload["type"])


@pytest.mark.node
def test_python_and_node_sdks_verify_every_engagement_event(server: EmulatorServer, node_sdk: Path,
                                                            tmp_path: Path) -> None:
    with running_receiver() as receiver, httpx.Client(base_url=server.url, headers=AUTH) as api:
        secret = engagement_events(api, receiver.url)
        deliveries = list(receiver.received)
    types = [python_verify(secret, delivery) for delivery in deliveries]
    assert sorted(set(types)) == sorted(EVENTS)
    dump = tmp_path / "deliveries.json"
    dump.write_text(json.dumps([{"body": d.body.decode(), "headers": d.svix} for d in deliveries]))
    script = tmp_path / "verify.cjs"
    script.write_text(NODE_VERIFY)
    result = subprocess.run(["node", str(script), secret, str(dump)], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "NODE_PATH": str(node_sdk / "node_modules")})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == types
