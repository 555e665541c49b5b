"""Search finds substrings in any language, folded by Unicode's rules (issue 39, item 3): over real HTTP
against a server on 127.0.0.1 (uvicorn, port 0), through the outbox JSON and the UI's pages.

The sent-mail index (control/mailindex.py) follows deletes, retention prunes and resets, and a database
file from an older build (the word index) is indexed when the server opens it."""

from __future__ import annotations

import base64
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from emulator.testing import EmulatorServer
from tests.conftest import AUTH, make_settings

OUTBOX = "/_emulator/outbox"
UI = "/_emulator/ui"
CSV = {"filename": "report.csv", "content": base64.b64encode(b"a,b\n1,2\n").decode()}
LOGO = {"filename": "logo.png", "content": base64.b64encode(b"\x89PNG").decode(), "content_id": "logo"}


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer(make_settings(port=0)) as started:
        yield started


@pytest.fixture
def client(server: EmulatorServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=60) as client:
        assert client.post("/_emulator/reset").status_code == 200
        yield client


def send(client: httpx.Client, subject: str, **fields: Any) -> str:
    body = {"from": "Acme <orders@acme.dev>", "to": ["ada@lovelace.dev"], "subject": subject,
            "text": f"{subject} body", **fields}
    response = client.post("/emails", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def found(client: httpx.Client, q: str) -> list[str]:
    response = client.get(OUTBOX, params={"q": q, "limit": "100"})
    assert response.status_code == 200, (q, response.text)
    return [item["id"] for item in response.json()["data"]]


def test_a_term_inside_a_word_a_japanese_subject_or_a_file_name_is_found(client: httpx.Client) -> None:
    welcome = send(client, "Welcome aboard")
    order = send(client, "ご注文ありがとうございます", text="お届けは明日です")
    report = send(client, "Monthly figures", attachments=[CSV])
    send(client, "Unrelated")
    assert found(client, "elcome") == [welcome]
    assert found(client, "注文") == [order]                 # two characters: the scan, not the index
    assert found(client, "注文あり") == [order]             # the index
    assert found(client, "届け") == [order] and found(client, "お届けは") == [order]
    assert found(client, "report.csv") == [report] and found(client, "port.cs") == [report]
    assert found(client, "subject:ご注文") == [order] and found(client, "subject:届け") == []


def test_case_and_accents_fold_by_unicode_rules(client: httpx.Client) -> None:
    soren = send(client, "Hej Søren", to=["Søren Kierkegaard <soren@example.dk>"])
    sofia = send(client, "Καλημέρα σοφία")
    strasse = send(client, "Hauptstraße 1")
    assert found(client, "soren") == [soren] and found(client, "SØREN") == [soren]
    assert found(client, "to:kierke") == [soren] and found(client, "to:søren") == [soren]
    assert found(client, "ΣΟΦΙΑ") == [sofia] and found(client, "καλημερα") == [sofia]
    assert found(client, "strasse") == [strasse] and found(client, "STRASSE 1") == [strasse]
    assert found(client, "ß") == [strasse]                  # one character (ss): the scan folds the same way


def test_a_term_with_a_nul_character_is_searched_not_a_server_error(client: httpx.Client) -> None:
    # A match expression ends at a NUL for SQLite (a 500 before, drawn by test_fuzz_numbers as "00\x00").
    send(client, "Order 00 shipped")
    for q in ("00\x00", "order\x00", "subject:ship\x00ped"):
        assert found(client, q) == [], q
        count = client.get(f"{OUTBOX}/count", params={"q": q})
        assert count.status_code == 200, (q, count.text)


def test_has_inline_and_addressed(client: httpx.Client) -> None:
    inline = send(client, "Logo inside", html='<img src="cid:logo">', attachments=[LOGO])
    attached = send(client, "Plain file", attachments=[CSV])
    replied = send(client, "Answer me", reply_to=["help@support.example"])
    copied = send(client, "Copy", cc=["grace@hopper.dev"])
    assert found(client, "has:inline") == [inline]
    assert found(client, "has:attachment") == [attached, inline]
    assert found(client, "-has:inline has:attachment") == [attached]
    assert found(client, "addressed:support.example") == [replied]
    assert found(client, "addressed:hopper") == [copied]
    assert found(client, "addressed:acme.dev") == [copied, replied, attached, inline]  # the sender
    assert found(client, "to:support.example") == []       # to: is To/Cc/Bcc, not Reply-To
    wrong = client.get(OUTBOX, params={"q": "has:wings"})
    assert wrong.status_code == 422
    assert wrong.json()["message"] == "`has:` supports `has:attachment` and `has:inline`."


def test_received_mail_folds_and_knows_addressed_and_has_inline(client: httpx.Client) -> None:
    domain = client.get("/_emulator/inbound/address").json()["domain"]
    stored = client.post("/_emulator/inbound", json={
        "from": "Søren <soren@example.dk>", "to": f"help@{domain}", "subject": "ΚΑΛΗΜΕΡΑ",
        "text": "hi", "reply_to": "desk@answers.example"})
    assert stored.status_code == 200, stored.text
    for q in ("soren", "καλημέρα", "addressed:answers.example"):
        page = client.get(f"{UI}/rows/received", params={"q": q}).json()
        assert page["total"] == "1", q
    assert client.get(f"{UI}/rows/received", params={"q": "has:inline"}).json()["total"] == "0"


def test_a_deleted_email_is_not_found_and_the_index_keeps_nothing_stale(client: httpx.Client) -> None:
    kept = send(client, "Keep this welcome")
    gone = send(client, "Drop this welcome")
    other = send(client, "Sweep this welcome")
    assert found(client, "welcome") == [other, gone, kept]
    assert client.delete(f"{OUTBOX}/{gone}").status_code == 200
    assert found(client, "welcome") == [other, kept] and found(client, "drop this") == []
    assert client.delete(OUTBOX, params={"q": "sweep"}).json()["deleted"] == 1
    assert found(client, "welcome") == [kept]
    assert client.post("/_emulator/reset").status_code == 200
    assert found(client, "welcome") == []
    again = send(client, "Welcome again")
    assert found(client, "welcome") == [again]


def _index_rows(path: Path) -> tuple[int, int]:
    with sqlite3.connect(path) as raw:
        return (raw.execute("SELECT count(*) FROM emails").fetchone()[0],
                raw.execute("SELECT count(*) FROM emails_text").fetchone()[0])


def test_retention_and_deletes_take_mail_out_of_the_index(tmp_path: Path) -> None:
    path = tmp_path / "kept.db"
    with EmulatorServer(make_settings(port=0, db=str(path), max_emails=2)) as started, \
            httpx.Client(base_url=started.url, headers=AUTH, timeout=60) as client:
        first = send(client, "First welcome")
        assert found(client, "first") == [first]
        second, third = send(client, "Second welcome"), send(client, "Third welcome")
        for _ in range(100):  # the prune runs every half second
            if found(client, "welcome") == [third, second]:
                break
            time.sleep(0.1)
        assert found(client, "welcome") == [third, second] and found(client, "first") == []
        assert client.delete(f"{OUTBOX}/{second}").status_code == 200
        assert found(client, "welcome") == [third]
    assert _index_rows(path) == (1, 1)  # the index dropped the pruned and the deleted email too
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM emails_text_gone").fetchone()[0] == 0


def _as_an_older_build_left_it(path: Path, indexed: int | None) -> None:
    """The word index of before issue 39 in place of the trigram one; or (`indexed`) a build cut short."""
    with sqlite3.connect(path) as raw:
        if indexed is None:
            raw.executescript("DROP TRIGGER emails_text_forget; DROP TABLE emails_text_gone;"
                              " DROP TABLE emails_text; CREATE VIRTUAL"
                              " TABLE emails_fts USING fts5(sender, recipients, subject, body);"
                              " CREATE TRIGGER emails_fts_delete AFTER DELETE ON emails BEGIN"
                              " DELETE FROM emails_fts WHERE rowid = old.seq; END;")
        else:
            raw.execute("DELETE FROM emails_text WHERE rowid > ?", (indexed,))


@pytest.mark.parametrize("indexed", [None, 3])
def test_an_older_database_file_is_indexed_when_opened(tmp_path: Path, indexed: int | None) -> None:
    path = tmp_path / "old.db"
    with EmulatorServer(make_settings(port=0, db=str(path))) as started, \
            httpx.Client(base_url=started.url, headers=AUTH, timeout=60) as client:
        sent = [send(client, f"Bulk {n} elcome-{n % 2}") for n in range(10)]
        assert len(found(client, "elcome")) == 10
    _as_an_older_build_left_it(path, indexed)
    with EmulatorServer(make_settings(port=0, db=str(path))) as started, \
            httpx.Client(base_url=started.url, headers=AUTH, timeout=60) as client:
        assert found(client, "elcome-1") == sent[1::2][::-1]
        assert found(client, "bulk 7") == [sent[7]]
    assert _index_rows(path) == (10, 10)
    with sqlite3.connect(path) as raw:
        names = {row[0] for row in raw.execute("SELECT name FROM sqlite_master")}
    assert "emails_fts" not in names and "emails_fts_delete" not in names


def test_contacts_search_folds_like_the_mail_lists(client: httpx.Client) -> None:
    for email, first in (("soren@example.com", "Søren"), ("sofia@example.com", "ΣΟΦΙΑ"),
                         ("zoe@example.com", "Zoë")):
        assert client.post("/contacts", json={"email": email, "first_name": first}).status_code in (200, 201)
    for q, expected in (("soren", ["soren@example.com"]), ("SØR", ["soren@example.com"]),
                        ("σοφία", ["sofia@example.com"]), ("zoe", ["zoe@example.com"]),
                        ("ZOË", ["zoe@example.com"])):
        page = client.get(f"{UI}/contacts", params={"q": q})
        assert page.status_code == 200
        assert sorted(set(re.findall(r"[a-z]+@example\.com", page.text))) == expected, q
