"""Isolated accounts never carry their API key (issue 36): their ids are derived from the key and the seed,
a person sees the key redacted (`re_…9876`), no page, URL, cookie, JSON body or log line of a session shows
the key, database files made with `acct_<key>` accounts are migrated at start, and an isolated key's inbound
address is its own account's from its very first request."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from emulator.core import accounts
from emulator.core.accounts import isolated_account_id, managed_domain, redacted_key
from emulator.web.listing import SENT
from tests.conftest import api_client, make_settings

SECRET = "re_leakcheck_Zq7Secret9876"
UI = "/_emulator/ui"
SAME_SITE = {"Sec-Fetch-Site": "same-origin"}


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def send(client: httpx.Client | TestClient, key: str, to: str = "ada@example.org") -> str:
    sent = client.post("/emails", headers=bearer(key), json={
        "from": "Robot <robot@alpha.dev>", "to": [to], "subject": "Hello", "html": "<p>Hi</p>"})
    assert sent.status_code == 200, sent.text
    return str(sent.json()["id"])


# ---- ids and labels -------------------------------------------------------------------------------

def test_an_isolated_account_id_is_derived_from_seed_and_key_and_never_contains_it() -> None:
    first = isolated_account_id(0, SECRET)
    assert re.fullmatch(r"acct_[a-z2-7]{20}", first)
    assert first == isolated_account_id(0, SECRET)
    assert first != isolated_account_id(1, SECRET)
    assert first != isolated_account_id(0, SECRET + "x")
    assert "leakcheck" not in first and "9876" not in first


@pytest.mark.parametrize(("key", "label"), [
    (SECRET, "re_…9876"), ("re_suite_two", "re_…_two"), ("re_abc", "re_…c"), ("re_x", "re_…")])
def test_a_key_is_shown_redacted_to_its_last_few_characters(key: str, label: str) -> None:
    assert redacted_key(key) == label


@pytest.fixture
def isolated() -> Iterator[TestClient]:
    with api_client(make_settings(isolate_keys=True)) as client:
        yield client


def test_outbox_json_shows_the_derived_account_and_its_redacted_key(isolated: TestClient) -> None:
    email_id = send(isolated, SECRET)
    account = isolated_account_id(0, SECRET)
    (item,) = isolated.get("/_emulator/outbox", params={"api_key": SECRET}).json()["data"]
    assert (item["id"], item["account"], item["account_label"]) == (email_id, account, "re_…9876")
    assert isolated.get("/_emulator/outbox", params={"account": account}).json()["data"] == [item]
    detail = isolated.get(f"/_emulator/outbox/{email_id}").json()
    assert (detail["account"], detail["account_label"]) == (account, "re_…9876")
    assert SECRET not in isolated.get("/_emulator/outbox").text


def test_the_ui_switcher_labels_accounts_by_redacted_key(isolated: TestClient) -> None:
    send(isolated, SECRET)
    account = isolated_account_id(0, SECRET)
    page = isolated.get(f"{UI}/", params={"account": account}, headers=SAME_SITE)
    assert page.status_code == 200
    assert f'<option value="{account}" selected>re_…9876</option>' in page.text
    assert '<option value="default">default</option>' in page.text
    assert SECRET not in page.text and SECRET not in page.headers.get("set-cookie", "")


# ---- a whole session: the key appears nowhere ----------------------------------------------------

@pytest.fixture
def cli(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The emulator as a user runs it, its stdout (request lines included) kept in a file."""
    log = tmp_path / "stdout.txt"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "emulator", "--port", "0", "--no-smtp", "--isolate-keys", "--clock",
             "frozen", "--log-requests"], stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        yield _url_of(log, process), log
    finally:
        process.terminate()
        process.wait(30)


def _url_of(log: Path, process: subprocess.Popen[str]) -> str:
    for _ in range(600):
        found = re.search(r"listening on (http://\S+)", log.read_text())
        if found:
            return found.group(1)
        if process.poll() is not None:
            break
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(0.05)
    pytest.fail(f"the CLI did not print its URL: {log.read_text()}")


def _session(url: str) -> list[str]:
    """Everything a person or a log sees in a short isolated-key session: bodies, headers, URLs."""
    seen: list[str] = []
    with httpx.Client(base_url=url, timeout=30) as http:
        def get(path: str, **kwargs: object) -> httpx.Response:
            response = http.get(path, **kwargs)  # type: ignore[arg-type]
            assert response.status_code < 400, (path, response.status_code, response.text)
            seen.extend([str(response.url.copy_with(query=None)), response.text, str(response.headers)])
            return response

        email_id = send(http, SECRET)
        account = isolated_account_id(0, SECRET)
        get("/emails", headers=bearer(SECRET))
        logs = get("/logs", headers=bearer(SECRET)).json()["data"]
        get(f"/logs/{logs[0]['id']}", headers=bearer(SECRET))
        get("/_emulator/outbox")
        get("/_emulator/outbox", params={"api_key": SECRET})
        get(f"/_emulator/outbox/{email_id}")
        get("/_emulator/inbound/address", headers=bearer(SECRET))
        get(f"{UI}/", params={"account": account}, headers=SAME_SITE)
        for path in (f"{UI}/", f"{UI}/logs", f"{SENT.url}/{email_id}", f"{UI}/received"):
            get(path, params={"account": account})
    return seen


def test_an_isolated_key_appears_in_no_page_url_cookie_json_or_log_line(cli: tuple[str, Path]) -> None:
    url, log = cli
    seen = _session(url)
    assert any("re_…9876" in text for text in seen)  # a person can still tell the account
    leaks = [text[:200] for text in seen if SECRET in text]
    assert leaks == []
    stdout = log.read_text()
    assert "GET /_emulator/outbox 200" in stdout  # the request lines were written
    assert SECRET not in stdout


# ---- inbound address from the first request (finding 8) -------------------------------------------

def test_a_fresh_isolated_key_gets_its_own_inbound_address_and_its_mail(isolated: TestClient) -> None:
    fresh = "re_fresh_inbound_key"
    domain = isolated.get("/_emulator/inbound/address", headers=bearer(fresh)).json()["domain"]
    assert domain == managed_domain(isolated_account_id(0, fresh))
    default_domain = isolated.get("/_emulator/inbound/address").json()["domain"]
    assert domain != default_domain
    injected = isolated.post("/_emulator/inbound", json={"from": "ada@example.org", "to": f"help@{domain}",
                                                        "subject": "First", "text": "hello"})
    assert injected.status_code == 200, injected.text
    mine = isolated.get("/emails/receiving", headers=bearer(fresh)).json()["data"]
    assert [email["subject"] for email in mine] == ["First"]
    assert isolated.get("/emails/receiving").json()["data"] == []  # not in the default account


# ---- migration of files made with `acct_<key>` accounts -------------------------------------------

def _make_old_file(path: Path | None, keys: list[str], snapshot: Path | None = None) -> dict[str, str]:
    """A database file as the emulator wrote it before issue 36: isolated accounts named `acct_<key>` in
    every table, in `accounts` and in the per-account id counters of `meta`, forwarding inboxes on the old
    account's managed domain. Made by running the emulator, then renaming the accounts back (in the
    snapshot saved at the end instead, when `snapshot` is given)."""
    settings = make_settings(isolate_keys=True, db=str(path or ":memory:"), clock="frozen")
    sent: dict[str, str] = {}
    with api_client(settings) as client:
        for key in keys:
            sent[key] = send(client, key)
        client.post("/domains", headers=bearer(keys[0]), json={"name": "plain.acme.dev"})
        inbox = client.post("/inboxes", headers=bearer(keys[0]),
                            json={"email_address": "team@plain.acme.dev", "forwarding": True})
        assert inbox.status_code == 201, inbox.text
        if snapshot is not None:
            saved = client.post("/_emulator/snapshot/save", json={"path": str(snapshot)})
            assert saved.status_code == 200, saved.text
    target = snapshot or path
    assert target is not None
    _rename_back(target, keys)
    return sent


def _rename_back(path: Path, keys: list[str]) -> None:
    raw = sqlite3.connect(path)
    tables = [row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
              if "account" in {col[1] for col in raw.execute(f"PRAGMA table_info({row[0]})")}]
    for key in keys:
        new, old = isolated_account_id(0, key), f"acct_{key}"
        for table in tables:
            raw.execute(f"UPDATE {table} SET account = ? WHERE account = ?", (old, new))
        raw.execute("UPDATE accounts SET id = ? WHERE id = ?", (old, new))
        raw.execute("UPDATE meta SET key = ? WHERE key = ?", (f"id_counter:{old}", f"id_counter:{new}"))
        raw.execute("UPDATE inboxes SET receiving_address = replace(receiving_address, ?, ?)",
                    (managed_domain(new), managed_domain(old)))
    raw.commit()
    raw.close()


def _key_text_in(path: Path, key: str) -> list[str]:
    raw = sqlite3.connect(path)
    found = [f"meta {row[0]}" for row in raw.execute("SELECT key FROM meta WHERE instr(key, ?)", (key,))]
    for (table,) in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        columns = {col[1] for col in raw.execute(f"PRAGMA table_info({table})")}
        if "account" in columns:
            found += [table for _ in raw.execute(f"SELECT 1 FROM {table} WHERE instr(account, ?)", (key,))]
    found += ["accounts" for _ in raw.execute("SELECT 1 FROM accounts WHERE instr(id, ?)", (key,))]
    raw.close()
    return found


def test_a_file_with_key_named_accounts_is_migrated_at_start(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path, keys = tmp_path / "old.db", ["re_old_alpha_1111", "re_old_bravo_2222"]
    sent = _make_old_file(path, keys)
    assert _key_text_in(path, keys[0])  # the file really is the old way
    monkeypatch.setattr(accounts, "MIGRATION_CHUNK", 2)  # several chunks per table
    with api_client(make_settings(isolate_keys=True, db=str(path), clock="frozen")) as client:
        for key in keys:
            listed = client.get("/emails", headers=bearer(key)).json()["data"]
            assert [email["id"] for email in listed] == [sent[key]]  # nothing lost, nothing mixed
            (item,) = client.get("/_emulator/outbox", params={"api_key": key}).json()["data"]
            assert item["account"] == isolated_account_id(0, key)
            assert item["account_label"] == redacted_key(key)
        (listed_inbox,) = client.get("/inboxes", headers=bearer(keys[0])).json()["data"]
        inbox = client.get(f"/inboxes/{listed_inbox['id']}", headers=bearer(keys[0])).json()
        domain = client.get("/_emulator/inbound/address", headers=bearer(keys[0])).json()["domain"]
        assert inbox["receiving_address"] == f"team.plain@{domain}"
        client.post("/_emulator/inbound", json={"from": "ada@example.org", "to": inbox["receiving_address"],
                                                "subject": "Still forwarded", "text": "hello"})
        threads = client.get(f"/inboxes/{inbox['id']}/threads", headers=bearer(keys[0])).json()["data"]
        assert [thread["subject"] for thread in threads] == ["Still forwarded"]
        second = send(client, keys[0], to="bob@example.org")
        assert second not in sent.values()  # the account's id sequence went on, no id reused
    assert [_key_text_in(path, key) for key in keys] == [[], []]


def test_a_snapshot_with_key_named_accounts_is_migrated_on_restore(tmp_path: Path) -> None:
    snapshot, keys = tmp_path / "old.snapshot", ["re_old_charlie_3333"]
    sent = _make_old_file(None, keys, snapshot=snapshot)
    assert _key_text_in(snapshot, keys[0])
    with api_client(make_settings(isolate_keys=True)) as client:
        restored = client.post("/_emulator/snapshot/restore", json={"path": str(snapshot)})
        assert restored.status_code == 200, restored.text
        listed = client.get("/emails", headers=bearer(keys[0])).json()["data"]
        assert [email["id"] for email in listed] == [sent[keys[0]]]
        (item,) = client.get("/_emulator/outbox").json()["data"]
        assert (item["account"], item["account_label"]) == (isolated_account_id(0, keys[0]), "re_…3333")
