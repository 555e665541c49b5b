"""SIGTERM stops the emulator gracefully (issue 38): nothing acknowledged is lost, no webhook delivery is
lost, a live UI stream does not hold the stop, and nothing is printed but what a user should see.

Each test drives a real `resend-emulator --db FILE` process, stops it with SIGTERM while work is under
way, starts it again on the same file and reads back what the first one acknowledged.
"""

from __future__ import annotations

import json
import signal
import smtplib
import socket
import ssl
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

from tests.conftest import AUTH, KEY
from tests.readme_helpers import BIN

SENDERS = 8
# Enough acknowledged sends before the stop that it lands in the middle of steady traffic.
BEFORE_STOP = 200
# Generous: the stop's own bound is 5 s of grace plus the app's shutdown (no timed assertion tighter).
STOP_LIMIT = 15.0


@dataclass
class Running:
    process: subprocess.Popen[str]
    url: str
    smtp_port: int
    stderr: str = ""
    exit_seconds: float = 0.0

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=AUTH, timeout=30)

    def terminate(self) -> None:
        """SIGTERM; wait for the exit, keep how long it took and what went to stderr."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        _, self.stderr = self.process.communicate(timeout=60)
        self.exit_seconds = time.monotonic() - started


@contextmanager
def emulator(db: Path) -> Iterator[Running]:
    process = subprocess.Popen(
        [str(BIN / "resend-emulator"), "--db", str(db), "--port", "0", "--smtp-port", "0",
         "--smtps-port", "0", "--api-key", KEY], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    try:
        banner = [process.stdout.readline()]
        while "outbox UI" not in banner[-1] and banner[-1]:
            banner.append(process.stdout.readline())
        assert banner[0].startswith("resend-emulator listening on "), banner
        smtp = next(line for line in banner if line.strip().startswith("smtp on"))
        yield Running(process, banner[0].split()[-1], int(smtp.rsplit(":", 1)[1]))
    finally:
        if process.poll() is None:  # the test failed before its stop: leave nothing behind
            process.kill()
            process.communicate(timeout=10)


def assert_clean_exit(running: Running) -> None:
    assert running.process.returncode == -signal.SIGTERM, running.stderr
    assert "Traceback" not in running.stderr, running.stderr
    assert running.exit_seconds < STOP_LIMIT, (running.exit_seconds, running.stderr)


@dataclass
class Senders:
    """Threads sending until the emulator stops answering; what each send got is kept."""

    acknowledged: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # anything but a success or a connection error
    ended_by: Counter[str] = field(default_factory=Counter)  # how each sender's last attempt failed
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, send_loop: Callable[[Senders, int], None]) -> list[threading.Thread]:
        threads = [threading.Thread(target=send_loop, args=(self, n), daemon=True) for n in range(SENDERS)]
        for thread in threads:
            thread.start()
        return threads

    def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + 60
        while len(self.acknowledged) < count:
            assert time.monotonic() < deadline, (len(self.acknowledged), self.refused, self.ended_by)
            assert not self.refused, self.refused
            time.sleep(0.01)


def http_sender(url: str) -> Callable[[Senders, int], None]:
    def send_loop(senders: Senders, number: int) -> None:
        with httpx.Client(base_url=url, headers=AUTH, timeout=30) as client:
            for n in range(1_000_000):
                body = {"from": "app@example.com", "to": f"qa{number}@example.com",
                        "subject": f"{number}-{n}", "text": "hello"}
                try:
                    response = client.post("/emails", json=body)
                except httpx.TransportError as error:  # the emulator stopped: nothing was acknowledged
                    senders.ended_by[type(error).__name__] += 1
                    return
                with senders.lock:
                    if response.status_code == 200:
                        senders.acknowledged.append(response.json()["id"])
                    else:
                        senders.refused.append(f"{response.status_code} {response.text}")
                        return

    return send_loop


def smtp_sender(port: int, certificate: str) -> Callable[[Senders, int], None]:
    context = ssl.create_default_context(cadata=certificate)

    def send_loop(senders: Senders, number: int) -> None:
        try:
            client = smtplib.SMTP("127.0.0.1", port, timeout=30)
            client.starttls(context=context)
            client.login("resend", KEY)
        except (smtplib.SMTPException, OSError) as error:  # stopped before this sender began
            senders.ended_by[type(error).__name__] += 1
            return
        with client:
            for n in range(1_000_000):
                message = (f"From: app@example.com\r\nTo: qa{number}@example.com\r\nSubject: {number}-{n}\r\n"
                           "\r\nhello\r\n")
                try:
                    reply = send_one(client, message)
                except (smtplib.SMTPException, OSError) as error:
                    senders.ended_by[type(error).__name__] += 1
                    return
                with senders.lock:
                    if reply[0] == 250:
                        senders.acknowledged.append(reply[1].split()[-1])
                    elif 400 <= reply[0] < 500:  # a stop may refuse with a 4xx: the client tries again later
                        senders.ended_by[str(reply[0])] += 1
                        return
                    else:
                        senders.refused.append(f"{reply[0]} {reply[1]}")
                        return

    return send_loop


def send_one(client: smtplib.SMTP, message: str) -> tuple[int, str]:
    """MAIL, RCPT, DATA; the first reply that is not a success, or DATA's (its 250 names the email)."""
    for code, text in (client.mail("app@example.com"), client.rcpt("qa@example.com")):
        if code != 250:
            return code, text.decode()
    code, text = client.data(message.encode())
    return code, text.decode()


def assert_all_stored(db: Path, senders: Senders) -> None:
    with emulator(db) as running, running.client() as client:
        missing = [email_id for email_id in senders.acknowledged
                   if client.get(f"/emails/{email_id}").status_code != 200]
        running.terminate()
    assert missing == [], f"{len(missing)} of {len(senders.acknowledged)} acknowledged emails lost"
    assert_clean_exit(running)


def stop_under_load(db: Path, sender: Callable[[Running], Callable[[Senders, int], None]]) -> Senders:
    senders = Senders()
    with emulator(db) as running:
        threads = senders.run(sender(running))
        senders.wait_for(BEFORE_STOP)
        running.terminate()
        for thread in threads:
            thread.join(60)
    assert_clean_exit(running)
    assert senders.refused == [], senders.refused
    assert sum(senders.ended_by.values()) == SENDERS, senders.ended_by
    return senders


def test_sigterm_under_8_http_senders_loses_no_acknowledged_email(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    senders = stop_under_load(db, lambda running: http_sender(running.url))
    assert_all_stored(db, senders)


def test_sigterm_under_8_smtp_senders_loses_no_message_answered_250(tmp_path: Path) -> None:
    db = tmp_path / "state.db"

    def sender(running: Running) -> Callable[[Senders, int], None]:
        with running.client() as client:
            certificate = client.get("/_emulator/smtp").json()["certificate"]
        return smtp_sender(running.smtp_port, certificate)

    senders = stop_under_load(db, sender)
    assert_all_stored(db, senders)


def test_a_message_in_its_data_at_sigterm_is_finished_stored_and_answered_250(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with emulator(db) as running:
        with running.client() as client:
            context = ssl.create_default_context(cadata=client.get("/_emulator/smtp").json()["certificate"])
        with smtplib.SMTP("127.0.0.1", running.smtp_port, timeout=30) as smtp:
            smtp.starttls(context=context)
            smtp.login("resend", KEY)
            smtp.mail("app@example.com")
            smtp.rcpt("qa@example.com")
            smtp.putcmd("data")
            assert smtp.getreply()[0] == 354
            smtp.send(b"From: app@example.com\r\nTo: qa@example.com\r\nSubject: last one\r\n")
            running.process.send_signal(signal.SIGTERM)
            wait_until_refused(running.url)  # the stop has begun
            smtp.send(b"\r\nsent as the stop began\r\n.\r\n")
            code, reply = smtp.getreply()
            assert code == 250, reply
            try:
                after = smtp.mail("app@example.com")[0]  # the session is over: 421, or closed
            except smtplib.SMTPServerDisconnected:
                after = 0
            assert after in (0, 421)
        _, running.stderr = running.process.communicate(timeout=60)
    assert running.process.returncode == -signal.SIGTERM and "Traceback" not in running.stderr, running.stderr
    with emulator(db) as running, running.client() as client:
        assert client.get(f"/emails/{reply.decode().split()[-1]}").json()["subject"] == "last one"
        running.terminate()


def test_a_request_still_arriving_after_the_grace_is_dropped_without_a_500_or_a_traceback(
        tmp_path: Path) -> None:
    with emulator(tmp_path / "state.db") as running:
        host, port = running.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=60) as client:
            client.sendall(b"GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert client.recv(1000).startswith(b"HTTP/1.1 200")  # the server holds this connection
            client.sendall(b"POST /emails HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n"
                           b"Authorization: Bearer " + KEY.encode() + b"\r\n\r\n{\"from\":")
            running.terminate()  # the body's other 990 bytes never come
            answer = client.recv(1000)
    assert answer == b"", answer  # closed: the request was never acknowledged, and not answered 500
    assert_clean_exit(running)
    assert running.stderr == "", running.stderr


def wait_until_refused(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/_emulator/health", timeout=5)
        except httpx.TransportError:
            return
        time.sleep(0.01)
    raise AssertionError("the emulator kept accepting connections after SIGTERM")


class SlowReceiver:
    """A webhook endpoint that takes SLOW seconds to answer each POST; it notes the email of each
    delivery as it arrives and again once it has answered."""

    SLOW = 4.0

    def __init__(self, fail_first: bool = False) -> None:
        self.fail_first = fail_first  # the first POST of each email gets a 500 at once: a retry follows
        self.arrived: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                email_id = body["data"]["email_id"]
                with receiver.lock:
                    receiver.arrived[email_id] += 1
                    fail = receiver.fail_first and receiver.arrived[email_id] == 1
                if fail:
                    self.send_response(500)
                    self.end_headers()
                    return
                time.sleep(receiver.SLOW)
                try:
                    self.send_response(200)
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:  # the emulator stopped waiting: this delivery was abandoned
                    return
                with receiver.lock:
                    receiver.answered[email_id] += 1

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    @contextmanager
    def serving(self) -> Iterator[SlowReceiver]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()

    def wait(self, until: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 90
        while not until():
            assert time.monotonic() < deadline, (self.arrived, self.answered)
            time.sleep(0.05)


def test_sigterm_with_a_slow_webhook_receiver_stops_promptly_and_loses_no_delivery(tmp_path: Path) -> None:
    # More emails than one endpoint's deliveries under way at once (16): some are still waiting at the stop.
    stop_with_deliveries_under_way(tmp_path / "state.db", SlowReceiver(), count=20)


def test_a_webhook_retry_in_flight_at_sigterm_is_sent_again_after_restart(tmp_path: Path) -> None:
    # A retry has a job row of its own (a first attempt has none): the stop used to delete it, and lose it.
    stop_with_deliveries_under_way(tmp_path / "state.db", SlowReceiver(fail_first=True), count=3,
                                   config={"retry_scale": 0.01})


def stop_with_deliveries_under_way(db: Path, receiver: SlowReceiver, count: int,
                                   config: dict[str, float] | None = None) -> None:
    first = 2 if receiver.fail_first else 1
    with receiver.serving():
        with emulator(db) as running, running.client() as client:
            if config:
                assert client.post("/_emulator/webhooks/config", json=config).status_code == 200
            hook = client.post("/webhooks", json={"endpoint": receiver.url, "events": ["email.sent"]}).json()
            emails = [client.post("/emails", json={"from": "app@example.com", "to": "qa@example.com",
                                                   "subject": str(n), "text": "hi"}).json()["id"]
                      for n in range(count)]
            receiver.wait(lambda: max(receiver.arrived.values(), default=0) >= first)  # one in flight
            running.terminate()
        assert_clean_exit(running)

        with emulator(db) as running, running.client() as client:
            receiver.wait(lambda: all(receiver.answered[email_id] for email_id in emails))
            assert client.post("/_emulator/webhooks/flush").status_code == 200  # the answers are recorded
            events = client.get(f"/webhooks/{hook['id']}/events", params={"limit": 100}).json()["data"]
            attempts = {event["id"]: client.get(f"/webhooks/{hook['id']}/events/{event['id']}/attempts")
                        .json() for event in events}
            running.terminate()
        assert_clean_exit(running)
    duplicates = {email_id: n - first + 1 for email_id, n in receiver.arrived.items() if n > first}
    assert sorted(receiver.answered) == sorted(emails), f"duplicates: {duplicates}"
    assert {event["status"] for event in events} == {"success"}, (events, f"duplicates: {duplicates}")
    # An attempt the stop cut short is in the delivery's history, so a duplicate has its explanation. Not
    # every interrupted attempt makes one: a POST cut short before the receiver read it arrives only once.
    interrupted = [event_id for event_id, listed in attempts.items()
                   if any(item["response"].startswith("Interrupted") for item in listed["data"])]
    assert 0 < len(duplicates) <= len(interrupted), (f"duplicates: {duplicates}", attempts)


def test_an_open_live_ui_stream_and_an_outbox_long_poll_do_not_hold_the_stop(tmp_path: Path) -> None:
    ended = threading.Event()
    chunks: list[str] = []
    polled: list[httpx.Response] = []
    with emulator(tmp_path / "state.db") as running:

        def poll() -> None:
            with httpx.Client(base_url=running.url, timeout=90) as client:
                query = {"to": "nobody@example.com", "timeout": 60}
                polled.append(client.get("/_emulator/outbox/wait", params=query))

        def listen() -> None:
            with httpx.Client(base_url=running.url, timeout=60) as client, \
                    client.stream("GET", "/_emulator/ui/events") as stream:
                for chunk in stream.iter_text():
                    chunks.append(chunk)
                ended.set()  # the stream ended as a response does, not cut off by an error

        threads = [threading.Thread(target=poll, daemon=True), threading.Thread(target=listen, daemon=True)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 30
        while not chunks:  # the stream is open (and the poll, sent first, waits)
            assert time.monotonic() < deadline
            time.sleep(0.01)
        running.terminate()
        for thread in threads:
            thread.join(30)
    assert ended.is_set(), chunks
    assert polled[0].status_code == 408, polled[0].text
    assert polled[0].json()["message"] == "No email matching the filter arrived before the emulator stopped."
    assert_clean_exit(running)
    # uvicorn says so on stderr when an open response outlives the stop's grace and is cancelled.
    assert running.stderr == "", running.stderr
