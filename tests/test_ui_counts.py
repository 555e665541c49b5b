"""Exact counts in the UI (issue 39): all mail and unread mail are kept per account by triggers
(control/counts.py) and never drift; a search's matches are counted exactly in windows; a destructive
button states the number it deletes and deletes exactly that, never mail that arrived after."""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect
from starlette.testclient import TestClient

from emulator.app import create_app
from emulator.control import counts, deletion, reads, retention
from emulator.core.emulator import Emulator
from emulator.testing import EmulatorServer
from emulator.web import listing
from tests.conftest import AUTH, THREE_IDS, THREE_SCREENS, make_settings
from tests.ui_helpers import running_server

UI = "/_emulator/ui"
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def send(client: TestClient | httpx.Client, subject: str, to: str = "delivered@resend.dev") -> str:
    response = client.post("/emails", json={"from": "a@resend.dev", "to": [to], "subject": subject,
                                            "text": "hello"})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def receive(client: TestClient, domain: str, subject: str) -> None:
    answer = client.post("/_emulator/inbound", json={"from": "ada@example.org", "to": f"help@{domain}",
                                                     "subject": subject, "text": "x"})
    assert answer.status_code == 200, answer.text


def call(client: TestClient, fn: Any, *args: Any) -> Any:
    return client.portal.call(fn, *args)  # type: ignore[union-attr]


async def clone(emu: Emulator, table: str, n: int, subject: str, account: str = "default") -> None:
    """`n` more rows like the table's first one (ids and subjects vary), in one statement: fast."""
    async with emu.transaction() as tx:
        columns = [row["name"] for row in await tx.all(f"PRAGMA table_info({table})")]
        copied = ", ".join(c for c in columns if c not in ("seq", "id", "subject", "account"))
        await tx.run(f"WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < ?) "
                     f"INSERT INTO {table} (id, subject, account, {copied}) SELECT 'clone-' || "
                     f"(SELECT max(seq) FROM {table}) || '-' || n, ? || ' #' || n, ?, {copied} "
                     f"FROM k, (SELECT * FROM {table} ORDER BY seq LIMIT 1)", (n, subject, account))


async def drift(emu: Emulator) -> list[Any]:
    """Every (box, account) whose kept counts differ from COUNT(*) over the tables: [] when none."""
    wrong, counted = [], {}
    async with emu.transaction() as tx:
        kept = {(r["box"], r["account"]): (r["total"], r["unread"])
                for r in await tx.all("SELECT * FROM mail_counts")}
        for box in counts.BOXES:
            unread = reads.read_test(box.name, box.table, False)
            rows = await tx.all(f"SELECT account, count(*) AS total, sum({unread}) AS unread "
                                f"FROM {box.table} GROUP BY account")
            counted.update({(box.name, r["account"]): (r["total"], r["unread"]) for r in rows})
    for key in set(kept) | set(counted):
        if kept.get(key, (0, 0)) != counted.get(key, (0, 0)):
            wrong.append((key, kept.get(key), counted.get(key)))
    return wrong


def shown(client: TestClient | httpx.Client, query: str = "") -> dict[str, Any]:
    """What the outbox list's live refresh says: total (or matches) and unread."""
    response = client.get(f"{UI}/rows/outbox{query}")
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


def mark(client: TestClient, ids: list[str], read: bool) -> None:
    async def run(emu: Emulator) -> None:
        async with emu.transaction("default") as tx:
            await reads.mark(tx, "outbox", "emails", ids, read)
    call(client, run, client.app.state.emu)  # type: ignore[attr-defined]


# ---- exact after every kind of change ------------------------------------------------------------

def test_counts_follow_sends_deletes_and_read_marks(client: TestClient) -> None:
    ids = [send(client, f"Mail {n}") for n in range(5)]
    assert (shown(client)["total"], shown(client)["unread"]) == ("5", "5")
    mark(client, ids[:2], True)
    assert shown(client)["unread"] == "3"
    mark(client, ids[:1], False)
    assert shown(client)["unread"] == "4"
    emu = client.app.state.emu  # type: ignore[attr-defined]

    async def remove(ids: list[str]) -> None:
        async with emu.transaction("default") as tx:
            await deletion.remove(tx, deletion.SENT, ids)
    call(client, remove, ids[1:3])  # one read, one unread
    assert (shown(client)["total"], shown(client)["unread"]) == ("3", "3")
    assert call(client, drift, emu) == []


def test_reset_empties_the_counts(client: TestClient) -> None:
    send(client, "One")
    assert client.post("/_emulator/reset").status_code == 200
    assert (shown(client)["total"], shown(client)["unread"]) == ("0", "0")
    send(client, "Two")
    assert (shown(client)["total"], shown(client)["unread"]) == ("1", "1")


def test_retention_prune_moves_the_counts() -> None:
    with TestClient(create_app(make_settings(max_emails=3)), headers=AUTH) as client:
        for n in range(6):
            send(client, f"Mail {n}")
        emu = client.app.state.emu  # type: ignore[attr-defined]
        call(client, retention.prune, emu)
        assert (shown(client)["total"], shown(client)["unread"]) == ("3", "3")
        assert call(client, drift, emu) == []


def test_snapshot_restore_brings_its_counts_and_an_old_snapshot_gets_them_built(
        client: TestClient, tmp_path: Path) -> None:
    ids = [send(client, f"Mail {n}") for n in range(4)]
    mark(client, ids[:1], True)
    path = tmp_path / "state.db"
    assert client.post("/_emulator/snapshot/save", json={"path": str(path)}).status_code == 200
    send(client, "After the snapshot")
    assert client.post("/_emulator/snapshot/restore", json={"path": str(path)}).status_code == 200
    assert (shown(client)["total"], shown(client)["unread"]) == ("4", "3")
    # A snapshot saved before the counters: no table, no triggers, no mark.
    with sqlite3.connect(path) as old:
        old.execute("DROP TABLE mail_counts")
        triggers = old.execute("SELECT name FROM sqlite_master WHERE name LIKE 'mail_counts_%'").fetchall()
        for (name,) in triggers:
            old.execute(f"DROP TRIGGER {name}")
        old.execute("DELETE FROM meta WHERE key = ?", (counts.MARK,))
    send(client, "Again after")
    assert client.post("/_emulator/snapshot/restore", json={"path": str(path)}).status_code == 200
    assert (shown(client)["total"], shown(client)["unread"]) == ("4", "3")
    send(client, "Counted by the triggers the restore added")
    assert (shown(client)["total"], shown(client)["unread"]) == ("5", "4")


def test_a_database_file_from_before_gets_its_counts_built_at_open(tmp_path: Path) -> None:
    db = str(tmp_path / "old.db")
    with TestClient(create_app(make_settings(db=db)), headers=AUTH) as client:
        for n in range(3):
            send(client, f"Mail {n}")
    with sqlite3.connect(db) as old:
        old.execute("DELETE FROM mail_counts")
        old.execute("DELETE FROM meta WHERE key = ?", (counts.MARK,))
    with TestClient(create_app(make_settings(db=db)), headers=AUTH) as client:
        assert (shown(client)["total"], shown(client)["unread"]) == ("3", "3")


def test_renamed_accounts_get_their_counts_built_again(tmp_path: Path) -> None:
    """A file from before issue 36 names an isolated account `acct_<key>`; the rename at open moves its
    mail to the derived id, and the counters follow."""
    db = str(tmp_path / "named.db")
    with TestClient(create_app(make_settings(db=db)), headers=AUTH) as client:
        for n in range(3):
            send(client, f"Mail {n}")
    with sqlite3.connect(db) as old:
        for table in ("emails", "mail_reads", "mail_counts", "events", "request_logs"):
            old.execute(f"UPDATE {table} SET account = 'acct_re_old_key_1234' WHERE account = 'default'")
        old.execute("INSERT INTO accounts (id, created_at) VALUES ('acct_re_old_key_1234', '2026-01-01')")
    with TestClient(create_app(make_settings(db=db)), headers=AUTH) as client:
        emu = client.app.state.emu  # type: ignore[attr-defined]
        assert call(client, drift, emu) == []

        async def kept() -> list[Any]:
            async with emu.transaction() as tx:
                return await tx.all("SELECT account, total FROM mail_counts")
        rows = call(client, kept)
        assert [(row["account"] != "acct_re_old_key_1234", row["total"]) for row in rows] == [(True, 3)]


# ---- never drift -------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_counts_never_drift_from_count_star(client: TestClient, seed: int) -> None:
    """A random sequence of every change that touches mail, two accounts, both boxes; after each step
    the kept counts equal COUNT(*)."""
    pick = random.Random(seed)
    emu = client.app.state.emu  # type: ignore[attr-defined]
    domain = client.get("/_emulator/inbound/address").json()["domain"]

    async def ids_of(table: str, account: str) -> list[str]:
        async with emu.transaction() as tx:
            return [r["id"] for r in await tx.all(f"SELECT id FROM {table} WHERE account = ?", (account,))]

    async def act(kind: str, account: str) -> None:
        box = pick.choice(counts.BOXES)
        mail = deletion.SENT if box.table == "emails" else deletion.RECEIVED
        ids = await ids_of(box.table, account)
        chosen = pick.sample(ids, min(len(ids), pick.randint(1, 3)))
        async with emu.transaction(account) as tx:
            if kind == "read":
                await reads.mark(tx, box.name, box.table, chosen, True)
            elif kind == "unread":
                await reads.mark(tx, box.name, box.table, chosen, False)
            elif kind == "delete":
                await deletion.remove(tx, mail, chosen)
        if kind == "delete-where" and ids:
            await deletion.delete_where(emu, mail, account, "account = ? AND subject LIKE ?",
                                        [account, f"%{pick.randint(0, 9)}%"])
        if kind == "clone":
            await clone(emu, box.table, pick.randint(1, 20), f"Clone {pick.randint(0, 99)}", account)

    send(client, "First")  # clones copy a first row of each box
    receive(client, domain, "First in")
    for step in range(60):
        kind = pick.choice(["send", "send", "inbound", "read", "read", "unread", "delete", "delete-where",
                            "clone", "other-account"])
        if kind == "send":
            send(client, f"Mail {step}")
        elif kind == "inbound":
            receive(client, domain, f"In {step}")
        elif kind == "other-account":
            call(client, act, "clone", "other")
        else:
            call(client, act, kind, pick.choice(["default", "other"]))
        assert call(client, drift, emu) == [], (step, kind)


# ---- exact above 10 000 ------------------------------------------------------------------------

@pytest.fixture
def big(client: TestClient) -> TestClient:
    """12 345 sent emails (one sent, the rest copied by SQL), 345 of them read."""
    send(client, "Bulk #0")
    emu = client.app.state.emu  # type: ignore[attr-defined]
    call(client, clone, emu, "emails", 12_344, "Bulk")

    async def read_some() -> None:
        async with emu.transaction("default") as tx:
            await tx.run("INSERT INTO mail_reads (box, seq, account, read_at) SELECT 'outbox', seq, account, "
                         "created_at FROM emails ORDER BY seq LIMIT 345")
    call(client, read_some)
    return client


def test_title_header_and_delete_all_state_exact_numbers_above_10000(big: TestClient) -> None:
    html = big.get(f"{UI}/").text
    assert "<title>(12,000) Outbox" in html
    assert '<span id="total">12,345</span> messages' in html
    assert '<span id="unread">12,000</span> unread' in html
    assert "Delete all 12,345 emails</button>" in html
    assert "10000+" not in html and "1000+" not in html


def test_a_search_states_its_exact_matches_above_10000(big: TestClient,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    send(big, "Newsletter")
    monkeypatch.setattr(listing, "COUNT_BUDGET", 60.0)  # counted on the page, however slow the machine
    html = big.get(f"{UI}/", params={"q": "subject:bulk"}).text
    assert '<span id="total">12,345</span> matches' in html
    assert "Delete these 12,345 results</button>" in html


def test_a_slow_count_says_counting_and_the_count_route_answers_it(big: TestClient,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing, "COUNT_BUDGET", -1.0)  # no time at all: the page cannot count
    html = big.get(f"{UI}/", params={"q": "subject:bulk"}).text
    assert 'data-counting="true">counting…</span>' in html
    assert re.search(r'id="delete-results" disabled', html)
    answer = big.get(f"{UI}/count/outbox", params={"q": "subject:bulk"}).json()
    assert (answer["total"], answer["shown"]) == (12_345, "12,345")


def _results_form(client: TestClient, query: dict[str, str]) -> dict[str, str]:
    html = client.get(f"{UI}/", params=query).text
    form = html[html.index('id="results"'):]
    hidden = r'<input type="hidden" name="(\w+)" value="([^"]*)"'
    fields = dict(re.findall(hidden, form[:form.index("</form>")]))
    return {**fields, "csrf": CSRF.findall(html)[0], "action": "delete"}


def test_the_outbox_api_counts_matches_exactly(big: TestClient) -> None:
    send(big, "Newsletter")
    assert big.get("/_emulator/outbox/count").json()["count"] == 12_346
    assert big.get("/_emulator/outbox/count", params={"q": "subject:bulk"}).json()["count"] == 12_345
    assert big.get("/_emulator/outbox/count", params={"subject": "Newsletter"}).json()["count"] == 1


def test_deleting_results_acts_on_the_stated_number_only(client: TestClient) -> None:
    for n in range(4):
        send(client, f"Invoice {n}")
    form = _results_form(client, {"q": "subject:invoice"})
    assert (form["expect"], form["scope"]) == ("4", "search")
    late = send(client, "Invoice arriving late")
    answer = client.post(f"{UI}/bulk/outbox", data=form, follow_redirects=False)
    assert "deleted=4" in answer.headers["location"]
    assert client.get(f"/emails/{late}").status_code == 200
    assert shown(client)["total"] == "1"


def test_results_that_changed_since_counted_are_not_deleted(client: TestClient) -> None:
    ids = [send(client, f"Invoice {n}") for n in range(3)]
    form = _results_form(client, {"q": "subject:invoice is:unread"})
    mark(client, ids[:1], True)  # one of the stated results no longer matches
    answer = client.post(f"{UI}/bulk/outbox", data=form, follow_redirects=True)
    assert "Nothing was deleted: the button stated 3 but 2 match now" in answer.text
    assert shown(client)["total"] == "3"


# ---- in Chromium -------------------------------------------------------------------------------

@pytest.fixture(scope="module", params=THREE_SCREENS, ids=THREE_IDS)
def desk(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=request.param)
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    yield page
    context.close()


@pytest.fixture(scope="module")
def live() -> Iterator[EmulatorServer]:
    with running_server() as running:
        yield running


@pytest.mark.browser
def test_delete_these_results_in_chromium_deletes_exactly_what_it_states(desk: Page,
                                                                         live: EmulatorServer) -> None:
    with httpx.Client(base_url=live.url, headers=AUTH, timeout=30) as api:
        assert api.post("/_emulator/reset").status_code == 200
        for n in range(7):
            send(api, f"Invoice {n}")
        keep = send(api, "Newsletter")
        # The live channel off: the page keeps showing what it counted while new mail arrives.
        desk.route("**/_emulator/ui/events**", lambda route: route.abort())
        desk.goto(f"{live.url}{UI}/?q=subject%3Ainvoice")
        button = desk.locator("#delete-results")
        expect(button).to_have_text("Delete these 7 results")
        expect(desk.locator("#count")).to_have_text("7 matches")
        late = send(api, "Invoice arriving between showing and clicking")
        with desk.expect_navigation():
            button.click()
        expect(desk.locator("#notice")).to_have_text("Deleted 7 emails.")
        assert api.get(f"/emails/{late}").status_code == 200
        assert api.get(f"/emails/{keep}").status_code == 200
        expect(desk.locator("#count")).to_have_text("1 match")
        desk.unroute("**/_emulator/ui/events**")


@pytest.mark.browser
def test_a_count_that_takes_long_arrives_and_enables_the_button_in_chromium(
        desk: Page, live: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with httpx.Client(base_url=live.url, headers=AUTH, timeout=30) as api:
        assert api.post("/_emulator/reset").status_code == 200
        for n in range(60):  # more than one page: the page must count
            send(api, f"Invoice {n}")
        monkeypatch.setattr(listing, "COUNT_BUDGET", -1.0)  # the page never has the time to count
        desk.goto(f"{live.url}{UI}/?q=subject%3Ainvoice")
        button = desk.locator("#delete-results")
        expect(button).to_have_text("Delete these 60 results")  # list.js asked the count route
        expect(button).to_be_enabled()
        expect(desk.locator("#count")).to_have_text("60 matches")
        with desk.expect_navigation():
            button.click()
        expect(desk.locator("#notice")).to_have_text("Deleted 60 emails.")
