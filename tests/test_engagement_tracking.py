"""Open and click tracking on the wire: rewritten links and pixel, redirects, events, last_event, metrics."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from starlette.testclient import TestClient

from emulator.testing import EmulatorServer
from tests.conftest import AUTH
from tests.emails_helpers import Recorder, advance, last_event, send
from tests.ui_helpers import running_server
from tests.webhooks_helpers import running_receiver, verify_all, verify_svix

HTML = ('<html><body><p>Hi</p><a href="https://acme.dev/pricing?a=1&amp;b=2">Pricing</a>'
        " <a href='mailto:help@acme.dev'>Mail us</a>"
        ' <a class="u" href="http://127.0.0.1:2580/_emulator/unsubscribe/abc">Unsubscribe</a>'
        ' <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Leave</a></body></html>')


def tracking_domain(client: TestClient, **flags: bool) -> None:
    created = client.post("/domains", json={"name": "mail.acme.dev", **flags})
    assert created.status_code == 201, created.text


def hrefs(html: str) -> list[str]:
    return re.findall(r"""href=["']([^"']+)["']""", html)


def path_of(url: str) -> str:
    return urlsplit(url).path


def test_click_tracking_rewrites_http_links_only(client: TestClient) -> None:
    tracking_domain(client, click_tracking=True)
    email_id = send(client, html=HTML)
    html = client.get(f"/emails/{email_id}").json()["html"]
    links = hrefs(html)
    assert re.fullmatch(r"http://127\.0\.0\.1:2580/_emulator/t/click/[0-9a-f-]{36}", links[0])
    assert links[1:] == ["mailto:help@acme.dev", "http://127.0.0.1:2580/_emulator/unsubscribe/abc",
                         "{{{RESEND_UNSUBSCRIBE_URL}}}"]
    assert "/_emulator/t/open/" not in html  # open tracking is off
    eml = client.get(f"/_emulator/outbox/{email_id}.eml").text
    assert links[0] in eml.replace("=\r\n", "").replace("=3D", "=")
    assert client.get(f"/_emulator/outbox/{email_id}").json()["html"] == html  # the outbox JSON too


def test_following_a_link_redirects_and_records_the_click(client: TestClient) -> None:
    recorder = Recorder(client)
    tracking_domain(client, click_tracking=True)
    email_id = send(client, html=HTML)
    link = hrefs(client.get(f"/emails/{email_id}").json()["html"])[0]
    response = client.get(path_of(link), headers={"user-agent": "QA-Browser/1.0"}, follow_redirects=False)
    assert (response.status_code, response.headers["location"]) == (302, "https://acme.dev/pricing?a=1&b=2")
    click = recorder.data(email_id, "email.clicked")["click"]
    assert click == {"ipAddress": "testclient", "link": "https://acme.dev/pricing?a=1&b=2",
                     "timestamp": "2026-05-14T09:00:00.000Z", "userAgent": "QA-Browser/1.0"}
    assert last_event(client, email_id) == "clicked"
    client.get(path_of(link), follow_redirects=False)
    assert len(recorder.of_type("email.clicked")) == 2


def test_open_pixel_records_an_open(client: TestClient) -> None:
    recorder = Recorder(client)
    tracking_domain(client, open_tracking=True)
    email_id = send(client, html="<p>Hello</p>")
    html = client.get(f"/emails/{email_id}").json()["html"]
    pixel = re.search(r'<img src="([^"]+/_emulator/t/open/[^"]+)" width="1" height="1"', html)
    assert pixel is not None and html.startswith("<p>Hello</p><img")
    response = client.get(path_of(pixel.group(1)))
    assert (response.status_code, response.headers["content-type"]) == (200, "image/gif")
    assert recorder.types(email_id) == ["email.sent", "email.opened"]
    assert last_event(client, email_id) == "opened"


def test_no_tracking_without_the_domain_flags(client: TestClient) -> None:
    tracking_domain(client)
    email_id = send(client, html=HTML)
    assert client.get(f"/emails/{email_id}").json()["html"] == HTML


def test_turning_tracking_on_applies_to_the_next_send(client: TestClient) -> None:
    tracking_domain(client)
    domain_id = client.get("/domains").json()["data"][0]["id"]
    assert client.patch(f"/domains/{domain_id}", json={"open_tracking": True}).status_code == 200
    email_id = send(client, html="<p>x</p>")
    assert "/_emulator/t/open/" in client.get(f"/emails/{email_id}").json()["html"]


def test_unknown_tracking_tokens_are_404(client: TestClient) -> None:
    assert client.get("/_emulator/t/click/nope").status_code == 404
    assert client.get("/_emulator/t/open/nope").status_code == 404


def test_opens_and_clicks_count_in_metrics(client: TestClient) -> None:
    tracking_domain(client, open_tracking=True, click_tracking=True)
    email_id = send(client, html=HTML)
    html = client.get(f"/emails/{email_id}").json()["html"]
    opened = re.search(r'src="([^"]+/_emulator/t/open/[^"]+)"', html)
    assert opened is not None
    for _ in range(2):
        client.get(path_of(opened.group(1)))
    for _ in range(3):  # the same link three times: every click is counted, the email once
        client.get(path_of(hrefs(html)[0]), follow_redirects=False)
    metrics = client.get("/emails/metrics?metrics=opened,unique_opened,clicked,unique_clicked").json()
    assert metrics["totals"] == {"opened": 2, "unique_opened": 1, "clicked": 3, "unique_clicked": 1}


@pytest.fixture
def live() -> Iterator[EmulatorServer]:
    with running_server(clock="real", clock_start=None) as server:
        yield server


def test_httpx_click_gives_a_redirect_and_a_verified_webhook(live: EmulatorServer) -> None:
    with running_receiver() as receiver, httpx.Client(base_url=live.url, headers=AUTH) as api:
        secret = api.post("/webhooks", json={"endpoint": receiver.url, "events": ["email.clicked"]}).json()[
            "signing_secret"]
        api.post("/domains", json={"name": "mail.acme.dev", "click_tracking": True})
        email_id = api.post("/emails", json={"from": "hello@mail.acme.dev", "to": "lin@example.org",
                                             "subject": "Hi", "html": HTML}).json()["id"]
        link = hrefs(api.get(f"/emails/{email_id}").json()["html"])[0]
        assert link.startswith(live.url)
        response = httpx.get(link, follow_redirects=False)
        assert (response.status_code, response.headers["location"]) == (302, "https://acme.dev/pricing?a=1&b=2")
        assert api.post("/_emulator/flush").status_code == 200
        [delivery] = receiver.received
        verify_svix(secret, delivery)  # raises unless the signature verifies; returns nothing
        assert verify_all(secret, delivery)[1:] == [delivery.json, delivery.json]
        event = delivery.json
        assert (event["type"], event["data"]["email_id"]) == ("email.clicked", email_id)
        click = event["data"]["click"]
        assert {key: click[key] for key in ("ipAddress", "link", "userAgent")} == {
            "ipAddress": "127.0.0.1", "link": "https://acme.dev/pricing?a=1&b=2",
            "userAgent": f"python-httpx/{httpx.__version__}"}
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", click["timestamp"])
        assert api.get(f"/emails/{email_id}").json()["last_event"] == "clicked"


def test_a_click_before_the_simulated_delivery_keeps_last_event_clicked(client: TestClient) -> None:
    """QA may follow a link as soon as the email is in the outbox, before the 2 s delivery on the clock."""
    recorder = Recorder(client)
    tracking_domain(client, click_tracking=True)
    email_id = send(client, html=HTML)
    client.get(path_of(hrefs(client.get(f"/emails/{email_id}").json()["html"])[0]), follow_redirects=False)
    advance(client, 2)
    assert recorder.types(email_id) == ["email.sent", "email.clicked", "email.delivered"]
    assert last_event(client, email_id) == "clicked"


def test_broadcast_clicks_through_tracking_urls_count_in_its_clicked_links(client: TestClient) -> None:
    tracking_domain(client, click_tracking=True)
    segment_id = client.post("/segments", json={"name": "All"}).json()["id"]
    for email in ("ada@example.org", "bob@example.org"):
        contact_id = client.post("/contacts", json={"email": email}).json()["id"]
        client.post(f"/contacts/{contact_id}/segments/{segment_id}")
    html = ('<a href="https://acme.dev/pricing">Pricing</a> <a href="https://acme.dev/blog">Blog</a>'
            ' <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>')
    broadcast_id = client.post("/broadcasts", json={
        "segment_id": segment_id, "from": "news@mail.acme.dev", "subject": "News", "html": html,
        "send": True}).json()["id"]
    assert client.post("/_emulator/flush").status_code == 200
    sent = {email["to"][0]: email["id"] for email in client.get("/_emulator/outbox").json()["data"]}
    links = {to: hrefs(client.get(f"/emails/{email_id}").json()["html"]) for to, email_id in sent.items()}
    assert all("/_emulator/t/click/" in link for found in links.values() for link in found[:2])
    assert all("/_emulator/unsubscribe/" in found[2] for found in links.values())  # left alone
    for to, index in [("ada@example.org", 0), ("ada@example.org", 0), ("bob@example.org", 0),
                      ("bob@example.org", 1)]:
        assert client.get(path_of(links[to][index]), follow_redirects=False).status_code == 302
    assert client.get(f"/broadcasts/{broadcast_id}/clicked-links").json() == {
        "object": "list", "has_more": False, "data": [
            {"id": "b2Zmc2V0OjA", "url": "https://acme.dev/pricing", "clicks": 3, "unique_clicks": 2},
            {"id": "b2Zmc2V0OjE", "url": "https://acme.dev/blog", "clicks": 1, "unique_clicks": 1}]}
    clicked = client.get(f"/broadcasts/{broadcast_id}/recipients?type=clicked&email=ada@example.org").json()
    assert (clicked["data"][0]["count"], clicked["data"][0]["clicked_links"]) == (
        2, [{"url": "https://acme.dev/pricing", "clicks": 2}])
