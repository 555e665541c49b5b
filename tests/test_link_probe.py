"""The link check on demand (POST /_emulator/outbox/{id}/link-check, control/qa/probe.py) against a real
local HTTP server: each link's status, HEAD then GET where HEAD is refused, redirects listed, a refused
port named, no cookie and no Referer sent; never the emulator's own ports; off on a non-loopback host
unless --link-check."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from emulator.cli import parse_settings
from emulator.core.net import allows_outbound
from emulator.testing import EmulatorServer
from tests.conftest import AUTH, make_settings


class Site:
    """A local site: /ok 200, /missing 404, /no-head 405 to HEAD and 200 to GET, /moved 302 → /ok; it
    records each request's method, path and headers."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def answer(self, method: str) -> None:
                site.seen.append((method, self.path, {k.lower(): v for k, v in self.headers.items()}))
                status = {"/ok": 200, "/missing": 404, "/moved": 302}.get(self.path, 200)
                if self.path == "/no-head":
                    status = 405 if method == "HEAD" else 200
                self.send_response(status)
                if status == 302:
                    self.send_header("Location", "/ok")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self) -> None:
                self.answer("HEAD")

            def do_GET(self) -> None:
                self.answer("GET")

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def closed_port() -> int:
    """A port nothing listens on: bound, then closed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    found = Site()
    yield found
    found.close()


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer(make_settings(port=0)) as server:
        yield server


@pytest.fixture
def api(emulator: EmulatorServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=emulator.url, headers=AUTH, timeout=60) as client:
        assert client.post("/_emulator/reset").status_code == 200
        yield client


def send(api: httpx.Client, html: str, text: str | None = None) -> str:
    body: dict[str, Any] = {"from": "qa@acme.dev", "to": ["ada@lovelace.dev"], "subject": "Links",
                            "html": html}
    if text is not None:
        body["text"] = text
    response = api.post("/emails", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def by_url(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {link["url"]: link for link in body["links"]}


def test_each_link_is_requested_and_its_status_listed(api: httpx.Client, site: Site) -> None:
    refused = f"http://127.0.0.1:{closed_port()}/gone"
    html = (f'<a href="{site.url}/ok">a</a> <a href="{site.url}/missing">b</a>'
            f' <a href="{site.url}/no-head">c</a>'
            f' <a href="{refused}">d</a> <a href="{site.url}/ok">again</a> <a href="mailto:x@y.dev">mail</a>')
    email_id = send(api, html, text=f"Also {site.url}/moved.")
    site.seen.clear()
    response = api.post(f"/_emulator/outbox/{email_id}/link-check")
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["object"], body["email_id"], body["checked"], body["truncated"]) == \
        ("link_probe", email_id, 5, False)
    links = by_url(body)
    assert list(links) == [f"{site.url}/ok", f"{site.url}/missing", f"{site.url}/no-head", refused,
                           f"{site.url}/moved"]
    assert (links[f"{site.url}/ok"]["status"], links[f"{site.url}/ok"]["ok"]) == (200, True)
    assert (links[f"{site.url}/missing"]["status"], links[f"{site.url}/missing"]["ok"]) == (404, False)
    assert (links[f"{site.url}/no-head"]["status"], links[f"{site.url}/no-head"]["method"]) == (200, "GET")
    assert (links[refused]["status"], links[refused]["error"]) == (None, "refused")
    moved = links[f"{site.url}/moved"]
    assert (moved["status"], moved["final_url"]) == (200, f"{site.url}/ok")
    assert moved["redirects"] == [{"url": f"{site.url}/moved", "status": 302, "location": f"{site.url}/ok"}]
    assert body["broken"] == 2
    methods = sorted((method, path) for method, path, _ in site.seen)
    assert ("GET", "/no-head") in methods and ("HEAD", "/no-head") in methods
    assert ("GET", "/ok") not in methods  # HEAD was enough
    for _, _, headers in site.seen:
        assert "cookie" not in headers and "referer" not in headers


def test_a_tracked_link_is_requested_at_its_original_target(api: httpx.Client, site: Site) -> None:
    domain = api.post("/domains", json={"name": "tracked.dev"}).json()["id"]
    assert api.patch(f"/domains/{domain}", json={"click_tracking": True}).status_code == 200
    response = api.post("/emails", json={"from": "qa@tracked.dev", "to": ["ada@lovelace.dev"], "subject": "T",
                                         "html": f'<a href="{site.url}/missing">x</a>'})
    email_id = response.json()["id"]
    stored = api.get(f"/emails/{email_id}").json()["html"]
    assert "/_emulator/t/click/" in stored
    body = api.post(f"/_emulator/outbox/{email_id}/link-check").json()
    assert [(link["url"], link["status"]) for link in body["links"]] == [(f"{site.url}/missing", 404)]


def test_links_to_the_emulator_itself_are_never_requested(api: httpx.Client,
                                                          emulator: EmulatorServer) -> None:
    email_id = send(api, f'<a href="{emulator.url}/_emulator/reset">reset</a>')
    body = api.post(f"/_emulator/outbox/{email_id}/link-check").json()
    assert [(link["status"], link["error"]) for link in body["links"]] == [(None, "own")]
    assert api.get("/_emulator/outbox").json()["data"], "the outbox was not reset by the link"


def test_the_links_are_capped_at_100(api: httpx.Client) -> None:
    port = closed_port()
    html = "".join(f'<a href="http://127.0.0.1:{port}/{n}">{n}</a>' for n in range(130))
    body = api.post(f"/_emulator/outbox/{send(api, html)}/link-check").json()
    assert (body["checked"], body["total"], body["truncated"]) == (100, 130, True)


def test_the_get_route_stays_the_offline_check(api: httpx.Client, site: Site) -> None:
    email_id = send(api, f'<a href="{site.url}/ok">a</a>')
    site.seen.clear()
    body = api.get(f"/_emulator/outbox/{email_id}/link-check").json()
    assert "links" in body and site.seen == []


def test_an_unknown_email_is_404(api: httpx.Client) -> None:
    response = api.post("/_emulator/outbox/nope/link-check")
    assert (response.status_code, response.json()["name"]) == (404, "not_found")


def test_off_on_a_non_loopback_host_without_the_flag(site: Site) -> None:
    # EmulatorServer listens on 127.0.0.1 whatever it is told: the setting as parse_settings makes it for
    # a non-loopback --host without --link-check is given directly.
    with EmulatorServer(make_settings(port=0, link_check=False)) as server, \
            httpx.Client(base_url=server.url, headers=AUTH) as api:
        email_id = send(api, f'<a href="{site.url}/ok">a</a>')
        site.seen.clear()
        response = api.post(f"/_emulator/outbox/{email_id}/link-check")
        assert response.status_code == 403
        assert response.json()["name"] == "outbound_disabled"
        assert "--link-check" in response.json()["message"]
        assert site.seen == []


@pytest.mark.parametrize(("argv", "allowed"), [
    ([], True), (["--host", "127.0.0.2"], True), (["--host", "::1"], True),
    (["--host", "0.0.0.0", "--no-ui-auth"], False),
    (["--host", "0.0.0.0", "--no-ui-auth", "--link-check"], True),
])
def test_the_link_check_is_on_for_loopback_and_by_flag_elsewhere(argv: list[str], allowed: bool) -> None:
    settings = parse_settings(argv)
    assert allows_outbound(settings.link_check, settings.host) is allowed


def test_the_flag_has_an_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESEND_EMULATOR_LINK_CHECK", "1")
    monkeypatch.setenv("RESEND_EMULATOR_RELEASE", "true")
    settings = parse_settings(["--host", "0.0.0.0", "--no-ui-auth"])
    assert (settings.link_check, settings.release) == (True, True)


def test_without_javascript_the_form_answers_a_page_with_the_statuses(api: httpx.Client, site: Site,
                                                                      emulator: EmulatorServer) -> None:
    email_id = send(api, f'<a href="{site.url}/missing">b</a>')
    with httpx.Client(base_url=emulator.url, timeout=30) as browser:
        page = browser.get(f"/_emulator/ui/messages/{email_id}")
        token = page.text.split('name="csrf" value="')[1].split('"')[0]
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        refused = browser.post(f"/_emulator/ui/messages/{email_id}/link-check", content="", headers=form)
        answered = browser.post(f"/_emulator/ui/messages/{email_id}/link-check", content=f"csrf={token}",
                                headers=form)
    assert refused.status_code == 403
    assert answered.status_code == 200
    assert f'data-url="{site.url}/missing" data-status="404"' in answered.text
    assert 'id="back-to-message"' in answered.text
