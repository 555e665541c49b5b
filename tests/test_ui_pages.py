"""The UI's pages through HTTP (no browser): routes, escaping, security headers, actions, paging."""

from __future__ import annotations

import base64
import email
import re
import threading
from collections.abc import Iterator
from email import policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from emulator.app import all_ops, create_app
from emulator.core.accounts import redacted_key
from emulator.web.views import ROUTES
from tests.conftest import AUTH, flush, make_settings
from tests.ui_helpers import running_server

UI = "/_emulator/ui"
ORIGIN = "http://testserver"
SAME_ORIGIN = {"Origin": ORIGIN, "Sec-Fetch-Site": "same-origin"}  # what a form of the UI sends


def send(client: TestClient, **fields: Any) -> str:
    body = {"from": "Acme <orders@resend.dev>", "to": ["delivered@resend.dev"], "subject": "Hello",
            "text": "Hello there."}
    body.update(fields)
    response = client.post("/emails", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def rows_of(html: str) -> list[str]:
    return re.findall(r'class="subject">([^<]*)</a>', html)


def test_root_redirects_to_the_ui_and_no_api_path_is_shadowed(client: TestClient) -> None:
    for path in ("/", UI):
        response = client.get(path, follow_redirects=False)
        assert response.status_code == 307 and response.headers["location"] == f"{UI}/"
    api_paths = {op.path for op in all_ops()}
    ui_paths = {getattr(route, "path", "") for route in ROUTES}
    assert all(path == "/" or path.startswith(f"{UI}") for path in ui_paths)
    assert "/" not in api_paths
    assert client.get("/emails").status_code == 200  # the API list is untouched


def test_pages_carry_a_strict_content_security_policy(client: TestClient) -> None:
    email_id = send(client)
    for path in (f"{UI}/", f"{UI}/messages/{email_id}", f"{UI}/webhooks"):
        response = client.get(path)
        assert response.status_code == 200
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "<script>" not in response.text and " style=" not in response.text


def test_every_message_value_is_escaped(client: TestClient) -> None:
    markup = '<img src=x onerror="alert(1)">'
    email_id = send(
        client, subject=f"Hi {markup}", to=['"Tom & Jerry" <a@resend.dev>'],
        headers={"X-Custom": markup}, tags=[{"name": "t", "value": "v"}],
        attachments=[{"filename": f"{markup}.txt", "content": b64(b"x")}],
    )
    listing = client.get(f"{UI}/").text
    page = client.get(f"{UI}/messages/{email_id}").text
    for html in (listing, page):
        assert markup not in html
        assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in html
    assert 'X-Custom</th><td dir="auto">&lt;img src=x onerror=&#34;alert(1)&#34;&gt;' in page
    assert "Tom &amp; Jerry" in page and "Tom & Jerry" not in page


def test_message_html_is_served_sandboxed_with_remote_content_blocked(client: TestClient) -> None:
    html = '<p><img src="cid:logo"><img src="https://tracker.example/p.gif"></p>'
    email_id = send(client, html=html,
                    attachments=[{"filename": "logo.png", "content": b64(b"\x89PNG"), "content_id": "logo"}])
    frame = client.get(f"{UI}/messages/{email_id}/frame")
    csp = frame.headers["content-security-policy"]
    # One script may run: the frame's own height report, named by a fresh nonce (never the email's).
    nonce = re.search(r"script-src 'nonce-([\w-]+)';", csp)
    assert nonce is not None and "unsafe-inline'" not in csp.split("style-src")[0]
    assert frame.text.count(f'nonce="{nonce.group(1)}"') == 1
    again = client.get(f"{UI}/messages/{email_id}/frame").headers["content-security-policy"]
    assert nonce.group(1) not in again  # a fresh nonce per response
    assert "sandbox allow-scripts allow-popups" in csp
    assert "allow-same-origin" not in csp and "allow-top-navigation" not in csp
    assert "https:" not in csp and f"img-src {ORIGIN} data:;" in csp
    assert 'src="cid:' not in frame.text and f"{UI}/messages/{email_id}/attachments/" in frame.text
    assert frame.text.startswith(f'<script nonce="{nonce.group(1)}">')
    assert '<base target="_blank">' in frame.text
    allowed = client.get(f"{UI}/messages/{email_id}/frame?remote=1").headers["content-security-policy"]
    assert f"img-src {ORIGIN} data: https: http:" in allowed
    page = client.get(f"{UI}/messages/{email_id}").text
    assert 'sandbox="allow-scripts allow-popups allow-popups-to-escape-sandbox"' in page
    assert "1 remote resource blocked" in page


def test_attachments_download_safely(client: TestClient) -> None:
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    email_id = send(client, attachments=[
        {"filename": "évil.svg", "content": b64(svg), "content_type": "image/svg+xml"},
        {"filename": "pixel.png", "content": b64(b"\x89PNG")},
    ])
    page = client.get(f"{UI}/messages/{email_id}").text
    urls = re.findall(rf'href="({UI}/messages/{email_id}/attachments/[^"?]+)" download', page)
    assert len(urls) == 2
    svg_reply = client.get(f"{urls[0]}?inline=1")
    assert svg_reply.content == svg
    assert svg_reply.headers["content-disposition"].startswith("attachment;")
    assert "filename*=UTF-8''%C3%A9vil.svg" in svg_reply.headers["content-disposition"]
    assert "sandbox" in svg_reply.headers["content-security-policy"]
    assert svg_reply.headers["x-content-type-options"] == "nosniff"
    png_reply = client.get(f"{urls[1]}?inline=1")
    assert png_reply.headers["content-disposition"].startswith("inline;")
    assert client.get(f"{urls[1]}").headers["content-disposition"].startswith("attachment;")


def test_eml_download_is_the_stored_message(client: TestClient) -> None:
    email_id = send(client, subject="Invoice", attachments=[{"filename": "a.txt", "content": b64(b"hi")}])
    response = client.get(f"{UI}/messages/{email_id}/raw.eml")
    assert response.headers["content-type"].startswith("message/rfc822")
    assert response.headers["content-disposition"].startswith(f'attachment; filename="{email_id}.eml"')
    assert response.content == client.get(f"/_emulator/outbox/{email_id}.eml").content
    parsed = email.message_from_bytes(response.content, policy=policy.default)
    assert parsed["Subject"] == "Invoice"
    assert client.get(f"{UI}/messages/00000000-0000-4000-8000-000000000000/raw.eml").status_code == 404


def test_unknown_message_is_a_404_page(client: TestClient) -> None:
    response = client.get(f"{UI}/messages/nope")
    assert response.status_code == 404 and "Message not found" in response.text
    frame = client.get(f"{UI}/messages/nope/frame")
    assert frame.status_code == 404 and "sandbox" in frame.headers["content-security-policy"]


def test_cancel_scheduled_email_from_the_ui(client: TestClient) -> None:
    email_id = send(client, scheduled_at="in 1 hour")
    listing = client.get(f"{UI}/").text
    assert f'action="{UI}/messages/{email_id}/cancel"' in listing and "is-scheduled" in listing
    refused = client.post(f"{UI}/messages/{email_id}/cancel", headers={"Origin": "https://evil.example"})
    assert refused.status_code == 403
    assert client.get(f"/emails/{email_id}").json()["last_event"] == "scheduled"
    done = client.post(f"{UI}/messages/{email_id}/cancel", headers=SAME_ORIGIN, data={"confirmed": "yes"},
                       follow_redirects=False)
    assert done.status_code == 303
    assert client.get(f"/emails/{email_id}").json()["last_event"] == "canceled"
    again = client.post(f"{UI}/messages/{email_id}/cancel", headers=SAME_ORIGIN)
    assert again.status_code == 422 and "canceled" in again.text


def test_delete_all_resets_the_emulator_only_from_the_ui(client: TestClient) -> None:
    send(client)
    cross_site = {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
    assert client.post(f"{UI}/reset", headers=cross_site).status_code == 403
    assert len(client.get("/emails").json()["data"]) == 1
    response = client.post(f"{UI}/reset", headers=SAME_ORIGIN, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == f"{UI}/"
    assert client.get("/emails").json()["data"] == []


def _batch(client: TestClient, subjects: list[str], **fields: Any) -> None:
    for start in range(0, len(subjects), 100):
        items = [{"from": "a@resend.dev", "to": ["delivered@resend.dev"], "subject": s, "text": s, **fields}
                 for s in subjects[start:start + 100]]
        assert client.post("/emails/batch", json=items).status_code == 200


def test_keyset_pages_walk_older_and_back(client: TestClient) -> None:
    _batch(client, [f"Mail {n:03d}" for n in range(120)])
    first = client.get(f"{UI}/").text
    assert rows_of(first) == [f"Mail {n:03d}" for n in range(119, 69, -1)]
    assert '<span id="total">120</span>' in first
    older = re.search(r'href="([^"]+)" rel="next"', first)
    assert older is not None
    second = client.get(older.group(1).replace("&amp;", "&")).text
    assert rows_of(second) == [f"Mail {n:03d}" for n in range(69, 19, -1)]
    newer = re.search(r'href="([^"]+)" rel="prev"', second)
    assert newer is not None
    back = client.get(newer.group(1).replace("&amp;", "&")).text
    assert rows_of(back) == rows_of(first)
    assert 'data-first-page="true"' in back and 'data-first-page="false"' in second


def test_search_status_and_tag_filters(client: TestClient) -> None:
    _batch(client, ["Plain", "100% off", "Under_score"])
    _batch(client, ["Tagged"], tags=[{"name": "plan", "value": "pro"}])
    send(client, subject="Bouncer", to=["bounced@resend.dev"])
    flush(client)
    assert client.post("/_emulator/clock/advance", json={"seconds": 10}).status_code == 200
    assert rows_of(client.get(f"{UI}/?q=%25").text) == ["100% off"]
    assert rows_of(client.get(f"{UI}/?q=_").text) == ["Under_score"]
    assert rows_of(client.get(f"{UI}/?q=BOUNCED@resend").text) == ["Bouncer"]
    assert rows_of(client.get(f"{UI}/?status=bounced").text) == ["Bouncer"]
    assert rows_of(client.get(f"{UI}/?tag=plan").text) == ["Tagged"]
    assert rows_of(client.get(f"{UI}/?tag=plan:pro").text) == ["Tagged"]
    assert rows_of(client.get(f"{UI}/?tag=plan:free").text) == []
    assert len(rows_of(client.get(f"{UI}/?status=bogus").text)) == 5  # unknown status: no filter
    live = client.get(f"{UI}/rows/outbox?status=bounced").json()
    assert rows_of(live["rows"]) == ["Bouncer"] and live["total"] == "1"  # a search counts its matches


class _Receiver:
    """A local webhook endpoint that answers 500 with a body the UI must show."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = b"receiver says <no>"
                self.send_response(500)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def receiver() -> Iterator[_Receiver]:
    running = _Receiver()
    yield running
    running.httpd.shutdown()
    running.httpd.server_close()


def test_webhook_attempts_show_on_the_message_and_the_webhooks_page(client: TestClient,
                                                                    receiver: _Receiver) -> None:
    created = client.post("/webhooks", json={"endpoint": receiver.url, "events": ["email.sent"]})
    assert created.status_code in (200, 201), created.text
    email_id = send(client, subject="Hooked")
    flush(client)
    page = client.get(f"{UI}/messages/{email_id}").text
    assert "email.sent" in page and receiver.url in page
    assert "HTTP 500" in page and "receiver says &lt;no&gt;" in page
    hooks = client.get(f"{UI}/webhooks").text
    assert receiver.url in hooks and "HTTP 500" in hooks and "receiver says &lt;no&gt;" in hooks
    assert f'href="{UI}/messages/{email_id}"' in hooks


def test_received_mail_has_its_own_tab(client: TestClient) -> None:
    domain = client.get("/_emulator/inbound/address").json()["domain"]
    injected = client.post("/_emulator/inbound", json={
        "from": '"<script>alert(1)</script>" <grace@hopper.dev>', "to": [f"support@{domain}"],
        "subject": "Need <help>",
        "text": "My order is late.", "attachments": [{"filename": "photo.png", "content": b64(b"\x89PNG")}],
    })
    assert injected.status_code == 200, injected.text
    received_id = injected.json()["data"][0]["id"]
    listing = client.get(f"{UI}/received").text
    assert rows_of(listing) == ["Need &lt;help&gt;"] and f'href="{UI}/received"' in listing
    page = client.get(f"{UI}/received/{received_id}").text
    assert "My order is late." in page and "photo.png" in page and "Need &lt;help&gt;" in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    raw = client.get(f"{UI}/received/{received_id}/raw.eml")
    assert email.message_from_bytes(raw.content, policy=policy.default)["Subject"] == "Need <help>"
    assert rows_of(client.get(f"{UI}/").text) == []  # the outbox only lists sent mail
    # Received mail has no delivery status: no Status column, on the page or in its live rows.
    assert 'class="c-status"' not in listing
    live = client.get(f"{UI}/rows/received").json()["rows"]
    assert "Need &lt;help&gt;" in live and 'class="c-status"' not in live
    assert '<th class="c-status">Status</th>' in client.get(f"{UI}/").text


def test_account_switch_shows_that_accounts_mail() -> None:
    settings = make_settings(isolate_keys=True)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        for key, subject in (("re_team_a", "From A"), ("re_team_b", "From B")):
            response = client.post("/emails", headers={"Authorization": f"Bearer {key}"}, json={
                "from": "a@resend.dev", "to": ["delivered@resend.dev"], "subject": subject, "text": "x"})
            assert response.status_code == 200, response.text
        accounts = re.findall(r'<option value="([^"]+)"[^>]*>([^<]+)</option>', client.get(f"{UI}/").text)
        chosen = next(a for a, label in accounts if label == redacted_key("re_team_b"))
        page = client.get(f"{UI}/?account={chosen}")
        assert rows_of(page.text) == ["From B"]
        assert rows_of(client.get(f"{UI}/").text) == ["From B"]  # remembered in a cookie


def test_live_events_stream_over_a_real_server() -> None:
    with (running_server() as server, httpx.Client(base_url=server.url, headers=AUTH, timeout=10) as api,
          api.stream("GET", f"{UI}/events") as stream):
        lines = stream.iter_lines()
        assert next(lines).startswith("retry:")
        email_id = api.post("/emails", json={"from": "a@resend.dev", "to": ["delivered@resend.dev"],
                                             "subject": "Live", "text": "x"}).json()["id"]
        data = next(line for line in lines if line.startswith("data:"))
    assert '"type": "email.sent"' in data and email_id in data
