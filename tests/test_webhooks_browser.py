"""The Webhooks tab in a real Chromium, desktop (1280×800) and phone (390×844): a compact table of
deliveries against a real local receiver, filters by endpoint, event type and status, and per delivery
"Retry now" / "Replay" through the API's replay."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from emulator.testing import EmulatorServer
from tests.ui_helpers import BROWSER
from tests.webhooks_helpers import Receiver

pytestmark = BROWSER
UI = "/_emulator/ui"


@pytest.fixture
def page(screen_page: Page, api: httpx.Client) -> Page:
    return screen_page


def deliveries(api: httpx.Client, receiver: Receiver) -> dict[str, str]:
    """Six emails → twelve deliveries (sent, delivered) to `receiver`."""
    hook = api.post("/webhooks", json={"endpoint": receiver.url, "events": ["email.sent", "email.delivered"]})
    other = api.post("/webhooks", json={"endpoint": receiver.url.replace("/hooks", "/other"),
                                        "events": ["email.bounced"]})
    assert hook.status_code == other.status_code == 201
    for n in range(6):
        response = api.post("/emails", json={"from": "a@acme.dev", "to": ["delivered@resend.dev"],
                                             "subject": f"Mail {n}", "text": "x"})
        assert response.status_code == 200
    assert api.post("/_emulator/clock/advance", json={"minutes": 5}).status_code == 200
    assert api.post("/_emulator/webhooks/flush").status_code == 200
    return {"hook": hook.json()["id"], "other": other.json()["id"]}


def rows(page: Page) -> list[dict[str, str]]:
    return page.locator("#deliveries tr.delivery-row").evaluate_all(
        """rows => rows.map(r => ({event: r.querySelector('.d-event summary').textContent,
                                  status: r.querySelector('.d-status .badge').textContent,
                                  attempts: r.querySelector('.d-attempts').textContent.trim()}))""")


def test_twelve_deliveries_make_a_compact_filterable_table(page: Page, server: EmulatorServer,
                                                           api: httpx.Client, receiver: Receiver) -> None:
    hooks = deliveries(api, receiver)
    page.goto(f"{server.url}{UI}/webhooks")
    expect(page.locator("#deliveries tr.delivery-row")).to_have_count(12)
    expect(page.locator("#delivery-count")).to_have_text("12")
    table_rows = page.locator("#deliveries tr.delivery-row")
    heights = table_rows.evaluate_all("rows => rows.map(r => r.offsetHeight)")
    assert max(heights) < (60 if page.viewport_size["width"] > 720 else 200), heights  # type: ignore[index]
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]  # type: ignore[index]
    if page.viewport_size["width"] > 720:  # type: ignore[index]
        assert page.evaluate("document.documentElement.scrollHeight") < 1300  # was 2 700 px before
        labels = page.locator("#deliveries thead th").all_inner_texts()
        words = [label.split(" ")[0] for label in labels[:5]]
        assert words == ["TIME", "ENDPOINT", "EVENT", "STATUS", "ATTEMPTS"]
    else:  # phones: each cell says what it is
        first = page.locator("#deliveries tr.delivery-row").first
        label = first.locator(".d-status").evaluate("e => getComputedStyle(e, '::before').content")
        assert label == '"Status"'
    with page.expect_navigation():
        page.locator("#type-filter").select_option("email.delivered")
    assert {row["event"] for row in rows(page)} == {"email.delivered"} and len(rows(page)) == 6
    with page.expect_navigation():
        page.locator("#endpoint-filter").select_option(hooks["other"])
    expect(page.locator("main")).to_contain_text("No deliveries match these filters.")
    page.get_by_role("link", name="Clear").click()
    expect(page.locator("#deliveries tr.delivery-row")).to_have_count(12)


def test_retry_now_and_replay_go_through_the_api_replay(page: Page, server: EmulatorServer,
                                                        api: httpx.Client, receiver: Receiver) -> None:
    hooks = deliveries(api, receiver)
    failing = api.post("/webhooks", json={"endpoint": receiver.url.replace("/hooks", "/failing"),
                                          "events": ["email.sent"]}).json()["id"]
    fault = {"webhook_id": failing, "action": "status", "status": 500, "count": 1}
    assert api.post("/_emulator/webhooks/faults", json=fault).status_code in (200, 201)
    once_more = {"from": "a@acme.dev", "to": ["delivered@resend.dev"], "subject": "Once more", "text": "x"}
    assert api.post("/emails", json=once_more).status_code == 200
    assert api.post("/_emulator/webhooks/flush").status_code == 200
    page.goto(f"{server.url}{UI}/webhooks?status=attempting")
    expect(page.locator("#live")).to_have_class("live on")
    waiting = rows(page)
    assert len(waiting) == 1 and waiting[0]["attempts"] == "1"
    received = len(receiver.received)
    with page.expect_navigation():
        page.get_by_role("button", name="Retry now").click()
    with page.expect_navigation():
        page.locator("#confirm-act").click()  # the confirmation step (issue 39)
    expect(page.locator("#deliveries tr.delivery-row .d-attempts")).to_have_text("2")
    assert len(receiver.received) == received + 1
    page.goto(f"{server.url}{UI}/webhooks?status=success&type=email.sent")
    expect(page.locator("#live")).to_have_class("live on")
    first = page.locator("#deliveries tr.delivery-row").first
    message_id = first.get_attribute("data-id")
    expect(first.locator(".d-attempts")).to_have_text("1")
    with page.expect_navigation():
        first.get_by_role("button", name="Replay").click()
    with page.expect_navigation():
        page.locator("#confirm-act").click()
    expect(page.locator(f'#deliveries tr[data-id="{message_id}"] .d-attempts')).to_have_text("2")
    attempts = api.get(f"/webhooks/{hooks['hook']}/events/{message_id}/attempts").json()["data"]
    assert len(attempts) == 2
