"""The consent page and the OAuth tab in a real Chromium: `GET /oauth/authorize` lands on the consent page,
Approve/Deny post through the control-plane guard and the browser arrives at the client's callback."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, expect

from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.oauth_helpers import VERIFIER, Client, authorize_params, redeem, register
from tests.ui_helpers import BROWSER, chromium, running_server

pytestmark = BROWSER


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with running_server() as running:
        yield running


class Callback:
    """The OAuth client's loopback callback: a local HTTP server that records what reaches it and answers
    with a small page (a bodiless error would make Chromium load its own error page over ours)."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                body = b"<!doctype html><title>Signed in</title><p>Signed in</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def callback() -> Iterator[Callback]:
    receiver = Callback()
    yield receiver
    receiver.close()


@pytest.fixture
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def start(server: EmulatorServer, callback: Callback, api: httpx.Client) -> tuple[Client, str]:
    client = register(api, redirect_uris=[f"{callback.url}/callback"], client_name="Acme Agent",
                      scope="emails:send", client_uri="https://acme.example")
    return client, f"{server.url}/oauth/authorize?{urlencode(authorize_params(client))}"


def arrived(callback: Callback) -> dict[str, str]:
    visits = [hit for hit in callback.hits if hit.startswith("/callback")]  # not the favicon
    assert visits, "the browser never reached the callback"
    return {name: values[0] for name, values in parse_qs(urlsplit(visits[-1]).query).items()}


def test_approve_on_the_consent_page_reaches_the_callback_with_a_working_code(
        server: EmulatorServer, callback: Callback, browser: Browser) -> None:
    with httpx.Client(base_url=server.url, headers=AUTH) as api:
        client, url = start(server, callback, api)
        page = browser.new_page()
        page.goto(url)
        expect(page.locator("h1")).to_have_text("Authorize Acme Agent")
        expect(page.locator("#consent-scopes")).to_contain_text("emails:send")
        expect(page.locator("#consent-scopes")).to_contain_text("Send emails on your behalf")
        expect(page.locator("#consent-account")).to_have_value("default")
        consent_url = page.url
        page.click("#consent-approve")
        expect(page).to_have_title("Signed in")
        params = arrived(callback)
        assert set(params) == {"code", "state"} and params["state"] == "st4te"
        client.redirect_uri = f"{callback.url}/callback"
        assert redeem(api, client, params["code"], VERIFIER).status_code == 200
        answered = api.get(consent_url)  # answered once: the consent page is gone
        assert answered.status_code == 404 and "Authorization request not found" in answered.text


def test_deny_reaches_the_callback_with_access_denied(
        server: EmulatorServer, callback: Callback, browser: Browser) -> None:
    with httpx.Client(base_url=server.url, headers=AUTH) as api:
        _, url = start(server, callback, api)
        page = browser.new_page()
        page.goto(url)
        consent_url = page.url
        page.click("#consent-deny")
        expect(page).to_have_title("Signed in")
        assert arrived(callback) == {"error": "access_denied",
                                     "error_description": "The user denied the authorization request.",
                                     "state": "st4te"}
        assert api.get(consent_url).status_code == 404
        again = api.post(consent_url, data={"decision": "approve", "account": "default"},
                         headers={"Sec-Fetch-Site": "same-origin"})  # as the page would: answered already
        assert again.status_code == 404


def test_the_oauth_tab_lists_clients_and_grants(
        server: EmulatorServer, callback: Callback, browser: Browser) -> None:
    with httpx.Client(base_url=server.url, headers=AUTH) as api:
        client, url = start(server, callback, api)
        page = browser.new_page()
        page.goto(url)
        page.click("#consent-approve")
        expect(page).to_have_title("Signed in")
        client.redirect_uri = f"{callback.url}/callback"
        assert redeem(api, client, arrived(callback)["code"]).status_code == 200
        page.goto(f"{server.url}/_emulator/ui/")
        page.click("nav.sections >> text=OAuth")
        card = page.locator(f'.oauth-client[data-id="{client.client_id}"]')
        expect(card).to_contain_text("Acme Agent")
        expect(card).to_contain_text("public")
        expect(card).to_contain_text(f"{callback.url}/callback")
        grant_id = api.get("/oauth/grants").json()["data"][0]["id"]
        row = page.locator(f'.oauth-grant[data-id="{grant_id}"]')
        expect(row).to_have_attribute("data-status", "active")
        expect(row).to_contain_text("emails:send")
        expect(row).to_contain_text("Acme Agent")
        assert api.delete(f"/oauth/grants/{grant_id}").status_code == 200
        page.reload()
        expect(row).to_have_attribute("data-status", "revoked")
        expect(row).to_contain_text("revoked_from_api")
