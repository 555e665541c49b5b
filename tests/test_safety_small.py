"""The smaller items of issue 11: SMTP AUTH with an overlong password, the recipient limit at RCPT
time, `?account=` links, a message's `<base href>`, and script attachments served from the UI origin."""

from __future__ import annotations

import base64
import smtplib
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright
from starlette.testclient import TestClient

from emulator.app import create_app
from emulator.smtp.server import MAX_RECIPIENTS
from tests.conftest import AUTH, KEY, make_settings
from tests.smtp_helpers import HOST, LiveEmulator, rich_message, transmit
from tests.ui_helpers import CHROMIUM, CHROMIUM_ARGS, OtherOrigin, Tracker, running_server

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
UI = "/_emulator/ui"


@pytest.fixture(scope="module")
def live() -> Iterator[LiveEmulator]:
    with LiveEmulator() as server:
        yield server


def _session(live: LiveEmulator) -> smtplib.SMTP:
    client = smtplib.SMTP(HOST, live.smtp_port, timeout=30)
    client.starttls(context=live.tls)
    client.ehlo()
    return client


def test_a_5000_character_password_is_535_and_the_session_goes_on(live: LiveEmulator) -> None:
    with _session(live) as client:
        client.user, client.password = "resend", "x" * 5000
        with pytest.raises(smtplib.SMTPAuthenticationError) as refused:
            client.auth("LOGIN", client.auth_login)
        assert (refused.value.smtp_code, refused.value.smtp_error) == (
            535, b"5.7.8 Authentication credentials invalid")
        client.login("resend", KEY)
        assert client.noop()[0] == 250


def test_a_5000_character_plain_credential_is_a_permanent_refusal(live: LiveEmulator) -> None:
    with _session(live) as client:
        client.user, client.password = "resend", "x" * 5000
        with pytest.raises(smtplib.SMTPAuthenticationError) as refused:
            client.auth("PLAIN", client.auth_plain, initial_response_ok=True)
        assert refused.value.smtp_code == 500  # "Command line too long": 5xx, never a 451 retry
        client.login("resend", KEY)


def test_the_51st_recipient_is_refused_at_rcpt_and_the_50_are_sent(live: LiveEmulator) -> None:
    assert MAX_RECIPIENTS == 50
    recipients = [f"r{index}@example.org" for index in range(50)]
    with live.starttls() as client:
        assert client.mail("hello@acme.dev")[0] == 250
        assert all(client.rcpt(address)[0] == 250 for address in recipients)
        code, reply = client.rcpt("one-too-many@example.org")
        assert (code, reply) == (452, b"4.5.3 Too many recipients (at most 50 per message)")
        client.rset()
        mail = rich_message(to="r0@example.org")
        assert transmit(client, mail, "hello@acme.dev", recipients)[0] == 250


def test_an_account_link_from_elsewhere_is_not_remembered() -> None:
    with TestClient(create_app(make_settings(isolate_keys=True)), raise_server_exceptions=False) as client:
        for site in ("cross-site", "same-site", "none"):
            page = client.get(f"{UI}/?account=acct_x", headers={"Sec-Fetch-Site": site})
            remembered = "emulator_ui_account" in page.headers.get("set-cookie", "")
            assert page.status_code == 200 and not remembered, site
        switched = client.get(f"{UI}/?account=acct_x", headers={"Sec-Fetch-Site": "same-origin"})
        assert switched.headers["set-cookie"].startswith("emulator_ui_account=acct_x;")


def test_script_and_document_attachments_are_served_as_bytes(client: TestClient) -> None:
    # `.js` names are refused by the API; the declared type is what a browser would act on.
    files = [("app.txt", "text/javascript"), ("page.htm", "text/html"), ("icon.svg", "image/svg+xml"),
             ("mod.txt", "application/javascript; charset=utf-8"), ("logo.png", "image/png")]
    body = {"from": "a@acme.dev", "to": ["delivered@resend.dev"], "subject": "files", "text": "x",
            "attachments": [{"filename": name, "content_type": kind,
                             "content": base64.b64encode(b"alert(document.domain)").decode()}
                            for name, kind in files]}
    email_id = client.post("/emails", json=body).json()["id"]
    parts = client.get(f"/emails/{email_id}/attachments").json()["data"]
    served = {}
    for part in parts:
        response = client.get(f"{UI}/messages/{email_id}/attachments/{part['id']}?inline=1")
        served[part["filename"]] = response.headers["content-type"]
        assert response.headers["x-content-type-options"] == "nosniff"
        inline = part["filename"] == "logo.png"  # only images are ever shown inline
        assert response.headers["content-disposition"].startswith("inline" if inline else "attachment")
        assert response.content == b"alert(document.domain)"
    assert served == {"app.txt": "application/octet-stream", "page.htm": "application/octet-stream",
                      "icon.svg": "application/octet-stream", "mod.txt": "application/octet-stream",
                      "logo.png": "image/png"}


@pytest.mark.browser
def test_a_base_href_does_not_send_attachment_urls_elsewhere() -> None:
    tracker = Tracker()
    try:
        with running_server() as server, httpx.Client(base_url=server.url, headers=AUTH) as api, \
                sync_playwright() as driver:
            html = (f'<html><head><base href="{tracker.url}/base/"></head><body><img id="logo"'
                    ' src="cid:logo" alt="logo"><img src="relative.png" alt="r"></body></html>')
            email_id = api.post("/emails", json={
                "from": "a@acme.dev", "to": ["delivered@resend.dev"], "subject": "based", "html": html,
                "attachments": [{"filename": "logo.png", "content": base64.b64encode(PNG).decode(),
                                 "content_id": "logo"}]}).json()["id"]
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(f"{server.url}{UI}/messages/{email_id}/frame?remote=1")
            logo = page.locator("#logo")
            expect(logo).to_have_js_property("naturalWidth", 1)  # loaded from the emulator
            page.wait_for_load_state("networkidle")
            browser.close()
    finally:
        tracker.close()
    assert tracker.hits == []  # neither the attachment URL nor the relative image went to the base host


@pytest.mark.browser
def test_in_chromium_a_link_from_another_site_does_not_switch_the_ui_for_good() -> None:
    with running_server(isolate_keys=True) as server, sync_playwright() as driver:
        for key in ("re_team_a", "re_team_b"):
            sent = httpx.post(f"{server.url}/emails", headers={"Authorization": f"Bearer {key}"}, json={
                "from": "a@resend.dev", "to": ["delivered@resend.dev"], "subject": key, "text": "x"})
            assert sent.status_code == 200
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(f"{server.url}{UI}/")
        home = page.locator("body").get_attribute("data-account")
        others = [value for value in page.locator("#account-select option").evaluate_all(
            "options => options.map(option => option.value)") if value != home]
        target = others[0]
        linker = OtherOrigin(f'<a id="go" href="{server.url}{UI}/?account={target}">see this</a>')
        try:
            page.goto(linker.url)
            page.click("#go")
            expect(page.locator("body")).to_have_attribute("data-account", target)  # shown, this once
            page.goto(f"{server.url}{UI}/")
            expect(page.locator("body")).to_have_attribute("data-account", home)  # not remembered
            page.select_option("#account-select", target)  # the UI's own switcher is remembered
            expect(page.locator("body")).to_have_attribute("data-account", target)
            page.goto(f"{server.url}{UI}/")
            expect(page.locator("body")).to_have_attribute("data-account", target)
        finally:
            linker.close()
            browser.close()
