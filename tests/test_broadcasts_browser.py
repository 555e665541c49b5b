"""The unsubscribe link of a broadcast email in a real Chromium: one click unsubscribes the contact, the next
broadcast skips it, and a `contact.updated` webhook reaches a real receiver."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import sync_playwright

from emulator.testing import EmulatorServer
from tests.conftest import AUTH, FROZEN_AT
from tests.test_broadcasts_send import five_contacts
from tests.ui_helpers import BROWSER, CHROMIUM, CHROMIUM_ARGS, running_server
from tests.webhooks_helpers import running_receiver, verifies_at

pytestmark = BROWSER


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with running_server() as running:
        yield running


def send_broadcast(api: httpx.Client, segment_id: str, topic_id: str) -> dict[str, str]:
    before = {email["id"] for email in api.get("/_emulator/outbox").json()["data"]}
    created = api.post("/broadcasts", json={
        "segment_id": segment_id, "topic_id": topic_id, "from": "Acme <news@acme.dev>", "subject": "News",
        "html": '<p>Hi {{{FIRST_NAME|there}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
        "send": True})
    assert created.status_code == 201, created.text
    assert api.post("/_emulator/flush").status_code == 200
    return {email["to"][0]: email["id"] for email in api.get("/_emulator/outbox").json()["data"]
            if email["id"] not in before}


def test_one_click_in_chromium_unsubscribes_the_contact(server: EmulatorServer) -> None:
    with running_receiver() as receiver, httpx.Client(base_url=server.url, headers=AUTH) as api:
        hook = api.post("/webhooks", json={"endpoint": receiver.url, "events": ["contact.updated"]}).json()
        segment_id, topic_id, ids = five_contacts(api)  # type: ignore[arg-type]
        first = send_broadcast(api, segment_id, topic_id)
        assert sorted(first) == ["ada@example.org", "bob@example.org"]
        html = api.get(f"/emails/{first['ada@example.org']}").json()["html"]
        link = re.search(r'href="(http://[^"]+/_emulator/unsubscribe/[^"]+)"', html)
        assert link is not None and link.group(1).startswith(server.url)
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(link.group(1))
            page.click("#unsubscribe-all")
            assert "ada@example.org will no longer receive" in page.inner_text("#unsubscribe-result")
            browser.close()
        assert api.get(f"/contacts/{ids['ada']}").json()["unsubscribed"] is True
        second = send_broadcast(api, segment_id, topic_id)
        assert sorted(second) == ["bob@example.org"]
        assert api.post("/_emulator/flush").status_code == 200
        [delivery] = [r for r in receiver.received if r.json["type"] == "contact.updated"]
        assert delivery.json["data"]["email"] == "ada@example.org"
        assert verifies_at(hook["signing_secret"], delivery, FROZEN_AT)
