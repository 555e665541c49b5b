"""How long one hostile request of about 1 MB holds the event loop (issue 36), apart from the test suite.

    python -m benchmarks bench_parsers        (or: python -m benchmarks.bench_parsers)

The emulator runs in its own process (benchmarks/serve_app.py); this process sends each hostile body
once while a second thread asks `GET /_emulator/health` every 5 ms. The longest health answer is an
upper bound on how long the loop was held (a health answer itself takes well under a millisecond), so
one figure is checked against both ceilings: the loop held at most 100 ms, health never waiting more
than 250 ms. The answer's status is printed too: each input must be refused or served, never a 500.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from benchmarks import targets

KEY = "re_bench_parsers"
SIZE = 1024 * 1024
HOLD_MS = 100.0  # the loop held at most this long by one request of <= 1 MB
HEALTH_MS = 250.0  # what /_emulator/health may wait while any of these is processed
BOUNDARY = "bench-boundary"
DOMAIN = ["inbound.test"]  # the account's managed receiving domain, asked of the server


def _form(parts: list[tuple[str, bytes]]) -> bytes:
    return b"".join(f"--{BOUNDARY}\r\n{head}\r\n\r\n".encode() + body + b"\r\n" for head, body in parts) \
        + f"--{BOUNDARY}--\r\n".encode()


def many_parameters() -> tuple[str, bytes, str]:
    params = "; a=b" * 100_000  # 600 KB: the review's 11-15 s (a 1 MB line was not read as a header)
    body = _form([(f'Content-Disposition: form-data; name="file"{params}', b"email\na@x.io\n")])
    return "/contacts/imports", body, f"multipart/form-data; boundary={BOUNDARY}"


def many_parts() -> tuple[str, bytes, str]:
    one = ('Content-Disposition: form-data; name="f"', b"x")
    count = SIZE // len(_form([one]))
    return "/contacts/imports", _form([one] * count), f"multipart/form-data; boundary={BOUNDARY}"


def nested_json() -> tuple[str, bytes, str]:
    depth = SIZE // 2
    return "/contacts/imports", b"[" * depth + b"]" * depth, "application/json"


def nested_json_field() -> tuple[str, bytes, str]:
    depth = (SIZE - 100) // 2
    body = json.dumps({"file": "email\na@x.io\n", "column_map": "[" * depth + "]" * depth}).encode()
    return "/contacts/imports", body, "application/json"


def many_headers() -> tuple[str, bytes, str]:
    line = b"X-Hostile: a\r\n"
    head = f"From: a@x.io\r\nTo: someone@{DOMAIN[0]}\r\nSubject: hi\r\n".encode()
    return "/_emulator/inbound", head + line * (SIZE // len(line)) + b"\r\nhi\r\n", "message/rfc822"


def bounded_headers() -> tuple[str, bytes, str]:
    """Just inside the bounds: 999 fields of ~1 KB encoded words (the stdlib's slowest header work)."""
    line = b"X-Hostile: " + b"=?utf-8?q?a?= " * 70 + b"\r\n"
    head = f"From: a@x.io\r\nTo: someone@{DOMAIN[0]}\r\nSubject: hi\r\n".encode()
    return "/_emulator/inbound", head + line * 995 + b"\r\nhi\r\n", "message/rfc822"


def wide_csv() -> tuple[str, bytes, str]:
    """Just inside the bounds: 1 MB of rows 1 000 columns wide, uploaded as a form."""
    header = "email," + ",".join(f"c{n}" for n in range(999)) + "\n"
    row = "a@x.io" + "," * 999 + "\n"
    text = (header + row * (SIZE // len(row))).encode()
    part = ('Content-Disposition: form-data; name="file"; filename="a.csv"', text)
    return "/contacts/imports", _form([part]), f"multipart/form-data; boundary={BOUNDARY}"


INPUTS: dict[str, Callable[[], tuple[str, bytes, str]]] = {
    "multipart, 1 header of 100 000 parameters": many_parameters,
    "multipart, 16 000+ one-field parts": many_parts,
    "JSON body nested 512 000 deep": nested_json,
    "JSON in a form field nested 524 000 deep": nested_json_field,
    "MIME message with 75 000 headers": many_headers,
    "MIME message, 999 fields of encoded words": bounded_headers,
    "CSV import, 1 MB of 1 000-column rows": wide_csv,
}


@contextmanager
def server(db: Path) -> Iterator[str]:
    process = subprocess.Popen([sys.executable, "-m", "benchmarks.serve_app", "emulator", str(db), KEY],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"the emulator did not start: {line!r}")
        base = f"http://127.0.0.1:{line.split()[1]}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{base}/_emulator/health", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        DOMAIN[0] = httpx.get(f"{base}/_emulator/inbound/address",
                              headers={"Authorization": f"Bearer {KEY}"}).json()["domain"]
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def _poll(base: str, stop: threading.Event, waits: list[float]) -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
        while not stop.is_set():
            started = time.perf_counter()
            client.get("/_emulator/health")
            waits.append((time.perf_counter() - started) * 1000)
            time.sleep(0.005)


def measure(base: str, path: str, body: bytes, content_type: str) -> tuple[int, float, float]:
    """(status, seconds the request took, longest health wait in ms)."""
    waits: list[float] = []
    stop = threading.Event()
    poller = threading.Thread(target=_poll, args=(base, stop, waits))
    poller.start()
    time.sleep(0.1)  # a few quiet answers first
    started = time.perf_counter()
    answer = httpx.post(f"{base}{path}", content=body, timeout=120,
                        headers={"Authorization": f"Bearer {KEY}", "Content-Type": content_type})
    took = time.perf_counter() - started
    time.sleep(0.1)
    stop.set()
    poller.join()
    return answer.status_code, took, max(waits)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, server(Path(folder) / "bench.db") as base:
        print(f"{'input':44} {'bytes':>9} {'status':>6} {'request s':>10} {'max health ms':>14}")
        for name, make in INPUTS.items():
            path, body, content_type = make()
            status, took, worst = measure(base, path, body, content_type)
            print(f"{name:44} {len(body):9d} {status:6d} {took:10.3f} {worst:14.1f}", flush=True)
            met = worst <= HOLD_MS and status < 500
            targets.record(f"loop hold, {name}", f"{worst:.0f} ms health wait, status {status}",
                           f"<= {HOLD_MS:.0f} ms (health <= {HEALTH_MS:.0f}), < 500", met)


if __name__ == "__main__":
    main()
    print("\n== targets ==\n" + targets.table())
    sys.exit(0 if targets.all_met() else 1)
