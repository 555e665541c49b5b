"""A real local HTTP endpoint for webhook deliveries: records each one and can check its signature.

    with WebhookReceiver() as receiver:
        server.webhooks.register(receiver.url)
        ...
        delivery = receiver.wait_for(type="email.delivered")
        assert receiver.verify(delivery, secret)

It answers 200 unless told otherwise (`respond_with(500, times=2)` scripts failures from the receiver's
side, to watch the emulator retry). Signatures are checked the Svix way Resend uses (HMAC-SHA256 over
`id.timestamp.body` with the base64 key after `whsec_`); unlike the Svix library, `verify` does not
reject old timestamps by default, because the emulator's clock is often frozen in the past.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_TIMEOUT = 5.0


@dataclass
class Delivery:
    """One request the receiver got: `headers` with lower-case names, the raw `body`."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float = field(default_factory=time.time)

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def type(self) -> str | None:
        """The event type (`email.delivered`, ...) when the body is a Resend event."""
        try:
            payload = self.json()
        except ValueError:
            return None
        return payload.get("type") if isinstance(payload, dict) else None


def signature_is_valid(secret: str, delivery: Delivery, tolerance: float | None = None) -> bool:
    """Whether `delivery` carries a valid `svix-signature` for `secret` (any of its `v1,` entries)."""
    message_id = delivery.headers.get("svix-id") or delivery.headers.get("webhook-id")
    stamp = delivery.headers.get("svix-timestamp") or delivery.headers.get("webhook-timestamp")
    header = delivery.headers.get("svix-signature") or delivery.headers.get("webhook-signature")
    if not (message_id and stamp and header and stamp.isdigit()):
        return False
    if tolerance is not None and abs(time.time() - int(stamp)) > tolerance:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{stamp}.".encode() + delivery.body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    candidates = [part.partition(",")[2] for part in header.split() if part.startswith("v1,")]
    return any(hmac.compare_digest(expected, candidate) for candidate in candidates)


class WebhookReceiver:
    """An HTTP server on 127.0.0.1 (free port) recording every request in `deliveries`."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        self._changed = threading.Condition()
        self._script: list[int] = []
        self._default_status = 200
        self._server = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/webhooks"
        self._thread: threading.Thread | None = None

    def start(self) -> WebhookReceiver:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="webhook-receiver")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> WebhookReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def clear(self) -> None:
        """Forget what was received and any scripted answers (the plugin does this per test)."""
        with self._changed:
            self.deliveries.clear()
            self._script.clear()
            self._default_status = 200

    def respond_with(self, status: int, times: int | None = None) -> None:
        """Answer the next `times` deliveries (all, when None) with `status` instead of 200."""
        with self._changed:
            if times is None:
                self._default_status = status
            else:
                self._script.extend([status] * times)

    def wait_for(self, count: int = 1, *, type: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT) -> Delivery:
        """Block until `count` deliveries (of event `type`, if given) arrived; return the last of them.

        Raises TimeoutError saying what did arrive. With a frozen emulator clock, flush or advance the
        emulator first (`server.webhooks.flush()`), since deliveries are jobs on its clock.
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                matching = [d for d in self.deliveries if type is None or d.type == type]
                if len(matching) >= count:
                    return matching[count - 1]
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [d.type for d in self.deliveries]
                    raise TimeoutError(f"{count} × {type or 'any'} not received in {timeout:g} s; got {seen}")
                self._changed.wait(left)

    def verify(self, delivery: Delivery, secret: str, tolerance: float | None = None) -> bool:
        """Check `delivery`'s signature against the webhook's `signing_secret` (`whsec_...`)."""
        return signature_is_valid(secret, delivery, tolerance)

    def _record(self, delivery: Delivery) -> int:
        with self._changed:
            self.deliveries.append(delivery)
            status = self._script.pop(0) if self._script else self._default_status
            self._changed.notify_all()
        return status


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A sender that gives up mid-request (a timeout, a stopped emulator) is not the receiver's error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler_for(receiver: WebhookReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            headers = {name.lower(): value for name, value in self.headers.items()}
            status = receiver._record(Delivery(self.command, self.path, headers, body))
            reply = b"{}" if status < 300 else b'{"error":"scripted failure"}'
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        do_PUT = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
