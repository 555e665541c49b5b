"""A search that scans megabytes of hostile mail leaves a real server answering (issue 36, finding 5).

Received bodies of one letter (`aaaa…`) against `aaa…b` terms (a 4 KB one first) make the search read
every byte many times over; it walks the table in windows (control/windows.py), so health checks and
API reads that need the database answer between windows, while the search is still running. Asserted
as order (answers that came back before the search did), not as times: speed is bench_search's.
Over real HTTP: uvicorn on 127.0.0.1, port 0, every request its own connection's turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from emulator.testing import EmulatorServer
from tests.conftest import AUTH, make_settings

BODY_BYTES = 512 * 1024
BODIES = 24  # 12 MB of `aaaa…`
LONG_TERM = "a" * 4095 + "b"  # the longest a term may be (control/query.py)
# One OR clause of 4 KB and 15 more `aaa…b` terms: no body matches any, so every term reads every body.
QUERY = " OR ".join([LONG_TERM, *("a" * (50 + n) + "b" for n in range(15))])
ANSWERED_DURING = 3  # pairs of answers back while the search still runs: one could precede its start


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer(make_settings(port=0)) as started:
        yield started


def _client(server: EmulatorServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers=AUTH, timeout=120)


def _stock(client: httpx.Client) -> str:
    """Hostile received mail, and one sent email for the small read; returns the sent email's id."""
    assert client.post("/_emulator/reset").status_code == 200
    domain = client.get("/_emulator/inbound/address").json()["domain"]
    for n in range(BODIES):
        stored = client.post("/_emulator/inbound", json={"from": "ada@example.org", "to": f"help@{domain}",
                                                         "subject": f"hostile {n}", "text": "a" * BODY_BYTES})
        assert stored.status_code == 200, stored.text
    sent = client.post("/emails", json={"from": "hello@acme.dev", "to": ["delivered@resend.dev"],
                                        "subject": "small", "text": "hi"})
    assert sent.status_code == 200, sent.text
    return str(sent.json()["id"])


def _answers_while(server: EmulatorServer, search: Any, email_id: str) -> tuple[Any, int]:
    """Run `search(client)` on another thread; meanwhile ask for health and the email, again and again.
    Returns the search's answer and how many pairs of answers came back before it."""
    with _client(server) as searcher, _client(server) as reader, ThreadPoolExecutor(1) as pool:
        searching = pool.submit(search, searcher)
        during = 0
        while not searching.done():
            health = reader.get("/_emulator/health")
            email = reader.get(f"/emails/{email_id}")
            assert health.status_code == 200 and email.status_code == 200
            assert email.json()["id"] == email_id
            during += not searching.done()
        return searching.result(), during


def test_health_and_an_api_read_answer_while_a_4kb_term_scans_12mb_of_received_mail(
        server: EmulatorServer) -> None:
    with _client(server) as client:
        email_id = _stock(client)

    def search(client: httpx.Client) -> Any:
        return client.post("/_emulator/received/read", params={"q": QUERY})

    answer, during = _answers_while(server, search, email_id)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"object": "list", "updated": 0, "read": True}  # nothing matched, nothing changed
    assert during >= ANSWERED_DURING


def test_health_and_an_api_read_answer_while_the_received_page_searches_12mb(server: EmulatorServer) -> None:
    with _client(server) as client:
        email_id = _stock(client)

    def search(client: httpx.Client) -> Any:
        # The page cuts a search to 200 characters: many shorter terms then, to read every body as often.
        terms = " ".join("-" + "a" * (10 + n) + "b" for n in range(10))
        assert len(terms) <= 200  # cut short, a term without its `b` would exclude every body
        return client.get("/_emulator/ui/received", params={"q": terms})

    answer, during = _answers_while(server, search, email_id)
    assert answer.status_code == 200
    assert answer.text.count("hostile ") >= BODIES  # every message listed: none holds any term
    assert during >= ANSWERED_DURING
