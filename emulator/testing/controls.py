"""The parts of a test handle (`EmulatorClient`): outbox, clock, faults, webhooks.

Each part speaks only the JSON control plane under `/_emulator/` (and, for webhooks, the Resend API
itself), so the same handle drives an in-thread `EmulatorServer` or a CLI started by another process.
"""

from __future__ import annotations

import http.client
import json as _json
import threading
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

if TYPE_CHECKING:
    import ssl

PREFIX = "/_emulator"
STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


class EmulatorError(Exception):
    """A control-plane or API call answered with an error; `status` and `body` are the server's."""

    def __init__(self, method: str, path: str, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        detail = body.get("message") if isinstance(body, dict) else body
        super().__init__(f"{method} {path} → {status}: {detail}")


class Transport:
    """Keep-alive HTTP to the emulator (one connection per calling thread), shared by every part of a
    handle. Plain `http.client`: the handle is imported by every test session, and an HTTP client
    library would add a tenth of a second to its start."""

    def __init__(self, url: str, api_key: str, timeout: float = 30.0,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        self.api_key = api_key
        self.timeout = timeout
        self.ssl_context = ssl_context  # for an https URL (None: the system's trusted certificates)
        self._local = threading.local()
        self._connections: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self.retarget(url)

    def retarget(self, url: str) -> None:
        """Point at another base URL (a server learns its port only once bound)."""
        self.url = url.rstrip("/")
        parts = urlsplit(self.url)
        self._secure, self._netloc, self._base = parts.scheme == "https", parts.netloc, parts.path
        self.close()

    def call(self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None,
             auth: bool = False, timeout: float | None = None, headers: Mapping[str, str] | None = None,
             ) -> Any:
        """Send a request; return the parsed JSON body, or raise `EmulatorError` on a status ≥ 400."""
        headers = {**(headers or {}), **({"Authorization": f"Bearer {self.api_key}"} if auth else {})}
        body = None
        if json is not None:
            body = _json.dumps(json).encode()
            headers["Content-Type"] = "application/json"
        status, content = self._send(method, path, params, body, headers, timeout)
        parsed = _parse(content)
        if status >= 400:
            raise EmulatorError(method, path, status, parsed)
        return parsed

    def raw(self, path: str, *, params: Mapping[str, Any] | None = None) -> bytes:
        status, content = self._send("GET", path, params, None, {}, None)
        if status >= 400:
            raise EmulatorError("GET", path, status, _parse(content))
        return content

    def close(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()
        self._local = threading.local()

    def _send(self, method: str, path: str, params: Mapping[str, Any] | None, body: bytes | None,
              headers: dict[str, str], timeout: float | None) -> tuple[int, bytes]:
        target = self._base + path
        query = _clean(params)
        if query:
            target += ("&" if "?" in target else "?") + urlencode(query, doseq=True)
        connection = self._connection()
        reused = connection.sock is not None
        connection.timeout = self.timeout if timeout is None else timeout
        if reused:
            connection.sock.settimeout(connection.timeout)
        try:
            connection.request(method, target, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        except STALE:
            connection.close()
            if not reused:
                raise
            # The server closed an idle keep-alive connection between two calls: nothing was
            # received, so sending again on a fresh connection is safe.
            return self._send(method, path, params, body, headers, timeout)
        except (http.client.HTTPException, OSError):
            connection.close()  # the next call reconnects; this failure is the caller's to see
            raise

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = (
                http.client.HTTPSConnection(self._netloc, timeout=self.timeout, context=self.ssl_context)
                if self._secure else http.client.HTTPConnection(self._netloc, timeout=self.timeout))
            with self._lock:
                self._connections.append(connection)
        return connection


def _parse(content: bytes) -> Any:
    if not content:
        return None
    try:
        return _json.loads(content)
    except ValueError:
        return content.decode("utf-8", "replace")


def _clean(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if params is None:
        return None
    return {key: _query_value(value) for key, value in params.items() if value is not None}


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    return value


class Outbox:
    """The captured mail of the handle's account (every email "sent" through the API or SMTP)."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list(self, **filters: Any) -> list[dict[str, Any]]:
        """Captured emails, newest first. Filters: `to`, `from_`, `subject`, `tag`, `status`, `limit`, and
        `q`, a search such as `from:billing@acme.dev has:attachment` (see emulator/control/search.py)."""
        body = self._t.call("GET", f"{PREFIX}/outbox", params=self._scoped(filters))
        return list(body["data"])

    def get(self, email_id: str) -> dict[str, Any]:
        """One captured email with its text, HTML, headers, attachments and events."""
        return self._t.call("GET", f"{PREFIX}/outbox/{email_id}",  # type: ignore[no-any-return]
                            params=self._scoped({}))

    def raw(self, email_id: str) -> bytes:
        """The RFC 5322 message (`.eml`) as the emulator rendered it."""
        return self._t.raw(f"{PREFIX}/outbox/{email_id}.eml", params=self._scoped({}))

    def checks(self, email_id: str) -> dict[str, Any]:
        """The QA report of one email: `html` (unsupported/partial HTML and CSS per major client, from
        caniemail.com's data), `links`, `unsubscribe` (List-Unsubscribe, RFC 8058), `text` and `spam`
        (SpamAssassin's score and rules when the server has a spamd: `--spamassassin`). E.g.
        `assert not [f for f in report["html"]["unsupported"] if any(c["client"].startswith("gmail.")
        for c in f["clients"])]`."""
        return self._t.call("GET", f"{PREFIX}/outbox/{email_id}/qa",  # type: ignore[no-any-return]
                            params=self._scoped({}))

    def wait_for(self, timeout: float = 5.0, **filters: Any) -> dict[str, Any]:
        """Block until an email matching `filters` exists (server-side long poll) and return it.

        Filters are those of `list()`. Raises `EmulatorError` (status 408) when nothing matched within
        `timeout` seconds: a clear failure instead of a loop of polls in the test.
        """
        params = {**self._scoped(filters), "timeout": timeout}
        return self._t.call("GET", f"{PREFIX}/outbox/wait", params=params,  # type: ignore[no-any-return]
                            timeout=timeout + 10)

    def _scoped(self, filters: Mapping[str, Any]) -> dict[str, Any]:
        # The outbox shows every account unless told one: the handle sees only its key's mail.
        return {"api_key": self._t.api_key, **_filters(filters)}


def _filters(filters: Mapping[str, Any]) -> dict[str, Any]:
    # `from` is a keyword in Python: accept `from_` as well.
    return {("from" if key == "from_" else key): value for key, value in filters.items()}


class ClockControl:
    """The emulator's one clock. Moving it runs whatever fell due (scheduled sends, retries) first."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def now(self) -> str:
        """The emulator's current time (ISO 8601, `Z`)."""
        return str(self._t.call("GET", f"{PREFIX}/clock")["now"])

    def freeze(self, at: datetime | str | None = None) -> dict[str, Any]:
        """Stop the clock, now or at `at`; it then moves only when set or advanced."""
        body = {} if at is None else {"at": _iso(at)}
        return self._t.call("POST", f"{PREFIX}/clock/freeze", json=body)  # type: ignore[no-any-return]

    def unfreeze(self) -> dict[str, Any]:
        """Let the clock run again from where it stands."""
        return self._t.call("POST", f"{PREFIX}/clock/unfreeze", json={})  # type: ignore[no-any-return]

    def set(self, at: datetime | str) -> dict[str, Any]:
        """Jump to `at` and run every job that became due."""
        return self._t.call("POST", f"{PREFIX}/clock/set", json={"at": _iso(at)})  # type: ignore[no-any-return]

    def advance(self, seconds: float = 0, *, minutes: float = 0, hours: float = 0,
                days: float = 0) -> dict[str, Any]:
        """Move forward and run every job that became due before returning."""
        body = {"seconds": seconds, "minutes": minutes, "hours": hours, "days": days}
        return self._t.call("POST", f"{PREFIX}/clock/advance", json=body)  # type: ignore[no-any-return]


def _iso(value: datetime | str) -> str:
    return value if isinstance(value, str) else value.isoformat()


class FaultControl:
    """Scripted failures of the Resend API itself (`/_emulator/faults`), to test retry code."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def add(self, method: str, path: str, *, error: str | None = None, status: int | None = None,
            times: int | None = 1, delay_ms: int = 0, message: str | None = None,
            retry_after: int | None = None, api_key: str | None = None) -> dict[str, Any]:
        """Make the next `times` requests matching `method` and `path` fail or slow down.

        `path` is an exact path, a glob (`/emails/*`) or an operation's template (`/emails/{email_id}`);
        `method` may be `*`. `error` names a Resend error (`rate_limit_exceeded`, `application_error`,
        `service_unavailable`, ...); `status` picks among errors sharing a name. `delay_ms` delays the
        answer (alone, or before the error). `times=None` keeps the rule until cleared. `api_key`
        limits the rule to that key's account. Answers carry `x-emulator-fault: <rule id>`.
        """
        body: dict[str, Any] = {"method": method, "path": path, "times": times, "delay_ms": delay_ms}
        optional = {"error": error, "status": status, "message": message, "retry_after": retry_after,
                    "api_key": api_key}
        body.update({key: value for key, value in optional.items() if value is not None})
        return self._t.call("POST", f"{PREFIX}/faults", json=body)  # type: ignore[no-any-return]

    def rate_limit(self, method: str, path: str, times: int = 1) -> dict[str, Any]:
        """Shorthand: the next `times` matching requests get 429 `rate_limit_exceeded`."""
        return self.add(method, path, error="rate_limit_exceeded", times=times)

    def list(self) -> list[dict[str, Any]]:
        """Every rule with how often it matched and how many answers it has left."""
        return list(self._t.call("GET", f"{PREFIX}/faults")["data"])

    def remove(self, rule_id: str) -> None:
        self._t.call("DELETE", f"{PREFIX}/faults/{rule_id}")

    def clear(self) -> None:
        """Remove every rule."""
        self._t.call("DELETE", f"{PREFIX}/faults")


class WebhookControl:
    """Webhook endpoints of the handle's account and what the emulator delivered to them."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def register(self, url: str, events: list[str] | None = None) -> dict[str, Any]:
        """Create a webhook through the Resend API (`POST /webhooks`); the answer has its `signing_secret`.

        With no `events`, the webhook subscribes to every email event.
        """
        # Imported here: `emulator.resources` loads every resource group, ~85 ms of a test session's
        # start that only a webhook registration needs (issue 40, the child-process fixture's handle).
        from emulator.resources.webhooks.catalogue import EMAIL_EVENTS

        body = {"endpoint": url, "events": events or EMAIL_EVENTS}
        return self._t.call("POST", "/webhooks", json=body, auth=True)  # type: ignore[no-any-return]

    def flush(self) -> None:
        """Run every due delivery and retry now, and wait for them to finish."""
        self._t.call("POST", f"{PREFIX}/flush", json={})

    def events(self, webhook_id: str) -> list[dict[str, Any]]:
        """The events sent (or being sent) to one webhook, newest first, via the Resend API."""
        return self._all(f"/webhooks/{webhook_id}/events")

    def attempts(self, webhook_id: str | None = None) -> list[dict[str, Any]]:
        """Every delivery attempt, newest first, each with its `webhook_id`, `event_id` and `event_type`.

        Covers one webhook, or every webhook of the handle's account. Call `flush()` first to settle
        pending deliveries.
        """
        hooks = [webhook_id] if webhook_id else [hook["id"] for hook in self._all("/webhooks")]
        found: list[dict[str, Any]] = []
        for hook in hooks:
            for event in self.events(hook):
                for attempt in self._all(f"/webhooks/{hook}/events/{event['id']}/attempts"):
                    found.append({**attempt, "webhook_id": hook, "event_id": event["id"],
                                  "event_type": event["type"]})
        return sorted(found, key=lambda item: item["sent_at"], reverse=True)

    def _all(self, path: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        params: dict[str, Any] = {"limit": 100}
        while True:
            page = self._t.call("GET", path, params=params, auth=True)
            items += page["data"]
            if not page.get("has_more") or not page["data"]:
                return items
            params["after"] = page["data"][-1]["id"]
