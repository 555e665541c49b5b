"""Issue 39 item 9 in a real Chromium at 1280×800, 768×1024 and 390×844: Replay, Send now and Cancel ask
first and act only when confirmed (Keep does nothing); "Mark all N read" and, for a search, "Mark these N
unread" state the number they act on and act on exactly that."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from emulator.testing import EmulatorServer
from tests.ui_helpers import BROWSER
from tests.webhooks_helpers import Receiver

pytestmark = BROWSER
UI = "/_emulator/ui"


@pytest.fixture
def page(three_screen_page: Page, api: httpx.Client) -> Page:
    return three_screen_page


def send(api: httpx.Client, subject: str, **fields: Any) -> str:
    body = {"from": "a@acme.dev", "to": ["ada@example.org"], "subject": subject, "text": "x", **fields}
    response = api.post("/emails", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def status(api: httpx.Client, email_id: str) -> str:
    return str(api.get(f"/emails/{email_id}").json()["last_event"])


def test_send_now_asks_first_and_keep_leaves_it_scheduled(page: Page, server: EmulatorServer,
                                                          api: httpx.Client) -> None:
    later = send(api, "Weekly digest", scheduled_at="in 2 hours")
    page.goto(f"{server.url}{UI}/")
    row = page.locator("#rows tr.row", has_text="Weekly digest")
    with page.expect_navigation():
        row.get_by_role("button", name="Send now").click()
    expect(page.locator("#confirm-question")).to_have_text("Send “Weekly digest” to ada@example.org now?")
    expect(page.locator("#confirm")).to_contain_text("It is scheduled for 2026-05-14 11:00:00")
    assert status(api, later) == "scheduled"
    with page.expect_navigation():
        page.locator("#confirm-keep").click()
    expect(page.locator("#rows tr.row", has_text="Weekly digest").locator(".badge")).to_have_text("scheduled")
    assert status(api, later) == "scheduled"
    with page.expect_navigation():
        page.locator("#rows tr.row", has_text="Weekly digest").get_by_role("button", name="Send now").click()
    with page.expect_navigation():
        page.locator("#confirm-act").click()
    expect(page.locator("#rows tr.row", has_text="Weekly digest").locator(".badge")).to_have_text("sent")
    assert status(api, later) == "sent"


def test_cancel_asks_first_from_the_message_view(page: Page, server: EmulatorServer,
                                                 api: httpx.Client) -> None:
    later = send(api, "Reminder", scheduled_at="in 1 hour")
    page.goto(f"{server.url}{UI}/messages/{later}")
    with page.expect_navigation():
        page.get_by_role("button", name="Cancel send").click()
    expect(page.locator("#confirm-question")).to_have_text(
        "Cancel the scheduled send of “Reminder” to ada@example.org?")
    expect(page.locator("#confirm-act")).to_have_text("Cancel send")
    expect(page.locator("#confirm-keep")).to_have_text("Keep scheduled")
    assert status(api, later) == "scheduled"
    with page.expect_navigation():
        page.locator("#confirm-keep").click()
    expect(page.locator("#status-slot .badge")).to_have_text("scheduled")
    with page.expect_navigation():
        page.get_by_role("button", name="Cancel send").click()
    with page.expect_navigation():
        page.locator("#confirm-act").click()
    expect(page.locator("#status-slot .badge")).to_have_text("canceled")
    assert status(api, later) == "canceled"


def test_replay_asks_first_naming_the_delivery_and_its_endpoint(
        page: Page, server: EmulatorServer, api: httpx.Client, receiver: Receiver) -> None:
    hook = api.post("/webhooks", json={"endpoint": receiver.url, "events": ["email.sent"]})
    assert hook.status_code == 201
    send(api, "Hello")
    assert api.post("/_emulator/webhooks/flush").status_code == 200
    page.goto(f"{server.url}{UI}/webhooks?status=success")
    first = page.locator("#deliveries tr.delivery-row").first
    message_id = first.get_attribute("data-id")
    received = len(receiver.received)
    with page.expect_navigation():
        first.get_by_role("button", name="Replay").click()
    expect(page.locator("#confirm-question")).to_have_text(f"Replay delivery {message_id} to {receiver.url}?")
    assert len(receiver.received) == received
    with page.expect_navigation():
        page.locator("#confirm-keep").click()
    expect(page.locator(f'#deliveries tr[data-id="{message_id}"] .d-attempts')).to_have_text("1")
    assert len(receiver.received) == received
    with page.expect_navigation():
        page.locator(f'#deliveries tr[data-id="{message_id}"]').get_by_role("button", name="Replay").click()
    with page.expect_navigation():
        page.locator("#confirm-act").click()
    expect(page.locator(f'#deliveries tr[data-id="{message_id}"] .d-attempts')).to_have_text("2")
    assert len(receiver.received) == received + 1


def test_mark_all_read_states_and_marks_the_unread_number(page: Page, server: EmulatorServer,
                                                          api: httpx.Client) -> None:
    for subject in ("One", "Two", "Three"):
        send(api, subject)
    page.goto(f"{server.url}{UI}/")
    expect(page.locator("#live")).to_have_class("live on")
    button = page.locator("#mark-all-read button")
    expect(button).to_have_text("Mark all 3 read")
    send(api, "Four")  # arrives while the page is open: the live count and the button follow it
    expect(button).to_have_text("Mark all 4 read")
    with page.expect_navigation():
        button.click()
    expect(page.locator("#notice")).to_have_text("Marked 4 emails.")
    expect(page.locator("#unread")).to_have_text("0")
    expect(page.locator("#mark-all-read")).to_be_hidden()
    assert api.get("/_emulator/outbox", params={"q": "is:unread"}).json()["data"] == []


def test_mark_these_unread_marks_a_searchs_matches_only(page: Page, server: EmulatorServer,
                                                        api: httpx.Client) -> None:
    invoices = [send(api, f"Invoice {n}") for n in range(2)]
    send(api, "Welcome")
    page.goto(f"{server.url}{UI}/")
    with page.expect_navigation():
        page.locator("#mark-all-read button").click()
    page.locator("#search").fill("invoice")
    with page.expect_navigation():
        page.locator("#search").press("Enter")
    expect(page.locator("#read-results")).to_have_text("Mark these 2 read")
    with page.expect_navigation():
        page.locator("#unread-results").filter(has_text="Mark these 2 unread").click()
    expect(page.locator("#notice")).to_have_text("Marked 2 emails.")
    unread = api.get("/_emulator/outbox", params={"q": "is:unread"}).json()["data"]
    assert sorted(item["id"] for item in unread) == sorted(invoices)
