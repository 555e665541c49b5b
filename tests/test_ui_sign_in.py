"""Sign in to the web UI with an API key under --isolate-keys (issue 38 item 4): a real server on
127.0.0.1 port 0, httpx, and Debian's Chromium for a whole signed-in session.

A team host (--isolate-keys with a non-loopback --host) is simulated by setting `Settings.ui_sign_in`,
which the CLI computes from those flags (tested below through `parse_settings`)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, Request, Response, expect

from emulator.cli import parse_settings
from emulator.core.accounts import isolated_account_id, redacted_key
from emulator.testing import EmulatorServer
from emulator.web.sessions import SIGN_IN_COOKIE, sign_ins
from tests.conftest import make_settings

UI = "/_emulator/ui"
SIGN_IN = f"{UI}/sign-in"
KEY_A = "re_qaAlpha_7Kx2Vq9LmZ4w"
KEY_B = "re_qaBravo_3Hd8Rt6NpY1c"
ACCOUNT_B = isolated_account_id(0, KEY_B)
TOKEN = re.compile(r'name="csrf" value="([0-9a-f]+)"')


@pytest.fixture(scope="module")
def team() -> Iterator[EmulatorServer]:
    """A team host: sign-in required, every request logged (-v) to the captured stdout."""
    with EmulatorServer(make_settings(port=0, isolate_keys=True, ui_sign_in=True, log_requests=True,
                                      quiet=False)) as server:
        yield server


@pytest.fixture
def fresh(team: EmulatorServer) -> EmulatorServer:
    team.reset()
    return team


def send(server: EmulatorServer, key: str, subject: str) -> str:
    response = httpx.post(f"{server.url}/emails", headers={"Authorization": f"Bearer {key}"}, json={
        "from": "Acme <orders@resend.dev>", "to": ["delivered@resend.dev"], "subject": subject,
        "text": "Hello.", "attachments": [{"filename": "note.txt", "content": "aGk="}]})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def browser_client(server: EmulatorServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=30)


def sign_in(client: httpx.Client, key: str) -> httpx.Response:
    token = TOKEN.search(client.get(SIGN_IN).text)
    assert token is not None
    return client.post(SIGN_IN, data={"key": key, "csrf": token[1]})


# ---- when a sign-in is required -------------------------------------------------------------------

def test_team_host_sends_every_page_to_sign_in_and_refuses_live_endpoints(fresh: EmulatorServer) -> None:
    email_id = send(fresh, KEY_A, "Quarterly")
    with browser_client(fresh) as client:
        for path in (f"{UI}/", f"{UI}/webhooks", f"{UI}/messages/{email_id}", f"{UI}/logs",
                     f"{UI}/messages/{email_id}/raw.eml"):
            response = client.get(path)
            assert (response.status_code, response.headers["location"]) == (303, SIGN_IN), path
        for path in (f"{UI}/rows/outbox", f"{UI}/events", f"{UI}/messages/{email_id}/frame",
                     f"{UI}/messages/{email_id}/live"):
            response = client.get(path)
            assert response.status_code == 401, path
            assert response.json() == {"statusCode": 401, "name": "sign_in_required", "message":
                                       "Sign in with an API key at /_emulator/ui/sign-in to use the web UI."}
        assert client.get(SIGN_IN).status_code == 200
        assert client.get(f"{UI}/static/base.css").status_code == 200


def test_wrong_key_shows_the_form_again_with_a_sentence_and_stores_nothing(fresh: EmulatorServer) -> None:
    before = len(sign_ins(fresh.emu))
    with browser_client(fresh) as client:
        for key, sentence in (("re_", "not one the emulator accepts"),
                              ("sk_live_abc", "not one the emulator"), ("", "Paste an API key")):
            response = sign_in(client, key)
            assert response.status_code == 401
            assert sentence in response.text and 'type="password"' in response.text
            assert SIGN_IN_COOKIE not in response.headers.get("set-cookie", "")
            assert "sk_live_abc" not in response.text
        assert client.get(f"{UI}/").status_code == 303
    assert len(sign_ins(fresh.emu)) == before


def test_sign_in_without_the_csrf_token_is_refused(fresh: EmulatorServer) -> None:
    before = len(sign_ins(fresh.emu))
    with browser_client(fresh) as client:
        client.get(SIGN_IN)
        response = client.post(SIGN_IN, data={"key": KEY_A})
        assert response.status_code == 403
        assert response.json()["name"] == "cross_site_request"
        assert SIGN_IN_COOKIE not in response.headers.get("set-cookie", "")
    assert len(sign_ins(fresh.emu)) == before


def test_sign_in_is_a_post_only_the_key_never_travels_in_a_query(fresh: EmulatorServer) -> None:
    with browser_client(fresh) as client:
        page = client.get(SIGN_IN, params={"key": KEY_A})
        assert KEY_A not in page.text and SIGN_IN_COOKIE not in page.headers.get("set-cookie", "")
        assert 'method="post"' in page.text and 'autocomplete="off"' in page.text


def test_a_deleted_key_is_refused_and_ends_the_sessions_it_opened(fresh: EmulatorServer) -> None:
    send(fresh, KEY_A, "Before")
    auth = {"Authorization": f"Bearer {KEY_A}"}
    made = httpx.post(f"{fresh.url}/api-keys", headers=auth, json={"name": "qa"}).json()
    with browser_client(fresh) as client:
        assert sign_in(client, made["token"]).status_code == 303
        assert "Before" in client.get(f"{UI}/").text
        httpx.delete(f"{fresh.url}/api-keys/{made['id']}", headers=auth).raise_for_status()
        assert client.get(f"{UI}/").headers["location"] == SIGN_IN
        refused = sign_in(client, made["token"])
        assert refused.status_code == 401 and "was deleted" in refused.text


def test_a_key_never_seen_signs_in_as_the_api_would_accept_it(fresh: EmulatorServer) -> None:
    new_key = "re_qaCharlie_never_used_yet"
    with browser_client(fresh) as client:
        assert sign_in(client, new_key).status_code == 303
        send(fresh, new_key, "First of Charlie")
        send(fresh, KEY_B, "Of Bravo")
        page = client.get(f"{UI}/").text
        assert "First of Charlie" in page and "Of Bravo" not in page and redacted_key(new_key) in page


def test_actions_act_on_the_signed_in_account_only(fresh: EmulatorServer) -> None:
    of_b = send(fresh, KEY_B, "Keep me")
    send(fresh, KEY_A, "Mine")
    with browser_client(fresh) as client:
        sign_in(client, KEY_A)
        token = TOKEN.search(client.get(f"{UI}/").text)
        assert token is not None
        client.cookies.set("emulator_ui_account", ACCOUNT_B)
        gone = client.post(f"{UI}/messages/{of_b}/delete", data={"csrf": token[1]})
        assert gone.status_code == 404
        bulk = client.post(f"{UI}/bulk/outbox?account={ACCOUNT_B}",
                           data={"csrf": token[1], "scope": "all", "action": "delete"})
        assert bulk.status_code == 303
        reset = client.post(f"{UI}/reset", data={"csrf": token[1]})
        assert reset.status_code == 403 and "cannot reset" in reset.text
    kept = httpx.get(f"{fresh.url}/emails/{of_b}", headers={"Authorization": f"Bearer {KEY_B}"})
    assert kept.status_code == 200


def test_the_live_stream_carries_the_signed_in_account_only(fresh: EmulatorServer) -> None:
    with browser_client(fresh) as client:
        sign_in(client, KEY_A)
        seen: list[dict[str, Any]] = []
        with client.stream("GET", f"{UI}/events", params={"account": ACCOUNT_B}) as stream:
            lines = stream.iter_lines()
            assert next(lines).startswith("retry:")
            send(fresh, KEY_B, "Not for A")
            of_a = send(fresh, KEY_A, "For A")
            for line in lines:
                if line.startswith("data: "):
                    seen.append(json.loads(line[6:]))
                    if seen[-1].get("subject_id") == of_a:
                        break
    assert seen and {event["account"] for event in seen} == {isolated_account_id(0, KEY_A)}


def test_session_cookie_is_secure_when_the_request_came_over_https() -> None:
    from starlette.testclient import TestClient

    from emulator.app import create_app

    settings = make_settings(isolate_keys=True, ui_sign_in=True)
    with TestClient(create_app(settings), base_url="https://testserver", follow_redirects=False) as client:
        response = sign_in(client, KEY_A)
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(SIGN_IN_COOKIE) and "Secure" in cookie and "HttpOnly" in cookie
    assert "samesite=strict" in cookie.lower()


# ---- when it is optional (a laptop) ----------------------------------------------------------------

def test_laptop_ui_shows_every_account_without_sign_in_and_offers_one() -> None:
    with EmulatorServer(make_settings(port=0, isolate_keys=True)) as server:
        send(server, KEY_A, "Alpha mail")
        send(server, KEY_B, "Bravo mail")
        with browser_client(server) as client:
            page = client.get(f"{UI}/", params={"account": ACCOUNT_B})
            assert page.status_code == 200 and "Bravo mail" in page.text
            assert "Sign in with an API key" in page.text
            assert client.get(f"{UI}/rows/outbox").status_code == 200
            assert sign_in(client, KEY_A).status_code == 303
            scoped = client.get(f"{UI}/", params={"account": ACCOUNT_B}).text
            assert "Alpha mail" in scoped and "Bravo mail" not in scoped and 'id="sign-out"' in scoped
            token = TOKEN.search(scoped)
            assert token is not None
            client.post(f"{UI}/sign-out", data={"csrf": token[1]})
            assert "Bravo mail" in client.get(f"{UI}/", params={"account": ACCOUNT_B}).text


def test_without_isolated_keys_there_is_no_sign_in() -> None:
    with EmulatorServer(make_settings(port=0)) as server, browser_client(server) as client:
        assert client.get(SIGN_IN).status_code == 404
        assert "Sign in with an API key" not in client.get(f"{UI}/").text


@pytest.mark.parametrize(("argv", "required"), [
    (["--isolate-keys", "--host", "0.0.0.0"], True),
    (["--isolate-keys", "--host", "10.1.2.3"], True),
    (["--isolate-keys", "--host", "emulator.team.internal"], True),
    (["--isolate-keys"], False),
    (["--isolate-keys", "--host", "localhost"], False),
    (["--isolate-keys", "--host", "::1"], False),
    (["--isolate-keys", "--host", "127.0.0.2"], False),
    (["--host", "0.0.0.0"], False),
])
def test_sign_in_is_required_with_isolated_keys_on_a_host_others_can_reach(argv: list[str],
                                                                             required: bool) -> None:
    assert parse_settings(argv).ui_sign_in is required


# ---- a whole signed-in session in Chromium ---------------------------------------------------------

class Recorder:
    """Every URL, header, cookie and response body of a browser session (request bodies aside: the
    sign-in form must carry the key once)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def on_request(self, request: Request) -> None:
        self.texts += [request.url, json.dumps(request.all_headers())]

    def on_response(self, response: Response) -> None:
        self.texts += [response.url, json.dumps(response.all_headers())]
        if "text/event-stream" not in response.headers.get("content-type", ""):
            with contextlib.suppress(Exception):  # a redirect has no body to read
                self.texts.append(response.body().decode("utf-8", "replace"))


@pytest.mark.browser
def test_browser_session_sees_only_its_key_and_never_shows_the_key(
        fresh: EmulatorServer, browser: Browser, capfd: pytest.CaptureFixture[str]) -> None:
    of_b = send(fresh, KEY_B, "Bravo's secret order")
    of_a = send(fresh, KEY_A, "Alpha's order")
    capfd.readouterr()
    context = browser.new_context()
    record = Recorder()
    context.on("request", record.on_request)
    context.on("response", record.on_response)
    page = context.new_page()
    try:
        _walk_signed_in_session(page, fresh, of_a, of_b)
        record.texts += [json.dumps(context.cookies()), page.url]
    finally:
        context.close()
    log = capfd.readouterr().out
    assert f"POST {SIGN_IN} 303" in log and f"GET {UI}/messages/{of_b} 404" in log
    everything = "\n".join([*record.texts, log])
    for secret in (KEY_A, KEY_A.removeprefix("re_"), KEY_A[3:15]):
        assert secret not in everything
    assert redacted_key(KEY_A) in everything


def _walk_signed_in_session(page: Page, server: EmulatorServer, of_a: str, of_b: str) -> None:
    page.goto(f"{server.url}{UI}/")
    expect(page).to_have_url(re.compile(re.escape(SIGN_IN) + "$"))
    expect(page.locator("#key")).to_have_attribute("type", "password")
    page.fill("#key", KEY_A)
    page.click("#sign-in")
    expect(page).to_have_url(f"{server.url}{UI}/")
    expect(page.locator("#signed-in-as")).to_have_text(redacted_key(KEY_A))
    expect(page.locator("#rows")).to_contain_text("Alpha's order")
    expect(page.locator("#rows")).not_to_contain_text("Bravo")
    expect(page.locator("#account-select")).to_have_count(0)
    expect(page.locator("#reset-emulator")).to_have_count(0)
    cookie = next(c for c in page.context.cookies() if c["name"] == SIGN_IN_COOKIE)
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]

    page.goto(f"{server.url}{UI}/?account={ACCOUNT_B}")
    expect(page.locator("#rows")).to_contain_text("Alpha's order")
    expect(page.locator("#rows")).not_to_contain_text("Bravo")
    assert page.goto(f"{server.url}{UI}/messages/{of_b}").status == 404  # type: ignore[union-attr]
    for path in (f"/messages/{of_b}/raw.eml", f"/messages/{of_b}/frame",
                 f"/messages/{of_b}/attachments/x", f"/rows/outbox?account={ACCOUNT_B}"):
        answer = page.request.get(f"{server.url}{UI}{path}")
        assert "Bravo" not in answer.text(), path
        assert answer.status == (200 if path.startswith("/rows") else 404), path
    assert page.request.get(f"{server.url}{UI}/messages/{of_a}/raw.eml").status == 200

    page.goto(f"{server.url}{UI}/messages/{of_a}")
    expect(page.locator("body")).to_contain_text("Alpha's order")
    page.click("#sign-out")
    expect(page).to_have_url(f"{server.url}{SIGN_IN}")
    page.goto(f"{server.url}{UI}/")
    expect(page).to_have_url(f"{server.url}{SIGN_IN}")
