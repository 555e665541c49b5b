"""Issue 36: no API credential reaches the UI or the control plane, and a GET changes nothing.

- A webhook aimed at the emulator itself is refused: at create/update when its URL names this machine and
  one of the emulator's ports, at delivery when a name only resolves there (nothing is sent).
- A UI POST needs the UI's own page (its form's token, or a browser's `Sec-Fetch-Site: same-origin`) and
  acts on the account the UI's switcher chose, not one a `?account=` names.
- Opening a message reads it only when the user opened it (a navigation the browser vouches for), never
  for an `<img>` on another site or a script's GET.
All through real HTTP against a real server, and real Chromium.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from emulator.core.accounts import isolated_account_id
from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.ui_helpers import CHROMIUM, CHROMIUM_ARGS, OtherOrigin, running_server
from tests.webhooks_helpers import Receiver

UI = "/_emulator/ui"
KEY_A, KEY_B = "re_tenant_a", "re_tenant_b"
ACCOUNT_A = isolated_account_id(0, KEY_A)  # the servers here run with the default seed
NAVIGATION = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
SELF_SENTENCE = "is this emulator itself, and it never delivers webhooks to its own ports"


@pytest.fixture(scope="module")
def isolated() -> Iterator[EmulatorServer]:
    with running_server(isolate_keys=True, smtp=True, smtp_port=0, smtps_port=0) as server:
        yield server


def as_tenant(server: EmulatorServer, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def send(api: httpx.Client, subject: str = "Hello", **fields: Any) -> str:
    body = {"from": "a@resend.dev", "to": ["delivered@resend.dev"], "subject": subject, "text": "x", **fields}
    response = api.post("/emails", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def exists(server: EmulatorServer, key: str, email_id: str) -> bool:
    with as_tenant(server, key) as api:
        return api.get(f"/emails/{email_id}").status_code == 200


def unread(server: EmulatorServer) -> list[str]:
    found = httpx.get(f"{server.url}/_emulator/outbox", params={"q": "is:unread"}).json()["data"]
    return [item["id"] for item in found]


# ---- webhooks aimed at the emulator ------------------------------------------------------------

def test_a_webhook_aimed_at_the_emulators_own_ports_is_refused_at_create(isolated: EmulatorServer) -> None:
    with as_tenant(isolated, KEY_A) as a, as_tenant(isolated, KEY_B) as b:
        mine, later = send(a), send(a, scheduled_at="in 1 hour")
        port, smtp = int(isolated.url.rsplit(":", 1)[1]), isolated.smtp_port
        targets = [f"http://127.0.0.1:{port}{UI}/messages/{mine}/delete?account={ACCOUNT_A}",
                   f"http://localhost:{port}{UI}/messages/{later}/send-now?account={ACCOUNT_A}",
                   f"http://[::1]:{port}{UI}/reset", f"http://0.0.0.0:{port}{UI}/reset",
                   f"http://{socket.gethostname()}:{port}{UI}/reset", f"http://127.0.0.1:{smtp}/"]
        for endpoint in targets:
            refused = b.post("/webhooks", json={"endpoint": endpoint, "events": ["email.sent"]})
            assert refused.status_code == 422, endpoint
            assert refused.json()["name"] == "validation_error" and SELF_SENTENCE in refused.json()["message"]
        assert b.get("/webhooks").json()["data"] == []
        assert a.get(f"/emails/{later}").json()["last_event"] == "scheduled"
    assert exists(isolated, KEY_A, mine)


def test_other_endpoint_problems_keep_their_resend_message_first(isolated: EmulatorServer) -> None:
    with as_tenant(isolated, KEY_B) as b:
        wrong = b.post("/webhooks", json={"endpoint": "ftp://127.0.0.1/", "events": ["email.sent"]})
        assert wrong.status_code == 422
        assert wrong.json()["message"].startswith("Invalid `endpoint` field. It must be a valid URL")


def test_a_name_that_only_resolves_to_the_emulator_is_refused_at_delivery(
        isolated: EmulatorServer, receiver: Receiver) -> None:
    with as_tenant(isolated, KEY_A) as a, as_tenant(isolated, KEY_B) as b:
        mine = send(a)
        hook = b.post("/webhooks", json={"endpoint": receiver.url, "events": ["email.sent"]}).json()["id"]
        port = isolated.url.rsplit(":", 1)[1]
        # `127.1` is 127.0.0.1 to the resolver, but not an address as written: the update lets it through.
        aimed = f"http://127.1:{port}{UI}/messages/{mine}/delete?account={ACCOUNT_A}"
        assert b.patch(f"/webhooks/{hook}", json={"endpoint": aimed}).status_code == 200
        send(b, "Triggers the delivery")
        assert httpx.post(f"{isolated.url}/_emulator/flush").status_code == 200
        event = b.get(f"/webhooks/{hook}/events").json()["data"][0]
        attempts = b.get(f"/webhooks/{hook}/events/{event['id']}/attempts").json()["data"]
        assert attempts and attempts[0]["http_status_code"] in (0, None), attempts
        assert SELF_SENTENCE.replace("and it ", "which ") in attempts[0]["response"]
        b.delete(f"/webhooks/{hook}")
    assert exists(isolated, KEY_A, mine) and receiver.received == []


def test_a_webhook_to_another_local_port_still_delivers(isolated: EmulatorServer, receiver: Receiver) -> None:
    with as_tenant(isolated, KEY_B) as b:
        hook = b.post("/webhooks", json={"endpoint": receiver.url, "events": ["email.sent"]})
        assert hook.status_code == 201, hook.text
        send(b)
        assert httpx.post(f"{isolated.url}/_emulator/flush").status_code == 200
        b.delete(f"/webhooks/{hook.json()['id']}")
    assert [item.path for item in receiver.received] == [urlsplit(receiver.url).path]


# ---- UI POSTs need the UI's page, and act on the session's account ------------------------------

def test_a_ui_post_without_token_or_fetch_metadata_is_403_and_changes_nothing(
        isolated: EmulatorServer) -> None:
    with as_tenant(isolated, KEY_A) as a:
        mine = send(a)
    with httpx.Client(base_url=isolated.url) as anyone:
        for path in (f"/messages/{mine}/delete?account={ACCOUNT_A}", "/reset", "/bulk/outbox"):
            refused = anyone.post(f"{UI}{path}", content="scope=all&action=delete&csrf=0123abcd",
                                  headers={"Content-Type": "application/x-www-form-urlencoded"})
            assert refused.status_code == 403, path
            body = refused.json()
            assert set(body) == {"statusCode", "name", "message"} and body["statusCode"] == 403
            assert "must come from the emulator's own page" in body["message"]
    assert exists(isolated, KEY_A, mine)


def _token(page_html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page_html)
    assert found is not None
    return found[1]


def test_the_pages_token_proves_the_ui_and_only_for_its_own_session(isolated: EmulatorServer) -> None:
    with as_tenant(isolated, KEY_A) as a:
        first, second = send(a), send(a)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    with httpx.Client(base_url=isolated.url) as user, httpx.Client(base_url=isolated.url) as other:
        token = _token(user.get(f"{UI}/?account={ACCOUNT_A}").text)  # a script: the switch is remembered
        _token(other.get(f"{UI}/").text)
        stolen = other.post(f"{UI}/messages/{first}/delete", content=f"csrf={token}", headers=form)
        assert stolen.status_code == 403 and exists(isolated, KEY_A, first)
        done = user.post(f"{UI}/messages/{first}/delete", content=f"csrf={token}", headers=form)
        assert done.status_code == 303 and not exists(isolated, KEY_A, first)
    assert exists(isolated, KEY_A, second)


def test_a_ui_post_acts_on_the_sessions_account_not_the_query(isolated: EmulatorServer) -> None:
    with as_tenant(isolated, KEY_A) as a:
        mine = send(a)
    same = {"Sec-Fetch-Site": "same-origin", "Content-Type": "application/x-www-form-urlencoded"}
    with httpx.Client(base_url=isolated.url) as user:
        shown = user.get(f"{UI}/messages/{mine}", params={"account": ACCOUNT_A},
                         headers={"Sec-Fetch-Site": "cross-site"})
        assert shown.status_code == 200  # a link may still show that account's page
        refused = user.post(f"{UI}/messages/{mine}/delete?account={ACCOUNT_A}", headers=same)
        assert refused.status_code == 404 and exists(isolated, KEY_A, mine)  # the session's account: default
        user.get(f"{UI}/?account={ACCOUNT_A}", headers=NAVIGATION)  # the UI's own switcher
        done = user.post(f"{UI}/messages/{mine}/delete", headers=same)
        assert done.status_code == 303 and not exists(isolated, KEY_A, mine)


# ---- GET is safe ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def plain() -> Iterator[EmulatorServer]:
    with running_server() as server:
        yield server


def test_a_scripts_get_reads_nothing_and_the_users_navigation_reads(plain: EmulatorServer) -> None:
    with httpx.Client(base_url=plain.url, headers=AUTH) as api:
        email_id = send(api)
        assert api.get(f"{UI}/messages/{email_id}").status_code == 200
        assert api.get(f"{UI}/messages/{email_id}", headers={**NAVIGATION, "Sec-Fetch-Site": "cross-site"})
        assert email_id in unread(plain)
        assert api.get(f"{UI}/messages/{email_id}", headers=NAVIGATION).status_code == 200
    assert email_id not in unread(plain)


# ---- in Chromium -----------------------------------------------------------------------------------

def _chromium(driver: Any) -> Any:
    return driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@pytest.mark.browser
def test_in_chromium_a_foreign_page_that_auto_submits_to_the_ui_changes_nothing(
        plain: EmulatorServer) -> None:
    with httpx.Client(base_url=plain.url, headers=AUTH) as api:
        email_id = send(api, "Keep me")
    targets = [f"{plain.url}{UI}/messages/{email_id}/delete", f"{plain.url}{UI}/reset"]
    with sync_playwright() as driver:
        browser = _chromium(driver)
        try:
            page = browser.new_page()
            page.goto(f"{plain.url}{UI}/")  # the user has the UI open: its session cookie is set
            for target in targets:
                hostile = OtherOrigin(f'<form id="f" method="post" action="{target}">'
                                      '<input name="scope" value="all"><input name="action" value="delete">'
                                      '</form><script>document.getElementById("f").submit()</script>')
                try:
                    with page.expect_navigation(url=target):
                        page.goto(hostile.url)
                    assert "cross_site_request" in page.content()
                finally:
                    hostile.close()
        finally:
            browser.close()
    with httpx.Client(base_url=plain.url, headers=AUTH) as api:
        assert api.get(f"/emails/{email_id}").status_code == 200


def _open_ui(page: Page, server: EmulatorServer) -> None:
    page.goto(f"{server.url}{UI}/")
    expect(page.locator("#rows tr.row").first).to_be_visible()


@pytest.mark.browser
def test_in_chromium_an_img_elsewhere_reads_nothing_and_opening_in_the_ui_reads(
        plain: EmulatorServer) -> None:
    with httpx.Client(base_url=plain.url, headers=AUTH) as api:
        email_id = send(api, "Read me only when opened")
    message_url = f"{plain.url}{UI}/messages/{email_id}"
    with sync_playwright() as driver:
        browser = _chromium(driver)
        hostile = OtherOrigin(f'<img id="pixel" src="{message_url}" alt="">')
        try:
            page = browser.new_page()
            _open_ui(page, plain)
            with page.expect_request(message_url) as asked:
                page.goto(hostile.url)
            assert asked.value.resource_type == "image"
            page.wait_for_load_state("networkidle")  # the image request was answered...
            assert email_id in unread(plain)  # ...and read nothing (before issue 36 it read the message)
            _open_ui(page, plain)
            page.locator("#rows tr.row", has_text="Read me only when opened").locator("a").first.click()
            expect(page).to_have_url(re.compile(re.escape(message_url)))
            assert email_id not in unread(plain)
        finally:
            hostile.close()
            browser.close()
