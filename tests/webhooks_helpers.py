"""A real local HTTP receiver for webhook tests, and independent signature verifiers.

The receiver is a stdlib `http.server` on 127.0.0.1, port 0, in its own thread: the emulator POSTs to
it over a real socket exactly as it would to a user's app.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any
from unittest import mock

import resend
import standardwebhooks
import svix.webhooks
from starlette.testclient import TestClient


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def svix(self) -> dict[str, str]:
        return {k: self.headers[k] for k in ("svix-id", "svix-timestamp", "svix-signature")}


class Receiver:
    """Records every POST; answers from `replies` (status, body) in turn, then 200 `{"ok":true}`."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.replies: list[tuple[int, str]] = []
        self.stall = threading.Event()  # set → requests hang until `release` is set
        self.release = threading.Event()
        self.arrived = threading.Event()  # set once a request's body has been read (stalled or not)
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                receiver.arrived.set()
                if receiver.stall.is_set():
                    receiver.release.wait(10)
                with receiver._lock:
                    receiver.received.append(Received(
                        self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    status, text = receiver.replies.pop(0) if receiver.replies else (200, '{"ok":true}')
                payload = text.encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def types(self) -> list[str]:
        return [r.json["type"] for r in self.received]

    def one_of_each(self, types: list[str]) -> list[dict[str, Any]]:
        """The bodies received, one of each of `types` and nothing else, in that order. Deliveries to one
        endpoint start oldest first but run side by side, so they may arrive in another order (Resend
        documents no ordering either)."""
        assert sorted(self.types()) == sorted(types), self.types()
        bodies = {r.json["type"]: r.json for r in self.received}
        return [bodies[kind] for kind in types]

    def start(self) -> Receiver:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def running_receiver() -> Iterator[Receiver]:
    receiver = Receiver().start()
    try:
        yield receiver
    finally:
        receiver.stop()


def create_hook(client: TestClient, url: str, events: list[str]) -> dict[str, Any]:
    response = client.post("/webhooks", json={"endpoint": url, "events": events})
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def deliver(client: TestClient) -> None:
    """Send every pending webhook delivery now."""
    assert client.post("/_emulator/webhooks/flush").status_code == 200


def advance(client: TestClient, **amount: float) -> None:
    assert client.post("/_emulator/clock/advance", json=amount).status_code == 200


def verify_svix(secret: str, received: Received) -> Any:
    return svix.webhooks.Webhook(secret).verify(received.body, received.svix)


def verify_standard(secret: str, received: Received) -> Any:
    headers = {"webhook-id": received.headers["svix-id"],
               "webhook-timestamp": received.headers["svix-timestamp"],
               "webhook-signature": received.headers["svix-signature"]}
    return standardwebhooks.Webhook(secret).verify(received.body, headers)


def verify_resend(secret: str, received: Received) -> Any:
    return resend.Webhooks.verify({
        "payload": received.body.decode(),
        "headers": {"id": received.headers["svix-id"], "timestamp": received.headers["svix-timestamp"],
                    "signature": received.headers["svix-signature"]},
        "webhook_secret": secret,
    })


VERIFIERS = (verify_svix, verify_standard, verify_resend)


def verify_all(secret: str, received: Received) -> list[Any]:
    """Verify with the three independent libraries against the real wall clock."""
    return [verify(secret, received) for verify in VERIFIERS]


def verifies_at(secret: str, received: Received, now: datetime) -> bool:
    """Whether each library accepts the delivery when "now" is the emulator's (moved) clock.

    The libraries check the timestamp against the wall clock; once a test has advanced the emulator
    clock by a day, their notion of now is moved along with it, and only the signature decides."""
    class Moved(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> datetime:  # type: ignore[override]
            return now

    results = []
    with mock.patch("standardwebhooks.webhooks.datetime", Moved), \
            mock.patch("resend.webhooks._webhooks.time", SimpleNamespace(time=now.timestamp)):
        for verify in VERIFIERS:
            try:
                verify(secret, received)
                results.append(True)
            except Exception:
                results.append(False)
    assert len(set(results)) == 1, f"verifiers disagree: {results}"
    return results[0]
